#include "ir/exec_alu.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace doorbell {

uint16_t float_to_half_bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint16_t sign = (x >> 16) & 0x8000;
  uint32_t exp = (x >> 23) & 0xff, man = x & 0x7fffff;
  if (exp == 0xff) return sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0);  // inf or NaN (quiet)
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;  // overflow
  if (e <= 0) {                          // subnormal or zero
    if (e < -10) return sign;
    man |= 0x800000;
    int shift = 14 - e;
    uint32_t half_man = man >> shift, rem = man & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_man & 1))) half_man++;
    return sign | static_cast<uint16_t>(half_man);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (man >> 13), rem = man & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) half++;  // may carry into the exponent: still correct
  return sign | static_cast<uint16_t>(half);
}

float half_bits_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000 | (man << 13));
  if (exp == 0) {
    float v = std::ldexp(static_cast<float>(man), -24);
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp - 15 + 127) << 23) | (man << 13));
}

uint16_t float_to_bfloat16_bits(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}

float bfloat16_bits_to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

double round_to_float_dtype(DType dt, double v) {
  switch (dt.scalar_type) {
    case ScalarType::Float32: return static_cast<float>(v);
    case ScalarType::Float16: return half_bits_to_float(float_to_half_bits(static_cast<float>(v)));
    case ScalarType::BFloat16: return bfloat16_bits_to_float(float_to_bfloat16_bits(static_cast<float>(v)));
    case ScalarType::Float64: case ScalarType::WeakFloat: return v;
    default: throw std::invalid_argument("round_to_float_dtype: " + dt.name() + " is not a float dtype");
  }
}

__int128 int_value(DType dt, int64_t stored) {
  return dt.scalar_type == ScalarType::UInt64 ? static_cast<__int128>(static_cast<uint64_t>(stored)) : stored;
}

int64_t wrap_int(DType dt, __int128 v) {
  int bits = dt.is_bool() ? 1 : dt.scalar_type == ScalarType::WeakInt ? 64 : dt.bitsize();
  unsigned __int128 mask = (static_cast<unsigned __int128>(1) << bits) - 1;
  unsigned __int128 u = static_cast<unsigned __int128>(v) & mask;
  if (!dt.is_unsigned() && !dt.is_bool() && (u >> (bits - 1)) & 1) return static_cast<int64_t>(static_cast<__int128>(u) - (static_cast<__int128>(1) << bits));
  return static_cast<int64_t>(static_cast<uint64_t>(u));
}

namespace {

// An integer converted to a float dtype with one rounding, as a C cast does (through double, 2^62 + 2^38 + 1
// would round twice and land on the wrong float32); float16 and bfloat16 then round from float32.
double int_to_float_dtype(DType dt, __int128 v) {
  if (dt.scalar_type == ScalarType::Float64 || dt.scalar_type == ScalarType::WeakFloat) return static_cast<double>(v);
  return round_to_float_dtype(dt, static_cast<float>(v));
}

double as_double(DType dt, ConstValue v) {
  if (auto* b = std::get_if<bool>(&v)) return *b;
  if (auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(int_value(dt, *i));
  return std::get<double>(v);
}

__int128 as_int(DType dt, ConstValue v) {
  if (auto* b = std::get_if<bool>(&v)) return *b;
  if (auto* i = std::get_if<int64_t>(&v)) return int_value(dt, *i);
  throw std::invalid_argument("exec_alu: a float value where " + dt.name() + " expects an integer");
}

__int128 floor_div(__int128 a, __int128 b) {
  __int128 q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

std::optional<ConstValue> exec_float(Ops op, DType out, std::span<const ConstValue> v, std::span<const DType> in) {
  auto x = [&](int i) { return as_double(in[i], v[i]); };
  auto r = [&](double d) -> ConstValue { return round_to_float_dtype(out, d); };
  switch (op) {
    case Ops::ADD: return r(x(0) + x(1));
    case Ops::SUB: return r(x(0) - x(1));
    case Ops::MUL: return r(x(0) * x(1));
    case Ops::FDIV: return r(x(0) / x(1));
    case Ops::MAX: return std::isnan(x(0)) || std::isnan(x(1)) ? r(NAN) : r(std::max(x(0), x(1)));
    case Ops::POW: return r(std::pow(x(0), x(1)));
    case Ops::NEG: return r(-x(0));
    case Ops::EXP2: return r(std::exp2(x(0)));
    case Ops::LOG2: return r(std::log2(x(0)));
    case Ops::SIN: return r(std::sin(x(0)));
    case Ops::SQRT: return r(std::sqrt(x(0)));
    case Ops::RECIPROCAL: return r(1.0 / x(0));
    case Ops::TRUNC: return r(std::trunc(x(0)));
    case Ops::MULACC: return r(x(0) * x(1) + x(2));
    default: return std::nullopt;
  }
}

std::optional<ConstValue> exec_int(Ops op, DType out, std::span<const ConstValue> v, std::span<const DType> in) {
  auto x = [&](int i) { return as_int(in[i], v[i]); };
  auto w = [&](__int128 r) -> ConstValue {
    if (out.is_bool()) return r != 0;
    return wrap_int(out, r);
  };
  // Products of uint64 values overflow a signed 128-bit int; unsigned arithmetic wraps, and only the low bits count.
  auto mul = [](__int128 a, __int128 b) {
    return static_cast<__int128>(static_cast<unsigned __int128>(a) * static_cast<unsigned __int128>(b));
  };
  int bits = out.scalar_type == ScalarType::WeakInt ? 64 : out.bitsize();
  switch (op) {
    case Ops::ADD: return out.is_bool() ? w(x(0) | x(1)) : w(x(0) + x(1));
    case Ops::SUB: return w(x(0) - x(1));
    case Ops::MUL: return out.is_bool() ? w(x(0) & x(1)) : w(mul(x(0), x(1)));
    case Ops::MAX: return w(std::max(x(0), x(1)));
    case Ops::NEG: return w(-x(0));
    case Ops::TRUNC: return w(x(0));
    case Ops::AND: return w(x(0) & x(1));
    case Ops::OR: return w(x(0) | x(1));
    case Ops::XOR: return w(x(0) ^ x(1));
    case Ops::MULACC: return w(static_cast<__int128>(static_cast<unsigned __int128>(mul(x(0), x(1))) + static_cast<unsigned __int128>(x(2))));
    case Ops::CDIV: case Ops::CMOD: case Ops::FLOORDIV: case Ops::FLOORMOD: {
      __int128 a = x(0), b = x(1);
      if (b == 0) return op == Ops::CDIV || op == Ops::FLOORDIV ? w(0) : w(a);  // x / 0 = 0, x % 0 = x
      if (op == Ops::CDIV) return w(a / b);
      if (op == Ops::CMOD) return w(a % b);
      __int128 q = floor_div(a, b);
      return op == Ops::FLOORDIV ? w(q) : w(a - q * b);
    }
    case Ops::SHL: case Ops::SHR: {
      __int128 s = x(1);
      // out of [0, width): everything shifted out; a right shift of a negative value fills with its sign
      if (s < 0 || s >= bits) return w(op == Ops::SHR && x(0) < 0 ? -1 : 0);
      if (op == Ops::SHL) return w(static_cast<__int128>(static_cast<unsigned __int128>(x(0)) << static_cast<int>(s)));
      return w(x(0) >> static_cast<int>(s));  // arithmetic for signed values, logical for unsigned (they are >= 0)
    }
    default: return std::nullopt;
  }
}

std::optional<ConstValue> exec_cmp(Ops op, std::span<const ConstValue> v, std::span<const DType> in) {
  if (in[0].is_float()) {
    double a = as_double(in[0], v[0]), b = as_double(in[1], v[1]);
    return ConstValue(op == Ops::CMPLT ? a < b : op == Ops::CMPNE ? a != b : a == b);
  }
  __int128 a = as_int(in[0], v[0]), b = as_int(in[1], v[1]);
  return ConstValue(op == Ops::CMPLT ? a < b : op == Ops::CMPNE ? a != b : a == b);
}

std::optional<ConstValue> exec_bitcast(DType out, DType in, ConstValue v) {
  if (out.is_weak() || in.is_weak() || out.itemsize() != in.itemsize()) return std::nullopt;
  uint64_t bits = 0;
  if (in.is_float()) {
    double d = as_double(in, v);
    switch (in.scalar_type) {
      case ScalarType::Float64: bits = std::bit_cast<uint64_t>(d); break;
      case ScalarType::Float32: bits = std::bit_cast<uint32_t>(static_cast<float>(d)); break;
      case ScalarType::Float16: bits = float_to_half_bits(static_cast<float>(d)); break;
      default: bits = float_to_bfloat16_bits(static_cast<float>(d)); break;
    }
  } else {
    bits = static_cast<uint64_t>(as_int(in, v));
  }
  if (out.itemsize() < 8) bits &= (uint64_t{1} << (8 * out.itemsize())) - 1;
  if (out.is_float()) {
    switch (out.scalar_type) {
      case ScalarType::Float64: return ConstValue(std::bit_cast<double>(bits));
      case ScalarType::Float32: return ConstValue(static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(bits))));
      case ScalarType::Float16: return ConstValue(static_cast<double>(half_bits_to_float(static_cast<uint16_t>(bits))));
      default: return ConstValue(static_cast<double>(bfloat16_bits_to_float(static_cast<uint16_t>(bits))));
    }
  }
  if (out.is_bool()) return ConstValue(bits != 0);
  return ConstValue(wrap_int(out, static_cast<__int128>(bits)));
}

}  // namespace

int64_t float_to_int(DType dt, double v) {
  if (!dt.is_int()) throw std::invalid_argument("float_to_int: " + dt.name() + " is not an integer dtype");
  if (std::isnan(v)) return 0;
  double t = std::trunc(v);
  // int_min and int_max + 1 are powers of two (or 0): exact as doubles, so the comparisons are exact
  if (t < static_cast<double>(int_min(dt))) return wrap_int(dt, int_min(dt));
  if (t >= static_cast<double>(int_max(dt) + 1)) return wrap_int(dt, int_max(dt));
  return wrap_int(dt, static_cast<__int128>(t));
}

std::optional<ConstValue> convert_value(DType dt, ConstValue v) {
  if (dt.is_bool()) {
    if (auto* d = std::get_if<double>(&v)) return ConstValue(*d != 0);
    if (auto* i = std::get_if<int64_t>(&v)) return ConstValue(*i != 0);
    return v;
  }
  if (dt.is_float()) {
    if (auto* i = std::get_if<int64_t>(&v)) return ConstValue(int_to_float_dtype(dt, *i));
    if (auto* b = std::get_if<bool>(&v)) return ConstValue(*b ? 1.0 : 0.0);
    return ConstValue(round_to_float_dtype(dt, std::get<double>(v)));
  }
  if (!dt.is_int()) throw std::invalid_argument("convert_value: " + dt.name() + " holds no values");
  if (auto* d = std::get_if<double>(&v)) {
    if (std::isnan(*d)) return std::nullopt;
    double t = std::trunc(*d);
    // int_max + 1 is a power of two and exact as a double; int_max itself may round up to it (2^63, 2^64)
    if (t < static_cast<double>(int_min(dt)) || t >= static_cast<double>(int_max(dt) + 1)) return std::nullopt;
    return ConstValue(wrap_int(dt, static_cast<__int128>(t)));
  }
  if (auto* b = std::get_if<bool>(&v)) return ConstValue(int64_t{*b});
  return ConstValue(wrap_int(dt, std::get<int64_t>(v)));
}

std::optional<ConstValue> exec_alu(Ops op, DType out, std::span<const ConstValue> vals, std::span<const DType> in) {
  if (vals.size() != in.size()) throw std::invalid_argument("exec_alu: value and dtype counts differ");
  if (op == Ops::CAST) {
    // an unsigned 64-bit source must convert from its value, not its stored bit pattern
    if (auto* i = std::get_if<int64_t>(&vals[0]); i && in[0].scalar_type == ScalarType::UInt64 && *i < 0) {
      __int128 val = int_value(in[0], *i);
      if (out.is_float()) return ConstValue(int_to_float_dtype(out, val));
      if (out.is_bool()) return ConstValue(true);
      return ConstValue(wrap_int(out, val));
    }
    if (auto* d = std::get_if<double>(&vals[0]); d && out.is_int()) return ConstValue(float_to_int(out, *d));
    return convert_value(out, vals[0]);
  }
  if (op == Ops::BITCAST) return exec_bitcast(out, in[0], vals[0]);
  if (op == Ops::WHERE) {
    bool c = std::get<bool>(vals[0]);
    return convert_value(out, c ? vals[1] : vals[2]);
  }
  if (group::Comparison.contains(op)) return exec_cmp(op, vals, in);
  if (out.is_float()) return exec_float(op, out, vals, in);
  return exec_int(op, out, vals, in);
}

}  // namespace doorbell
