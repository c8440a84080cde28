// DType: the scalar element types of doorbell, plus weak literal types and an optional vector lane count.
// Facts (priorities, promotion lattice, accumulation types) follow tinygrad's tinygrad/dtype.py
// (tinygrad a9069c17: promo_lattice :172-179, least_upper_dtype :185, sum_acc_dtype :212-216).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace doorbell {

enum class ScalarType : uint8_t {
  Void, Bool, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64,
  Float16, BFloat16, Float32, Float64,
  WeakInt,    // a literal integer: adopts the width of the other operand
  WeakFloat,  // a literal float: adopts the float type of the other operand
};
inline constexpr int kScalarTypeCount = static_cast<int>(ScalarType::WeakFloat) + 1;

struct DType {
  ScalarType scalar_type = ScalarType::Void;
  uint16_t lanes = 1;  // >1 only for vector values late in codegen

  constexpr DType() = default;
  constexpr DType(ScalarType s, uint16_t n = 1) : scalar_type(s), lanes(n) {}
  constexpr bool operator==(const DType&) const = default;

  constexpr DType scalar() const { return DType(scalar_type); }
  DType vec(int n) const;  // throws on a vector base or n outside [1, 65535]; void stays void (tinygrad)

  int priority() const;
  int bitsize() const;   // of one lane; weak types report 0: they have no storage
  int itemsize() const;  // bytes of the whole value (lanes included); throws for weak and void
  std::string name() const;  // "float32", "int8", "weakint", "float32x4"

  bool is_float() const;     // float16, bfloat16, float32, float64, weakfloat
  bool is_int() const;       // signed and unsigned ints and weakint (not bool)
  bool is_unsigned() const;
  bool is_bool() const { return scalar_type == ScalarType::Bool; }
  bool is_weak() const { return scalar_type == ScalarType::WeakInt || scalar_type == ScalarType::WeakFloat; }
  bool is_void() const { return scalar_type == ScalarType::Void; }
};

namespace dtypes {
inline constexpr DType void_{ScalarType::Void};
inline constexpr DType bool_{ScalarType::Bool};
inline constexpr DType int8{ScalarType::Int8};
inline constexpr DType int16{ScalarType::Int16};
inline constexpr DType int32{ScalarType::Int32};
inline constexpr DType int64{ScalarType::Int64};
inline constexpr DType uint8{ScalarType::UInt8};
inline constexpr DType uint16{ScalarType::UInt16};
inline constexpr DType uint32{ScalarType::UInt32};
inline constexpr DType uint64{ScalarType::UInt64};
inline constexpr DType float16{ScalarType::Float16};
inline constexpr DType bfloat16{ScalarType::BFloat16};
inline constexpr DType float32{ScalarType::Float32};
inline constexpr DType float64{ScalarType::Float64};
inline constexpr DType weakint{ScalarType::WeakInt};
inline constexpr DType weakfloat{ScalarType::WeakFloat};
inline constexpr DType default_int = int32;
inline constexpr DType default_float = float32;
inline constexpr DType kAll[] = {bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                                 float16, bfloat16, float32, float64, weakint, weakfloat};
}  // namespace dtypes

// Parses "float32", "int", "half", ... (tinygrad's aliases too); throws naming the text.
DType dtype_from_name(std::string_view name);

// JAX-style promotion: the least type above both in the lattice (weak types included).
DType least_upper_dtype(DType a, DType b);
// weakint -> default_int, weakfloat -> default_float, anything else unchanged.
DType strong_dtype(DType d);
// The accumulator of a sum: uints at >= uint32, ints and bool at >= int32, floats at >= float32.
DType sum_acc_dtype(DType d);
// Whether every value of `from` is exactly representable in `to`.
bool can_lossless_cast(DType from, DType to);

// Range of an integer dtype as 128-bit integers (weakint: the int64 range).
__int128 int_min(DType d);
__int128 int_max(DType d);

}  // namespace doorbell
