// Semantics tinygrad fixes for literals and edge values (issue 14): a weak integer literal outside the tensor's
// dtype keeps its exact value, sign of inf/nan/-0, float16 exp and cos through float32, integer to a negative
// integer power, randint ranges. Values are computed on the default device; expected values are tinygrad's.
#include <cmath>
#include <limits>

#include "frontend_test_util.h"

namespace doorbell {
namespace {

using testing::error_of;

Tensor u8() { return Tensor({1, 44, 200, 255}, dtypes::uint8).realize(); }
Tensor i8() { return Tensor({-128, -1, 0, 5, 127}, dtypes::int8).realize(); }
std::vector<int> ints(const Tensor& t) { return t.tolist<int>(); }
std::vector<bool> bools(const Tensor& t) { return t.tolist<bool>(); }
const std::vector<bool> kAll4{true, true, true, true}, kNone4{false, false, false, false};
const std::vector<bool> kAll5{true, true, true, true, true}, kNone5{false, false, false, false, false};

TEST(WeakLiteral, ComparisonWithLiteralAboveUint8RangeIsTrueForAll) {
  EXPECT_EQ(bools(u8().lt(300)), kAll4);
  EXPECT_EQ(bools(u8() <= 300), kAll4);
  EXPECT_EQ(bools(u8() > 300), kNone4);
  EXPECT_EQ(bools(u8() >= 300), kNone4);
  EXPECT_EQ(bools(u8() == 300), kNone4);  // 300 is not 44
  EXPECT_EQ(bools(u8() != 300), kAll4);
  EXPECT_EQ(bools(300 > u8()), kAll4);
  EXPECT_EQ(bools(u8() < (int64_t{1} << 40)), kAll4);
  EXPECT_EQ(bools(i8() < 300), kAll5);
}

TEST(WeakLiteral, NegativeLiteralOnUnsignedComparesBelowEveryValue) {
  EXPECT_EQ(bools(u8() > -1), kAll4);
  EXPECT_EQ(bools(u8() >= -1), kAll4);
  EXPECT_EQ(bools(u8() < -1), kNone4);
  EXPECT_EQ(bools(u8() == -1), kNone4);  // -1 is not 255
  EXPECT_EQ(bools(u8() != -300), kAll4);
}

TEST(WeakLiteral, LiteralBelowInt8RangeComparesBelowEveryValue) {
  EXPECT_EQ(bools(i8() > -300), kAll5);
  EXPECT_EQ(bools(i8() <= -129), kNone5);
  EXPECT_EQ(bools(i8() == -384), kNone5);  // -384 wraps to -128
  EXPECT_EQ(bools(i8() < -1), (std::vector<bool>{true, false, false, false, false}));  // in range: as before
}

TEST(WeakLiteral, MaximumMinimumAndClipUseTheExactLiteralThenWrap) {
  EXPECT_EQ(ints(u8().maximum(300)), (std::vector<int>{44, 44, 44, 44}));  // 300 wins, then wraps
  EXPECT_EQ(ints(u8().minimum(300)), (std::vector<int>{1, 44, 200, 255}));
  EXPECT_EQ(ints(u8().maximum(-1)), (std::vector<int>{1, 44, 200, 255}));
  EXPECT_EQ(ints(u8().minimum(-1)), (std::vector<int>{255, 255, 255, 255}));
  EXPECT_EQ(ints(i8().maximum(300)), (std::vector<int>{44, 44, 44, 44, 44}));
  EXPECT_EQ(ints(i8().minimum(-300)), (std::vector<int>{-44, -44, -44, -44, -44}));
  EXPECT_EQ(ints(i8().maximum(-300)), (std::vector<int>{-128, -1, 0, 5, 127}));
  EXPECT_EQ(ints(u8().clip(300, std::nullopt)), (std::vector<int>{44, 44, 44, 44}));
  EXPECT_EQ(ints(u8().clip(std::nullopt, 300)), (std::vector<int>{1, 44, 200, 255}));
  EXPECT_EQ(ints(u8().clip(-1, std::nullopt)), (std::vector<int>{1, 44, 200, 255}));
  EXPECT_EQ(ints(u8().clip(std::nullopt, -300)), (std::vector<int>{212, 212, 212, 212}));
  EXPECT_EQ(ints(i8().clip(-300, 300)), (std::vector<int>{-128, -1, 0, 5, 127}));
  EXPECT_EQ(u8().maximum(300).dtype(), dtypes::uint8);
}

TEST(WeakLiteral, FloordivAndModByOutOfRangeLiteralAreExact) {
  EXPECT_EQ(ints(u8().floordiv(300)), (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(ints(u8().floordiv(-1)), (std::vector<int>{255, 212, 56, 1}));  // -x, wrapped
  EXPECT_EQ(ints(u8().mod(-1)), (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(ints(u8().mod(300)), (std::vector<int>{1, 44, 200, 255}));
  EXPECT_EQ(ints(i8().floordiv(300)), (std::vector<int>{-1, -1, 0, 0, 0}));
  EXPECT_EQ(ints(i8().floordiv(-300)), (std::vector<int>{0, 0, 0, -1, -1}));
  EXPECT_EQ(ints(i8().mod(300)), (std::vector<int>{-84, 43, 0, 5, 127}));  // 172 and 299 wrap to int8
  EXPECT_EQ(u8().floordiv(300).dtype(), dtypes::uint8);
  EXPECT_EQ(i8().mod(300).dtype(), dtypes::int8);
}

TEST(WeakLiteral, ArithmeticAndWhereWrapTheResultAsBefore) {
  EXPECT_EQ(ints(u8() + 300), (std::vector<int>{45, 88, 244, 43}));
  EXPECT_EQ(ints(u8() - 300), (std::vector<int>{213, 0, 156, 211}));
  EXPECT_EQ(ints(u8() * 300), (std::vector<int>{44, 144, 96, 212}));
  EXPECT_EQ(ints(i8() + 300), (std::vector<int>{-84, 43, 44, 49, -85}));
  EXPECT_EQ(ints((u8() > 100).where(u8(), 300)), (std::vector<int>{44, 44, 200, 255}));
  EXPECT_EQ(ints((u8() > 100).where(u8(), -1)), (std::vector<int>{255, 255, 200, 255}));
  EXPECT_EQ((u8() + 300).dtype(), dtypes::uint8);
}

TEST(WeakLiteral, FloatLiteralOnIntegerTensorPromotesToFloat) {
  EXPECT_EQ(bools(i8() < 2.5), (std::vector<bool>{true, true, true, false, false}));
  EXPECT_EQ(bools(u8() < -1.5), kNone4);
  EXPECT_EQ(bools(u8() < 300.5), kAll4);
  Tensor m = i8().maximum(2.5);
  EXPECT_EQ(m.dtype(), dtypes::float32);
  EXPECT_EQ(m.tolist<float>(), (std::vector<float>{2.5f, 2.5f, 2.5f, 5, 127}));
  EXPECT_EQ(u8().floordiv(2.5).tolist<float>(), (std::vector<float>{0, 17, 80, 102}));
}

TEST(WeakLiteral, SixtyFourBitDtypesKeepTheirLiterals) {
  Tensor x = Tensor({int64_t{1}, int64_t{-5}}, dtypes::int64);
  EXPECT_EQ(bools(x < (int64_t{1} << 40)), (std::vector<bool>{true, true}));
  Tensor u = Tensor({uint64_t{1}, ~uint64_t{0}}, dtypes::uint64);
  // A uint64 literal above INT64_MAX is stored as its bits: it still equals the uint64 value.
  EXPECT_EQ(bools(u == ~uint64_t{0}), (std::vector<bool>{false, true}));
}

TEST(Sign, InfinitiesNanAndZerosMatchTinygrad) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (DType dt : {dtypes::float32, dtypes::float16, dtypes::bfloat16, dtypes::float64}) {
    Tensor x = Tensor({inf, -inf, nan, 0.0, -0.0, 2.0, -3.0}, dt);
    std::vector<double> s = x.sign().tolist<double>();
    EXPECT_EQ(s, (std::vector<double>{1, -1, 1, 0, 0, 1, -1})) << dt.name();
    EXPECT_FALSE(std::signbit(s[4])) << "sign(-0.0) is +0 in " << dt.name();
    EXPECT_EQ(x.sign().dtype(), dt);
  }
  EXPECT_EQ(ints(Tensor({-128, 0, 127}, dtypes::int8).sign()), (std::vector<int>{-1, 0, 1}));
  EXPECT_EQ(ints(Tensor({0, 1, 255}, dtypes::uint8).sign()), (std::vector<int>{0, 1, 1}));
  EXPECT_EQ(bools(Tensor({false, true}).sign()), (std::vector<bool>{false, true}));
}

TEST(HalfTranscendentals, ExpAndCosComputeInFloat32AndRoundOnce) {
  for (DType dt : {dtypes::float16, dtypes::bfloat16}) {
    Tensor x = Tensor({5.6953125, 1.0, -2.5, 10.0}, dt).realize();
    std::vector<double> in = x.tolist<double>(), e = x.exp().tolist<double>(), c = x.cos().tolist<double>();
    EXPECT_EQ(x.exp().dtype(), dt);
    EXPECT_EQ(x.cos().dtype(), dt);
    for (size_t i = 0; i < in.size(); i++) {
      // one rounding of the float32 result: the value of the exact result rounded to dt
      double want_e = Tensor(std::exp(in[i])).cast(dt).item<double>();
      double want_c = Tensor(std::cos(in[i])).cast(dt).item<double>();
      EXPECT_EQ(e[i], want_e) << dt.name() << " exp(" << in[i] << ")";
      EXPECT_EQ(c[i], want_c) << dt.name() << " cos(" << in[i] << ")";
    }
  }
  EXPECT_EQ(Tensor({5.6953125}, dtypes::float16).exp().item<double>(), 297.5);
  EXPECT_EQ(Tensor({1.5}, dtypes::float64).exp().dtype(), dtypes::float64);
  EXPECT_EQ(Tensor({1, 2}).exp().dtype(), dtypes::float32);
}

TEST(IntegerPow, NegativeIntegerLiteralExponentThrows) {
  std::string e = error_of([] { (void)Tensor({1, 2, 3}).pow(-1); });
  EXPECT_NE(e.find("pow"), std::string::npos) << e;
  EXPECT_NE(e.find("int32"), std::string::npos) << e;
  EXPECT_NE(e.find("-1"), std::string::npos) << e;
  EXPECT_THROW((void)Tensor({true, false}).pow(-2), std::invalid_argument);
  EXPECT_THROW((void)Tensor({1, 2}, dtypes::uint8).pow(-3), std::invalid_argument);
  EXPECT_EQ(Tensor({2.0f, 4.0f}).pow(-1).tolist<float>(), (std::vector<float>{0.5f, 0.25f}));
  EXPECT_EQ(Tensor({1, 4, 9}).pow(0.5).tolist<float>(), (std::vector<float>{1, 2, 3}));
}

TEST(IntegerPow, NonNegativeIntegerPowersWrapInTheDtype) {
  EXPECT_EQ(ints(Tensor({1, 2, -3}).pow(2)), (std::vector<int>{1, 4, 9}));
  EXPECT_EQ(ints(Tensor({3, 2, 1}, dtypes::uint8).pow(6)), (std::vector<int>{217, 64, 1}));
  EXPECT_EQ(ints(Tensor({3}).pow(25)), (std::vector<int>{1180052131}));  // 3^25 mod 2^32, as tinygrad
  EXPECT_EQ(ints(Tensor({2, 1, 0}, dtypes::uint8).pow(300)), (std::vector<int>{0, 1, 0}));
  EXPECT_EQ(ints(pow(2, Tensor({0, 3, 10}))), (std::vector<int>{1, 8, 1024}));
}

TEST(Randint, RangeOutsideTheDtypeThrows) {
  std::string e = error_of([] { (void)Tensor::randint({4}, int64_t{1} << 40, int64_t{1} << 41, dtypes::int32); });
  EXPECT_NE(e.find("randint"), std::string::npos) << e;
  EXPECT_NE(e.find("int32"), std::string::npos) << e;
  EXPECT_NE(e.find("1099511627776"), std::string::npos) << e;
  EXPECT_THROW((void)Tensor::randint({4}, -1, 10, dtypes::uint8), std::invalid_argument);
  EXPECT_THROW((void)Tensor::randint({4}, 0, 257, dtypes::uint8), std::invalid_argument);
  EXPECT_THROW((void)Tensor::randint({4}, 5, 5), std::invalid_argument);
  EXPECT_THROW((void)Tensor::randint({4}, 6, 5), std::invalid_argument);
  // The edges of the dtype are allowed: high is exclusive.
  std::vector<int> v = ints(Tensor::randint({64}, 250, 256, dtypes::uint8));
  for (int x : v) EXPECT_TRUE(x >= 250 && x <= 255) << x;
  std::vector<int64_t> w = Tensor::randint({64}, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), dtypes::int64).tolist<int64_t>();
  EXPECT_EQ(w.size(), 64u);
}

}  // namespace
}  // namespace doorbell

namespace doorbell {
namespace {

using testing::error_of;

TEST(SizeOverflow, FullAndEmptyOverTheByteLimitThrowNamingShapeAndDtype) {
  std::string e = error_of([] { (void)Tensor::full({int64_t{1} << 62}, 1.0f, dtypes::float32); });
  EXPECT_EQ(e, "full: shape (4611686018427387904,) of float32 is 18446744073709551616 bytes, over the 2^63-1 limit");
  e = error_of([] { (void)Tensor::empty({int64_t{1} << 62}, dtypes::float32); });
  EXPECT_NE(e.find("empty: shape (4611686018427387904,) of float32"), std::string::npos) << e;
  e = error_of([] { (void)Tensor::empty({int64_t{1} << 61}, dtypes::float64); });
  EXPECT_NE(e.find("of float64 is 18446744073709551616 bytes"), std::string::npos) << e;
  e = error_of([] { (void)Tensor::zeros({int64_t{1} << 40, int64_t{1} << 40}); });
  EXPECT_NE(e.find("zeros: shape (1099511627776, 1099511627776) of float32 has over 2^63-1 elements"), std::string::npos) << e;
  EXPECT_THROW((void)Tensor::rand({int64_t{1} << 62}), std::invalid_argument);
  EXPECT_THROW((void)Tensor::randint({int64_t{1} << 62}, 0, 5), std::invalid_argument);
  // At the limit in elements but not in bytes: int8 of 2^62 elements is representable.
  EXPECT_EQ(Tensor::full({int64_t{1} << 62}, 1, dtypes::int8).shape(), (IntTuple{int64_t{1} << 62}));
}

TEST(SizeOverflow, MovementOpsOverTheLimitThrowNamingTheOp) {
  Tensor x = Tensor({1.f, 2.f});
  std::string e = error_of([&] { (void)x.pad({{int64_t{1} << 62, 0}}); });
  EXPECT_NE(e.find("pad: shape (4611686018427387906,) of float32"), std::string::npos) << e;
  e = error_of([&] { (void)x.pad({{INT64_MAX, 5}}); });
  EXPECT_NE(e.find("pad: axis 0"), std::string::npos) << e;
  e = error_of([&] { (void)x.reshape({1, 2}).expand({int64_t{1} << 62, 2}); });
  EXPECT_NE(e.find("expand: shape (4611686018427387904, 2) of float32"), std::string::npos) << e;
  e = error_of([&] { (void)x.repeat({int64_t{1} << 62}); });
  EXPECT_NE(e.find("repeat"), std::string::npos) << e;
  e = error_of([&] { (void)x.repeat({INT64_MAX}); });
  EXPECT_NE(e.find("repeat: axis 0"), std::string::npos) << e;
  e = error_of([&] { (void)x.reshape({int64_t{1} << 62, int64_t{1} << 62, -1}); });
  EXPECT_NE(e.find("reshape"), std::string::npos) << e;
  e = error_of([&] { (void)Tensor::ones({int64_t{1} << 62, 4}); });
  EXPECT_NE(e.find("shape (4611686018427387904, 4) of float32 has over 2^63-1 elements"), std::string::npos) << e;
  // The process stays usable after these errors.
  EXPECT_EQ((x + 1).tolist<float>(), (std::vector<float>{2, 3}));
}

}  // namespace
}  // namespace doorbell
