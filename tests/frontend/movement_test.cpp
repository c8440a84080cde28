// Movement ops: the shapes they give, the UOps and args they build (per scheduler/schedule.h), the no-ops they
// skip, and their errors.
#include "frontend_test_util.h"

namespace doorbell {
namespace {

using testing::error_of;

Tensor matrix() { return Tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}); }

TEST(Movement, ReshapeInfersOneAxis) {
  Tensor t = matrix();
  EXPECT_EQ(t.reshape({3, -1}).shape(), (IntTuple{3, 2}));
  EXPECT_EQ(t.reshape({-1}).shape(), (IntTuple{6}));
  EXPECT_EQ(t.reshape({1, 6, 1}).shape(), (IntTuple{1, 6, 1}));
  Tensor r = t.reshape({3, 2});
  EXPECT_EQ(r.uop().op(), Ops::RESHAPE);
  EXPECT_EQ(r.uop().arg_as<IntTuple>(), (IntTuple{3, 2}));
  // RESHAPE of a RESHAPE is one RESHAPE of the buffer: the view stays plain.
  EXPECT_EQ(r.uop().src(0).op(), Ops::BUFFER);
  EXPECT_TRUE(r.is_realized());
}

TEST(Movement, ReshapeErrors) {
  Tensor t = matrix();
  EXPECT_EQ(error_of([&] { t.reshape({4, 2}); }), "reshape: 6 elements cannot become shape (4, 2)");
  EXPECT_EQ(error_of([&] { t.reshape({4, -1}); }), "reshape: 6 elements cannot become shape (4, -1)");
  EXPECT_EQ(error_of([&] { t.reshape({-1, -1}); }),
            "reshape: shape (-1, -1) has more than one -1; expected at most one axis to infer");
  EXPECT_EQ(error_of([&] { t.reshape({-2, 3}); }),
            "reshape: shape (-2, 3) has a negative size; expected sizes >= 0 and at most one -1");
}

TEST(Movement, NoOpsBuildNothing) {
  Tensor t = matrix();
  EXPECT_EQ(t.reshape({2, 3}).uop(), t.uop());
  EXPECT_EQ(t.permute({0, 1}).uop(), t.uop());
  EXPECT_EQ(t.expand({2, 3}).uop(), t.uop());
  EXPECT_EQ(t.pad({{0, 0}, {0, 0}}).uop(), t.uop());
  EXPECT_EQ(t.shrink({{0, 2}, {0, 3}}).uop(), t.uop());
  EXPECT_EQ(t.reshape({2, 1, 3}).flip(1).uop(), t.reshape({2, 1, 3}).uop());  // flipping a size-1 axis
  EXPECT_EQ(t.cast(dtypes::float32).uop(), t.uop());
  // A no-op still returns a new handle: it does not alias the original's state.
  EXPECT_FALSE(t.reshape({2, 3}).same_state(t));
}

TEST(Movement, PermuteAndTranspose) {
  Tensor t = Tensor::zeros({2, 3, 4});
  Tensor p = matrix().permute({1, 0});
  EXPECT_EQ(p.shape(), (IntTuple{3, 2}));
  EXPECT_EQ(p.uop().op(), Ops::PERMUTE);
  EXPECT_EQ(p.uop().arg_as<IntTuple>(), (IntTuple{1, 0}));
  EXPECT_EQ(t.permute({2, 0, 1}).shape(), (IntTuple{4, 2, 3}));
  EXPECT_EQ(t.permute({-1, 0, 1}).shape(), (IntTuple{4, 2, 3}));
  EXPECT_EQ(t.transpose().shape(), (IntTuple{3, 2, 4}));
  EXPECT_EQ(t.transpose(-1, -2).shape(), (IntTuple{2, 4, 3}));
  EXPECT_EQ(error_of([&] { t.permute({0, 0, 1}); }), "permute: (0, 0, 1) is not a permutation of the 3 axes of shape (2, 3, 4)");
  EXPECT_EQ(error_of([&] { t.permute({0, 1}); }), "permute: (0, 1) is not a permutation of the 3 axes of shape (2, 3, 4)");
  EXPECT_EQ(error_of([&] { t.transpose(0, 3); }), "transpose: axis 3 is out of range for shape (2, 3, 4); expected [-3, 2]");
}

TEST(Movement, ExpandFollowsNumpy) {
  Tensor v({1.f, 2.f, 3.f});
  Tensor e = v.expand({4, 3});
  EXPECT_EQ(e.shape(), (IntTuple{4, 3}));
  // left-padded with a 1 by RESHAPE, then EXPAND of equal rank
  EXPECT_EQ(e.uop().op(), Ops::EXPAND);
  EXPECT_EQ(e.uop().arg_as<IntTuple>(), (IntTuple{4, 3}));
  EXPECT_EQ(e.uop().src(0).op(), Ops::RESHAPE);
  EXPECT_EQ(*e.uop().src(0).shape(), (IntTuple{1, 3}));
  EXPECT_EQ(v.reshape({3, 1}).expand({-1, 5}).shape(), (IntTuple{3, 5}));
  EXPECT_EQ(v.broadcast_to({2, 2, 3}).shape(), (IntTuple{2, 2, 3}));
  EXPECT_EQ(error_of([&] { v.expand({4, 2}); }), "expand: shape (3,) cannot expand to (4, 2): axis 1 is 3, expected 1 or 2");
  EXPECT_EQ(error_of([&] { matrix().expand({3}); }), "expand: shape (2, 3) cannot expand to (3,); expected at least 2 axes");
}

TEST(Movement, PadBuildsPadWithBeforeAfterPairs) {
  Tensor p = matrix().pad({{1, 0}, {2, 3}});
  EXPECT_EQ(p.shape(), (IntTuple{3, 8}));
  EXPECT_EQ(p.uop().op(), Ops::PAD);
  EXPECT_EQ(p.uop().arg_as<IntTuple>(), (IntTuple{1, 0, 2, 3}));
  EXPECT_EQ(p.dtype(), dtypes::float32);
}

TEST(Movement, PadWithAValueSelectsThroughAMask) {
  Tensor p = matrix().pad({{0, 0}, {1, 1}}, -1.5);
  EXPECT_EQ(p.shape(), (IntTuple{2, 5}));
  EXPECT_EQ(p.uop().op(), Ops::WHERE);
  EXPECT_EQ(p.uop().src(0).op(), Ops::PAD);  // the padded all-true mask
  EXPECT_EQ(p.uop().src(0).dtype(), dtypes::bool_);
  EXPECT_EQ(p.uop().src(1).op(), Ops::PAD);  // the padded value
  EXPECT_EQ(p.dtype(), dtypes::float32);
  EXPECT_EQ(Tensor({1, 2}).pad({{1, 1}}, 2.5).dtype(), dtypes::float32);  // the pad value promotes like an operand
}

TEST(Movement, NegativePadShrinks) {
  Tensor p = matrix().pad({{0, 0}, {-1, 2}});
  EXPECT_EQ(p.shape(), (IntTuple{2, 4}));
  EXPECT_EQ(p.uop().op(), Ops::PAD);
  EXPECT_EQ(p.uop().src(0).op(), Ops::SHRINK);
  EXPECT_EQ(p.uop().src(0).arg_as<IntTuple>(), (IntTuple{0, 2, 1, 3}));
  EXPECT_EQ(error_of([] { matrix().pad({{0, 0}}); }), "pad: 1 (before, after) pairs for shape (2, 3); expected one per axis");
  EXPECT_EQ(error_of([] { matrix().pad({{0, 0}, {-2, -2}}); }),
            "pad: negative padding (-2, -2) removes more than the 3 elements of axis 1");
}

TEST(Movement, ShrinkBuildsBeginEndPairs) {
  Tensor s = matrix().shrink({{1, 2}, {0, 2}});
  EXPECT_EQ(s.shape(), (IntTuple{1, 2}));
  EXPECT_EQ(s.uop().op(), Ops::SHRINK);
  EXPECT_EQ(s.uop().arg_as<IntTuple>(), (IntTuple{1, 2, 0, 2}));
  EXPECT_FALSE(s.is_realized());  // a view that is not a plain reshape
  EXPECT_EQ(error_of([] { matrix().shrink({{0, 3}, {0, 3}}); }),
            "shrink: bounds (0, 3) on axis 0 of shape (2, 3); expected 0 <= begin <= end <= 2");
}

TEST(Movement, FlipBuildsAnAxesList) {
  Tensor f = matrix().flip({0, -1});
  EXPECT_EQ(f.uop().op(), Ops::FLIP);
  EXPECT_EQ(f.uop().arg_as<IntTuple>(), (IntTuple{0, 1}));
  EXPECT_EQ(matrix().flip(1).uop().arg_as<IntTuple>(), (IntTuple{1}));
  EXPECT_EQ(matrix().flip({}).uop().arg_as<IntTuple>(), (IntTuple{0, 1}));  // no axes given: all of them
  EXPECT_EQ(error_of([] { matrix().flip({0, 0}); }), "flip: axis 0 repeats in (0, 0) for shape (2, 3)");
}

TEST(Movement, SqueezeUnsqueezeFlatten) {
  Tensor t = Tensor::zeros({1, 3, 1, 2});
  EXPECT_EQ(t.squeeze().shape(), (IntTuple{3, 2}));
  EXPECT_EQ(t.squeeze(2).shape(), (IntTuple{1, 3, 2}));
  EXPECT_EQ(t.squeeze(1).shape(), (IntTuple{1, 3, 1, 2}));  // not a size-1 axis: kept, as torch
  EXPECT_EQ(t.unsqueeze(0).shape(), (IntTuple{1, 1, 3, 1, 2}));
  EXPECT_EQ(t.unsqueeze(-1).shape(), (IntTuple{1, 3, 1, 2, 1}));
  EXPECT_EQ(t.flatten().shape(), (IntTuple{6}));
  EXPECT_EQ(t.flatten(1).shape(), (IntTuple{1, 6}));
  EXPECT_EQ(t.flatten(1, 2).shape(), (IntTuple{1, 3, 2}));
  EXPECT_EQ(Tensor(2.f).flatten().shape(), (IntTuple{1}));
  EXPECT_EQ(error_of([&] { t.unsqueeze(6); }),
            "unsqueeze: axis 6 is out of range for inserting into 4 axes; expected [-5, 4]");
  EXPECT_EQ(error_of([&] { t.flatten(2, 1); }), "flatten: start_dim 2 comes after end_dim 1 in shape (1, 3, 1, 2)");
}

TEST(Movement, Repeat) {
  Tensor v({1.f, 2.f});
  EXPECT_EQ(v.repeat({3}).shape(), (IntTuple{6}));
  EXPECT_EQ(v.repeat({2, 2}).shape(), (IntTuple{2, 4}));
  Tensor m = matrix();
  EXPECT_EQ(m.repeat({1, 1}).uop(), m.uop());
  EXPECT_EQ(m.repeat({2, 1, 1}).shape(), (IntTuple{2, 2, 3}));
  EXPECT_EQ(error_of([] { matrix().repeat({2}); }), "repeat: (2,) has fewer entries than the 2 axes of shape (2, 3)");
}

TEST(Movement, CatPadsAndAdds) {
  Tensor a = matrix(), b = Tensor::ones({1, 3});
  Tensor c = Tensor::cat({a, b});
  EXPECT_EQ(c.shape(), (IntTuple{3, 3}));
  EXPECT_EQ(c.uop().op(), Ops::ADD);
  EXPECT_EQ(c.uop().src(0).op(), Ops::PAD);
  EXPECT_EQ(c.uop().src(0).arg_as<IntTuple>(), (IntTuple{0, 1, 0, 0}));
  EXPECT_EQ(Tensor::cat({a, a, a}, 1).shape(), (IntTuple{2, 9}));
  EXPECT_EQ(Tensor::cat({a, Tensor::ones({2, 1}, dtypes::int32)}, -1).dtype(), dtypes::float32);
  EXPECT_EQ(Tensor::cat({Tensor({1, 2}, dtypes::int8), Tensor({3}, dtypes::uint8)}).dtype(), dtypes::int16);
  EXPECT_EQ(error_of([&] { Tensor::cat({a, b}, 1); }),
            "cat: shapes (2, 3) and (1, 3) differ outside axis 1; expected equal shapes except along it");
  EXPECT_EQ(error_of([] { Tensor::cat({}); }), "cat: no tensors; expected at least one");
}

TEST(Movement, Stack) {
  Tensor a = matrix();
  EXPECT_EQ(Tensor::stack({a, a}).shape(), (IntTuple{2, 2, 3}));
  EXPECT_EQ(Tensor::stack({a, a, a}, 1).shape(), (IntTuple{2, 3, 3}));
  EXPECT_EQ(Tensor::stack({a, a}, -1).shape(), (IntTuple{2, 3, 2}));
  EXPECT_EQ(error_of([&] { Tensor::stack({a, a.transpose()}); }), "stack: shapes (2, 3) and (3, 2) differ; expected equal shapes");
}

TEST(Movement, PoolGivesWindowsLast) {
  Tensor x = Tensor::zeros({2, 7});
  EXPECT_EQ(x.pool({3}).shape(), (IntTuple{2, 5, 3}));
  EXPECT_EQ(x.pool({3}, {2}).shape(), (IntTuple{2, 3, 3}));
  EXPECT_EQ(Tensor::zeros({1, 5, 5}).pool({2, 2}).shape(), (IntTuple{1, 4, 4, 2, 2}));
  EXPECT_EQ(error_of([&] { x.pool({8}); }), "pool: kernel (8,) with dilation (1,) does not fit in shape (2, 7)");
}

TEST(Movement, MovementOfAConstantStaysVirtual) {
  Tensor z = Tensor::full({2, 3}, 4.f).permute({1, 0}).reshape({6}).shrink({{1, 4}});
  EXPECT_TRUE(z.is_realized());
  EXPECT_EQ(z.tolist<float>(), std::vector<float>(3, 4.f));
}

}  // namespace
}  // namespace doorbell
