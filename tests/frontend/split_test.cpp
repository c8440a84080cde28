// Views composed from shrinks, reshapes and pads (frontend/split.cpp, triangular.cpp, padding.cpp): split, chunk,
// unflatten, roll, triu and tril, with values as torch gives them.
#include "frontend_test_util.h"

namespace doorbell {
namespace {

using testing::error_of;

TEST(Split, BySizeAndBySizes) {
  Tensor x({0, 1, 2, 3, 4, 5, 6});
  std::vector<Tensor> parts = x.split(3);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].tolist<int>(), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(parts[2].tolist<int>(), (std::vector<int>{6}));
  std::vector<Tensor> sized = x.split(IntTuple{2, 0, 5});
  EXPECT_EQ(sized[1].shape(), (IntTuple{0}));
  EXPECT_EQ(sized[2].tolist<int>(), (std::vector<int>{2, 3, 4, 5, 6}));
  Tensor m = Tensor::empty({4, 6});
  std::vector<Tensor> cols = m.chunk(4, 1);  // ceil(6 / 4) = 2 columns each: 3 pieces, as torch
  ASSERT_EQ(cols.size(), 3u);
  EXPECT_EQ(cols[0].shape(), (IntTuple{4, 2}));
  EXPECT_EQ(error_of([&] { x.split(IntTuple{2, 2}); }), "split: sizes (2, 2) sum to 4; expected the 7 elements of axis 0 of shape (7,)");
  EXPECT_EQ(error_of([&] { x.split(0); }), "split: size 0; expected a size >= 1");
  EXPECT_EQ(error_of([&] { x.chunk(0); }), "chunk: 0 chunks; expected at least 1");
}

TEST(Split, Unflatten) {
  Tensor x = Tensor::empty({2, 12, 5});
  EXPECT_EQ(x.unflatten(1, {3, 4}).shape(), (IntTuple{2, 3, 4, 5}));
  EXPECT_EQ(x.unflatten(-2, {-1, 6}).shape(), (IntTuple{2, 2, 6, 5}));
  EXPECT_EQ(error_of([&] { x.unflatten(1, {5, 2}); }), "unflatten: axis 1 of shape (2, 12, 5) cannot become (5, 2)");
}

TEST(Roll, ShiftsWrapAround) {
  Tensor x({{0, 1, 2, 3}, {4, 5, 6, 7}});
  EXPECT_EQ(x.roll(1, 1).tolist<int>(), (std::vector<int>{3, 0, 1, 2, 7, 4, 5, 6}));
  EXPECT_EQ(x.roll(-1, 1).tolist<int>(), (std::vector<int>{1, 2, 3, 0, 5, 6, 7, 4}));
  EXPECT_EQ(x.roll(5, 0).tolist<int>(), (std::vector<int>{4, 5, 6, 7, 0, 1, 2, 3}));
  EXPECT_EQ(x.roll(4, 1).uop(), x.uop());  // a whole turn is no op
}

TEST(Triangle, TriuAndTrilWithDiagonals) {
  Tensor x({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}});
  EXPECT_EQ(x.triu().tolist<int>(), (std::vector<int>{1, 2, 3, 0, 5, 6, 0, 0, 9}));
  EXPECT_EQ(x.triu(1).tolist<int>(), (std::vector<int>{0, 2, 3, 0, 0, 6, 0, 0, 0}));
  EXPECT_EQ(x.tril().tolist<int>(), (std::vector<int>{1, 0, 0, 4, 5, 0, 7, 8, 9}));
  EXPECT_EQ(x.tril(-1).tolist<int>(), (std::vector<int>{0, 0, 0, 4, 0, 0, 7, 8, 0}));
  EXPECT_EQ(Tensor::ones({2, 2, 3}).triu().tolist<float>(), (std::vector<float>{1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1}));
  EXPECT_EQ(error_of([] { Tensor::empty({3}).triu(); }), "triu: shape (3,); expected at least 2 axes");
}

}  // namespace
}  // namespace doorbell
