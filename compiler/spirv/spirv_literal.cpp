#include "compiler/spirv/spirv_literal.h"

#include <bit>
#include <cerrno>
#include <cstdlib>

namespace doorbell::spirv {
namespace {

struct Format {
  int mantissa_bits;  // stored fraction bits
  int exponent_bits;
  int bias() const { return (1 << (exponent_bits - 1)) - 1; }
};

bool format_of(uint32_t width, Format& f) {
  switch (width) {
    case 16:
      f = {10, 5};
      return true;
    case 32:
      f = {23, 8};
      return true;
    case 64:
      f = {52, 11};
      return true;
    default:
      return false;
  }
}

// v / 2^n when that is exact (no nonzero bit shifted out, none dropped before: `sticky`); false otherwise.
bool exact_shift(unsigned __int128 v, int n, bool sticky, uint64_t& out) {
  if (sticky) return false;
  if (n <= 0) {
    out = static_cast<uint64_t>(v << -n);
    return true;
  }
  if (n >= 127) return v == 0;
  if ((v & ((static_cast<unsigned __int128>(1) << n) - 1)) != 0) return false;
  out = static_cast<uint64_t>(v >> n);
  return true;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string format_float_literal(uint64_t bits, uint32_t width) {
  Format f;
  if (!format_of(width, f)) return "<float width " + std::to_string(width) + ">";
  const uint64_t fraction_mask = (uint64_t{1} << f.mantissa_bits) - 1;
  const int max_field = (1 << f.exponent_bits) - 1;
  const bool negative = (bits >> (width - 1)) & 1;
  const int field = static_cast<int>((bits >> f.mantissa_bits) & static_cast<uint64_t>(max_field));
  uint64_t fraction = bits & fraction_mask;
  std::string out = negative ? "-" : "";
  if (field == 0 && fraction == 0) return out + "0x0p+0";
  int exponent;
  if (field == 0) {
    // A denormal: normalize, so the leading digit is 1 like every other literal.
    exponent = 1 - f.bias();
    while (!(fraction >> f.mantissa_bits)) {
      fraction <<= 1;
      --exponent;
    }
    fraction &= fraction_mask;
  } else {
    exponent = field - f.bias();  // inf and NaN: bias + 1, one past the largest normal exponent
  }
  out += "0x1";
  // The fraction as whole hex digits: pad it on the right to a multiple of 4 bits, then drop trailing zero digits.
  const int digits = (f.mantissa_bits + 3) / 4;
  const uint64_t padded = fraction << (digits * 4 - f.mantissa_bits);
  std::string hex;
  for (int i = digits - 1; i >= 0; --i) hex += "0123456789abcdef"[(padded >> (4 * i)) & 0xf];
  while (!hex.empty() && hex.back() == '0') hex.pop_back();
  if (!hex.empty()) out += "." + hex;
  out += exponent < 0 ? "p-" : "p+";
  out += std::to_string(exponent < 0 ? -exponent : exponent);
  return out;
}

bool parse_float_literal(std::string_view text, uint32_t width, uint64_t& bits, std::string& error) {
  Format f;
  if (!format_of(width, f)) {
    error = "a float type of 16, 32 or 64 bits";
    return false;
  }
  const std::string_view original = text;
  bool negative = false;
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  const uint64_t sign = negative ? uint64_t{1} << (width - 1) : 0;
  if (!(text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))) {
    // A decimal number: strtof/strtod round correctly; 16-bit floats take only hex floats (no exact conversion).
    const std::string s(original);
    const bool plain = !s.empty() && s.find_first_not_of("0123456789+-.eE") == std::string::npos;
    if (width == 16 || !plain) {
      error = width == 16 ? "a hex float (0x1.8p+0) for a 16-bit float" : "a float literal (1.5, -2e-3 or 0x1.8p+0)";
      return false;
    }
    char* end = nullptr;
    errno = 0;
    if (width == 32) {
      const float v = std::strtof(s.c_str(), &end);
      bits = std::bit_cast<uint32_t>(v);
    } else {
      const double v = std::strtod(s.c_str(), &end);
      bits = std::bit_cast<uint64_t>(v);
    }
    if (end != s.c_str() + s.size() || errno == ERANGE) {
      error = "a float literal in range of a " + std::to_string(width) + "-bit float";
      return false;
    }
    return true;
  }
  text.remove_prefix(2);
  // Significand digits into `sig` (value = sig * 2^exp2), keeping 60 bits and a sticky bit for the rest.
  unsigned __int128 sig = 0;
  int64_t exp2 = 0;
  bool sticky = false;
  bool any_digit = false;
  bool after_point = false;
  size_t i = 0;
  for (; i < text.size() && text[i] != 'p' && text[i] != 'P'; ++i) {
    if (text[i] == '.') {
      if (after_point) break;
      after_point = true;
      continue;
    }
    const int d = hex_digit(text[i]);
    if (d < 0) break;
    any_digit = true;
    if (sig >> 60) {
      sticky |= d != 0;
      if (!after_point) exp2 += 4;
    } else {
      sig = sig * 16 + static_cast<unsigned>(d);
      if (after_point) exp2 -= 4;
    }
  }
  if (!any_digit || i >= text.size() || (text[i] != 'p' && text[i] != 'P')) {
    error = "a hex float such as 0x1.8p+0 (hex digits, then p and a decimal exponent)";
    return false;
  }
  std::string_view exp_text = text.substr(i + 1);
  bool exp_negative = false;
  if (!exp_text.empty() && (exp_text[0] == '-' || exp_text[0] == '+')) {
    exp_negative = exp_text[0] == '-';
    exp_text.remove_prefix(1);
  }
  if (exp_text.empty() || exp_text.size() > 6 || exp_text.find_first_not_of("0123456789") != std::string_view::npos) {
    error = "a hex float's exponent: p, an optional sign and at most 6 decimal digits";
    return false;
  }
  int64_t e = 0;
  for (char c : exp_text) e = e * 10 + (c - '0');
  exp2 += exp_negative ? -e : e;
  if (sig == 0) {
    bits = sign;
    return true;
  }
  const int msb = 63 - std::countl_zero(static_cast<uint64_t>(sig));  // sig < 2^64: digits stop at 2^60
  const int64_t exponent = exp2 + msb;                                // value = 1.xxx * 2^exponent
  const int bias = f.bias();
  const uint64_t fraction_mask = (uint64_t{1} << f.mantissa_bits) - 1;
  const uint64_t max_field = (uint64_t{1} << f.exponent_bits) - 1;
  if (exponent > bias + 1) {
    error = "a " + std::to_string(width) + "-bit float: exponent " + std::to_string(exponent) + " is past " +
            std::to_string(bias + 1) + " (the exponent of inf and NaN)";
    return false;
  }
  if (exponent == bias + 1) {
    // Infinity or a NaN: the fraction bits are the payload, exactly.
    const int drop = msb - f.mantissa_bits;
    const unsigned __int128 fraction = sig & ((static_cast<unsigned __int128>(1) << msb) - 1);
    if (sticky || (drop > 0 && (fraction & ((static_cast<unsigned __int128>(1) << drop) - 1)) != 0)) {
      error = "an inf or NaN whose payload fits the " + std::to_string(f.mantissa_bits) + " fraction bits";
      return false;
    }
    const uint64_t payload =
        drop >= 0 ? static_cast<uint64_t>(fraction >> drop) : static_cast<uint64_t>(fraction << -drop);
    bits = sign | (max_field << f.mantissa_bits) | (payload & fraction_mask);
    return true;
  }
  // A hex float must be exact in the width: SPIRV-Tools' spirv-as truncates extra fraction bits
  // (source/util/hex_float.h, round toward zero) where IEEE arithmetic rounds to nearest, so an inexact literal would
  // mean different bits to the two assemblers (firmware-notes/spirv-binary.md §5). Refuse it instead.
  const std::string inexact = "a hex float exact in a " + std::to_string(width) + "-bit float (at most " +
                              std::to_string(f.mantissa_bits) + " fraction bits, within its denormals)";
  uint64_t magnitude = 0;
  if (exponent >= 1 - bias) {
    uint64_t m = 0;
    if (!exact_shift(sig, msb - f.mantissa_bits, sticky, m)) {
      error = inexact;
      return false;
    }
    magnitude = (static_cast<uint64_t>(exponent + bias) << f.mantissa_bits) | (m & fraction_mask);
  } else {
    // Denormal: the value in units of the smallest denormal, 2^(1 - bias - mantissa_bits).
    const int64_t shift = (1 - bias - f.mantissa_bits) - exp2;
    if (shift > 127 || !exact_shift(sig, static_cast<int>(shift), sticky, magnitude) || magnitude > fraction_mask) {
      error = inexact;
      return false;
    }
  }
  bits = sign | magnitude;
  return true;
}

}  // namespace doorbell::spirv
