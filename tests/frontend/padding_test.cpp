// pad's modes (frontend/padding.cpp): reflect, replicate and circular values against numpy's pad ("reflect",
// "edge", "wrap"), negative amounts that crop after padding, and the errors for amounts a mode cannot take.
#include "frontend_test_util.h"

namespace doorbell {
namespace {

using testing::error_of;

TEST(PadModes, OneDimensionalMatchesNumpy) {
  Tensor x({1, 2, 3, 4});
  // np.pad([1, 2, 3, 4], (3, 2), mode) for "reflect", "edge" and "wrap".
  EXPECT_EQ(x.pad({{3, 2}}, PadMode::reflect).tolist<int>(), (std::vector<int>{4, 3, 2, 1, 2, 3, 4, 3, 2}));
  EXPECT_EQ(x.pad({{3, 2}}, PadMode::replicate).tolist<int>(), (std::vector<int>{1, 1, 1, 1, 2, 3, 4, 4, 4}));
  EXPECT_EQ(x.pad({{3, 2}}, PadMode::circular).tolist<int>(), (std::vector<int>{2, 3, 4, 1, 2, 3, 4, 1, 2}));
  EXPECT_EQ(x.pad({{4, 4}}, PadMode::circular).tolist<int>(), (std::vector<int>{1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4}));
  EXPECT_EQ(x.pad({{1, 0}}, PadMode::constant, 9).tolist<int>(), (std::vector<int>{9, 1, 2, 3, 4}));
}

TEST(PadModes, TwoAxesAtOnce) {
  Tensor x({{0, 1, 2}, {3, 4, 5}});
  Tensor r = x.pad({{1, 0}, {2, 1}}, PadMode::reflect);
  EXPECT_EQ(r.shape(), (IntTuple{3, 6}));
  EXPECT_EQ(r.tolist<int>(), (std::vector<int>{5, 4, 3, 4, 5, 4, 2, 1, 0, 1, 2, 1, 5, 4, 3, 4, 5, 4}));
  EXPECT_EQ(x.pad({{1, 0}, {1, 2}}, PadMode::replicate).tolist<int>(),
            (std::vector<int>{0, 0, 1, 2, 2, 2, 0, 0, 1, 2, 2, 2, 3, 3, 4, 5, 5, 5}));
  EXPECT_EQ(x.pad({{1, 1}, {0, 1}}, PadMode::circular).tolist<int>(),
            (std::vector<int>{3, 4, 5, 3, 0, 1, 2, 0, 3, 4, 5, 3, 0, 1, 2, 0}));
  Tensor f({{0.5f, 1.5f}});
  EXPECT_EQ(f.pad({{0, 0}, {1, 1}}, PadMode::reflect).tolist<float>(), (std::vector<float>{1.5f, 0.5f, 1.5f, 0.5f}));
}

TEST(PadModes, NegativeAmountsCropAfterPadding) {
  Tensor x({1, 2, 3, 4});
  // Reflected from the whole axis first, then one element cropped from the end (tinygrad).
  EXPECT_EQ(x.pad({{2, -1}}, PadMode::reflect).tolist<int>(), (std::vector<int>{3, 2, 1, 2, 3}));
  EXPECT_EQ(x.pad({{-1, 2}}, PadMode::replicate).tolist<int>(), (std::vector<int>{2, 3, 4, 4, 4}));
  // Circular crops first: the wrap comes from what is left.
  EXPECT_EQ(x.pad({{-1, 2}}, PadMode::circular).tolist<int>(), (std::vector<int>{2, 3, 4, 2, 3}));
}

TEST(PadModes, ErrorsNameTheAmountAndTheLimit) {
  Tensor x = Tensor::empty({2, 3});
  EXPECT_EQ(error_of([&] { x.pad({{0, 0}, {3, 0}}, PadMode::reflect); }),
            "pad: reflect padding (3, 0) of axis 1 of shape (2, 3); expected amounts below the axis size 3");
  EXPECT_EQ(error_of([&] { x.pad({{0, 4}, {0, 0}}, PadMode::circular); }),
            "pad: circular padding (0, 4) of axis 0 of size 2 wraps around more than once; expected amounts up to the axis size");
  EXPECT_EQ(error_of([&] { Tensor::empty({0}).pad({{1, 0}}, PadMode::replicate); }),
            "pad: replicate padding of the empty axis 0 of shape (0,); expected an element to repeat");
  EXPECT_EQ(error_of([&] { x.pad({{1, 1}}, PadMode::replicate); }), "pad: 1 (before, after) pairs for shape (2, 3); expected one per axis");
  EXPECT_EQ(error_of([&] { x.pad({{0, 0}, {1, 1}}, PadMode::replicate, 5); }),
            "pad: a fill value with a mode other than constant; expected the value only for PadMode::constant");
  EXPECT_EQ(error_of([&] { x.pad({{0, 0}, {1, -5}}, PadMode::replicate); }),
            "pad: negative padding (1, -5) removes more than the 4 elements of axis 1");
}

}  // namespace
}  // namespace doorbell
