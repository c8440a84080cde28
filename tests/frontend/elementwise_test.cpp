// Elementwise ops: the UOps built, numpy broadcasting, the promotion table and weak literals, and dtype misuse.
#include "frontend_test_util.h"

namespace doorbell {
namespace {

using testing::error_of;

Tensor of(DType dt, IntTuple shape = {3}) { return Tensor::empty(std::move(shape), dt); }

// The constants reachable from t's graph.
std::vector<UOp> consts(const Tensor& t) {
  std::vector<UOp> out;
  for (const UOp& u : t.uop().toposort())
    if (u.op() == Ops::CONST) out.push_back(u);
  return out;
}

TEST(Elementwise, BinaryOpsBuildTheirUOps) {
  Tensor a = of(dtypes::float32), b = of(dtypes::float32);
  EXPECT_EQ((a + b).uop().op(), Ops::ADD);
  EXPECT_EQ((a * b).uop().op(), Ops::MUL);
  EXPECT_EQ((a + b).uop().src(0), a.uop());
  EXPECT_EQ((a + b).uop().src(1), b.uop());
  Tensor d = a - b;  // a + (-b), as tinygrad
  EXPECT_EQ(d.uop().op(), Ops::ADD);
  EXPECT_EQ(d.uop().src(1).op(), Ops::NEG);
  Tensor q = a / b;  // a * reciprocal(b)
  EXPECT_EQ(q.uop().op(), Ops::MUL);
  EXPECT_EQ(q.uop().src(1).op(), Ops::RECIPROCAL);
  EXPECT_EQ(a.maximum(b).uop().op(), Ops::MAX);
  EXPECT_EQ((-a).uop().op(), Ops::NEG);
  EXPECT_EQ(a.pow(b).uop().op(), Ops::POW);
  EXPECT_EQ(a.exp2().uop().op(), Ops::EXP2);
  EXPECT_EQ(a.log2().uop().op(), Ops::LOG2);
  EXPECT_EQ(a.sqrt().uop().op(), Ops::SQRT);
  EXPECT_EQ(a.sin().uop().op(), Ops::SIN);
  EXPECT_EQ(a.reciprocal().uop().op(), Ops::RECIPROCAL);
  EXPECT_EQ(a.trunc().uop().op(), Ops::TRUNC);
  EXPECT_EQ(a.exp().uop().op(), Ops::EXP2);  // exp2(x * log2(e))
  EXPECT_EQ(a.exp().uop().src(0).op(), Ops::MUL);
  EXPECT_EQ(a.log().uop().op(), Ops::MUL);   // log2(x) * ln(2)
  EXPECT_EQ(a.cos().uop().op(), Ops::SIN);   // sin(pi/2 - x)
}

TEST(Elementwise, IntegerDivisionAndModulo) {
  Tensor i = of(dtypes::int32), j = of(dtypes::int32);
  EXPECT_EQ(i.floordiv(j).uop().op(), Ops::FLOORDIV);
  EXPECT_EQ((i % j).uop().op(), Ops::FLOORMOD);
  EXPECT_EQ(i.floordiv(j).dtype(), dtypes::int32);
  EXPECT_EQ((i / j).dtype(), dtypes::float32);  // true division gives the default float
  EXPECT_EQ((i / 2).dtype(), dtypes::float32);
  EXPECT_EQ((of(dtypes::float16) / 2).dtype(), dtypes::float16);
  EXPECT_EQ(of(dtypes::float32).floordiv(2).dtype(), dtypes::float32);
  EXPECT_EQ((of(dtypes::float32) % 2).dtype(), dtypes::float32);
  EXPECT_EQ(of(dtypes::bool_).floordiv(of(dtypes::bool_)).dtype(), dtypes::int32);
}

TEST(Elementwise, ComparisonsGiveBool) {
  Tensor a = of(dtypes::float32), b = of(dtypes::int32);
  EXPECT_EQ((a < b).dtype(), dtypes::bool_);
  EXPECT_EQ((a < b).uop().op(), Ops::CMPLT);
  EXPECT_EQ((a > b).uop().op(), Ops::CMPLT);
  EXPECT_EQ((a > b).uop().src(0).op(), Ops::CAST);  // b promoted to float32, then swapped
  EXPECT_EQ((a == b).uop().op(), Ops::CMPEQ);
  EXPECT_EQ((a != b).uop().op(), Ops::CMPNE);
  EXPECT_EQ((a <= 1).uop().op(), Ops::CMPNE);  // not (1 < a)
  EXPECT_EQ((a >= 1).dtype(), dtypes::bool_);
  EXPECT_EQ((b < 2.5).uop().src(0).dtype(), dtypes::float32);  // the literal makes it a float comparison
  EXPECT_EQ((1 < a).uop().op(), Ops::CMPLT);
}

TEST(Elementwise, BroadcastingShapes) {
  EXPECT_EQ((of(dtypes::float32, {2, 3}) + of(dtypes::float32, {3})).shape(), (IntTuple{2, 3}));
  EXPECT_EQ((of(dtypes::float32, {4, 1, 3}) * of(dtypes::float32, {2, 1})).shape(), (IntTuple{4, 2, 3}));
  EXPECT_EQ((of(dtypes::float32, {}) + of(dtypes::float32, {5})).shape(), (IntTuple{5}));
  EXPECT_EQ((of(dtypes::float32, {0, 3}) + of(dtypes::float32, {1, 3})).shape(), (IntTuple{0, 3}));
  Tensor s = of(dtypes::float32, {2, 3}) + of(dtypes::float32, {3});
  EXPECT_EQ(s.uop().src(1).op(), Ops::EXPAND);  // (3,) -> RESHAPE (1, 3) -> EXPAND (2, 3)
  EXPECT_EQ(s.uop().src(1).src(0).op(), Ops::RESHAPE);
  EXPECT_EQ(error_of([] { of(dtypes::float32, {2, 3}) + of(dtypes::float32, {4}); }), "add: shapes (2, 3) and (4,) cannot broadcast");
  EXPECT_EQ(error_of([] { of(dtypes::float32, {2}) * of(dtypes::float32, {3}); }), "mul: shapes (2,) and (3,) cannot broadcast");
  EXPECT_EQ(error_of([] { of(dtypes::float32, {2}).where(of(dtypes::float32, {3}), 0); }),
            "where: shapes (2,) and (3,) cannot broadcast");
}

TEST(Elementwise, LiteralsAreExpandedConstants) {
  Tensor t = of(dtypes::float32, {2, 3}) + 1;
  const UOp& c = t.uop().src(1);
  EXPECT_EQ(c.op(), Ops::EXPAND);
  EXPECT_EQ(c.src(0).op(), Ops::RESHAPE);
  EXPECT_EQ(c.src(0).src(0).op(), Ops::CONST);
  EXPECT_EQ(c.src(0).src(0).dtype(), dtypes::float32);
  EXPECT_TRUE(c.src(0).src(0).is_const_value(1.0));
  Tensor r = 2 - of(dtypes::int32);  // a literal on the left stays on the left
  EXPECT_EQ(r.uop().src(0).op(), Ops::EXPAND);
}

struct Promotion {
  DType a, b, out;
};

TEST(Elementwise, TensorTensorPromotionTable) {
  const Promotion table[] = {
      {dtypes::int8, dtypes::uint8, dtypes::int16},        {dtypes::uint8, dtypes::int16, dtypes::int16},
      {dtypes::int32, dtypes::uint32, dtypes::int64},      {dtypes::uint8, dtypes::uint32, dtypes::uint32},
      {dtypes::int64, dtypes::uint64, dtypes::float32},    {dtypes::bool_, dtypes::int8, dtypes::int8},
      {dtypes::bool_, dtypes::bool_, dtypes::bool_},       {dtypes::bool_, dtypes::float16, dtypes::float16},
      {dtypes::int32, dtypes::float16, dtypes::float16},   {dtypes::float16, dtypes::bfloat16, dtypes::float32},
      {dtypes::float32, dtypes::float64, dtypes::float64}, {dtypes::int64, dtypes::float32, dtypes::float32},
      {dtypes::uint16, dtypes::int8, dtypes::int32},       {dtypes::uint64, dtypes::uint8, dtypes::uint64},
  };
  for (const Promotion& p : table) {
    EXPECT_EQ((of(p.a) + of(p.b)).dtype(), p.out) << p.a.name() << " + " << p.b.name();
    EXPECT_EQ((of(p.b) * of(p.a)).dtype(), p.out) << p.b.name() << " * " << p.a.name();
  }
}

TEST(Elementwise, WeakLiteralsAdoptTheTensorDtype) {
  const Promotion table[] = {
      // tensor dtype, literal kind, result
      {dtypes::uint8, dtypes::weakint, dtypes::uint8},       {dtypes::int8, dtypes::weakint, dtypes::int8},
      {dtypes::int64, dtypes::weakint, dtypes::int64},       {dtypes::float16, dtypes::weakint, dtypes::float16},
      {dtypes::int32, dtypes::weakfloat, dtypes::float32},   {dtypes::uint8, dtypes::weakfloat, dtypes::float32},
      {dtypes::float16, dtypes::weakfloat, dtypes::float16}, {dtypes::bfloat16, dtypes::weakfloat, dtypes::bfloat16},
      {dtypes::float64, dtypes::weakfloat, dtypes::float64}, {dtypes::bool_, dtypes::weakint, dtypes::int32},
      {dtypes::bool_, dtypes::weakfloat, dtypes::float32},   {dtypes::int16, dtypes::bool_, dtypes::int16},
  };
  for (const Promotion& p : table) {
    Scalar lit = p.b == dtypes::weakint ? Scalar(3) : p.b == dtypes::weakfloat ? Scalar(2.5) : Scalar(true);
    EXPECT_EQ((of(p.a) + lit).dtype(), p.out) << p.a.name() << " + " << p.b.name();
    EXPECT_EQ((lit * of(p.a)).dtype(), p.out) << p.b.name() << " * " << p.a.name();
  }
}

TEST(Elementwise, Uint8PlusThreeHundredWraps) {
  Tensor t = of(dtypes::uint8) + 300;
  EXPECT_EQ(t.dtype(), dtypes::uint8);
  std::vector<UOp> c = consts(t);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].dtype(), dtypes::uint8);
  EXPECT_EQ(c[0].arg_as<int64_t>(), 44);
  EXPECT_EQ(consts(of(dtypes::uint8) + (-1))[0].arg_as<int64_t>(), 255);
  EXPECT_EQ(consts(of(dtypes::int8) * 200)[0].arg_as<int64_t>(), -56);
}

TEST(Elementwise, IntTimesFloatLiteralIsFloat) {
  Tensor t = of(dtypes::int32) * 2.5;
  EXPECT_EQ(t.dtype(), dtypes::float32);
  EXPECT_EQ(t.uop().src(0).op(), Ops::CAST);
  EXPECT_TRUE(consts(t)[0].is_const_value(2.5));
}

TEST(Elementwise, BoolArithmetic) {
  Tensor a = of(dtypes::bool_), b = of(dtypes::bool_);
  EXPECT_EQ((a + b).dtype(), dtypes::bool_);
  EXPECT_EQ((a * b).dtype(), dtypes::bool_);
  EXPECT_EQ((-a).uop().op(), Ops::CMPNE);  // negation of a bool is logical not
  EXPECT_EQ((a - b).dtype(), dtypes::bool_);
  EXPECT_EQ((a & b).dtype(), dtypes::bool_);
  EXPECT_EQ((~a).uop().op(), Ops::CMPNE);
  EXPECT_EQ(a.logical_not().dtype(), dtypes::bool_);
  EXPECT_EQ((a + 1).dtype(), dtypes::int32);
}

TEST(Elementwise, Where) {
  Tensor c = of(dtypes::bool_, {2, 1}), x = of(dtypes::float32, {3}), y = of(dtypes::int32, {2, 3});
  Tensor w = c.where(x, y);
  EXPECT_EQ(w.uop().op(), Ops::WHERE);
  EXPECT_EQ(w.shape(), (IntTuple{2, 3}));
  EXPECT_EQ(w.dtype(), dtypes::float32);
  EXPECT_EQ(c.where(1, 0).dtype(), dtypes::int32);
  EXPECT_EQ(c.where(1.0, 0).dtype(), dtypes::float32);
  EXPECT_EQ(of(dtypes::uint8).where(of(dtypes::int8), 1).dtype(), dtypes::int8);  // the condition is cast to bool
  EXPECT_EQ(of(dtypes::uint8).where(of(dtypes::int8), 1).uop().src(0).op(), Ops::CAST);
  EXPECT_EQ(where(c, x, x).shape(), (IntTuple{2, 3}));
}

TEST(Elementwise, MinimumMaximum) {
  EXPECT_EQ(of(dtypes::float32).minimum(of(dtypes::float32)).uop().op(), Ops::NEG);  // -max(-a, -b)
  EXPECT_EQ(of(dtypes::int32).minimum(0).uop().op(), Ops::XOR);                    // ~max(~a, ~b)
  EXPECT_EQ(of(dtypes::bool_).minimum(of(dtypes::bool_)).uop().op(), Ops::AND);
  EXPECT_EQ(of(dtypes::uint8).maximum(of(dtypes::int8)).dtype(), dtypes::int16);
  EXPECT_EQ(of(dtypes::float32).clip(0, 1).shape(), (IntTuple{3}));
  EXPECT_EQ(error_of([] { of(dtypes::float32).clip(std::nullopt, std::nullopt); }),
            "clip: neither min nor max given; expected at least one bound");
}

TEST(Elementwise, BitwiseOpsNeedIntegersOrBool) {
  Tensor i = of(dtypes::int32), f = of(dtypes::float32);
  EXPECT_EQ((i & 3).uop().op(), Ops::AND);
  EXPECT_EQ((i | 3).uop().op(), Ops::OR);
  EXPECT_EQ((i ^ i).uop().op(), Ops::XOR);
  EXPECT_EQ((i << 2).uop().op(), Ops::SHL);
  EXPECT_EQ((i >> 2).uop().op(), Ops::SHR);
  EXPECT_EQ((of(dtypes::uint8) << 2).dtype(), dtypes::uint8);
  EXPECT_EQ((of(dtypes::int8) << of(dtypes::int64)).dtype(), dtypes::int8);  // the shifted value keeps its dtype
  EXPECT_EQ(error_of([&] { f& f; }),
            "bitwise_and: operands of dtypes float32 and float32 promote to float32; expected an integer or bool dtype");
  EXPECT_EQ(error_of([&] { i | 1.5; }),
            "bitwise_or: operands of dtypes int32 and weakfloat promote to float32; expected an integer or bool dtype");
  EXPECT_EQ(error_of([&] { ~f; }), "bitwise_not: dtype float32; expected an integer or bool dtype");
  EXPECT_EQ(error_of([&] { f << 1; }), "lshift: dtype float32; expected an integer dtype");
  EXPECT_EQ(error_of([&] { i >> 1.5; }), "rshift: shift amount of dtype weakfloat; expected an integer");
}

TEST(Elementwise, UnaryMathOnIntegersUsesTheDefaultFloat) {
  Tensor i = of(dtypes::int32);
  EXPECT_EQ(i.exp().dtype(), dtypes::float32);
  EXPECT_EQ(i.sqrt().dtype(), dtypes::float32);
  EXPECT_EQ(i.sigmoid().dtype(), dtypes::float32);
  EXPECT_EQ(of(dtypes::float16).exp().dtype(), dtypes::float16);
  EXPECT_EQ(of(dtypes::float64).tanh().dtype(), dtypes::float64);
  EXPECT_EQ(i.relu().dtype(), dtypes::int32);
  EXPECT_EQ(i.abs().dtype(), dtypes::int32);
  EXPECT_EQ(i.pow(2).dtype(), dtypes::int32);
  EXPECT_EQ(i.pow(2).uop().op(), Ops::MUL);  // an integer literal exponent multiplies
  EXPECT_EQ(i.pow(0.5).dtype(), dtypes::float32);
  EXPECT_EQ(i.pow(i).dtype(), dtypes::int32);
  Tensor u = of(dtypes::uint8);
  EXPECT_EQ(u.abs().uop(), u.uop());  // unsigned values are their own absolute values
}

TEST(Elementwise, CastAndBitcast) {
  Tensor f = of(dtypes::float32);
  EXPECT_EQ(f.cast(dtypes::int32).uop().op(), Ops::CAST);
  EXPECT_EQ(f.cast(dtypes::int32).dtype(), dtypes::int32);
  EXPECT_EQ(f.bitcast(dtypes::uint32).uop().op(), Ops::BITCAST);
  EXPECT_EQ(f.bitcast(dtypes::uint32).dtype(), dtypes::uint32);
  EXPECT_EQ(error_of([&] { f.bitcast(dtypes::int16); }),
            "bitcast: float32 (4 bytes) cannot become int16 (2 bytes); expected equal itemsizes");
  EXPECT_EQ(error_of([&] { f.cast(dtypes::weakfloat); }), "cast: cannot cast to weakfloat; expected a scalar storage dtype");
  // casting a virtual constant converts the constant: no CAST, still no buffer
  Tensor c = Tensor::full({2}, 2.75).cast(dtypes::int32);
  EXPECT_EQ(c.uop().op(), Ops::EXPAND);
  EXPECT_EQ(c.tolist<int>(), (std::vector<int>{2, 2}));
}

}  // namespace
}  // namespace doorbell
