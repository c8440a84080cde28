// A named bit range of a hardware word or structure, written high:low the way NVIDIA's class headers write it
// ("hi:lo" for method data fields, MW(hi:lo) for multi-word structures such as the QMD, where bit b lives in 32-bit
// word b/32). The encoders place every value through here, so a value that does not fit is an error that names the
// field instead of silently spilling into its neighbour.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace doorbell::nv {

struct BitField {
  std::string_view name;  // the vendor's macro name, for errors
  uint32_t hi;
  uint32_t lo;

  constexpr uint32_t width() const { return hi - lo + 1; }
  constexpr uint64_t max_value() const { return width() >= 64 ? ~uint64_t{0} : (uint64_t{1} << width()) - 1; }
};

// `value` placed at the field's bits of one 32-bit word (the field must lie in bits 31:0); throws
// std::invalid_argument naming the field when the value does not fit.
uint32_t field_bits(const BitField& field, uint64_t value);

// The field's value read from one 32-bit word (the inverse of field_bits; the field must lie in bits 31:0).
constexpr uint32_t field_value(uint32_t word, const BitField& field) {
  return static_cast<uint32_t>((word >> field.lo) & field.max_value());
}

// Writes `value` into the field of a multi-word structure, clearing what was there; the field may straddle two
// words. Throws std::invalid_argument naming the field when the value does not fit or the field lies outside `words`.
void set_field(std::span<uint32_t> words, const BitField& field, uint64_t value);

// Reads the field back; throws std::invalid_argument when it lies outside `words`.
uint64_t get_field(std::span<const uint32_t> words, const BitField& field);

// "0x1f": how the NV encoders print numbers in their errors.
std::string hex(uint64_t value);

// Throws std::invalid_argument naming `what` unless `value` is a multiple of `alignment` (a power of two).
void require_aligned(std::string_view what, uint64_t value, uint64_t alignment);

}  // namespace doorbell::nv
