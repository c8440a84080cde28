// Basic indexing with Python's semantics: the shapes of slices with steps, negative indices and steps, newaxis and
// ellipsis, and the views they build. Values of the views are checked in values_test.cpp.
#include "frontend_test_util.h"

namespace doorbell {
namespace {

using testing::error_of;

Tensor cube() { return Tensor::empty({4, 5, 6}); }

TEST(Indexing, IntegersDropAxes) {
  Tensor t = cube();
  EXPECT_EQ(t[1].shape(), (IntTuple{5, 6}));
  EXPECT_EQ(t[-1].shape(), (IntTuple{5, 6}));
  EXPECT_EQ((t[{1, 2}]).shape(), (IntTuple{6}));
  EXPECT_EQ((t[{1, 2, -3}]).shape(), IntTuple{});
  Tensor s = t[{1, 2}];
  EXPECT_EQ(s.uop().op(), Ops::RESHAPE);
  EXPECT_EQ(s.uop().src(0).op(), Ops::SHRINK);
  EXPECT_EQ(s.uop().src(0).arg_as<IntTuple>(), (IntTuple{1, 2, 2, 3, 0, 6}));
}

TEST(Indexing, SlicesWithPositiveSteps) {
  Tensor t = cube();
  EXPECT_EQ((t[{slice(1, 3)}]).shape(), (IntTuple{2, 5, 6}));
  EXPECT_EQ((t[{slice(), slice(0, 5, 2)}]).shape(), (IntTuple{4, 3, 6}));
  EXPECT_EQ((t[{slice(), slice(1, std::nullopt, 3)}]).shape(), (IntTuple{4, 2, 6}));
  EXPECT_EQ((t[{slice(), slice(), slice(std::nullopt, std::nullopt, 4)}]).shape(), (IntTuple{4, 5, 2}));
  EXPECT_EQ((t[{slice(-2)}]).shape(), (IntTuple{2, 5, 6}));
  EXPECT_EQ((t[{slice(std::nullopt, -1)}]).shape(), (IntTuple{3, 5, 6}));
  EXPECT_EQ((t[{slice(-100, 100)}]).shape(), (IntTuple{4, 5, 6}));  // clamped
  EXPECT_EQ((t[{slice(3, 1)}]).shape(), (IntTuple{0, 5, 6}));        // empty
  // a full slice builds nothing
  EXPECT_EQ((t[{slice()}]).uop(), t.uop());
}

TEST(Indexing, NegativeStepsFlip) {
  Tensor v = Tensor::empty({10});
  EXPECT_EQ((v[{slice(std::nullopt, std::nullopt, -1)}]).shape(), (IntTuple{10}));
  Tensor r = v[{slice(std::nullopt, std::nullopt, -1)}];
  EXPECT_EQ(r.uop().op(), Ops::FLIP);
  EXPECT_EQ((v[{slice(std::nullopt, std::nullopt, -3)}]).shape(), (IntTuple{4}));  // 9, 6, 3, 0
  EXPECT_EQ((v[{slice(8, 2, -2)}]).shape(), (IntTuple{3}));                         // 8, 6, 4
  EXPECT_EQ((v[{slice(-1, -4, -1)}]).shape(), (IntTuple{3}));                       // 9, 8, 7
  EXPECT_EQ((v[{slice(2, 8, -1)}]).shape(), (IntTuple{0}));
  Tensor s = v[{slice(8, 2, -2)}];
  // region [4, 9) is shrunk, flipped, padded to 6, split into (3, 2), column 0 kept
  bool saw_flip = false, saw_pad = false;
  for (const UOp& u : s.uop().toposort()) {
    saw_flip |= u.op() == Ops::FLIP;
    if (u.op() == Ops::SHRINK && u.src(0).op() == Ops::BUFFER) {
      EXPECT_EQ(u.arg_as<IntTuple>(), (IntTuple{4, 9}));
    }
    if (u.op() == Ops::PAD) {
      saw_pad = true;
      EXPECT_EQ(u.arg_as<IntTuple>(), (IntTuple{0, 1}));
    }
  }
  EXPECT_TRUE(saw_flip);
  EXPECT_TRUE(saw_pad);
}

TEST(Indexing, NewAxisAndEllipsis) {
  Tensor t = cube();
  EXPECT_EQ((t[{newaxis}]).shape(), (IntTuple{1, 4, 5, 6}));
  EXPECT_EQ((t[{ellipsis, 0}]).shape(), (IntTuple{4, 5}));
  EXPECT_EQ((t[{0, ellipsis}]).shape(), (IntTuple{5, 6}));
  EXPECT_EQ((t[{ellipsis, newaxis}]).shape(), (IntTuple{4, 5, 6, 1}));
  EXPECT_EQ((t[{1, newaxis, slice(0, 2), ellipsis, slice(std::nullopt, std::nullopt, 2)}]).shape(), (IntTuple{1, 2, 3}));
}

TEST(Indexing, Errors) {
  Tensor t = cube();
  EXPECT_EQ(error_of([&] { t[4]; }), "getitem: index 4 is out of range for axis 0 of size 4 in shape (4, 5, 6)");
  EXPECT_EQ(error_of([&] { (void)t[{0, -6}]; }), "getitem: index -6 is out of range for axis 1 of size 5 in shape (4, 5, 6)");
  EXPECT_EQ(error_of([&] { (void)t[{0, 0, 0, 0}]; }), "getitem: 4 indices for shape (4, 5, 6) of 3 axes");
  EXPECT_EQ(error_of([&] { (void)t[{slice(0, 2, 0)}]; }), "getitem: slice step is 0 on axis 0; expected a non-zero step");
  EXPECT_EQ(error_of([&] { (void)t[{ellipsis, ellipsis}]; }), "getitem: more than one ellipsis; expected at most one");
}

}  // namespace
}  // namespace doorbell
