// reduce_identity and accumulator_start: the identity of ADD, MUL and MAX for every dtype, checked as an identity
// (combining it with values by exec_alu gives the values back), and the errors for what has none.
#include "ir/reduce_identity.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "ir/exec_alu.h"

namespace doorbell {
namespace {

// Values of `dt` to combine with the identity: extremes, zero, negatives where the type has them.
std::vector<ConstValue> samples(DType dt) {
  if (dt.is_bool()) return {false, true};
  if (dt.is_float()) return {0.0, -0.0, 1.5, -2.25, 256.0, -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  std::vector<ConstValue> v;
  for (__int128 x : {int_min(dt), int_min(dt) + 1, __int128{-1}, __int128{0}, __int128{1}, __int128{7}, int_max(dt)})
    if (x >= int_min(dt) && x <= int_max(dt)) v.push_back(*convert_value(dt, static_cast<int64_t>(x)));
  return v;
}

bool same_bits(const ConstValue& a, const ConstValue& b) {
  if (a.index() != b.index()) return false;
  if (const double* d = std::get_if<double>(&a)) return std::bit_cast<uint64_t>(*d) == std::bit_cast<uint64_t>(std::get<double>(b));
  return a == b;
}

TEST(ReduceIdentity, CombinedWithAnyValueGivesTheValueForEveryOpAndDtype) {
  for (DType dt : dtypes::kAll) {
    for (Ops op : {Ops::ADD, Ops::MUL, Ops::MAX}) {
      ConstValue id = accumulator_start(op, dt);
      for (const ConstValue& x : samples(dt)) {
        ConstValue vals[2] = {id, x};
        DType in[2] = {dt, dt};
        std::optional<ConstValue> r = exec_alu(op, dt, vals, in);
        ASSERT_TRUE(r.has_value()) << op_name(op) << " " << dt.name();
        EXPECT_TRUE(same_bits(*r, x)) << op_name(op) << " of the identity and a " << dt.name() << " value changed the value";
      }
    }
  }
}

TEST(ReduceIdentity, SumIsZeroProductOneMaxTheLowestValue) {
  EXPECT_EQ(std::get<int64_t>(reduce_identity(Ops::ADD, dtypes::int32)), 0);
  EXPECT_EQ(std::get<int64_t>(reduce_identity(Ops::MUL, dtypes::uint8)), 1);
  EXPECT_EQ(std::get<int64_t>(reduce_identity(Ops::MAX, dtypes::int8)), -128);
  EXPECT_EQ(std::get<int64_t>(reduce_identity(Ops::MAX, dtypes::int64)), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(std::get<int64_t>(reduce_identity(Ops::MAX, dtypes::weakint)), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(std::get<int64_t>(reduce_identity(Ops::MAX, dtypes::uint64)), 0);
  EXPECT_EQ(std::get<bool>(reduce_identity(Ops::MAX, dtypes::bool_)), false);
  EXPECT_EQ(std::get<bool>(reduce_identity(Ops::MUL, dtypes::bool_)), true);
  EXPECT_EQ(std::get<double>(reduce_identity(Ops::MAX, dtypes::float16)), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(std::get<double>(reduce_identity(Ops::MUL, dtypes::bfloat16)), 1.0);
}

TEST(ReduceIdentity, EmptyFloatSumIsPositiveZeroWhileAccumulatorsStartAtNegativeZero) {
  for (DType dt : {dtypes::float16, dtypes::bfloat16, dtypes::float32, dtypes::float64}) {
    EXPECT_FALSE(std::signbit(std::get<double>(reduce_identity(Ops::ADD, dt)))) << dt.name();
    EXPECT_TRUE(std::signbit(std::get<double>(accumulator_start(Ops::ADD, dt)))) << dt.name();
  }
  EXPECT_EQ(std::get<int64_t>(accumulator_start(Ops::ADD, dtypes::int16)), 0);
}

TEST(ReduceIdentity, VectorDtypeGivesItsElementsIdentity) {
  EXPECT_EQ(std::get<double>(reduce_identity(Ops::MAX, dtypes::float32.vec(16))), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(std::get<int64_t>(reduce_identity(Ops::MAX, dtypes::int32.vec(8))), std::numeric_limits<int32_t>::min());
}

TEST(ReduceIdentity, NonReduceOpOrVoidDtypeThrowsNamingIt) {
  try {
    reduce_identity(Ops::SUB, dtypes::int32);
    FAIL() << "SUB has no reduce identity";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("SUB is not a reduce op"), std::string::npos) << e.what();
  }
  EXPECT_THROW(reduce_identity(Ops::ADD, dtypes::void_), std::invalid_argument);
}

}  // namespace
}  // namespace doorbell
