// Rounding (frontend/rounding.cpp): round half to even, div with Rounding::trunc and Rounding::floor for integers
// and floats, fmod (the sign of the dividend), and a number on the left of // and %.
#include <cmath>
#include <limits>

#include "frontend_test_util.h"

namespace doorbell {
namespace {

TEST(Round, HalfToEven) {
  Tensor x({-3.5f, -2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 3.5f, 2.4f, 2.6f, -2.6f, 0.f});
  EXPECT_EQ(x.round().tolist<float>(), (std::vector<float>{-4, -2, -2, -0.f, 0, 2, 2, 4, 2, 3, -3, 0}));
  EXPECT_EQ(x.round().dtype(), dtypes::float32);
}

TEST(Round, ExactAboveTheMantissaAndAtSpecials) {
  // 2^23 + 1 is odd and has no fraction: (x + 0.5).floor() would round x + 0.5 up to 2^23 + 2 first.
  const float inf = std::numeric_limits<float>::infinity();
  Tensor x({8388609.f, -8388609.f, 8388607.5f, 16777216.f, 1e30f, inf, -inf});
  EXPECT_EQ(x.round().tolist<float>(), (std::vector<float>{8388609.f, -8388609.f, 8388608.f, 16777216.f, 1e30f, inf, -inf}));
  EXPECT_TRUE(std::isnan(Tensor({std::nanf("")}).round().item<float>()));
  Tensor h({2.5, 3.5, -0.5}, dtypes::float16);
  EXPECT_EQ(h.round().tolist<float>(), (std::vector<float>{2, 4, -0.f}));
  EXPECT_EQ(Tensor({3, -3}).round().tolist<int>(), (std::vector<int>{3, -3}));  // integers unchanged
}

TEST(DivRounding, IntegersTruncAndFloor) {
  Tensor a({7, -7, 7, -7, 6, -6, 0}), b({2, 2, -2, -2, 3, 3, -5});
  Tensor t = a.div(b, Rounding::trunc), f = a.div(b, Rounding::floor);
  EXPECT_EQ(t.dtype(), dtypes::int32);
  EXPECT_EQ(t.tolist<int>(), (std::vector<int>{3, -3, -3, 3, 2, -2, 0}));
  EXPECT_EQ(f.tolist<int>(), (std::vector<int>{3, -4, -4, 3, 2, -2, 0}));
  EXPECT_EQ(Tensor({-7, 9}, dtypes::int8).div(2, Rounding::trunc).tolist<int>(), (std::vector<int>{-3, 4}));
  EXPECT_EQ(Tensor({7, 9}, dtypes::uint8).div(2, Rounding::trunc).tolist<int>(), (std::vector<int>{3, 4}));
}

TEST(DivRounding, FloatsRoundTheQuotient) {
  Tensor a({7.5f, -7.5f, 1.f});
  EXPECT_EQ(a.div(2, Rounding::trunc).tolist<float>(), (std::vector<float>{3, -3, 0}));
  EXPECT_EQ(a.div(2, Rounding::floor).tolist<float>(), (std::vector<float>{3, -4, 0}));
  Tensor i({7, -7});
  EXPECT_EQ(i.div(2.0, Rounding::trunc).dtype(), dtypes::float32);  // a float literal makes the quotient float
  EXPECT_EQ(i.div(2.0, Rounding::trunc).tolist<float>(), (std::vector<float>{3, -3}));
}

TEST(Fmod, SignOfTheDividend) {
  Tensor a({-4, 7, 5, 4, -7, 8}), b({2, -3, 8, -2, 3, 5});
  EXPECT_EQ(a.fmod(b).tolist<int>(), (std::vector<int>{0, 1, 5, 0, -1, 3}));
  EXPECT_EQ(a.mod(b).tolist<int>(), (std::vector<int>{0, -2, 5, 0, 2, 3}));  // Python's %, for contrast
  EXPECT_EQ(Tensor({-7.5f, 7.5f}).fmod(2).tolist<float>(), (std::vector<float>{-1.5f, 1.5f}));
}

TEST(ScalarOnTheLeft, FloorDivisionAndModulo) {
  Tensor b({2, -2, 3});
  Tensor q = floordiv(7, b);
  EXPECT_EQ(q.dtype(), dtypes::int32);
  EXPECT_EQ(q.tolist<int>(), (std::vector<int>{3, -4, 2}));
  EXPECT_EQ((7 % b).tolist<int>(), (std::vector<int>{1, -1, 1}));
  Tensor fq = floordiv(7.5, b);
  EXPECT_EQ(fq.dtype(), dtypes::float32);
  EXPECT_EQ(fq.tolist<float>(), (std::vector<float>{3, -4, 2}));
  Tensor u = floordiv(200, Tensor({7}, dtypes::uint8));  // a weak literal adopts the dtype
  EXPECT_EQ(u.dtype(), dtypes::uint8);
  EXPECT_EQ(u.item<int>(), 28);
  EXPECT_EQ(floordiv(5, Tensor::empty({2, 3})).shape(), (IntTuple{2, 3}));
}

}  // namespace
}  // namespace doorbell
