#include "ir/dtype.h"

#include <array>
#include <stdexcept>

namespace doorbell {
namespace {

struct ScalarInfo {
  const char* name;
  int priority;
  int bitsize;
};

// Priorities and sizes from tinygrad dtype.py (weakfloat sits between the ints and the floats).
constexpr std::array<ScalarInfo, kScalarTypeCount> kInfo = {{
    {"void", -1, 0},     {"bool", 0, 1},      {"int8", 1, 8},      {"int16", 3, 16},
    {"int32", 5, 32},    {"int64", 7, 64},    {"uint8", 2, 8},     {"uint16", 4, 16},
    {"uint32", 6, 32},   {"uint64", 8, 64},   {"float16", 11, 16}, {"bfloat16", 12, 16},
    {"float32", 13, 32}, {"float64", 14, 64}, {"weakint", 0, 0},   {"weakfloat", 9, 0},
}};

const ScalarInfo& info(ScalarType s) { return kInfo[static_cast<int>(s)]; }

using S = ScalarType;
using Mask = uint32_t;
constexpr Mask bit(S s) { return Mask{1} << static_cast<int>(s); }

// Direct parents in the promotion lattice (JAX type promotion, as tinygrad's promo_lattice).
Mask parents(S s) {
  switch (s) {
    case S::Bool: return bit(S::WeakInt);
    case S::WeakInt: return bit(S::Int8) | bit(S::UInt8);
    case S::Int8: return bit(S::Int16);
    case S::Int16: return bit(S::Int32);
    case S::Int32: return bit(S::Int64);
    case S::Int64: return bit(S::WeakFloat);
    case S::UInt8: return bit(S::Int16) | bit(S::UInt16);
    case S::UInt16: return bit(S::Int32) | bit(S::UInt32);
    case S::UInt32: return bit(S::Int64) | bit(S::UInt64);
    case S::UInt64: return bit(S::WeakFloat);
    case S::WeakFloat: return bit(S::Float16) | bit(S::BFloat16);
    case S::Float16: return bit(S::Float32);
    case S::BFloat16: return bit(S::Float32);
    case S::Float32: return bit(S::Float64);
    default: return 0;
  }
}

// Recursive over the promotion lattice: as deep as its few levels of scalar types.
Mask compute_ancestors(S s) {
  Mask out = bit(s);
  for (int i = 0; i < kScalarTypeCount; i++)
    if (parents(s) & (Mask{1} << i)) out |= compute_ancestors(static_cast<S>(i));
  return out;
}

// Promotion runs for every elementwise op the frontend builds: the lattice walk is done once, not per call.
Mask ancestors(S s) {
  static const auto table = [] {
    std::array<Mask, kScalarTypeCount> t{};
    for (int i = 0; i < kScalarTypeCount; i++) t[i] = compute_ancestors(static_cast<S>(i));
    return t;
  }();
  return table[static_cast<int>(s)];
}

}  // namespace

DType DType::vec(int n) const {
  if (lanes != 1) throw std::invalid_argument("DType::vec: " + name() + " is already a vector");
  if (n < 1 || n > 65535) throw std::invalid_argument("DType::vec: lane count " + std::to_string(n) + " is not in [1, 65535]");
  if (is_void()) return *this;
  return DType(scalar_type, static_cast<uint16_t>(n));
}

int DType::priority() const { return info(scalar_type).priority; }
int DType::bitsize() const { return info(scalar_type).bitsize; }

int DType::itemsize() const {
  if (is_weak() || is_void()) throw std::invalid_argument("DType::itemsize: " + name() + " has no storage size");
  return (bitsize() + 7) / 8 * lanes;
}

std::string DType::name() const {
  std::string n = info(scalar_type).name;
  if (lanes != 1) n += "x" + std::to_string(lanes);
  return n;
}

bool DType::is_float() const {
  switch (scalar_type) {
    case S::Float16: case S::BFloat16: case S::Float32: case S::Float64: case S::WeakFloat: return true;
    default: return false;
  }
}
bool DType::is_unsigned() const {
  switch (scalar_type) {
    case S::UInt8: case S::UInt16: case S::UInt32: case S::UInt64: return true;
    default: return false;
  }
}
bool DType::is_int() const {
  switch (scalar_type) {
    case S::Int8: case S::Int16: case S::Int32: case S::Int64: case S::WeakInt: return true;
    default: return is_unsigned();
  }
}

DType dtype_from_name(std::string_view n) {
  for (int i = 0; i < kScalarTypeCount; i++)
    if (n == kInfo[i].name) return DType(static_cast<S>(i));
  struct Alias { const char* alias; DType dt; };
  static constexpr Alias kAliases[] = {
      {"half", dtypes::float16}, {"float", dtypes::float32}, {"double", dtypes::float64},
      {"char", dtypes::int8},    {"short", dtypes::int16},   {"int", dtypes::int32},
      {"long", dtypes::int64},   {"uchar", dtypes::uint8},   {"ushort", dtypes::uint16},
      {"uint", dtypes::uint32},  {"ulong", dtypes::uint64},  {"bf16", dtypes::bfloat16},
  };
  for (const Alias& a : kAliases)
    if (n == a.alias) return a.dt;
  throw std::invalid_argument("dtype_from_name: '" + std::string(n) + "' is not a dtype name");
}

DType least_upper_dtype(DType a, DType b) {
  if (a.lanes != b.lanes) throw std::invalid_argument("least_upper_dtype: " + a.name() + " and " + b.name() + " differ in lanes");
  if (a.is_void() || b.is_void()) throw std::invalid_argument("least_upper_dtype: void has no promotion");
  // The least common ancestor is the one whose own ancestors include all the others. (Ranking the common
  // ancestors by priority and bitsize, as tinygrad's min() does, needs weakint's bitsize above bool's; ours is 0.)
  Mask common = ancestors(a.scalar_type) & ancestors(b.scalar_type);
  for (int i = 0; i < kScalarTypeCount; i++)
    if ((common & (Mask{1} << i)) && (common & ~ancestors(static_cast<S>(i))) == 0) return DType(static_cast<S>(i), a.lanes);
  return DType(S::Float64, a.lanes);  // float64 is above every type
}

DType strong_dtype(DType d) {
  if (d.scalar_type == S::WeakInt) return DType(dtypes::default_int.scalar_type, d.lanes);
  if (d.scalar_type == S::WeakFloat) return DType(dtypes::default_float.scalar_type, d.lanes);
  return d;
}

DType sum_acc_dtype(DType d) {
  if (d.is_unsigned()) return least_upper_dtype(d, DType(S::UInt32, d.lanes));
  if (d.is_int() || d.is_bool()) return strong_dtype(least_upper_dtype(d, DType(S::Int32, d.lanes)));
  return strong_dtype(least_upper_dtype(d, DType(S::Float32, d.lanes)));
}

bool can_lossless_cast(DType from, DType to) {
  if (from == to || from.is_bool()) return true;
  auto in = [&](std::initializer_list<S> set) {
    for (S s : set) if (from.scalar_type == s) return true;
    return false;
  };
  switch (to.scalar_type) {  // tinygrad dtype.py can_lossless_cast
    case S::WeakInt: return from.is_int() && from.scalar_type != S::UInt64;  // weakint holds the int64 range
    case S::Float64: return in({S::Float32, S::Float16, S::BFloat16, S::UInt32, S::UInt16, S::UInt8, S::Int32, S::Int16, S::Int8});
    case S::Float32: return in({S::Float16, S::BFloat16, S::UInt16, S::UInt8, S::Int16, S::Int8});
    case S::Float16: return in({S::UInt8, S::Int8});
    case S::UInt64: return in({S::UInt32, S::UInt16, S::UInt8});
    case S::UInt32: return in({S::UInt16, S::UInt8});
    case S::UInt16: return in({S::UInt8});
    case S::Int64: return in({S::UInt32, S::UInt16, S::UInt8, S::Int32, S::Int16, S::Int8});
    case S::Int32: return in({S::UInt16, S::UInt8, S::Int16, S::Int8});
    case S::Int16: return in({S::UInt8, S::Int8});
    default: return false;
  }
}

__int128 int_min(DType d) {
  if (d.is_bool() || d.is_unsigned()) return 0;
  if (d.scalar_type == S::WeakInt) return INT64_MIN;
  if (!d.is_int()) throw std::invalid_argument("int_min: " + d.name() + " is not an integer dtype");
  return -(static_cast<__int128>(1) << (d.bitsize() - 1));
}

__int128 int_max(DType d) {
  if (d.is_bool()) return 1;
  if (d.scalar_type == S::WeakInt) return INT64_MAX;
  if (!d.is_int()) throw std::invalid_argument("int_max: " + d.name() + " is not an integer dtype");
  if (d.is_unsigned()) return (static_cast<__int128>(1) << d.bitsize()) - 1;
  return (static_cast<__int128>(1) << (d.bitsize() - 1)) - 1;
}

}  // namespace doorbell
