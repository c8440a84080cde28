// Float helpers of the emulated RDNA3 shader core: f16 <-> f32 (IEEE binary16, round to nearest even, subnormals
// kept) and bit casts. The VALU's f16 arithmetic is done in f32 and rounded once, which is exact for add/sub/mul
// (a binary16 product or sum fits in binary32's 24-bit significand) and for fma within double rounding limits.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>

namespace doorbell::mockgpu::amd {

inline float f32_of(uint32_t bits) { return std::bit_cast<float>(bits); }
inline uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }
inline double f64_of(uint64_t bits) { return std::bit_cast<double>(bits); }
inline uint64_t bits_of(double d) { return std::bit_cast<uint64_t>(d); }

inline float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t{h & 0x8000u} << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ffu;
  if (exp == 0x1f) return f32_of(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  return f32_of(sign | ((exp + 112) << 23) | (mant << 13));
}

inline uint16_t float_to_half(float f) {
  uint32_t x = bits_of(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return sign | (abs > 0x7f800000u ? 0x7e00 | ((abs >> 13) & 0x3ff) : 0x7c00);
  if (abs >= 0x477ff000u) return sign | 0x7c00;  // rounds to >= 65520: infinity
  if (abs < 0x38800000u) {                        // below the smallest normal half: a subnormal, rounded
    float a = f32_of(abs);
    float scaled = a * 16777216.0f;                // 2^24: units of the smallest subnormal, exact
    uint32_t m = static_cast<uint32_t>(std::nearbyint(scaled));
    return sign | static_cast<uint16_t>(m);
  }
  uint32_t mant = abs & 0x7fffffu, exp = (abs >> 23) - 112;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) ++h;  // round to nearest even; a carry moves into the exponent
  return sign | static_cast<uint16_t>(h);
}

}  // namespace doorbell::mockgpu::amd
