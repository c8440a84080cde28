// Vector ALU instructions of the emulated RDNA3 shader core: VOP1/VOP2/VOPC run as their VOP3 forms (the VOP3 opcode
// space holds VOPC at 0-255, VOP2 at 256+op, VOP1 at 384+op: AMD RDNA3 ISA guide, "VOP3"; rdna3_opcodes.h), then
// VOP3P and VOPD. firmware-notes/amd-rdna3-exec.md records the semantics that are not obvious.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "mockgpu/amd/rdna3_exec_float.h"
#include "mockgpu/amd/wave_state.h"

namespace doorbell::mockgpu::amd {
namespace {

constexpr uint16_t kVop2Base = 256, kVop1Base = 384;
// VOP2-only encodings with an inline literal K (ISA guide, VOP2 opcode table); not in the VOP3 list.
constexpr uint16_t kVop2FmamkF32 = 44, kVop2FmaakF32 = 45, kVop2FmamkF16 = 55, kVop2FmaakF16 = 56;
// VOP1 ops without a VOP3 form in LLVM 19's gfx11 tables, run through the same numbering (384 + VOP1 op).
constexpr uint16_t kReadfirstlane = kVop1Base + 2, kMovB16 = kVop1Base + 28;
constexpr uint16_t kInlineF16[9] = {0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118};

// The operands of one VALU instruction, resolved once per instruction: a VGPR row or a scalar value.
struct Operands {
  const Wave* w;
  const Rdna3Inst* in;
  uint16_t code[3];
  const uint32_t* row[3] = {nullptr, nullptr, nullptr};
  uint32_t k32[3] = {0, 0, 0};
  uint8_t abs, neg, opsel;

  Operands(Wave& wave, const Rdna3Inst& inst, int count) : w(&wave), in(&inst), abs(inst.abs), neg(inst.neg), opsel(inst.opsel) {
    for (int i = 0; i < 3; ++i) {
      code[i] = inst.src[i];
      if (i >= count) continue;
      if (code[i] >= operand::kVgpr0) {
        row[i] = wave.vreg(code[i] - operand::kVgpr0);
      } else if (code[i] == operand::kDpp16 || code[i] == operand::kDpp8 || code[i] == operand::kDpp8Fi) {
        throw ExecError{"DPP operands are not implemented by the emulated shader core"};
      } else {
        k32[i] = read_scalar32(wave, code[i], inst.literal);
      }
    }
  }
  uint32_t u32(int i, uint32_t lane) const { return row[i] ? row[i][lane] : k32[i]; }
  int32_t i32(int i, uint32_t lane) const { return static_cast<int32_t>(u32(i, lane)); }
  float f32(int i, uint32_t lane) const {
    uint32_t b = u32(i, lane);
    if ((abs >> i) & 1) b &= 0x7fffffffu;
    if ((neg >> i) & 1) b ^= 0x80000000u;
    return f32_of(b);
  }
  uint16_t u16(int i, uint32_t lane) const {
    if (row[i]) return static_cast<uint16_t>(row[i][lane] >> (((opsel >> i) & 1) ? 16 : 0));
    if (code[i] >= 240 && code[i] <= 248) return kInlineF16[code[i] - 240];
    return static_cast<uint16_t>(k32[i] >> (((opsel >> i) & 1) && code[i] != operand::kLiteral ? 16 : 0));
  }
  float f16(int i, uint32_t lane) const {
    uint16_t b = u16(i, lane);
    if ((abs >> i) & 1) b &= 0x7fff;
    if ((neg >> i) & 1) b ^= 0x8000;
    return half_to_float(b);
  }
  uint64_t u64(int i, uint32_t lane, bool f64 = false) const {
    if (row[i]) return row[i][lane] | (uint64_t{row[i][lane + kWaveLanes]} << 32);
    return read_scalar64(*w, code[i], in->literal, f64);
  }
  double f64(int i, uint32_t lane) const {
    uint64_t b = u64(i, lane, true);
    if ((abs >> i) & 1) b &= ~(uint64_t{1} << 63);
    if ((neg >> i) & 1) b ^= uint64_t{1} << 63;
    return f64_of(b);
  }
};

float omod_clamp(float r, const Rdna3Inst& in) {
  switch (in.omod) { case 1: r *= 2.0f; break; case 2: r *= 4.0f; break; case 3: r *= 0.5f; break; default: break; }
  if (in.clamp) r = std::isnan(r) ? 0.0f : std::clamp(r, 0.0f, 1.0f);
  return r;
}
double omod_clamp(double r, const Rdna3Inst& in) {
  switch (in.omod) { case 1: r *= 2.0; break; case 2: r *= 4.0; break; case 3: r *= 0.5; break; default: break; }
  if (in.clamp) r = std::isnan(r) ? 0.0 : std::clamp(r, 0.0, 1.0);
  return r;
}

// IEEE minNum/maxNum as the VALU does them in IEEE mode: a quiet NaN operand yields the other operand.
float fmin32(float a, float b) { return std::isnan(a) ? b : std::isnan(b) ? a : (a == b ? (std::signbit(a) ? a : b) : std::min(a, b)); }
float fmax32(float a, float b) { return std::isnan(a) ? b : std::isnan(b) ? a : (a == b ? (std::signbit(a) ? b : a) : std::max(a, b)); }
double fmin64(double a, double b) { return std::isnan(a) ? b : std::isnan(b) ? a : (a == b ? (std::signbit(a) ? a : b) : std::min(a, b)); }
double fmax64(double a, double b) { return std::isnan(a) ? b : std::isnan(b) ? a : (a == b ? (std::signbit(a) ? b : a) : std::max(a, b)); }

template <typename F>
bool float_cond(unsigned c, F a, F b) {
  bool lt = a < b, eq = a == b, gt = a > b, un = std::isnan(a) || std::isnan(b);
  switch (c) {
    case 0: return false; case 1: return lt; case 2: return eq; case 3: return lt || eq; case 4: return gt;
    case 5: return lt || gt; case 6: return gt || eq; case 7: return !un; case 8: return un; case 9: return !(gt || eq);
    case 10: return !(lt || gt); case 11: return !gt; case 12: return !(lt || eq); case 13: return !eq; case 14: return !lt;
    default: return true;
  }
}
template <typename I>
bool int_cond(unsigned c, I a, I b) {
  switch (c) {
    case 0: return false; case 1: return a < b; case 2: return a == b; case 3: return a <= b; case 4: return a > b;
    case 5: return a != b; case 6: return a >= b; default: return true;
  }
}
// v_cmp_class mask bits: 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal, 9 +inf.
template <typename F>
bool float_class(F x, uint32_t mask, bool quiet_bit_set) {
  int bit;
  if (std::isnan(x)) bit = quiet_bit_set ? 1 : 0;
  else if (std::isinf(x)) bit = std::signbit(x) ? 2 : 9;
  else if (x == 0) bit = std::signbit(x) ? 5 : 6;
  else if (std::fpclassify(x) == FP_SUBNORMAL) bit = std::signbit(x) ? 4 : 7;
  else bit = std::signbit(x) ? 3 : 8;
  return (mask >> bit) & 1;
}

int exponent_f32(float x) { return static_cast<int>((bits_of(x) >> 23) & 0xff); }
int exponent_f64(double x) { return static_cast<int>((bits_of(x) >> 52) & 0x7ff); }

// V_DIV_SCALE (ISA guide pseudocode; firmware-notes/amd-rdna3-exec.md "Division"): scales the operand that would
// under- or overflow in the Newton-Raphson division; `vcc` tells V_DIV_FMAS to undo the scale.
template <typename F>
F div_scale(F s0, F s1, F s2, bool& vcc) {
  constexpr bool is32 = sizeof(F) == 4;
  constexpr int kScale = is32 ? 64 : 128, kExpGap = is32 ? 96 : 768, kTiny = is32 ? 23 : 53;
  auto expo = [](F x) { if constexpr (is32) return exponent_f32(x); else return exponent_f64(x); };
  vcc = false;
  if (s2 == 0 || s1 == 0 || std::isnan(s1) || std::isnan(s2)) return std::numeric_limits<F>::quiet_NaN();
  if (expo(s2) - expo(s1) >= kExpGap) {
    vcc = true;
    return s0 == s1 ? std::ldexp(s0, kScale) : s0;
  }
  if (std::fpclassify(s1) == FP_SUBNORMAL) return std::ldexp(s0, kScale);
  F q = s2 / s1;
  if (std::fpclassify(q) == FP_SUBNORMAL) {
    vcc = true;
    return s0 == s2 ? std::ldexp(s0, kScale) : s0;
  }
  if (expo(s2) <= kTiny) {
    vcc = true;
    return std::ldexp(s0, kScale);
  }
  return s0;
}

template <typename F>
F div_fixup(F s0, F s1, F s2) {
  constexpr bool is32 = sizeof(F) == 4;
  bool sign = std::signbit(s1) != std::signbit(s2);
  F inf = std::numeric_limits<F>::infinity();
  if (std::isnan(s2)) return s2;
  if (std::isnan(s1)) return s1;
  if (s1 == 0 && s2 == 0) return std::numeric_limits<F>::quiet_NaN();
  if (std::isinf(s1) && std::isinf(s2)) return std::numeric_limits<F>::quiet_NaN();
  if (s1 == 0 || std::isinf(s2)) return sign ? -inf : inf;
  if (std::isinf(s1) || s2 == 0) return sign ? F(-0.0) : F(0.0);
  (void)is32;
  if (std::isnan(s0)) return sign ? -inf : inf;
  return sign ? -std::fabs(s0) : std::fabs(s0);
}

uint32_t cvt_f32_to_u32(float f) {
  if (std::isnan(f)) return 0;
  if (f <= 0) return 0;
  if (f >= 4294967296.0f) return 0xffffffffu;
  return static_cast<uint32_t>(f);
}
int32_t cvt_f32_to_i32(double f) {
  if (std::isnan(f)) return 0;
  if (f <= -2147483648.0) return std::numeric_limits<int32_t>::min();
  if (f >= 2147483647.0) return std::numeric_limits<int32_t>::max();
  return static_cast<int32_t>(f);
}
uint32_t cvt_f64_to_u32(double f) {
  if (std::isnan(f) || f <= 0) return 0;
  if (f >= 4294967295.0) return 0xffffffffu;
  return static_cast<uint32_t>(f);
}
int16_t cvt_to_i16(float f) {
  if (std::isnan(f)) return 0;
  return static_cast<int16_t>(std::clamp(std::trunc(f), -32768.0f, 32767.0f));
}
uint16_t cvt_to_u16(float f) {
  if (std::isnan(f)) return 0;
  return static_cast<uint16_t>(std::clamp(std::trunc(f), 0.0f, 65535.0f));
}

// Hardware transcendentals: V_SIN/V_COS take revolutions (sin(2*pi*x)), V_EXP is 2^x, V_LOG is log2 (ISA guide,
// VOP1 opcode descriptions). Computed in double and rounded once: at least as accurate as the ~1 ulp hardware.
float sin_rev(float x) { double f = static_cast<double>(x) - std::floor(static_cast<double>(x)); return static_cast<float>(std::sin(f * 2.0 * M_PI)); }
float cos_rev(float x) { double f = static_cast<double>(x) - std::floor(static_cast<double>(x)); return static_cast<float>(std::cos(f * 2.0 * M_PI)); }
float fract32(float x) {
  if (std::isinf(x)) return std::numeric_limits<float>::quiet_NaN();
  return std::min(x - std::floor(x), 0x1.fffffep-1f);
}
double fract64(double x) {
  if (std::isinf(x)) return std::numeric_limits<double>::quiet_NaN();
  return std::min(x - std::floor(x), 0x1.fffffffffffffp-1);
}

uint32_t bfe_u32(uint32_t v, uint32_t off, uint32_t width) {
  off &= 31; width &= 31;
  if (width == 0) return 0;
  return (v >> off) & ((width == 32) ? 0xffffffffu : ((1u << width) - 1));
}
int32_t bfe_i32(uint32_t v, uint32_t off, uint32_t width) {
  off &= 31; width &= 31;
  if (width == 0) return 0;
  uint32_t x = (v >> off) & ((1u << width) - 1);
  if ((x >> (width - 1)) & 1) x |= ~((1u << width) - 1);
  return static_cast<int32_t>(x);
}

int16_t i16(const Operands& s, int i, uint32_t lane) { return static_cast<int16_t>(s.u16(i, lane)); }

template <typename T>
T med3(T a, T b, T c) { return std::max(std::min(a, b), std::min(std::max(a, b), c)); }

uint32_t perm_byte(uint64_t data, uint32_t sel) {
  if (sel < 8) return static_cast<uint32_t>((data >> (sel * 8)) & 0xff);
  switch (sel) {
    case 8: return ((data >> 15) & 1) ? 0xff : 0;
    case 9: return ((data >> 31) & 1) ? 0xff : 0;
    case 10: return ((data >> 47) & 1) ? 0xff : 0;
    case 11: return ((data >> 63) & 1) ? 0xff : 0;
    case 12: return 0;
    default: return 0xff;
  }
}

class Valu {
 public:
  Valu(Wave& w, const Rdna3Inst& in) : w_(w), in_(in), exec_(w.exec()) {}

  void run(uint16_t op, bool e32_vcc) {
    Operands s(w_, in_, 3);
    e32_ = e32_vcc;
    if (op < kVop2Base) return compare(op, s);
    auto v32 = [&](auto fn) { for_lanes([&](uint32_t l) { dst(l) = fn(l); }); };
    auto f32 = [&](auto fn) { for_lanes([&](uint32_t l) { dst(l) = bits_of(omod_clamp(static_cast<float>(fn(l)), in_)); }); };
    auto f64 = [&](auto fn) { for_lanes([&](uint32_t l) { put64(l, bits_of(omod_clamp(static_cast<double>(fn(l)), in_))); }); };
    auto u64r = [&](auto fn) { for_lanes([&](uint32_t l) { put64(l, fn(l)); }); };
    auto f16 = [&](auto fn) { for_lanes([&](uint32_t l) { put16(l, float_to_half(omod_clamp(static_cast<float>(fn(l)), in_))); }); };
    auto u16r = [&](auto fn) { for_lanes([&](uint32_t l) { put16(l, static_cast<uint16_t>(fn(l))); }); };
    if (op == kReadfirstlane) {
      uint32_t lane = exec_ ? static_cast<uint32_t>(std::countr_zero(exec_)) : 0;
      return write_scalar32(w_, in_.vdst, s.u32(0, lane));
    }
    if (op == kMovB16) return u16r([&](uint32_t l) { return s.u16(0, l); });
    switch (static_cast<Vop3>(op)) {
      // ---- VOP2 ops ----
      case Vop3::V_CNDMASK_B32: {
        uint32_t mask = e32_ ? w_.s[operand::kVccLo] : read_scalar32(w_, in_.src[2], in_.literal);
        // The e64 form may carry abs/neg float modifiers; apply them only when present.
        if (in_.abs || in_.neg) return f32([&](uint32_t l) { return ((mask >> l) & 1) ? s.f32(1, l) : s.f32(0, l); });
        return v32([&](uint32_t l) { return ((mask >> l) & 1) ? s.u32(1, l) : s.u32(0, l); });
      }
      case Vop3::V_ADD_F32: return f32([&](uint32_t l) { return s.f32(0, l) + s.f32(1, l); });
      case Vop3::V_SUB_F32: return f32([&](uint32_t l) { return s.f32(0, l) - s.f32(1, l); });
      case Vop3::V_SUBREV_F32: return f32([&](uint32_t l) { return s.f32(1, l) - s.f32(0, l); });
      case Vop3::V_MUL_F32: return f32([&](uint32_t l) { return s.f32(0, l) * s.f32(1, l); });
      case Vop3::V_MUL_DX9_ZERO_F32:
        return f32([&](uint32_t l) { float a = s.f32(0, l), b = s.f32(1, l); return (a == 0 || b == 0) ? 0.0f : a * b; });
      case Vop3::V_MUL_I32_I24:
        return v32([&](uint32_t l) { return static_cast<uint32_t>(int64_t{(s.i32(0, l) << 8) >> 8} * ((s.i32(1, l) << 8) >> 8)); });
      case Vop3::V_MUL_HI_I32_I24:
        return v32([&](uint32_t l) { return static_cast<uint32_t>((int64_t{(s.i32(0, l) << 8) >> 8} * ((s.i32(1, l) << 8) >> 8)) >> 32); });
      case Vop3::V_MUL_U32_U24: return v32([&](uint32_t l) { return (s.u32(0, l) & 0xffffff) * (s.u32(1, l) & 0xffffff); });
      case Vop3::V_MUL_HI_U32_U24:
        return v32([&](uint32_t l) { return static_cast<uint32_t>((uint64_t{s.u32(0, l) & 0xffffff} * (s.u32(1, l) & 0xffffff)) >> 32); });
      case Vop3::V_MIN_F32: return f32([&](uint32_t l) { return fmin32(s.f32(0, l), s.f32(1, l)); });
      case Vop3::V_MAX_F32: return f32([&](uint32_t l) { return fmax32(s.f32(0, l), s.f32(1, l)); });
      case Vop3::V_MIN_I32: return v32([&](uint32_t l) { return static_cast<uint32_t>(std::min(s.i32(0, l), s.i32(1, l))); });
      case Vop3::V_MAX_I32: return v32([&](uint32_t l) { return static_cast<uint32_t>(std::max(s.i32(0, l), s.i32(1, l))); });
      case Vop3::V_MIN_U32: return v32([&](uint32_t l) { return std::min(s.u32(0, l), s.u32(1, l)); });
      case Vop3::V_MAX_U32: return v32([&](uint32_t l) { return std::max(s.u32(0, l), s.u32(1, l)); });
      case Vop3::V_LSHLREV_B32: return v32([&](uint32_t l) { return s.u32(1, l) << (s.u32(0, l) & 31); });
      case Vop3::V_LSHRREV_B32: return v32([&](uint32_t l) { return s.u32(1, l) >> (s.u32(0, l) & 31); });
      case Vop3::V_ASHRREV_I32: return v32([&](uint32_t l) { return static_cast<uint32_t>(s.i32(1, l) >> (s.u32(0, l) & 31)); });
      case Vop3::V_AND_B32: return v32([&](uint32_t l) { return s.u32(0, l) & s.u32(1, l); });
      case Vop3::V_OR_B32: return v32([&](uint32_t l) { return s.u32(0, l) | s.u32(1, l); });
      case Vop3::V_XOR_B32: return v32([&](uint32_t l) { return s.u32(0, l) ^ s.u32(1, l); });
      case Vop3::V_XNOR_B32: return v32([&](uint32_t l) { return ~(s.u32(0, l) ^ s.u32(1, l)); });
      case Vop3::V_ADD_CO_CI_U32: case Vop3::V_SUB_CO_CI_U32: case Vop3::V_SUBREV_CO_CI_U32: {
        uint32_t carry_in = e32_ ? w_.s[operand::kVccLo] : read_scalar32(w_, in_.src[2], in_.literal);
        return carry_op(op, s, carry_in);
      }
      case Vop3::V_ADD_CO_U32: case Vop3::V_SUB_CO_U32: case Vop3::V_SUBREV_CO_U32: return carry_op(op, s, 0);
      case Vop3::V_ADD_NC_U32: return v32([&](uint32_t l) { return s.u32(0, l) + s.u32(1, l); });
      case Vop3::V_SUB_NC_U32: return v32([&](uint32_t l) { return s.u32(0, l) - s.u32(1, l); });
      case Vop3::V_SUBREV_NC_U32: return v32([&](uint32_t l) { return s.u32(1, l) - s.u32(0, l); });
      case Vop3::V_ADD_NC_I32: return v32([&](uint32_t l) { return s.u32(0, l) + s.u32(1, l); });
      case Vop3::V_SUB_NC_I32: return v32([&](uint32_t l) { return s.u32(0, l) - s.u32(1, l); });
      case Vop3::V_FMAC_F32: {
        uint32_t* d = w_.vreg(in_.vdst);
        return f32([&](uint32_t l) { return std::fma(s.f32(0, l), s.f32(1, l), f32_of(d[l])); });
      }
      case Vop3::V_FMAC_F16: {
        uint32_t* d = w_.vreg(in_.vdst);
        return f16([&](uint32_t l) { return static_cast<float>(std::fma(double{s.f16(0, l)}, double{s.f16(1, l)}, double{half_to_float(static_cast<uint16_t>(d[l] >> ((in_.opsel & 8) ? 16 : 0)))})); });
      }
      case Vop3::V_CVT_PK_RTZ_F16_F32:
        return v32([&](uint32_t l) { return uint32_t{f32_to_f16_rtz(s.f32(0, l))} | (uint32_t{f32_to_f16_rtz(s.f32(1, l))} << 16); });
      case Vop3::V_ADD_F16: return f16([&](uint32_t l) { return s.f16(0, l) + s.f16(1, l); });
      case Vop3::V_SUB_F16: return f16([&](uint32_t l) { return s.f16(0, l) - s.f16(1, l); });
      case Vop3::V_SUBREV_F16: return f16([&](uint32_t l) { return s.f16(1, l) - s.f16(0, l); });
      case Vop3::V_MUL_F16: return f16([&](uint32_t l) { return s.f16(0, l) * s.f16(1, l); });
      case Vop3::V_MAX_F16: return f16([&](uint32_t l) { return fmax32(s.f16(0, l), s.f16(1, l)); });
      case Vop3::V_MIN_F16: return f16([&](uint32_t l) { return fmin32(s.f16(0, l), s.f16(1, l)); });
      case Vop3::V_LDEXP_F16: return f16([&](uint32_t l) { return std::ldexp(s.f16(0, l), static_cast<int16_t>(s.u16(1, l))); });
      // ---- VOP1 ops ----
      case Vop3::V_MOV_B32: return v32([&](uint32_t l) { return s.u32(0, l); });
      case Vop3::V_CVT_I32_F64: return v32([&](uint32_t l) { return static_cast<uint32_t>(cvt_f32_to_i32(s.f64(0, l))); });
      case Vop3::V_CVT_F64_I32: return f64([&](uint32_t l) { return static_cast<double>(s.i32(0, l)); });
      case Vop3::V_CVT_F32_I32: return f32([&](uint32_t l) { return static_cast<float>(s.i32(0, l)); });
      case Vop3::V_CVT_F32_U32: return f32([&](uint32_t l) { return static_cast<float>(s.u32(0, l)); });
      case Vop3::V_CVT_U32_F32: return v32([&](uint32_t l) { return cvt_f32_to_u32(s.f32(0, l)); });
      case Vop3::V_CVT_I32_F32: return v32([&](uint32_t l) { return static_cast<uint32_t>(cvt_f32_to_i32(s.f32(0, l))); });
      case Vop3::V_CVT_F16_F32: return f16([&](uint32_t l) { return s.f32(0, l); });
      case Vop3::V_CVT_F32_F16: return f32([&](uint32_t l) { return s.f16(0, l); });
      case Vop3::V_CVT_FLOOR_I32_F32: return v32([&](uint32_t l) { return static_cast<uint32_t>(cvt_f32_to_i32(std::floor(s.f32(0, l)))); });
      case Vop3::V_CVT_NEAREST_I32_F32: return v32([&](uint32_t l) { return static_cast<uint32_t>(cvt_f32_to_i32(std::floor(s.f32(0, l) + 0.5f))); });
      case Vop3::V_CVT_F32_F64: return f32([&](uint32_t l) { return static_cast<float>(s.f64(0, l)); });
      case Vop3::V_CVT_F64_F32: return f64([&](uint32_t l) { return static_cast<double>(s.f32(0, l)); });
      case Vop3::V_CVT_F32_UBYTE0: return f32([&](uint32_t l) { return static_cast<float>(s.u32(0, l) & 0xff); });
      case Vop3::V_CVT_F32_UBYTE1: return f32([&](uint32_t l) { return static_cast<float>((s.u32(0, l) >> 8) & 0xff); });
      case Vop3::V_CVT_F32_UBYTE2: return f32([&](uint32_t l) { return static_cast<float>((s.u32(0, l) >> 16) & 0xff); });
      case Vop3::V_CVT_F32_UBYTE3: return f32([&](uint32_t l) { return static_cast<float>(s.u32(0, l) >> 24); });
      case Vop3::V_CVT_U32_F64: return v32([&](uint32_t l) { return cvt_f64_to_u32(s.f64(0, l)); });
      case Vop3::V_CVT_F64_U32: return f64([&](uint32_t l) { return static_cast<double>(s.u32(0, l)); });
      case Vop3::V_TRUNC_F64: return f64([&](uint32_t l) { return std::trunc(s.f64(0, l)); });
      case Vop3::V_CEIL_F64: return f64([&](uint32_t l) { return std::ceil(s.f64(0, l)); });
      case Vop3::V_RNDNE_F64: return f64([&](uint32_t l) { return std::nearbyint(s.f64(0, l)); });
      case Vop3::V_FLOOR_F64: return f64([&](uint32_t l) { return std::floor(s.f64(0, l)); });
      case Vop3::V_FRACT_F32: return f32([&](uint32_t l) { return fract32(s.f32(0, l)); });
      case Vop3::V_TRUNC_F32: return f32([&](uint32_t l) { return std::trunc(s.f32(0, l)); });
      case Vop3::V_CEIL_F32: return f32([&](uint32_t l) { return std::ceil(s.f32(0, l)); });
      case Vop3::V_RNDNE_F32: return f32([&](uint32_t l) { return std::nearbyint(s.f32(0, l)); });
      case Vop3::V_FLOOR_F32: return f32([&](uint32_t l) { return std::floor(s.f32(0, l)); });
      case Vop3::V_EXP_F32: return f32([&](uint32_t l) { return static_cast<float>(std::exp2(static_cast<double>(s.f32(0, l)))); });
      case Vop3::V_LOG_F32: return f32([&](uint32_t l) { return static_cast<float>(std::log2(static_cast<double>(s.f32(0, l)))); });
      case Vop3::V_RCP_F32: case Vop3::V_RCP_IFLAG_F32: return f32([&](uint32_t l) { return 1.0f / s.f32(0, l); });
      case Vop3::V_RSQ_F32: return f32([&](uint32_t l) { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.f32(0, l)))); });
      case Vop3::V_RCP_F64: return f64([&](uint32_t l) { return 1.0 / s.f64(0, l); });
      case Vop3::V_RSQ_F64: return f64([&](uint32_t l) { return 1.0 / std::sqrt(s.f64(0, l)); });
      case Vop3::V_SQRT_F32: return f32([&](uint32_t l) { return std::sqrt(s.f32(0, l)); });
      case Vop3::V_SQRT_F64: return f64([&](uint32_t l) { return std::sqrt(s.f64(0, l)); });
      case Vop3::V_SIN_F32: return f32([&](uint32_t l) { return sin_rev(s.f32(0, l)); });
      case Vop3::V_COS_F32: return f32([&](uint32_t l) { return cos_rev(s.f32(0, l)); });
      case Vop3::V_NOT_B32: return v32([&](uint32_t l) { return ~s.u32(0, l); });
      case Vop3::V_BFREV_B32: return v32([&](uint32_t l) { uint32_t v = s.u32(0, l), r = 0; for (int i = 0; i < 32; ++i) r |= ((v >> i) & 1u) << (31 - i); return r; });
      case Vop3::V_CLZ_I32_U32: return v32([&](uint32_t l) { uint32_t v = s.u32(0, l); return v ? static_cast<uint32_t>(std::countl_zero(v)) : 0xffffffffu; });
      case Vop3::V_CLS_I32:
        // Leading bits equal to the sign bit, counted from bit 30: the position of the first that differs, -1 if none.
        return v32([&](uint32_t l) {
          uint32_t v = s.u32(0, l), x = (v ^ (v << 1)) & 0xfffffffeu;  // bit j+1 set where bits j and j+1 differ
          return x ? static_cast<uint32_t>(std::countl_zero(x)) + 1 : 0xffffffffu;
        });
      case Vop3::V_CTZ_I32_B32: return v32([&](uint32_t l) { uint32_t v = s.u32(0, l); return v ? static_cast<uint32_t>(std::countr_zero(v)) : 0xffffffffu; });
      case Vop3::V_FREXP_EXP_I32_F64: return v32([&](uint32_t l) { double x = s.f64(0, l); int e = 0; if (std::isfinite(x)) std::frexp(x, &e); return static_cast<uint32_t>(e); });
      case Vop3::V_FREXP_MANT_F64: return f64([&](uint32_t l) { double x = s.f64(0, l); int e; return std::isfinite(x) ? std::frexp(x, &e) : x; });
      case Vop3::V_FRACT_F64: return f64([&](uint32_t l) { return fract64(s.f64(0, l)); });
      case Vop3::V_FREXP_EXP_I32_F32: return v32([&](uint32_t l) { float x = s.f32(0, l); int e = 0; if (std::isfinite(x)) std::frexp(x, &e); return static_cast<uint32_t>(e); });
      case Vop3::V_FREXP_MANT_F32: return f32([&](uint32_t l) { float x = s.f32(0, l); int e; return std::isfinite(x) ? std::frexp(x, &e) : x; });
      case Vop3::V_CVT_F16_U16: return f16([&](uint32_t l) { return static_cast<float>(s.u16(0, l)); });
      case Vop3::V_CVT_F16_I16: return f16([&](uint32_t l) { return static_cast<float>(static_cast<int16_t>(s.u16(0, l))); });
      case Vop3::V_CVT_U16_F16: return u16r([&](uint32_t l) { return cvt_to_u16(s.f16(0, l)); });
      case Vop3::V_CVT_I16_F16: return u16r([&](uint32_t l) { return static_cast<uint16_t>(cvt_to_i16(s.f16(0, l))); });
      case Vop3::V_RCP_F16: return f16([&](uint32_t l) { return 1.0f / s.f16(0, l); });
      case Vop3::V_SQRT_F16: return f16([&](uint32_t l) { return std::sqrt(s.f16(0, l)); });
      case Vop3::V_RSQ_F16: return f16([&](uint32_t l) { return 1.0f / std::sqrt(s.f16(0, l)); });
      case Vop3::V_LOG_F16: return f16([&](uint32_t l) { return std::log2(s.f16(0, l)); });
      case Vop3::V_EXP_F16: return f16([&](uint32_t l) { return std::exp2(s.f16(0, l)); });
      case Vop3::V_FLOOR_F16: return f16([&](uint32_t l) { return std::floor(s.f16(0, l)); });
      case Vop3::V_CEIL_F16: return f16([&](uint32_t l) { return std::ceil(s.f16(0, l)); });
      case Vop3::V_TRUNC_F16: return f16([&](uint32_t l) { return std::trunc(s.f16(0, l)); });
      case Vop3::V_RNDNE_F16: return f16([&](uint32_t l) { return std::nearbyint(s.f16(0, l)); });
      case Vop3::V_FRACT_F16: return f16([&](uint32_t l) { return std::min(fract32(s.f16(0, l)), 0.99951171875f); });
      case Vop3::V_SIN_F16: return f16([&](uint32_t l) { return sin_rev(s.f16(0, l)); });
      case Vop3::V_COS_F16: return f16([&](uint32_t l) { return cos_rev(s.f16(0, l)); });
      case Vop3::V_NOT_B16: return u16r([&](uint32_t l) { return ~s.u16(0, l); });
      case Vop3::V_CVT_I32_I16: return v32([&](uint32_t l) { return static_cast<uint32_t>(int32_t{static_cast<int16_t>(s.u16(0, l))}); });
      case Vop3::V_CVT_U32_U16: return v32([&](uint32_t l) { return uint32_t{s.u16(0, l)}; });
      // ---- VOP3-only ops ----
      case Vop3::V_MAD_I32_I24:
        return v32([&](uint32_t l) { return static_cast<uint32_t>(int64_t{(s.i32(0, l) << 8) >> 8} * ((s.i32(1, l) << 8) >> 8)) + s.u32(2, l); });
      case Vop3::V_MAD_U32_U24: return v32([&](uint32_t l) { return (s.u32(0, l) & 0xffffff) * (s.u32(1, l) & 0xffffff) + s.u32(2, l); });
      case Vop3::V_BFE_U32: return v32([&](uint32_t l) { return bfe_u32(s.u32(0, l), s.u32(1, l), s.u32(2, l)); });
      case Vop3::V_BFE_I32: return v32([&](uint32_t l) { return static_cast<uint32_t>(bfe_i32(s.u32(0, l), s.u32(1, l), s.u32(2, l))); });
      case Vop3::V_BFI_B32: return v32([&](uint32_t l) { uint32_t m = s.u32(0, l); return (m & s.u32(1, l)) | (~m & s.u32(2, l)); });
      case Vop3::V_FMA_F32: return f32([&](uint32_t l) { return std::fma(s.f32(0, l), s.f32(1, l), s.f32(2, l)); });
      case Vop3::V_FMA_DX9_ZERO_F32:
        return f32([&](uint32_t l) { float a = s.f32(0, l), b = s.f32(1, l); return (a == 0 || b == 0) ? s.f32(2, l) : std::fma(a, b, s.f32(2, l)); });
      case Vop3::V_FMA_F64: return f64([&](uint32_t l) { return std::fma(s.f64(0, l), s.f64(1, l), s.f64(2, l)); });
      case Vop3::V_FMA_F16:
        return f16([&](uint32_t l) { return static_cast<float>(std::fma(double{s.f16(0, l)}, double{s.f16(1, l)}, double{s.f16(2, l)})); });
      case Vop3::V_ALIGNBIT_B32:
        return v32([&](uint32_t l) { return static_cast<uint32_t>(((uint64_t{s.u32(0, l)} << 32) | s.u32(1, l)) >> (s.u32(2, l) & 31)); });
      case Vop3::V_ALIGNBYTE_B32:
        return v32([&](uint32_t l) { return static_cast<uint32_t>(((uint64_t{s.u32(0, l)} << 32) | s.u32(1, l)) >> ((s.u32(2, l) & 3) * 8)); });
      case Vop3::V_MIN3_F32: return f32([&](uint32_t l) { return fmin32(fmin32(s.f32(0, l), s.f32(1, l)), s.f32(2, l)); });
      case Vop3::V_MAX3_F32: return f32([&](uint32_t l) { return fmax32(fmax32(s.f32(0, l), s.f32(1, l)), s.f32(2, l)); });
      case Vop3::V_MIN3_I32: return v32([&](uint32_t l) { return static_cast<uint32_t>(std::min({s.i32(0, l), s.i32(1, l), s.i32(2, l)})); });
      case Vop3::V_MAX3_I32: return v32([&](uint32_t l) { return static_cast<uint32_t>(std::max({s.i32(0, l), s.i32(1, l), s.i32(2, l)})); });
      case Vop3::V_MIN3_U32: return v32([&](uint32_t l) { return std::min({s.u32(0, l), s.u32(1, l), s.u32(2, l)}); });
      case Vop3::V_MAX3_U32: return v32([&](uint32_t l) { return std::max({s.u32(0, l), s.u32(1, l), s.u32(2, l)}); });
      case Vop3::V_MED3_I32: return v32([&](uint32_t l) { return static_cast<uint32_t>(med3(s.i32(0, l), s.i32(1, l), s.i32(2, l))); });
      case Vop3::V_MED3_U32: return v32([&](uint32_t l) { return med3(s.u32(0, l), s.u32(1, l), s.u32(2, l)); });
      case Vop3::V_MED3_F32:
        return f32([&](uint32_t l) {
          float a = s.f32(0, l), b = s.f32(1, l), c = s.f32(2, l);
          if (std::isnan(a) || std::isnan(b) || std::isnan(c)) return fmin32(fmin32(a, b), c);
          return med3(a, b, c);
        });
      case Vop3::V_MAXMIN_F32: return f32([&](uint32_t l) { return fmin32(fmax32(s.f32(0, l), s.f32(1, l)), s.f32(2, l)); });
      case Vop3::V_MINMAX_F32: return f32([&](uint32_t l) { return fmax32(fmin32(s.f32(0, l), s.f32(1, l)), s.f32(2, l)); });
      case Vop3::V_MAXMIN_I32: return v32([&](uint32_t l) { return static_cast<uint32_t>(std::min(std::max(s.i32(0, l), s.i32(1, l)), s.i32(2, l))); });
      case Vop3::V_MINMAX_I32: return v32([&](uint32_t l) { return static_cast<uint32_t>(std::max(std::min(s.i32(0, l), s.i32(1, l)), s.i32(2, l))); });
      case Vop3::V_MAXMIN_U32: return v32([&](uint32_t l) { return std::min(std::max(s.u32(0, l), s.u32(1, l)), s.u32(2, l)); });
      case Vop3::V_MINMAX_U32: return v32([&](uint32_t l) { return std::max(std::min(s.u32(0, l), s.u32(1, l)), s.u32(2, l)); });
      case Vop3::V_DIV_FIXUP_F32: return f32([&](uint32_t l) { return div_fixup(s.f32(0, l), s.f32(1, l), s.f32(2, l)); });
      case Vop3::V_DIV_FIXUP_F64: return f64([&](uint32_t l) { return div_fixup(s.f64(0, l), s.f64(1, l), s.f64(2, l)); });
      case Vop3::V_DIV_FIXUP_F16:
        return f16([&](uint32_t l) { return div_fixup(s.f16(0, l), s.f16(1, l), s.f16(2, l)); });
      case Vop3::V_DIV_FMAS_F32: {
        uint32_t vcc = w_.s[operand::kVccLo];
        return f32([&](uint32_t l) {
          float r = std::fma(s.f32(0, l), s.f32(1, l), s.f32(2, l));
          if (!((vcc >> l) & 1)) return r;
          return exponent_f32(s.f32(2, l)) > 127 ? std::ldexp(r, 64) : std::ldexp(r, -64);
        });
      }
      case Vop3::V_DIV_FMAS_F64: {
        uint32_t vcc = w_.s[operand::kVccLo];
        return f64([&](uint32_t l) {
          double r = std::fma(s.f64(0, l), s.f64(1, l), s.f64(2, l));
          if (!((vcc >> l) & 1)) return r;
          return exponent_f64(s.f64(2, l)) > 1023 ? std::ldexp(r, 128) : std::ldexp(r, -128);
        });
      }
      case Vop3::V_DIV_SCALE_F32: {
        uint32_t mask = 0;
        for_lanes([&](uint32_t l) {
          bool vcc = false;
          dst(l) = bits_of(div_scale(s.f32(0, l), s.f32(1, l), s.f32(2, l), vcc));
          mask |= uint32_t{vcc} << l;
        });
        return write_scalar32(w_, in_.sdst, mask);
      }
      case Vop3::V_DIV_SCALE_F64: {
        uint32_t mask = 0;
        for_lanes([&](uint32_t l) {
          bool vcc = false;
          put64(l, bits_of(div_scale(s.f64(0, l), s.f64(1, l), s.f64(2, l), vcc)));
          mask |= uint32_t{vcc} << l;
        });
        return write_scalar32(w_, in_.sdst, mask);
      }
      case Vop3::V_XOR3_B32: return v32([&](uint32_t l) { return s.u32(0, l) ^ s.u32(1, l) ^ s.u32(2, l); });
      case Vop3::V_PERM_B32:
        return v32([&](uint32_t l) {
          uint64_t data = (uint64_t{s.u32(0, l)} << 32) | s.u32(1, l);
          uint32_t sel = s.u32(2, l), r = 0;
          for (int b = 0; b < 4; ++b) r |= perm_byte(data, (sel >> (8 * b)) & 0xff) << (8 * b);
          return r;
        });
      case Vop3::V_XAD_U32: return v32([&](uint32_t l) { return (s.u32(0, l) ^ s.u32(1, l)) + s.u32(2, l); });
      case Vop3::V_LSHL_ADD_U32: return v32([&](uint32_t l) { return (s.u32(0, l) << (s.u32(1, l) & 31)) + s.u32(2, l); });
      case Vop3::V_ADD_LSHL_U32: return v32([&](uint32_t l) { return (s.u32(0, l) + s.u32(1, l)) << (s.u32(2, l) & 31); });
      case Vop3::V_ADD3_U32: return v32([&](uint32_t l) { return s.u32(0, l) + s.u32(1, l) + s.u32(2, l); });
      case Vop3::V_LSHL_OR_B32: return v32([&](uint32_t l) { return (s.u32(0, l) << (s.u32(1, l) & 31)) | s.u32(2, l); });
      case Vop3::V_AND_OR_B32: return v32([&](uint32_t l) { return (s.u32(0, l) & s.u32(1, l)) | s.u32(2, l); });
      case Vop3::V_OR3_B32: return v32([&](uint32_t l) { return s.u32(0, l) | s.u32(1, l) | s.u32(2, l); });
      case Vop3::V_MAD_U32_U16: return v32([&](uint32_t l) { return uint32_t{s.u16(0, l)} * s.u16(1, l) + s.u32(2, l); });
      case Vop3::V_MAD_I32_I16:
        return v32([&](uint32_t l) { return static_cast<uint32_t>(int32_t{static_cast<int16_t>(s.u16(0, l))} * static_cast<int16_t>(s.u16(1, l))) + s.u32(2, l); });
      case Vop3::V_MAD_U16: return u16r([&](uint32_t l) { return uint32_t{s.u16(0, l)} * s.u16(1, l) + s.u16(2, l); });
      case Vop3::V_MAD_I16: return u16r([&](uint32_t l) { return static_cast<int16_t>(s.u16(0, l)) * static_cast<int16_t>(s.u16(1, l)) + static_cast<int16_t>(s.u16(2, l)); });
      case Vop3::V_CNDMASK_B16: {
        uint32_t mask = read_scalar32(w_, in_.src[2], in_.literal);
        return u16r([&](uint32_t l) { return ((mask >> l) & 1) ? s.u16(1, l) : s.u16(0, l); });
      }
      case Vop3::V_MAX3_U16: return u16r([&](uint32_t l) { return std::max({s.u16(0, l), s.u16(1, l), s.u16(2, l)}); });
      case Vop3::V_MIN3_U16: return u16r([&](uint32_t l) { return std::min({s.u16(0, l), s.u16(1, l), s.u16(2, l)}); });
      case Vop3::V_MED3_U16: return u16r([&](uint32_t l) { return med3(s.u16(0, l), s.u16(1, l), s.u16(2, l)); });
      case Vop3::V_MAX3_I16: return u16r([&](uint32_t l) { return std::max({i16(s, 0, l), i16(s, 1, l), i16(s, 2, l)}); });
      case Vop3::V_MIN3_I16: return u16r([&](uint32_t l) { return std::min({i16(s, 0, l), i16(s, 1, l), i16(s, 2, l)}); });
      case Vop3::V_MED3_I16: return u16r([&](uint32_t l) { return med3(i16(s, 0, l), i16(s, 1, l), i16(s, 2, l)); });
      case Vop3::V_MAX3_F16: return f16([&](uint32_t l) { return fmax32(fmax32(s.f16(0, l), s.f16(1, l)), s.f16(2, l)); });
      case Vop3::V_MIN3_F16: return f16([&](uint32_t l) { return fmin32(fmin32(s.f16(0, l), s.f16(1, l)), s.f16(2, l)); });
      case Vop3::V_MAD_U64_U32: case Vop3::V_MAD_I64_I32: {
        bool is_signed = static_cast<Vop3>(op) == Vop3::V_MAD_I64_I32;
        uint32_t carry = 0;
        for_lanes([&](uint32_t l) {
          uint64_t c = s.u64(2, l);
          uint64_t r;
          bool overflow;
          if (is_signed) {
            __int128 p = static_cast<__int128>(int64_t{s.i32(0, l)}) * s.i32(1, l) + static_cast<int64_t>(c);
            r = static_cast<uint64_t>(p);
            overflow = p != static_cast<__int128>(static_cast<int64_t>(r));
          } else {
            unsigned __int128 p = static_cast<unsigned __int128>(uint64_t{s.u32(0, l)} * s.u32(1, l)) + c;
            r = static_cast<uint64_t>(p);
            overflow = (p >> 64) != 0;
          }
          put64(l, r);
          carry |= uint32_t{overflow} << l;
        });
        return write_scalar32(w_, in_.sdst, carry);
      }
      case Vop3::V_ADD_NC_U16: return u16r([&](uint32_t l) { return s.u16(0, l) + s.u16(1, l); });
      case Vop3::V_SUB_NC_U16: return u16r([&](uint32_t l) { return s.u16(0, l) - s.u16(1, l); });
      case Vop3::V_MUL_LO_U16: return u16r([&](uint32_t l) { return uint32_t{s.u16(0, l)} * s.u16(1, l); });  // unsigned: u16 * u16 overflows int
      case Vop3::V_MAX_U16: return u16r([&](uint32_t l) { return std::max(s.u16(0, l), s.u16(1, l)); });
      case Vop3::V_MIN_U16: return u16r([&](uint32_t l) { return std::min(s.u16(0, l), s.u16(1, l)); });
      case Vop3::V_MAX_I16: return u16r([&](uint32_t l) { return std::max(static_cast<int16_t>(s.u16(0, l)), static_cast<int16_t>(s.u16(1, l))); });
      case Vop3::V_MIN_I16: return u16r([&](uint32_t l) { return std::min(static_cast<int16_t>(s.u16(0, l)), static_cast<int16_t>(s.u16(1, l))); });
      case Vop3::V_ADD_NC_I16: return u16r([&](uint32_t l) { return s.u16(0, l) + s.u16(1, l); });
      case Vop3::V_SUB_NC_I16: return u16r([&](uint32_t l) { return s.u16(0, l) - s.u16(1, l); });
      case Vop3::V_PACK_B32_F16: {
        // f16 operands with float modifiers; bits packed low | high << 16.
        auto h = [&](int i, uint32_t l) { uint16_t b = s.u16(i, l); if ((in_.abs >> i) & 1) b &= 0x7fff; if ((in_.neg >> i) & 1) b ^= 0x8000; return uint32_t{b}; };
        return v32([&](uint32_t l) { return h(0, l) | (h(1, l) << 16); });
      }
      case Vop3::V_LDEXP_F32: return f32([&](uint32_t l) { return std::ldexp(s.f32(0, l), s.i32(1, l)); });
      case Vop3::V_BFM_B32: return v32([&](uint32_t l) { uint32_t width = s.u32(0, l) & 31; return ((width ? (1u << width) - 1 : 0u)) << (s.u32(1, l) & 31); });
      case Vop3::V_BCNT_U32_B32: return v32([&](uint32_t l) { return static_cast<uint32_t>(std::popcount(s.u32(0, l))) + s.u32(1, l); });
      case Vop3::V_MBCNT_LO_U32_B32: return v32([&](uint32_t l) { return static_cast<uint32_t>(std::popcount(s.u32(0, l) & ((1u << l) - 1))) + s.u32(1, l); });
      case Vop3::V_MBCNT_HI_U32_B32: return v32([&](uint32_t l) { return s.u32(1, l); });  // wave32: lanes 32-63 absent
      case Vop3::V_ADD_F64: return f64([&](uint32_t l) { return s.f64(0, l) + s.f64(1, l); });
      case Vop3::V_MUL_F64: return f64([&](uint32_t l) { return s.f64(0, l) * s.f64(1, l); });
      case Vop3::V_MIN_F64: return f64([&](uint32_t l) { return fmin64(s.f64(0, l), s.f64(1, l)); });
      case Vop3::V_MAX_F64: return f64([&](uint32_t l) { return fmax64(s.f64(0, l), s.f64(1, l)); });
      case Vop3::V_LDEXP_F64: return f64([&](uint32_t l) { return std::ldexp(s.f64(0, l), s.i32(1, l)); });
      case Vop3::V_MUL_LO_U32: return v32([&](uint32_t l) { return s.u32(0, l) * s.u32(1, l); });
      case Vop3::V_MUL_HI_U32: return v32([&](uint32_t l) { return static_cast<uint32_t>((uint64_t{s.u32(0, l)} * s.u32(1, l)) >> 32); });
      case Vop3::V_MUL_HI_I32: return v32([&](uint32_t l) { return static_cast<uint32_t>(static_cast<uint64_t>(int64_t{s.i32(0, l)} * s.i32(1, l)) >> 32); });
      case Vop3::V_LSHLREV_B16: return u16r([&](uint32_t l) { return s.u16(1, l) << (s.u16(0, l) & 15); });
      case Vop3::V_LSHRREV_B16: return u16r([&](uint32_t l) { return s.u16(1, l) >> (s.u16(0, l) & 15); });
      case Vop3::V_ASHRREV_I16: return u16r([&](uint32_t l) { return static_cast<int16_t>(s.u16(1, l)) >> (s.u16(0, l) & 15); });
      case Vop3::V_LSHLREV_B64: return u64r([&](uint32_t l) { return s.u64(1, l) << (s.u32(0, l) & 63); });
      case Vop3::V_LSHRREV_B64: return u64r([&](uint32_t l) { return s.u64(1, l) >> (s.u32(0, l) & 63); });
      case Vop3::V_ASHRREV_I64: return u64r([&](uint32_t l) { return static_cast<uint64_t>(static_cast<int64_t>(s.u64(1, l)) >> (s.u32(0, l) & 63)); });
      case Vop3::V_READLANE_B32: {
        uint32_t lane = read_scalar32(w_, in_.src[1], in_.literal) & 31;
        return write_scalar32(w_, in_.vdst, s.u32(0, lane));
      }
      case Vop3::V_WRITELANE_B32: {
        uint32_t lane = read_scalar32(w_, in_.src[1], in_.literal) & 31;
        w_.vreg(in_.vdst)[lane] = read_scalar32(w_, in_.src[0], in_.literal);
        return;
      }
      case Vop3::V_AND_B16: return u16r([&](uint32_t l) { return s.u16(0, l) & s.u16(1, l); });
      case Vop3::V_OR_B16: return u16r([&](uint32_t l) { return s.u16(0, l) | s.u16(1, l); });
      case Vop3::V_XOR_B16: return u16r([&](uint32_t l) { return s.u16(0, l) ^ s.u16(1, l); });
      default: unimplemented(in_);
    }
  }

  // VOP2 forms with the literal K inline (v_fmamk: D = S0 * K + S1; v_fmaak: D = S0 * S1 + K).
  void run_fmak(uint16_t vop2_op) {
    Operands s(w_, in_, 2);
    const uint32_t k = in_.literal;
    switch (vop2_op) {
      case kVop2FmamkF32: for_lanes([&](uint32_t l) { dst(l) = bits_of(std::fma(s.f32(0, l), f32_of(k), s.f32(1, l))); }); return;
      case kVop2FmaakF32: for_lanes([&](uint32_t l) { dst(l) = bits_of(std::fma(s.f32(0, l), s.f32(1, l), f32_of(k))); }); return;
      case kVop2FmamkF16:
        for_lanes([&](uint32_t l) { put16(l, float_to_half(static_cast<float>(std::fma(double{s.f16(0, l)}, double{half_to_float(static_cast<uint16_t>(k))}, double{s.f16(1, l)})))); });
        return;
      case kVop2FmaakF16:
        for_lanes([&](uint32_t l) { put16(l, float_to_half(static_cast<float>(std::fma(double{s.f16(0, l)}, double{s.f16(1, l)}, double{half_to_float(static_cast<uint16_t>(k))})))); });
        return;
      default: unimplemented(in_);
    }
  }

 private:
  static uint16_t f32_to_f16_rtz(float f) {
    uint16_t h = float_to_half(f);
    // Round toward zero: step back one ulp when round-to-nearest moved away from zero (magnitude grew).
    if (std::isnan(f)) return h;
    float back = half_to_float(h);
    if (std::fabs(back) > std::fabs(f)) --h;
    return h;
  }

  template <typename Fn>
  void for_lanes(Fn fn) {
    for (uint32_t m = exec_; m; m &= m - 1) fn(static_cast<uint32_t>(std::countr_zero(m)));
  }
  uint32_t& dst(uint32_t lane) { return w_.vreg(in_.vdst)[lane]; }
  void put64(uint32_t lane, uint64_t v) {
    uint32_t* d = w_.vreg(in_.vdst);
    d[lane] = static_cast<uint32_t>(v);
    d[lane + kWaveLanes] = static_cast<uint32_t>(v >> 32);
  }
  // A 16-bit result lands in the low half, or the high half with OPSEL[3]; the other half is kept.
  void put16(uint32_t lane, uint16_t v) {
    uint32_t& d = dst(lane);
    d = (in_.opsel & 8) ? (d & 0xffffu) | (uint32_t{v} << 16) : (d & 0xffff0000u) | v;
  }

  void carry_op(uint16_t op, const Operands& s, uint32_t carry_in) {
    uint32_t carry = 0;
    for_lanes([&](uint32_t l) {
      uint64_t a = s.u32(0, l), b = s.u32(1, l), ci = (carry_in >> l) & 1, r;
      bool out;
      switch (static_cast<Vop3>(op)) {
        case Vop3::V_ADD_CO_CI_U32: case Vop3::V_ADD_CO_U32: r = a + b + ci; out = (r >> 32) != 0; break;
        case Vop3::V_SUB_CO_CI_U32: case Vop3::V_SUB_CO_U32: r = a - b - ci; out = b + ci > a; break;
        default: r = b - a - ci; out = a + ci > b; break;
      }
      dst(l) = static_cast<uint32_t>(r);
      carry |= uint32_t{out} << l;
    });
    write_scalar32(w_, e32_ ? operand::kVccLo : in_.sdst, carry);
  }

  void compare(uint16_t op, const Operands& s) {
    const bool cmpx = op >= 128;
    const uint16_t base = op & 127;
    uint32_t mask = 0;
    auto each = [&](auto pred) { for_lanes([&](uint32_t l) { mask |= uint32_t{pred(l)} << l; }); };
    if (base < 16) each([&](uint32_t l) { return float_cond(base, s.f16(0, l), s.f16(1, l)); });
    else if (base < 32) each([&](uint32_t l) { return float_cond(base - 16u, s.f32(0, l), s.f32(1, l)); });
    else if (base < 48) each([&](uint32_t l) { return float_cond(base - 32u, s.f64(0, l), s.f64(1, l)); });
    else if (base < 56) each([&](uint32_t l) { return int_cond(base - 48u, static_cast<int16_t>(s.u16(0, l)), static_cast<int16_t>(s.u16(1, l))); });
    else if (base < 64) each([&](uint32_t l) { return int_cond(base - 56u, s.u16(0, l), s.u16(1, l)); });
    else if (base < 72) each([&](uint32_t l) { return int_cond(base - 64u, s.i32(0, l), s.i32(1, l)); });
    else if (base < 80) each([&](uint32_t l) { return int_cond(base - 72u, s.u32(0, l), s.u32(1, l)); });
    else if (base < 88) each([&](uint32_t l) { return int_cond(base - 80u, static_cast<int64_t>(s.u64(0, l)), static_cast<int64_t>(s.u64(1, l))); });
    else if (base < 96) each([&](uint32_t l) { return int_cond(base - 88u, s.u64(0, l), s.u64(1, l)); });
    else if (base == 125) each([&](uint32_t l) { uint16_t b = s.u16(0, l); return float_class(s.f16(0, l), s.u32(1, l), (b >> 9) & 1); });
    else if (base == 126) each([&](uint32_t l) { return float_class(s.f32(0, l), s.u32(1, l), (s.u32(0, l) >> 22) & 1); });
    else if (base == 127) each([&](uint32_t l) { return float_class(s.f64(0, l), s.u32(1, l), (s.u64(0, l, true) >> 51) & 1); });
    else unimplemented(in_);
    // VOPC writes 0 for inactive lanes; V_CMPX writes EXEC only (gfx11: no SGPR destination).
    if (cmpx) w_.s[operand::kExecLo] = mask;
    else write_scalar32(w_, e32_ ? operand::kVccLo : in_.sdst, mask);
  }

  Wave& w_;
  const Rdna3Inst& in_;
  uint32_t exec_;
  bool e32_ = false;
};

// VOPD: two VOP2-like ops issued together; both read their sources before either writes (ISA guide, "VOPD").
// Opcodes from the ISA guide's VOPD table: X and Y share 0-13, Y adds 16-18.
uint32_t vopd_op(Wave& w, uint16_t op, uint16_t src0, uint16_t vsrc1, uint16_t vdst, uint32_t literal, uint32_t lane,
                 const Rdna3Inst& in) {
  auto rd = [&](uint16_t code) { return code >= operand::kVgpr0 ? w.vreg(code - operand::kVgpr0)[lane] : read_scalar32(w, code, literal); };
  uint32_t a = rd(src0), b = rd(vsrc1);
  float fa = f32_of(a), fb = f32_of(b);
  switch (op) {
    case 0: return bits_of(std::fma(fa, fb, f32_of(w.vreg(vdst - operand::kVgpr0)[lane])));  // FMAC
    case 1: return bits_of(std::fma(fa, fb, f32_of(literal)));                                // FMAAK
    case 2: return bits_of(std::fma(fa, f32_of(literal), fb));                                // FMAMK
    case 3: return bits_of(fa * fb);
    case 4: return bits_of(fa + fb);
    case 5: return bits_of(fa - fb);
    case 6: return bits_of(fb - fa);
    case 7: return bits_of((fa == 0 || fb == 0) ? 0.0f : fa * fb);
    case 8: return a;  // MOV
    case 9: return ((w.s[operand::kVccLo] >> lane) & 1) ? b : a;  // CNDMASK (VCC)
    case 10: return bits_of(fmax32(fa, fb));
    case 11: return bits_of(fmin32(fa, fb));
    case 16: return a + b;
    case 17: return b << (a & 31);
    case 18: return a & b;
    default: unimplemented(in);
  }
}

void exec_vopd(Wave& w, const Rdna3Inst& in) {
  const uint16_t dx = in.vdst >= operand::kVgpr0 ? in.vdst : static_cast<uint16_t>(in.vdst + operand::kVgpr0);
  const uint16_t dy = in.vdsty >= operand::kVgpr0 ? in.vdsty : static_cast<uint16_t>(in.vdsty + operand::kVgpr0);
  uint32_t rx[kWaveLanes], ry[kWaveLanes];
  const uint32_t exec = w.exec();
  for (uint32_t m = exec; m; m &= m - 1) {
    uint32_t l = static_cast<uint32_t>(std::countr_zero(m));
    rx[l] = vopd_op(w, in.op, in.src[0], in.src[1], dx, in.literal, l, in);
    ry[l] = vopd_op(w, in.opy, in.srcy0, in.vsrcy1, dy, in.literal, l, in);
  }
  uint32_t* px = w.vreg(dx - operand::kVgpr0);
  uint32_t* py = w.vreg(dy - operand::kVgpr0);
  for (uint32_t m = exec; m; m &= m - 1) {
    uint32_t l = static_cast<uint32_t>(std::countr_zero(m));
    px[l] = rx[l];
    py[l] = ry[l];
  }
}

// VOP3P packed 16-bit ops: the low result half takes each source's half chosen by OP_SEL (bit i: high half of
// source i) and NEG; the high result half takes OP_SEL_HI and NEG_HI (ISA guide, "VOP3P").
void exec_vop3p(Wave& w, const Rdna3Inst& in) {
  Operands s(w, in, 3);
  auto raw = [&](int i, uint32_t l) -> uint32_t {
    if (s.row[i]) return s.row[i][l];
    // An inline float constant is the f16 value in both halves; other scalars supply their own two halves.
    if (in.src[i] >= 240 && in.src[i] <= 248) return kInlineF16[in.src[i] - 240] * 0x10001u;
    return s.k32[i];
  };
  auto half_bits = [&](int i, uint32_t l, bool hi_result) -> uint16_t {
    bool take_hi = hi_result ? (in.opsel_hi >> i) & 1 : (in.opsel >> i) & 1;
    return static_cast<uint16_t>(take_hi ? raw(i, l) >> 16 : raw(i, l));
  };
  auto half_f = [&](int i, uint32_t l, bool hi_result) -> float {
    uint16_t b = half_bits(i, l, hi_result);
    if (hi_result ? (in.neg_hi >> i) & 1 : (in.neg >> i) & 1) b ^= 0x8000;
    return half_to_float(b);
  };
  auto packed = [&](auto fn) {
    uint32_t* d = w.vreg(in.vdst);
    for (uint32_t m = w.exec(); m; m &= m - 1) {
      uint32_t l = static_cast<uint32_t>(std::countr_zero(m));
      d[l] = uint32_t{static_cast<uint16_t>(fn(l, false))} | (uint32_t{static_cast<uint16_t>(fn(l, true))} << 16);
    }
  };
  auto u = [&](int i, uint32_t l, bool hi) -> uint32_t { return half_bits(i, l, hi); };  // u16 * u16 in unsigned, not int
  auto si = [&](int i, uint32_t l, bool hi) { return static_cast<int16_t>(half_bits(i, l, hi)); };
  auto f16 = [&](auto fn) { packed([&](uint32_t l, bool hi) { return float_to_half(static_cast<float>(fn(l, hi))); }); };
  switch (static_cast<Vop3p>(in.op)) {
    case Vop3p::V_PK_MAD_I16: return packed([&](uint32_t l, bool h) { return si(0, l, h) * si(1, l, h) + si(2, l, h); });
    case Vop3p::V_PK_MAD_U16: return packed([&](uint32_t l, bool h) { return u(0, l, h) * u(1, l, h) + u(2, l, h); });
    case Vop3p::V_PK_MUL_LO_U16: return packed([&](uint32_t l, bool h) { return u(0, l, h) * u(1, l, h); });
    case Vop3p::V_PK_ADD_I16: case Vop3p::V_PK_ADD_U16: return packed([&](uint32_t l, bool h) { return u(0, l, h) + u(1, l, h); });
    case Vop3p::V_PK_SUB_I16: case Vop3p::V_PK_SUB_U16: return packed([&](uint32_t l, bool h) { return u(0, l, h) - u(1, l, h); });
    case Vop3p::V_PK_LSHLREV_B16: return packed([&](uint32_t l, bool h) { return u(1, l, h) << (u(0, l, h) & 15); });
    case Vop3p::V_PK_LSHRREV_B16: return packed([&](uint32_t l, bool h) { return u(1, l, h) >> (u(0, l, h) & 15); });
    case Vop3p::V_PK_ASHRREV_I16: return packed([&](uint32_t l, bool h) { return si(1, l, h) >> (u(0, l, h) & 15); });
    case Vop3p::V_PK_MAX_I16: return packed([&](uint32_t l, bool h) { return std::max(si(0, l, h), si(1, l, h)); });
    case Vop3p::V_PK_MIN_I16: return packed([&](uint32_t l, bool h) { return std::min(si(0, l, h), si(1, l, h)); });
    case Vop3p::V_PK_MAX_U16: return packed([&](uint32_t l, bool h) { return std::max(u(0, l, h), u(1, l, h)); });
    case Vop3p::V_PK_MIN_U16: return packed([&](uint32_t l, bool h) { return std::min(u(0, l, h), u(1, l, h)); });
    case Vop3p::V_PK_FMA_F16:
      return f16([&](uint32_t l, bool h) { return std::fma(double{half_f(0, l, h)}, double{half_f(1, l, h)}, double{half_f(2, l, h)}); });
    case Vop3p::V_PK_ADD_F16: return f16([&](uint32_t l, bool h) { return half_f(0, l, h) + half_f(1, l, h); });
    case Vop3p::V_PK_MUL_F16: return f16([&](uint32_t l, bool h) { return half_f(0, l, h) * half_f(1, l, h); });
    case Vop3p::V_PK_MIN_F16: return f16([&](uint32_t l, bool h) { return fmin32(half_f(0, l, h), half_f(1, l, h)); });
    case Vop3p::V_PK_MAX_F16: return f16([&](uint32_t l, bool h) { return fmax32(half_f(0, l, h), half_f(1, l, h)); });
    default: unimplemented(in);
  }
}

}  // namespace

void exec_vector(Wave& w, const Rdna3Inst& inst, WaveContext&) {
  switch (inst.format) {
    case Rdna3Format::VOP1: Valu(w, inst).run(static_cast<uint16_t>(kVop1Base + inst.op), true); return;
    case Rdna3Format::VOP2:
      if (inst.op == kVop2FmamkF32 || inst.op == kVop2FmaakF32 || inst.op == kVop2FmamkF16 || inst.op == kVop2FmaakF16) {
        Valu(w, inst).run_fmak(inst.op);
        return;
      }
      Valu(w, inst).run(static_cast<uint16_t>(kVop2Base + inst.op), true);
      return;
    case Rdna3Format::VOPC: Valu(w, inst).run(inst.op, true); return;
    case Rdna3Format::VOP3: Valu(w, inst).run(inst.op, false); return;
    case Rdna3Format::VOP3P: exec_vop3p(w, inst); return;
    case Rdna3Format::VOPD: exec_vopd(w, inst); return;
    default: unimplemented(inst);
  }
}

}  // namespace doorbell::mockgpu::amd
