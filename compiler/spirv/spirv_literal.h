// Float constants as SPIR-V assembly text: hex floats exact for every bit pattern of a 16-, 32- or 64-bit IEEE float,
// in the form SPIRV-Tools prints and reads (source/util/hex_float.h): [-]0x1.<fraction>p<exponent>, denormals
// normalized (0x1p-149), zero as 0x0p+0, and infinities and NaNs with the exponent one past the largest normal one
// and the fraction bits as they are (0x1p+128 is +inf, 0x1.8p+128 the quiet NaN 0x7fc00000, -0x1.000002p+128 the
// NaN 0xff800001). firmware-notes/spirv-binary.md §5.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace doorbell::spirv {

// The literal of the float of `width` bits (16, 32 or 64) whose IEEE bits are the low bits of `bits`.
std::string format_float_literal(uint64_t bits, uint32_t width);

// The IEEE bits of a float literal of `width` bits: a hex float as above, which must be exact in the width (spirv-as
// truncates the bits that do not fit, IEEE rounding would not: such a literal is refused rather than read one of the
// two ways), or, for 32 and 64 bits, a decimal number (rounded to nearest, as spirv-as and strtod do). Returns false
// and sets `error` (what was expected) when the text is no such literal, is inexact, or is out of range.
bool parse_float_literal(std::string_view text, uint32_t width, uint64_t& bits, std::string& error);

}  // namespace doorbell::spirv
