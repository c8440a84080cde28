// Reductions, matmul, softmax and cumsum: shapes, dtypes, the REDUCE UOps built, and axis errors.
#include "frontend_test_util.h"

namespace doorbell {
namespace {

using testing::error_of;

Tensor of(IntTuple shape, DType dt = dtypes::float32) { return Tensor::empty(std::move(shape), dt); }
UOp reduce_of(const Tensor& x, IntTuple axes) { return UOp::make(Ops::REDUCE, x.dtype(), {x.uop()}, ReduceArg{Ops::ADD, std::move(axes)}); }

TEST(Reduce, SumKeepsReducedAxesInTheReduceThenReshapes) {
  Tensor x = of({2, 3, 4});
  Tensor s = x.sum(1);
  EXPECT_EQ(s.shape(), (IntTuple{2, 4}));
  EXPECT_EQ(s.uop().op(), Ops::RESHAPE);
  const UOp& r = s.uop().src(0);
  EXPECT_EQ(r.op(), Ops::REDUCE);
  EXPECT_EQ(r.arg_as<ReduceArg>(), (ReduceArg{Ops::ADD, {1}}));
  EXPECT_EQ(*r.shape(), (IntTuple{2, 1, 4}));
  Tensor k = x.sum(1, true);
  EXPECT_EQ(k.shape(), (IntTuple{2, 1, 4}));
  EXPECT_EQ(k.uop().op(), Ops::REDUCE);
}

TEST(Reduce, AxisForms) {
  Tensor x = of({2, 3, 4});
  EXPECT_EQ(x.sum().shape(), IntTuple{});
  EXPECT_EQ(x.sum({}, true).shape(), (IntTuple{1, 1, 1}));
  EXPECT_EQ(x.sum(-1).shape(), (IntTuple{2, 3}));
  EXPECT_EQ(x.sum({0, 2}).shape(), (IntTuple{3}));
  EXPECT_EQ(x.sum({2, 0}).uop().src(0).arg_as<ReduceArg>().axes, (IntTuple{0, 2}));
  EXPECT_EQ(x.sum(IntTuple{}).uop(), x.uop());  // an empty axis list reduces nothing
  EXPECT_EQ(error_of([&] { x.sum(3); }), "sum: axis 3 is out of range for shape (2, 3, 4); expected [-3, 2]");
  EXPECT_EQ(error_of([&] { x.max({0, -3}); }), "max: axis -3 repeats in (0, -3) for shape (2, 3, 4)");
  EXPECT_EQ(error_of([&] { Tensor(1.f).sum(0); }), "sum: axis 0 is out of range for shape (); expected none: the tensor is 0-d");
}

TEST(Reduce, SumAccumulatesWide) {
  EXPECT_EQ(of({4}, dtypes::int8).sum().dtype(), dtypes::int32);
  EXPECT_EQ(of({4}, dtypes::uint8).sum().dtype(), dtypes::uint32);
  EXPECT_EQ(of({4}, dtypes::bool_).sum().dtype(), dtypes::int32);
  EXPECT_EQ(of({4}, dtypes::int64).sum().dtype(), dtypes::int64);
  EXPECT_EQ(of({4}, dtypes::float64).sum().dtype(), dtypes::float64);
  Tensor h = of({4}, dtypes::float16).sum();
  EXPECT_EQ(h.dtype(), dtypes::float16);  // accumulated in float32, cast back
  EXPECT_EQ(h.uop().op(), Ops::CAST);
  EXPECT_EQ(h.uop().src(0).dtype(), dtypes::float32);
  EXPECT_EQ(of({4}, dtypes::bfloat16).sum().dtype(), dtypes::bfloat16);
}

TEST(Reduce, OtherReductions) {
  Tensor x = of({2, 3});
  EXPECT_EQ(x.prod(0).uop().src(0).arg_as<ReduceArg>().op, Ops::MUL);
  EXPECT_EQ(x.max(0).uop().src(0).arg_as<ReduceArg>().op, Ops::MAX);
  EXPECT_EQ(x.min(0).shape(), (IntTuple{3}));
  EXPECT_EQ(x.min(0).uop().op(), Ops::NEG);  // -max(-x)
  EXPECT_EQ(of({3}, dtypes::int8).prod().dtype(), dtypes::int8);
  EXPECT_EQ(of({3}, dtypes::uint8).min().dtype(), dtypes::uint8);
  EXPECT_EQ(x.mean().dtype(), dtypes::float32);
  EXPECT_EQ(of({2, 3}, dtypes::int32).mean(1).dtype(), dtypes::float32);
  EXPECT_EQ(of({2, 3}, dtypes::float16).mean(1).dtype(), dtypes::float16);
  EXPECT_EQ(x.var(1, true).shape(), (IntTuple{2, 1}));
  EXPECT_EQ(x.std().shape(), IntTuple{});
  EXPECT_EQ(x.any(1).dtype(), dtypes::bool_);
  EXPECT_EQ(x.all().dtype(), dtypes::bool_);
  EXPECT_EQ(x.any(1).shape(), (IntTuple{2}));
}

TEST(Reduce, ArgmaxArgmin) {
  Tensor x = of({2, 3, 4});
  EXPECT_EQ(x.argmax().shape(), IntTuple{});
  EXPECT_EQ(x.argmax().dtype(), dtypes::int32);
  EXPECT_EQ(x.argmax(1).shape(), (IntTuple{2, 4}));
  EXPECT_EQ(x.argmax(-1, true).shape(), (IntTuple{2, 3, 1}));
  EXPECT_EQ(x.argmin(0).shape(), (IntTuple{3, 4}));
  EXPECT_EQ(of({5}, dtypes::uint8).argmin().dtype(), dtypes::int32);
  EXPECT_EQ(error_of([&] { x.argmax(3); }), "argmax: axis 3 is out of range for shape (2, 3, 4); expected [-3, 2]");
}

TEST(Reduce, MatmulShapes) {
  EXPECT_EQ(of({2, 3}).matmul(of({3, 4})).shape(), (IntTuple{2, 4}));
  EXPECT_EQ(of({3}).matmul(of({3, 4})).shape(), (IntTuple{4}));
  EXPECT_EQ(of({2, 3}).matmul(of({3})).shape(), (IntTuple{2}));
  EXPECT_EQ(of({3}).dot(of({3})).shape(), IntTuple{});
  EXPECT_EQ(of({5, 2, 3}).matmul(of({3, 4})).shape(), (IntTuple{5, 2, 4}));
  EXPECT_EQ(of({5, 2, 3}).matmul(of({5, 3, 4})).shape(), (IntTuple{5, 2, 4}));
  EXPECT_EQ(of({7, 1, 2, 3}).matmul(of({5, 3, 4})).shape(), (IntTuple{7, 5, 2, 4}));  // batch axes broadcast
  EXPECT_EQ(of({2, 3}, dtypes::int8).matmul(of({3, 4}, dtypes::int8)).dtype(), dtypes::int8);
  EXPECT_EQ(of({2, 3}, dtypes::float16).matmul(of({3, 4}, dtypes::float32)).dtype(), dtypes::float32);
}

TEST(Reduce, MatmulIsABroadcastMultiplyAndASumOverTheLastAxis) {
  Tensor m = of({2, 3}).matmul(of({3, 4}));
  // RESHAPE(REDUCE(ADD, last axis) of MUL of (2,1,3) and the permuted (1,4,3))
  ASSERT_EQ(m.uop().op(), Ops::RESHAPE);
  const UOp& r = m.uop().src(0);
  ASSERT_EQ(r.op(), Ops::REDUCE);
  EXPECT_EQ(r.arg_as<ReduceArg>(), (ReduceArg{Ops::ADD, {2}}));
  EXPECT_EQ(r.src(0).op(), Ops::MUL);
  EXPECT_EQ(*r.src(0).shape(), (IntTuple{2, 4, 3}));
}

TEST(Reduce, BigSumsAndMatmulsAreTheGraphAsWrittenWhateverTheDevice) {
  // How a device's schedule splits a big reduction or packs a matmul's operand is the scheduler's (scheduler/layout.h)
  Tensor x = of({2048, 512});
  Tensor s = x.sum(0);
  ASSERT_EQ(s.uop().op(), Ops::RESHAPE);
  EXPECT_EQ(s.uop().src(0), reduce_of(x, {0}));
  Tensor big = of({int64_t{1} << 20});
  EXPECT_EQ(big.sum().uop().src(0), reduce_of(big, {0}));
  Tensor m = of({256, 1024}).matmul(of({1024, 1024}));
  const UOp& r = m.uop().src(0);
  ASSERT_EQ(r.op(), Ops::REDUCE);
  EXPECT_EQ(r.arg_as<ReduceArg>(), (ReduceArg{Ops::ADD, {2}}));
  EXPECT_EQ(*r.src(0).shape(), (IntTuple{256, 1024, 1024})) << "one broadcast multiply: no panels";
}

TEST(Reduce, MatmulErrors) {
  EXPECT_EQ(error_of([] { of({2, 3}).matmul(of({4, 5})); }),
            "dot: shapes (2, 3) and (4, 5) cannot multiply: 3 != 4; expected the last axis of the first to equal the second to "
            "last axis of the second");
  EXPECT_EQ(error_of([] { of({2, 3}).matmul(of({4})); }),
            "dot: shapes (2, 3) and (4,) cannot multiply: 3 != 4; expected the last axis of the first to equal the only axis of "
            "the second");
  EXPECT_EQ(error_of([] { of({}).matmul(of({4})); }), "dot: shapes () and (4,); expected both at least 1-D");
  EXPECT_EQ(error_of([] { of({2, 2, 3}).matmul(of({3, 3, 4})); }), "dot: shapes (2, 2, 3) and (3, 3, 4) have batch axes (2,) and (3,) that cannot broadcast");
}

TEST(Reduce, SoftmaxAndFriends) {
  Tensor x = of({2, 5});
  EXPECT_EQ(x.softmax().shape(), (IntTuple{2, 5}));
  EXPECT_EQ(x.softmax(0).shape(), (IntTuple{2, 5}));
  EXPECT_EQ(x.log_softmax().shape(), (IntTuple{2, 5}));
  EXPECT_EQ(x.logsumexp(1).shape(), (IntTuple{2}));
  EXPECT_EQ(x.logsumexp(1, true).shape(), (IntTuple{2, 1}));
  EXPECT_EQ(of({2, 5}, dtypes::int32).softmax().dtype(), dtypes::float32);
}

TEST(Reduce, Cumsum) {
  Tensor x = of({3, 4});
  EXPECT_EQ(x.cumsum().shape(), (IntTuple{3, 4}));
  EXPECT_EQ(x.cumsum(1).shape(), (IntTuple{3, 4}));
  EXPECT_EQ(x.cumsum(-1).dtype(), dtypes::float32);
  EXPECT_EQ(of({3}, dtypes::int8).cumsum().dtype(), dtypes::int32);
  EXPECT_EQ(error_of([&] { x.cumsum(2); }), "cumsum: axis 2 is out of range for shape (3, 4); expected [-2, 1]");
}

}  // namespace
}  // namespace doorbell

namespace doorbell {
namespace {

TEST(ReduceDtype, SumProdAndMeanAccumulateInTheDtypeGiven) {
  Tensor i8({100, 100, 100}, dtypes::int8);
  EXPECT_EQ(i8.sum().item<int>(), 300);  // int32 accumulator by default
  Tensor wrapped = i8.sum({}, false, dtypes::int8);
  EXPECT_EQ(wrapped.dtype(), dtypes::int8);
  EXPECT_EQ(wrapped.item<int>(), 44);  // 300 wraps in int8
  Tensor big({100000, 100000});
  EXPECT_EQ(big.prod().dtype(), dtypes::int32);
  Tensor p = big.prod({}, false, dtypes::int64);
  EXPECT_EQ(p.dtype(), dtypes::int64);
  EXPECT_EQ(p.item<int64_t>(), int64_t{10000000000});
  Tensor f({{1.5f, 2.5f}, {3.f, 4.f}});
  EXPECT_EQ(f.sum(1, true, dtypes::float64).dtype(), dtypes::float64);
  EXPECT_EQ(f.sum(1, true, dtypes::float64).shape(), (IntTuple{2, 1}));
  EXPECT_EQ(f.sum(1, false, dtypes::int32).tolist<int>(), (std::vector<int>{3, 7}));  // cast first: 1 + 2
  EXPECT_EQ(Tensor::empty({4}, dtypes::float16).sum({}, false, dtypes::float16).uop().src(0).src(0).dtype(), dtypes::float16);
  Tensor m = Tensor({1, 2, 4}).mean({}, false, dtypes::float64);
  EXPECT_EQ(m.dtype(), dtypes::float64);
  EXPECT_DOUBLE_EQ(m.item<double>(), 7.0 / 3);
  EXPECT_EQ(testing::error_of([&] { f.mean(0, false, dtypes::int32); }), "mean: dtype int32; expected a float dtype");
  EXPECT_EQ(testing::error_of([&] { f.sum(0, false, dtypes::weakint); }), "cast: cannot cast to weakint; expected a scalar storage dtype");
}

}  // namespace
}  // namespace doorbell
