// exec_alu and the value conversions: integer wraparound at every width, floor and truncating division, what C
// leaves undefined defined (ir/exec_alu.h), float rounding to float32/float16/bfloat16, casts and bitcasts.
#include "ir/exec_alu.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

namespace doorbell {
namespace {

// op on operands that all have dtype `dt`; comparisons give bool, everything else `dt`.
std::optional<ConstValue> run(Ops op, DType dt, std::vector<ConstValue> v) {
  std::vector<DType> in(v.size(), dt);
  DType out = group::Comparison.contains(op) ? dtypes::bool_ : dt;
  return exec_alu(op, out, v, in);
}
std::optional<ConstValue> run_cast(Ops op, DType out, DType in, ConstValue v) {
  std::vector<ConstValue> vals{v};
  std::vector<DType> ins{in};
  return exec_alu(op, out, vals, ins);
}

int64_t as_i64(const std::optional<ConstValue>& v) {
  EXPECT_TRUE(v.has_value());
  if (!v) return 0;
  EXPECT_TRUE(std::holds_alternative<int64_t>(*v));
  return std::holds_alternative<int64_t>(*v) ? std::get<int64_t>(*v) : 0;
}
double as_f64(const std::optional<ConstValue>& v) {
  EXPECT_TRUE(v.has_value());
  if (!v) return 0;
  EXPECT_TRUE(std::holds_alternative<double>(*v));
  return std::holds_alternative<double>(*v) ? std::get<double>(*v) : 0;
}
bool as_bool(const std::optional<ConstValue>& v) {
  EXPECT_TRUE(v.has_value());
  if (!v) return false;
  EXPECT_TRUE(std::holds_alternative<bool>(*v));
  return std::holds_alternative<bool>(*v) && std::get<bool>(*v);
}
uint32_t f32_bits(double v) { return std::bit_cast<uint32_t>(static_cast<float>(v)); }

constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

// ---- integers ----------------------------------------------------------------------------------------------

TEST(ExecAluTest, SignedAddWrapsAtEveryWidth) {
  EXPECT_EQ(as_i64(run(Ops::ADD, dtypes::int8, {int64_t{127}, int64_t{1}})), -128);
  EXPECT_EQ(as_i64(run(Ops::SUB, dtypes::int8, {int64_t{-128}, int64_t{1}})), 127);
  EXPECT_EQ(as_i64(run(Ops::ADD, dtypes::int16, {int64_t{32767}, int64_t{1}})), -32768);
  EXPECT_EQ(as_i64(run(Ops::ADD, dtypes::int32, {int64_t{INT32_MAX}, int64_t{1}})), INT32_MIN);
  EXPECT_EQ(as_i64(run(Ops::ADD, dtypes::int64, {kI64Max, int64_t{1}})), kI64Min);
  EXPECT_EQ(as_i64(run(Ops::ADD, dtypes::weakint, {kI64Max, int64_t{1}})), kI64Min) << "weakint is 64 bits wide";
}

TEST(ExecAluTest, UnsignedAddAndSubWrapAtEveryWidth) {
  EXPECT_EQ(as_i64(run(Ops::ADD, dtypes::uint8, {int64_t{255}, int64_t{1}})), 0);
  EXPECT_EQ(as_i64(run(Ops::SUB, dtypes::uint8, {int64_t{0}, int64_t{1}})), 255);
  EXPECT_EQ(as_i64(run(Ops::ADD, dtypes::uint16, {int64_t{65535}, int64_t{1}})), 0);
  EXPECT_EQ(as_i64(run(Ops::ADD, dtypes::uint32, {int64_t{4294967295}, int64_t{1}})), 0);
  // uint64 keeps its bit pattern in an int64_t: -1 is 2^64 - 1
  EXPECT_EQ(as_i64(run(Ops::ADD, dtypes::uint64, {int64_t{-1}, int64_t{1}})), 0);
  EXPECT_EQ(as_i64(run(Ops::SUB, dtypes::uint64, {int64_t{0}, int64_t{1}})), -1);
  EXPECT_EQ(as_i64(run(Ops::ADD, dtypes::uint64, {kI64Max, int64_t{1}})), kI64Min) << "2^63 as a bit pattern";
}

TEST(ExecAluTest, MultiplicationWraps) {
  EXPECT_EQ(as_i64(run(Ops::MUL, dtypes::int8, {int64_t{16}, int64_t{16}})), 0);
  EXPECT_EQ(as_i64(run(Ops::MUL, dtypes::int8, {int64_t{64}, int64_t{3}})), -64);
  EXPECT_EQ(as_i64(run(Ops::MUL, dtypes::uint8, {int64_t{255}, int64_t{255}})), 1);
  EXPECT_EQ(as_i64(run(Ops::MUL, dtypes::int32, {int64_t{65536}, int64_t{65536}})), 0);
  EXPECT_EQ(as_i64(run(Ops::MUL, dtypes::int64, {kI64Min, int64_t{-1}})), kI64Min);
  EXPECT_EQ(as_i64(run(Ops::MUL, dtypes::int64, {kI64Min, kI64Min})), 0);
  EXPECT_EQ(as_i64(run(Ops::MUL, dtypes::int64, {kI64Max, kI64Max})), 1);
  // (2^64 - 1)^2 = 2^128 - 2^65 + 1 does not fit a signed 128-bit product either
  EXPECT_EQ(as_i64(run(Ops::MUL, dtypes::uint64, {int64_t{-1}, int64_t{-1}})), 1);
  EXPECT_EQ(as_i64(run(Ops::MUL, dtypes::uint64, {int64_t{1} << 32, int64_t{1} << 32})), 0);
  EXPECT_EQ(as_i64(run(Ops::MULACC, dtypes::uint64, {int64_t{-1}, int64_t{-1}, int64_t{-1}})), 0);
}

TEST(ExecAluTest, NegationAndDivisionOfInt64MinWrap) {
  EXPECT_EQ(as_i64(run(Ops::NEG, dtypes::int64, {kI64Min})), kI64Min);
  EXPECT_EQ(as_i64(run(Ops::NEG, dtypes::int8, {int64_t{-128}})), -128);
  EXPECT_EQ(as_i64(run(Ops::FLOORDIV, dtypes::int64, {kI64Min, int64_t{-1}})), kI64Min);
  EXPECT_EQ(as_i64(run(Ops::CDIV, dtypes::int64, {kI64Min, int64_t{-1}})), kI64Min);
  EXPECT_EQ(as_i64(run(Ops::FLOORMOD, dtypes::int64, {kI64Min, int64_t{-1}})), 0);
  EXPECT_EQ(as_i64(run(Ops::CMOD, dtypes::int64, {kI64Min, int64_t{-1}})), 0);
  EXPECT_EQ(as_i64(run(Ops::FLOORDIV, dtypes::int32, {int64_t{INT32_MIN}, int64_t{-1}})), INT32_MIN);
}

TEST(ExecAluTest, FloorDivisionAndModuloOfNegatives) {
  auto i32 = [](Ops op, int64_t a, int64_t b) { return as_i64(run(op, dtypes::int32, {a, b})); };
  EXPECT_EQ(i32(Ops::FLOORDIV, -7, 2), -4);
  EXPECT_EQ(i32(Ops::FLOORMOD, -7, 2), 1);
  EXPECT_EQ(i32(Ops::FLOORDIV, 7, -2), -4);
  EXPECT_EQ(i32(Ops::FLOORMOD, 7, -2), -1);
  EXPECT_EQ(i32(Ops::FLOORDIV, -7, -2), 3);
  EXPECT_EQ(i32(Ops::FLOORMOD, -7, -2), -1);
  EXPECT_EQ(i32(Ops::FLOORDIV, 7, 2), 3);
  EXPECT_EQ(i32(Ops::FLOORMOD, 7, 2), 1);
  EXPECT_EQ(i32(Ops::FLOORDIV, -8, 2), -4);
  EXPECT_EQ(i32(Ops::FLOORMOD, -8, 2), 0);
}

TEST(ExecAluTest, TruncatingDivisionAndModuloOfNegatives) {
  auto i32 = [](Ops op, int64_t a, int64_t b) { return as_i64(run(op, dtypes::int32, {a, b})); };
  EXPECT_EQ(i32(Ops::CDIV, -7, 2), -3);
  EXPECT_EQ(i32(Ops::CMOD, -7, 2), -1);
  EXPECT_EQ(i32(Ops::CDIV, 7, -2), -3);
  EXPECT_EQ(i32(Ops::CMOD, 7, -2), 1);
  EXPECT_EQ(i32(Ops::CDIV, -7, -2), 3);
  EXPECT_EQ(i32(Ops::CMOD, -7, -2), -1);
}

TEST(ExecAluTest, UnsignedDivisionUsesValuesNotBitPatterns) {
  EXPECT_EQ(as_i64(run(Ops::FLOORDIV, dtypes::uint64, {int64_t{-1}, int64_t{2}})), kI64Max);
  EXPECT_EQ(as_i64(run(Ops::FLOORMOD, dtypes::uint64, {int64_t{-1}, int64_t{10}})), 5) << "18446744073709551615 % 10";
  EXPECT_EQ(as_i64(run(Ops::FLOORDIV, dtypes::uint8, {int64_t{255}, int64_t{2}})), 127);
}

TEST(ExecAluTest, DivisionByZeroGivesZeroAndModuloByZeroGivesTheDividend) {
  for (Ops op : {Ops::FLOORDIV, Ops::CDIV}) {
    EXPECT_EQ(as_i64(run(op, dtypes::int32, {int64_t{5}, int64_t{0}})), 0) << op_name(op);
    EXPECT_EQ(as_i64(run(op, dtypes::int32, {int64_t{-5}, int64_t{0}})), 0) << op_name(op);
    EXPECT_EQ(as_i64(run(op, dtypes::uint64, {int64_t{-1}, int64_t{0}})), 0) << op_name(op);
  }
  for (Ops op : {Ops::FLOORMOD, Ops::CMOD}) {
    EXPECT_EQ(as_i64(run(op, dtypes::int32, {int64_t{5}, int64_t{0}})), 5) << op_name(op);
    EXPECT_EQ(as_i64(run(op, dtypes::int32, {int64_t{-5}, int64_t{0}})), -5) << op_name(op);
    EXPECT_EQ(as_i64(run(op, dtypes::uint64, {int64_t{-1}, int64_t{0}})), -1) << op_name(op) << ": UINT64_MAX % 0";
  }
}

TEST(ExecAluTest, Shifts) {
  EXPECT_EQ(as_i64(run(Ops::SHL, dtypes::int32, {int64_t{1}, int64_t{31}})), INT32_MIN);
  EXPECT_EQ(as_i64(run(Ops::SHL, dtypes::int32, {int64_t{3}, int64_t{4}})), 48);
  EXPECT_EQ(as_i64(run(Ops::SHL, dtypes::int32, {int64_t{-1}, int64_t{4}})), -16);
  EXPECT_EQ(as_i64(run(Ops::SHL, dtypes::uint8, {int64_t{255}, int64_t{1}})), 254);
  EXPECT_EQ(as_i64(run(Ops::SHL, dtypes::uint64, {int64_t{1}, int64_t{63}})), kI64Min);
  EXPECT_EQ(as_i64(run(Ops::SHR, dtypes::int32, {int64_t{-8}, int64_t{1}})), -4) << "arithmetic for signed";
  EXPECT_EQ(as_i64(run(Ops::SHR, dtypes::int32, {int64_t{-1}, int64_t{31}})), -1);
  EXPECT_EQ(as_i64(run(Ops::SHR, dtypes::uint8, {int64_t{255}, int64_t{7}})), 1);
  EXPECT_EQ(as_i64(run(Ops::SHR, dtypes::uint64, {int64_t{-1}, int64_t{63}})), 1) << "logical for unsigned";
  // the shift amount may have another integer dtype
  std::vector<ConstValue> v{int64_t{1}, int64_t{3}};
  std::vector<DType> in{dtypes::int64, dtypes::uint8};
  EXPECT_EQ(as_i64(exec_alu(Ops::SHL, dtypes::int64, v, in)), 8);
}

TEST(ExecAluTest, ShiftsByAmountsOutsideTheWidthShiftEverythingOut) {
  EXPECT_EQ(as_i64(run(Ops::SHL, dtypes::int32, {int64_t{1}, int64_t{32}})), 0);
  EXPECT_EQ(as_i64(run(Ops::SHL, dtypes::int32, {int64_t{1}, int64_t{33}})), 0) << "not 2 (x86 masks the amount)";
  EXPECT_EQ(as_i64(run(Ops::SHL, dtypes::int32, {int64_t{1}, int64_t{-1}})), 0) << "a negative amount counts as too large";
  EXPECT_EQ(as_i64(run(Ops::SHR, dtypes::int8, {int64_t{64}, int64_t{8}})), 0);
  EXPECT_EQ(as_i64(run(Ops::SHR, dtypes::int8, {int64_t{-64}, int64_t{8}})), -1) << "the sign shifted all the way in";
  EXPECT_EQ(as_i64(run(Ops::SHR, dtypes::int32, {int64_t{-5}, int64_t{-3}})), -1);
  EXPECT_EQ(as_i64(run(Ops::SHR, dtypes::uint64, {int64_t{-1}, int64_t{64}})), 0) << "unsigned values fill with zeros";
  EXPECT_EQ(as_i64(run(Ops::SHL, dtypes::weakint, {int64_t{1}, int64_t{64}})), 0);
  EXPECT_EQ(as_i64(run(Ops::SHL, dtypes::weakint, {int64_t{1}, int64_t{63}})), kI64Min);
}

TEST(ExecAluTest, BitwiseAndMax) {
  EXPECT_EQ(as_i64(run(Ops::AND, dtypes::int32, {int64_t{12}, int64_t{10}})), 8);
  EXPECT_EQ(as_i64(run(Ops::OR, dtypes::int32, {int64_t{12}, int64_t{10}})), 14);
  EXPECT_EQ(as_i64(run(Ops::XOR, dtypes::int32, {int64_t{12}, int64_t{10}})), 6);
  EXPECT_EQ(as_i64(run(Ops::XOR, dtypes::uint8, {int64_t{255}, int64_t{-1}})), 0);
  EXPECT_EQ(as_i64(run(Ops::MAX, dtypes::int32, {int64_t{-3}, int64_t{2}})), 2);
  EXPECT_EQ(as_i64(run(Ops::MAX, dtypes::uint64, {int64_t{-1}, int64_t{2}})), -1) << "2^64-1 is the larger";
}

TEST(ExecAluTest, BoolArithmeticIsLogic) {
  EXPECT_TRUE(as_bool(run(Ops::ADD, dtypes::bool_, {true, true}))) << "ADD is OR";
  EXPECT_FALSE(as_bool(run(Ops::MUL, dtypes::bool_, {true, false}))) << "MUL is AND";
  EXPECT_FALSE(as_bool(run(Ops::XOR, dtypes::bool_, {true, true})));
  EXPECT_TRUE(as_bool(run(Ops::MAX, dtypes::bool_, {false, true})));
}

TEST(ExecAluTest, IntegerComparisonsUseValues) {
  EXPECT_TRUE(as_bool(run(Ops::CMPLT, dtypes::int32, {int64_t{-1}, int64_t{0}})));
  EXPECT_FALSE(as_bool(run(Ops::CMPLT, dtypes::uint64, {int64_t{-1}, int64_t{1}}))) << "2^64-1 < 1 is false";
  EXPECT_TRUE(as_bool(run(Ops::CMPNE, dtypes::int8, {int64_t{1}, int64_t{2}})));
  EXPECT_TRUE(as_bool(run(Ops::CMPEQ, dtypes::int8, {int64_t{2}, int64_t{2}})));
}

TEST(ExecAluTest, ThreefryIsNotFolded) {
  EXPECT_FALSE(run(Ops::THREEFRY, dtypes::uint64, {int64_t{1}, int64_t{2}}).has_value());
}

TEST(ExecAluTest, MismatchedCountsThrow) {
  std::vector<ConstValue> v{int64_t{1}, int64_t{2}};
  std::vector<DType> in{dtypes::int32};
  EXPECT_THROW(exec_alu(Ops::ADD, dtypes::int32, v, in), std::invalid_argument);
}

// ---- floats ---------------------------------------------------------------------------------------------------

TEST(ExecAluTest, Float32RoundsEveryResult) {
  double a = 0.1f, b = 0.2f;  // the float32 constants as doubles
  double sum = as_f64(run(Ops::ADD, dtypes::float32, {a, b}));
  EXPECT_EQ(f32_bits(sum), 0x3e99999au);
  EXPECT_EQ(sum, static_cast<double>(0.1f + 0.2f));
  EXPECT_NE(sum, a + b) << "the double sum differs from the float32 one";
  EXPECT_EQ(as_f64(run(Ops::ADD, dtypes::float32, {16777216.0, 1.0})), 16777216.0);
  EXPECT_EQ(as_f64(run(Ops::FDIV, dtypes::float32, {1.0, 3.0})), static_cast<double>(1.0f / 3.0f));
  EXPECT_EQ(as_f64(run(Ops::ADD, dtypes::float64, {0.1, 0.2})), 0.30000000000000004);
  EXPECT_EQ(as_f64(run(Ops::MULACC, dtypes::float32, {3.0, 0.5, 1.0})), 2.5);
  EXPECT_EQ(as_f64(run(Ops::SQRT, dtypes::float32, {2.0})), static_cast<double>(std::sqrt(2.0f)));
  EXPECT_EQ(as_f64(run(Ops::TRUNC, dtypes::float32, {-2.5})), -2.0);
  EXPECT_EQ(as_f64(run(Ops::RECIPROCAL, dtypes::float32, {0.0})), INFINITY);
}

TEST(ExecAluTest, Float16RoundsToNearestEven) {
  const double ulp1 = std::ldexp(1.0, -10);  // float16 spacing in [1, 2)
  EXPECT_EQ(round_to_float_dtype(dtypes::float16, 1.0 + ulp1 / 2), 1.0) << "halfway, to the even 1.0";
  EXPECT_EQ(round_to_float_dtype(dtypes::float16, 1.0 + ulp1 + ulp1 / 2), 1.0 + 2 * ulp1) << "halfway, to the even";
  EXPECT_EQ(round_to_float_dtype(dtypes::float16, 1.0 + ulp1 / 2 + ulp1 / 64), 1.0 + ulp1) << "above halfway";
  EXPECT_EQ(as_f64(run(Ops::ADD, dtypes::float16, {1.0, ulp1 / 2})), 1.0);
  EXPECT_EQ(round_to_float_dtype(dtypes::float16, 0.1), 0.0999755859375);
  EXPECT_EQ(round_to_float_dtype(dtypes::float16, 2049.0), 2048.0) << "halfway between 2048 and 2050: even";
  EXPECT_EQ(round_to_float_dtype(dtypes::float16, 2051.0), 2052.0);
}

TEST(ExecAluTest, Float16OverflowsToInfinity) {
  EXPECT_EQ(round_to_float_dtype(dtypes::float16, 65504.0), 65504.0);
  EXPECT_EQ(round_to_float_dtype(dtypes::float16, 65519.0), 65504.0) << "below the halfway point";
  EXPECT_EQ(round_to_float_dtype(dtypes::float16, 65520.0), INFINITY) << "halfway rounds to even: inf";
  EXPECT_EQ(round_to_float_dtype(dtypes::float16, -65520.0), -INFINITY);
  EXPECT_EQ(round_to_float_dtype(dtypes::float16, 1e6), INFINITY);
  EXPECT_EQ(as_f64(run(Ops::ADD, dtypes::float16, {65504.0, 16.0})), INFINITY);
  EXPECT_EQ(as_f64(run(Ops::ADD, dtypes::float16, {65504.0, 0.0})), 65504.0);
  EXPECT_EQ(as_f64(run(Ops::MUL, dtypes::float16, {256.0, 256.0})), INFINITY);
}

TEST(ExecAluTest, Float16Subnormals) {
  const double min_sub = std::ldexp(1.0, -24), min_normal = std::ldexp(1.0, -14);
  EXPECT_EQ(round_to_float_dtype(dtypes::float16, min_sub), min_sub);
  EXPECT_EQ(round_to_float_dtype(dtypes::float16, min_normal), min_normal);
  EXPECT_EQ(round_to_float_dtype(dtypes::float16, min_normal - min_sub), min_normal - min_sub) << "largest subnormal";
  EXPECT_EQ(round_to_float_dtype(dtypes::float16, min_sub / 2), 0.0) << "halfway to 0: even";
  EXPECT_EQ(round_to_float_dtype(dtypes::float16, min_sub * 0.75), min_sub);
  EXPECT_EQ(round_to_float_dtype(dtypes::float16, min_sub * 1.5), 2 * min_sub) << "halfway: even";
  EXPECT_EQ(round_to_float_dtype(dtypes::float16, min_sub * 2.5), 2 * min_sub) << "halfway: even";
  EXPECT_EQ(round_to_float_dtype(dtypes::float16, min_sub / 4), 0.0);
  EXPECT_TRUE(std::signbit(round_to_float_dtype(dtypes::float16, -min_sub / 4))) << "underflow keeps the sign";
  EXPECT_EQ(float_to_half_bits(static_cast<float>(min_sub)), 0x0001);
  EXPECT_EQ(float_to_half_bits(static_cast<float>(min_normal - min_sub)), 0x03ff);
  EXPECT_EQ(half_bits_to_float(0x0001), static_cast<float>(min_sub));
  EXPECT_EQ(half_bits_to_float(0x8200), -static_cast<float>(std::ldexp(1.0, -15)));
}

TEST(ExecAluTest, Float16BitPatterns) {
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half_bits(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(INFINITY), 0x7c00);
  EXPECT_EQ(float_to_half_bits(-INFINITY), 0xfc00);
  EXPECT_EQ(float_to_half_bits(-0.0f), 0x8000);
  uint16_t nan = float_to_half_bits(NAN);
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
  EXPECT_TRUE(std::isnan(half_bits_to_float(0x7e00)));
  EXPECT_EQ(half_bits_to_float(0x3555), 0.333251953125f);
  EXPECT_EQ(half_bits_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(half_bits_to_float(0xfc00), -INFINITY);
  for (uint32_t h = 0; h < 0x10000; h++) {  // every finite half survives the round trip
    if ((h & 0x7c00) == 0x7c00) continue;
    ASSERT_EQ(float_to_half_bits(half_bits_to_float(static_cast<uint16_t>(h))), h) << std::hex << h;
  }
}

TEST(ExecAluTest, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(float_to_bfloat16_bits(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bfloat16_bits(1.0f + 0x1p-8f), 0x3f80) << "halfway, to the even";
  EXPECT_EQ(float_to_bfloat16_bits(1.0f + 3 * 0x1p-8f), 0x3f82) << "halfway, to the even";
  EXPECT_EQ(float_to_bfloat16_bits(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81) << "above halfway";
  EXPECT_EQ(float_to_bfloat16_bits(INFINITY), 0x7f80);
  EXPECT_EQ(float_to_bfloat16_bits(std::numeric_limits<float>::max()), 0x7f80) << "overflows to inf";
  EXPECT_TRUE(std::isnan(bfloat16_bits_to_float(float_to_bfloat16_bits(NAN))));
  EXPECT_TRUE(std::isnan(bfloat16_bits_to_float(float_to_bfloat16_bits(std::bit_cast<float>(0x7f800001u)))))
      << "a NaN whose payload is only in the low bits stays NaN";
  EXPECT_EQ(bfloat16_bits_to_float(0x4049), 3.140625f);
  EXPECT_EQ(round_to_float_dtype(dtypes::bfloat16, 3.14159265358979), 3.140625);
  EXPECT_EQ(as_f64(run(Ops::ADD, dtypes::bfloat16, {256.0, 1.0})), 256.0) << "8 significant bits";
  EXPECT_EQ(as_f64(run(Ops::ADD, dtypes::bfloat16, {256.0, 3.0})), 260.0);
}

TEST(ExecAluTest, ComparisonsWithNaN) {
  EXPECT_FALSE(as_bool(run(Ops::CMPLT, dtypes::float32, {NAN, 1.0})));
  EXPECT_FALSE(as_bool(run(Ops::CMPLT, dtypes::float32, {1.0, NAN})));
  EXPECT_TRUE(as_bool(run(Ops::CMPNE, dtypes::float32, {NAN, NAN})));
  EXPECT_FALSE(as_bool(run(Ops::CMPEQ, dtypes::float64, {NAN, NAN})));
  EXPECT_TRUE(as_bool(run(Ops::CMPLT, dtypes::float32, {-INFINITY, 1.0})));
  EXPECT_TRUE(as_bool(run(Ops::CMPEQ, dtypes::float32, {0.0, -0.0})));
}

TEST(ExecAluTest, MaxPropagatesNaN) {
  EXPECT_TRUE(std::isnan(as_f64(run(Ops::MAX, dtypes::float32, {NAN, 1.0}))));
  EXPECT_TRUE(std::isnan(as_f64(run(Ops::MAX, dtypes::float32, {1.0, NAN}))));
  EXPECT_EQ(as_f64(run(Ops::MAX, dtypes::float32, {1.0, 2.0})), 2.0);
  EXPECT_EQ(as_f64(run(Ops::MAX, dtypes::float32, {-1.0, -INFINITY})), -1.0);
}

TEST(ExecAluTest, Where) {
  std::vector<DType> in{dtypes::bool_, dtypes::int32, dtypes::int32};
  std::vector<ConstValue> t{true, int64_t{3}, int64_t{4}}, f{false, int64_t{3}, int64_t{4}};
  EXPECT_EQ(as_i64(exec_alu(Ops::WHERE, dtypes::int32, t, in)), 3);
  EXPECT_EQ(as_i64(exec_alu(Ops::WHERE, dtypes::int32, f, in)), 4);
  std::vector<DType> fin{dtypes::bool_, dtypes::float32, dtypes::float32};
  std::vector<ConstValue> fv{false, 1.5, -0.0};
  double r = as_f64(exec_alu(Ops::WHERE, dtypes::float32, fv, fin));
  EXPECT_EQ(r, 0.0);
  EXPECT_TRUE(std::signbit(r));
  std::vector<DType> uin{dtypes::bool_, dtypes::uint64, dtypes::uint64};
  std::vector<ConstValue> uv{true, int64_t{-1}, int64_t{0}};
  EXPECT_EQ(as_i64(exec_alu(Ops::WHERE, dtypes::uint64, uv, uin)), -1);
}

// ---- casts ----------------------------------------------------------------------------------------------------

TEST(ExecAluTest, FloatToIntCastTruncates) {
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::int32, dtypes::float32, 2.9)), 2);
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::int32, dtypes::float32, -2.9)), -2);
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::int8, dtypes::float32, -128.9)), -128);
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::uint8, dtypes::float32, 255.5)), 255);
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::uint8, dtypes::float32, -0.5)), 0);
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::int64, dtypes::float64, -9223372036854775808.0)), kI64Min);
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::uint64, dtypes::float64, 9223372036854775808.0)), kI64Min)
      << "2^63 as a uint64 bit pattern";
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::uint64, dtypes::float64, 18446744073709549568.0)), -2048)
      << "the largest double below 2^64";
  EXPECT_TRUE(as_bool(run_cast(Ops::CAST, dtypes::bool_, dtypes::float32, 0.5)));
  EXPECT_TRUE(as_bool(run_cast(Ops::CAST, dtypes::bool_, dtypes::float32, NAN))) << "NaN != 0";
  EXPECT_FALSE(as_bool(run_cast(Ops::CAST, dtypes::bool_, dtypes::float32, -0.0)));
}

TEST(ExecAluTest, FloatToIntCastSaturatesAndTakesNaNToZero) {
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::int32, dtypes::float32, NAN)), 0);
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::int32, dtypes::float32, INFINITY)), INT32_MAX);
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::int32, dtypes::float32, -INFINITY)), INT32_MIN);
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::int32, dtypes::float64, 3e9)), INT32_MAX);
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::int32, dtypes::float64, 2147483648.0)), INT32_MAX);
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::int32, dtypes::float64, 2147483647.9)), INT32_MAX);
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::int32, dtypes::float64, -2147483648.9)), INT32_MIN);
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::int8, dtypes::float32, -129.0)), -128);
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::int16, dtypes::float16, NAN)), 0);
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::uint8, dtypes::float32, -1.0)), 0);
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::uint8, dtypes::float32, 256.0)), 255);
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::uint32, dtypes::float32, -1.0)), 0) << "not 2^32 - 1 (x86 through int64)";
  // 2^63 and 2^64 are the first doubles past INT64_MAX and UINT64_MAX
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::int64, dtypes::float64, 9223372036854775808.0)), INT64_MAX);
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::uint64, dtypes::float64, 18446744073709551616.0)), -1) << "UINT64_MAX";
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::uint64, dtypes::float64, -INFINITY)), 0);
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::weakint, dtypes::float64, 9223372036854775808.0)), INT64_MAX);
  // convert_value (exact conversions of constants and host data) still has no value for them
  EXPECT_FALSE(convert_value(dtypes::int64, 1e19).has_value());
  EXPECT_FALSE(convert_value(dtypes::int32, NAN).has_value());
}

TEST(ExecAluTest, IntToIntCastWraps) {
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::int8, dtypes::int32, int64_t{300})), 44);
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::uint8, dtypes::int32, int64_t{-1})), 255);
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::uint64, dtypes::int64, int64_t{-1})), -1);
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::int32, dtypes::uint64, int64_t{-1})), -1);
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::uint32, dtypes::uint64, int64_t{-1})), 4294967295);
  EXPECT_TRUE(as_bool(run_cast(Ops::CAST, dtypes::bool_, dtypes::uint64, int64_t{kI64Min})));
  EXPECT_EQ(as_i64(run_cast(Ops::CAST, dtypes::int32, dtypes::bool_, true)), 1);
}

TEST(ExecAluTest, Uint64ToFloatCastAboveTwoTo63) {
  EXPECT_EQ(as_f64(run_cast(Ops::CAST, dtypes::float64, dtypes::uint64, int64_t{-1})), 18446744073709551616.0);
  EXPECT_EQ(as_f64(run_cast(Ops::CAST, dtypes::float32, dtypes::uint64, int64_t{-1})), 18446744073709551616.0);
  EXPECT_EQ(as_f64(run_cast(Ops::CAST, dtypes::float64, dtypes::uint64, kI64Min)), 9223372036854775808.0);
  EXPECT_EQ(as_f64(run_cast(Ops::CAST, dtypes::float16, dtypes::uint64, kI64Min)), INFINITY);
}

TEST(ExecAluTest, IntToFloat32CastRoundsOnce) {
  // 2^62 + 2^38 + 1 is just above the midpoint of two float32 neighbours; rounding through a double first would
  // lose the +1 and then round the exact midpoint down to even.
  int64_t v = (int64_t{1} << 62) + (int64_t{1} << 38) + 1;
  EXPECT_EQ(as_f64(run_cast(Ops::CAST, dtypes::float32, dtypes::int64, v)), static_cast<double>(static_cast<float>(v)));
  EXPECT_EQ(as_f64(run_cast(Ops::CAST, dtypes::float32, dtypes::int64, v)), std::ldexp(1.0, 62) + std::ldexp(1.0, 39));
  uint64_t u = (uint64_t{1} << 63) + (uint64_t{1} << 39) + 1;
  EXPECT_EQ(as_f64(run_cast(Ops::CAST, dtypes::float32, dtypes::uint64, static_cast<int64_t>(u))),
            std::ldexp(1.0, 63) + std::ldexp(1.0, 40));
}

TEST(ExecAluTest, BitcastFloat32AndInt32) {
  EXPECT_EQ(as_i64(run_cast(Ops::BITCAST, dtypes::int32, dtypes::float32, 1.0)), 0x3f800000);
  EXPECT_EQ(as_i64(run_cast(Ops::BITCAST, dtypes::int32, dtypes::float32, -0.0)), INT32_MIN);
  EXPECT_EQ(as_i64(run_cast(Ops::BITCAST, dtypes::uint32, dtypes::float32, -1.0)), 0xbf800000);
  EXPECT_EQ(as_f64(run_cast(Ops::BITCAST, dtypes::float32, dtypes::int32, int64_t{0x40490fdb})),
            static_cast<double>(std::bit_cast<float>(0x40490fdbu)));
  EXPECT_EQ(as_f64(run_cast(Ops::BITCAST, dtypes::float32, dtypes::int32, int64_t{0x7f800000})), INFINITY);
  EXPECT_EQ(as_i64(run_cast(Ops::BITCAST, dtypes::int32, dtypes::uint32, int64_t{0xffffffff})), -1);
  EXPECT_EQ(as_i64(run_cast(Ops::BITCAST, dtypes::uint8, dtypes::int8, int64_t{-1})), 255);
  EXPECT_EQ(as_i64(run_cast(Ops::BITCAST, dtypes::uint64, dtypes::float64, 1.0)), 0x3ff0000000000000);
  EXPECT_EQ(as_f64(run_cast(Ops::BITCAST, dtypes::float64, dtypes::int64, int64_t{0x4000000000000000})), 2.0);
}

TEST(ExecAluTest, BitcastFloat16AndUint16) {
  EXPECT_EQ(as_i64(run_cast(Ops::BITCAST, dtypes::uint16, dtypes::float16, 1.0)), 0x3c00);
  EXPECT_EQ(as_i64(run_cast(Ops::BITCAST, dtypes::uint16, dtypes::float16, -2.0)), 0xc000);
  EXPECT_EQ(as_i64(run_cast(Ops::BITCAST, dtypes::int16, dtypes::float16, -2.0)), -16384);
  EXPECT_EQ(as_f64(run_cast(Ops::BITCAST, dtypes::float16, dtypes::uint16, int64_t{0x7bff})), 65504.0);
  EXPECT_EQ(as_f64(run_cast(Ops::BITCAST, dtypes::float16, dtypes::uint16, int64_t{0x0001})), std::ldexp(1.0, -24));
  EXPECT_EQ(as_i64(run_cast(Ops::BITCAST, dtypes::uint16, dtypes::bfloat16, 1.0)), 0x3f80);
  EXPECT_EQ(as_f64(run_cast(Ops::BITCAST, dtypes::bfloat16, dtypes::uint16, int64_t{0x4049})), 3.140625);
}

TEST(ExecAluTest, BitcastOfDifferentSizesIsUndefined) {
  EXPECT_FALSE(run_cast(Ops::BITCAST, dtypes::int16, dtypes::float32, 1.0).has_value());
  EXPECT_FALSE(run_cast(Ops::BITCAST, dtypes::weakint, dtypes::int64, int64_t{1}).has_value());
}

TEST(ExecAluTest, ConvertValue) {
  EXPECT_EQ(std::get<int64_t>(*convert_value(dtypes::int8, int64_t{200})), -56);
  EXPECT_EQ(std::get<int64_t>(*convert_value(dtypes::uint16, int64_t{-1})), 65535);
  EXPECT_EQ(std::get<int64_t>(*convert_value(dtypes::int32, true)), 1);
  EXPECT_EQ(std::get<bool>(*convert_value(dtypes::bool_, int64_t{2})), true);
  EXPECT_EQ(std::get<double>(*convert_value(dtypes::float16, int64_t{2049})), 2048.0);
  EXPECT_EQ(std::get<double>(*convert_value(dtypes::float32, true)), 1.0);
  EXPECT_EQ(std::get<double>(*convert_value(dtypes::float32, 0.1)), static_cast<double>(0.1f));
  EXPECT_EQ(std::get<double>(*convert_value(dtypes::weakfloat, 0.1)), 0.1) << "weakfloat keeps double precision";
}

TEST(ExecAluTest, IntValueAndWrapInt) {
  EXPECT_TRUE(int_value(dtypes::uint64, -1) == static_cast<__int128>(UINT64_MAX));
  EXPECT_TRUE(int_value(dtypes::int64, -1) == -1);
  EXPECT_EQ(wrap_int(dtypes::int8, 128), -128);
  EXPECT_EQ(wrap_int(dtypes::uint8, -1), 255);
  EXPECT_EQ(wrap_int(dtypes::uint64, static_cast<__int128>(UINT64_MAX)), -1);
  EXPECT_EQ(wrap_int(dtypes::int64, static_cast<__int128>(1) << 64), 0);
  EXPECT_EQ(wrap_int(dtypes::bool_, 2), 0);
  EXPECT_EQ(wrap_int(dtypes::bool_, 3), 1);
}

}  // namespace
}  // namespace doorbell
