// DType: sizes, names, parsing, the promotion lattice, accumulation types, lossless casts and integer ranges.
#include "ir/dtype.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "tests/ir/ir_test_util.h"

namespace doorbell {
namespace {

using testing::error_of;

struct SizeRow {
  DType dt;
  const char* name;
  int bitsize;
  int itemsize;
};

TEST(DTypeTest, SizesAndNamesOfEveryStorableDtype) {
  const SizeRow rows[] = {
      {dtypes::bool_, "bool", 1, 1},       {dtypes::int8, "int8", 8, 1},          {dtypes::int16, "int16", 16, 2},
      {dtypes::int32, "int32", 32, 4},     {dtypes::int64, "int64", 64, 8},       {dtypes::uint8, "uint8", 8, 1},
      {dtypes::uint16, "uint16", 16, 2},   {dtypes::uint32, "uint32", 32, 4},     {dtypes::uint64, "uint64", 64, 8},
      {dtypes::float16, "float16", 16, 2}, {dtypes::bfloat16, "bfloat16", 16, 2}, {dtypes::float32, "float32", 32, 4},
      {dtypes::float64, "float64", 64, 8},
  };
  for (const SizeRow& r : rows) {
    SCOPED_TRACE(r.name);
    EXPECT_EQ(r.dt.name(), r.name);
    EXPECT_EQ(r.dt.bitsize(), r.bitsize);
    EXPECT_EQ(r.dt.itemsize(), r.itemsize);
    EXPECT_EQ(r.dt.lanes, 1);
  }
}

TEST(DTypeTest, WeakAndVoidHaveNoStorage) {
  EXPECT_EQ(dtypes::weakint.name(), "weakint");
  EXPECT_EQ(dtypes::weakfloat.name(), "weakfloat");
  EXPECT_EQ(dtypes::void_.name(), "void");
  EXPECT_EQ(dtypes::weakint.bitsize(), 0);
  EXPECT_EQ(dtypes::weakfloat.bitsize(), 0);
  EXPECT_EQ(error_of<std::invalid_argument>([] { (void)dtypes::weakint.itemsize(); }),
            "DType::itemsize: weakint has no storage size");
  EXPECT_EQ(error_of<std::invalid_argument>([] { (void)dtypes::void_.itemsize(); }),
            "DType::itemsize: void has no storage size");
}

TEST(DTypeTest, Classification) {
  EXPECT_TRUE(dtypes::weakint.is_int());
  EXPECT_TRUE(dtypes::uint16.is_int());
  EXPECT_TRUE(dtypes::uint16.is_unsigned());
  EXPECT_FALSE(dtypes::int16.is_unsigned());
  EXPECT_FALSE(dtypes::bool_.is_int());
  EXPECT_FALSE(dtypes::bool_.is_unsigned());
  EXPECT_TRUE(dtypes::bool_.is_bool());
  EXPECT_TRUE(dtypes::bfloat16.is_float());
  EXPECT_TRUE(dtypes::weakfloat.is_float());
  EXPECT_FALSE(dtypes::float32.is_int());
  EXPECT_TRUE(dtypes::weakint.is_weak());
  EXPECT_TRUE(dtypes::weakfloat.is_weak());
  EXPECT_FALSE(dtypes::int64.is_weak());
  EXPECT_TRUE(dtypes::void_.is_void());
}

TEST(DTypeTest, VecMakesVectorsOfScalars) {
  DType v = dtypes::float32.vec(4);
  EXPECT_EQ(v.lanes, 4);
  EXPECT_EQ(v.name(), "float32x4");
  EXPECT_EQ(v.itemsize(), 16);
  EXPECT_EQ(v.bitsize(), 32) << "bitsize is of one lane";
  EXPECT_EQ(v.scalar(), dtypes::float32);
  EXPECT_NE(v, dtypes::float32);
  EXPECT_EQ(dtypes::int8.vec(1), dtypes::int8);
  EXPECT_EQ(dtypes::uint16.vec(3).itemsize(), 6);
  EXPECT_EQ(dtypes::void_.vec(4), dtypes::void_) << "void stays void, as in tinygrad";
  EXPECT_EQ(error_of<std::invalid_argument>([&] { (void)v.vec(2); }), "DType::vec: float32x4 is already a vector");
  EXPECT_EQ(error_of<std::invalid_argument>([] { (void)dtypes::int32.vec(0); }),
            "DType::vec: lane count 0 is not in [1, 65535]");
  EXPECT_EQ(error_of<std::invalid_argument>([] { (void)dtypes::int32.vec(65536); }),
            "DType::vec: lane count 65536 is not in [1, 65535]");
}

TEST(DTypeTest, DtypeFromNameParsesEveryNameAndAlias) {
  for (DType d : dtypes::kAll) EXPECT_EQ(dtype_from_name(d.name()), d) << d.name();
  EXPECT_EQ(dtype_from_name("void"), dtypes::void_);
  EXPECT_EQ(dtype_from_name("half"), dtypes::float16);
  EXPECT_EQ(dtype_from_name("float"), dtypes::float32);
  EXPECT_EQ(dtype_from_name("double"), dtypes::float64);
  EXPECT_EQ(dtype_from_name("char"), dtypes::int8);
  EXPECT_EQ(dtype_from_name("short"), dtypes::int16);
  EXPECT_EQ(dtype_from_name("int"), dtypes::int32);
  EXPECT_EQ(dtype_from_name("long"), dtypes::int64);
  EXPECT_EQ(dtype_from_name("uchar"), dtypes::uint8);
  EXPECT_EQ(dtype_from_name("ushort"), dtypes::uint16);
  EXPECT_EQ(dtype_from_name("uint"), dtypes::uint32);
  EXPECT_EQ(dtype_from_name("ulong"), dtypes::uint64);
  EXPECT_EQ(dtype_from_name("bf16"), dtypes::bfloat16);
}

TEST(DTypeTest, DtypeFromNameRejectsUnknownText) {
  EXPECT_EQ(error_of<std::invalid_argument>([] { (void)dtype_from_name("floatt"); }),
            "dtype_from_name: 'floatt' is not a dtype name");
  EXPECT_EQ(error_of<std::invalid_argument>([] { (void)dtype_from_name(""); }),
            "dtype_from_name: '' is not a dtype name");
  EXPECT_EQ(error_of<std::invalid_argument>([] { (void)dtype_from_name("Float32"); }),
            "dtype_from_name: 'Float32' is not a dtype name");
}

TEST(DTypeTest, LeastUpperDtypeFollowsTheLattice) {
  using namespace dtypes;
  EXPECT_EQ(least_upper_dtype(bool_, int8), int8);
  EXPECT_EQ(least_upper_dtype(bool_, uint8), uint8);
  EXPECT_EQ(least_upper_dtype(int8, uint8), int16);
  EXPECT_EQ(least_upper_dtype(uint8, uint16), uint16);
  EXPECT_EQ(least_upper_dtype(int16, uint16), int32);
  EXPECT_EQ(least_upper_dtype(int32, uint32), int64);
  EXPECT_EQ(least_upper_dtype(int8, uint64), weakfloat);
  EXPECT_EQ(least_upper_dtype(int64, uint64), weakfloat);
  EXPECT_EQ(least_upper_dtype(float16, bfloat16), float32);
  EXPECT_EQ(least_upper_dtype(weakint, uint8), uint8);
  EXPECT_EQ(least_upper_dtype(weakint, int64), int64);
  EXPECT_EQ(least_upper_dtype(weakint, bool_), weakint);
  EXPECT_EQ(least_upper_dtype(weakint, weakfloat), weakfloat);
  EXPECT_EQ(least_upper_dtype(int32, weakfloat), weakfloat);
  EXPECT_EQ(least_upper_dtype(weakfloat, float16), float16);
  EXPECT_EQ(least_upper_dtype(weakfloat, bfloat16), bfloat16);
  EXPECT_EQ(least_upper_dtype(int64, float16), float16);
  EXPECT_EQ(least_upper_dtype(float16, float32), float32);
  for (DType d : kAll) EXPECT_EQ(least_upper_dtype(d, float64), float64) << d.name();
}

TEST(DTypeTest, LeastUpperDtypeIsSymmetricAndIdempotent) {
  for (DType a : dtypes::kAll) {
    EXPECT_EQ(least_upper_dtype(a, a), a) << a.name();
    for (DType b : dtypes::kAll) {
      DType ab = least_upper_dtype(a, b);
      EXPECT_EQ(ab, least_upper_dtype(b, a)) << a.name() << " " << b.name();
      // an upper bound: promoting again with either operand changes nothing
      EXPECT_EQ(least_upper_dtype(ab, a), ab) << a.name() << " " << b.name();
      EXPECT_EQ(least_upper_dtype(ab, b), ab) << a.name() << " " << b.name();
    }
  }
}

TEST(DTypeTest, LeastUpperDtypeKeepsLanesAndRejectsMismatches) {
  EXPECT_EQ(least_upper_dtype(dtypes::int8.vec(4), dtypes::uint8.vec(4)), dtypes::int16.vec(4));
  EXPECT_EQ(error_of<std::invalid_argument>([] { (void)least_upper_dtype(dtypes::int8.vec(4), dtypes::int8); }),
            "least_upper_dtype: int8x4 and int8 differ in lanes");
  EXPECT_EQ(error_of<std::invalid_argument>([] { (void)least_upper_dtype(dtypes::void_, dtypes::int8); }),
            "least_upper_dtype: void has no promotion");
}

TEST(DTypeTest, StrongDtypeCommitsWeakTypes) {
  EXPECT_EQ(strong_dtype(dtypes::weakint), dtypes::int32);
  EXPECT_EQ(strong_dtype(dtypes::weakfloat), dtypes::float32);
  EXPECT_EQ(strong_dtype(dtypes::weakfloat.vec(2)), dtypes::float32.vec(2));
  for (DType d : dtypes::kAll) {
    if (d.is_weak()) continue;
    EXPECT_EQ(strong_dtype(d), d) << d.name();
  }
}

TEST(DTypeTest, SumAccDtype) {
  using namespace dtypes;
  EXPECT_EQ(sum_acc_dtype(uint8), uint32);
  EXPECT_EQ(sum_acc_dtype(uint16), uint32);
  EXPECT_EQ(sum_acc_dtype(uint32), uint32);
  EXPECT_EQ(sum_acc_dtype(uint64), uint64);
  EXPECT_EQ(sum_acc_dtype(int8), int32);
  EXPECT_EQ(sum_acc_dtype(int16), int32);
  EXPECT_EQ(sum_acc_dtype(int32), int32);
  EXPECT_EQ(sum_acc_dtype(int64), int64);
  EXPECT_EQ(sum_acc_dtype(bool_), int32);
  EXPECT_EQ(sum_acc_dtype(weakint), int32);
  EXPECT_EQ(sum_acc_dtype(float16), float32);
  EXPECT_EQ(sum_acc_dtype(bfloat16), float32);
  EXPECT_EQ(sum_acc_dtype(float32), float32);
  EXPECT_EQ(sum_acc_dtype(float64), float64);
  EXPECT_EQ(sum_acc_dtype(weakfloat), float32);
}

TEST(DTypeTest, CanLosslessCast) {
  using namespace dtypes;
  for (DType d : kAll) {
    EXPECT_TRUE(can_lossless_cast(d, d)) << d.name();
    EXPECT_TRUE(can_lossless_cast(bool_, d)) << d.name();
  }
  EXPECT_TRUE(can_lossless_cast(int8, int16));
  EXPECT_TRUE(can_lossless_cast(uint8, int16));
  EXPECT_TRUE(can_lossless_cast(uint32, int64));
  EXPECT_TRUE(can_lossless_cast(uint16, uint64));
  EXPECT_TRUE(can_lossless_cast(int16, float32));
  EXPECT_TRUE(can_lossless_cast(uint8, float16));
  EXPECT_TRUE(can_lossless_cast(int32, float64));
  EXPECT_TRUE(can_lossless_cast(float16, float32));
  EXPECT_TRUE(can_lossless_cast(bfloat16, float64));
  EXPECT_TRUE(can_lossless_cast(int64, weakint));
  EXPECT_FALSE(can_lossless_cast(uint8, int8));
  EXPECT_FALSE(can_lossless_cast(int8, uint16)) << "negative values";
  EXPECT_FALSE(can_lossless_cast(int64, uint64));
  EXPECT_FALSE(can_lossless_cast(int32, float32)) << "24-bit mantissa";
  EXPECT_FALSE(can_lossless_cast(int16, float16));
  EXPECT_FALSE(can_lossless_cast(int64, float64));
  EXPECT_FALSE(can_lossless_cast(float64, float32));
  EXPECT_FALSE(can_lossless_cast(float16, bfloat16));
  EXPECT_FALSE(can_lossless_cast(bfloat16, float16));
  EXPECT_FALSE(can_lossless_cast(int32, bool_));
  // weakint holds the int64 range: uint64 values above INT64_MAX do not fit
  EXPECT_FALSE(can_lossless_cast(uint64, weakint));
}

TEST(DTypeTest, IntMinAndMax) {
  using namespace dtypes;
  EXPECT_EQ(int_min(bool_), 0);
  EXPECT_EQ(int_max(bool_), 1);
  EXPECT_EQ(int_min(int8), -128);
  EXPECT_EQ(int_max(int8), 127);
  EXPECT_EQ(int_min(int16), -32768);
  EXPECT_EQ(int_max(int16), 32767);
  EXPECT_EQ(int_min(int32), INT32_MIN);
  EXPECT_EQ(int_max(int32), INT32_MAX);
  EXPECT_EQ(int_min(int64), INT64_MIN);
  EXPECT_EQ(int_max(int64), INT64_MAX);
  EXPECT_EQ(int_min(uint8), 0);
  EXPECT_EQ(int_max(uint8), 255);
  EXPECT_EQ(int_min(uint16), 0);
  EXPECT_EQ(int_max(uint16), 65535);
  EXPECT_EQ(int_min(uint32), 0);
  EXPECT_EQ(int_max(uint32), 4294967295);
  EXPECT_EQ(int_min(uint64), 0);
  EXPECT_TRUE(int_max(uint64) == static_cast<__int128>(UINT64_MAX));
  EXPECT_EQ(int_min(weakint), INT64_MIN);
  EXPECT_EQ(int_max(weakint), INT64_MAX);
  EXPECT_EQ(error_of<std::invalid_argument>([] { (void)int_min(float32); }), "int_min: float32 is not an integer dtype");
  EXPECT_EQ(error_of<std::invalid_argument>([] { (void)int_max(weakfloat); }), "int_max: weakfloat is not an integer dtype");
}

}  // namespace
}  // namespace doorbell
