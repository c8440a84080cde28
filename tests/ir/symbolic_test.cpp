// The symbolic simplifier, rule by rule: each test builds an expression and checks the exact simplified form.
#include "ir/symbolic.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ir/debug.h"
#include "ir/printer.h"

namespace doorbell {
namespace {

class SymbolicTest : public ::testing::Test {
 protected:
  UOp x = UOp::variable("x", 0, 10, dtypes::int32);
  UOp y = UOp::variable("y", 0, 7, dtypes::int32);
  UOp z = UOp::variable("z", -5, 5, dtypes::int32);
  UOp c(int64_t v, DType dt = dtypes::int32) { return UOp::const_(dt, v); }
  std::string s(const UOp& u) { return render_expr(simplify(u)); }
};

TEST_F(SymbolicTest, FoldsConstantsAtTheDtypeWidth) {
  EXPECT_EQ(simplify(c(3) + c(4)), c(7));
  EXPECT_EQ(simplify(c(127, dtypes::int8) + c(1, dtypes::int8)), c(-128, dtypes::int8));
  EXPECT_EQ(simplify(c(0, dtypes::uint8) - c(1, dtypes::uint8)), c(255, dtypes::uint8));
  EXPECT_EQ(simplify(c(-7).floordiv(c(2))), c(-4));
  EXPECT_EQ(simplify(c(-7).floormod(c(2))), c(1));
  EXPECT_EQ(simplify(UOp::infer(Ops::CDIV, {c(-7), c(2)})), c(-3));
}

TEST_F(SymbolicTest, FoldsFloatConstantsWithTheDtypesRounding) {
  UOp a = UOp::const_(dtypes::float32, 0.1), b = UOp::const_(dtypes::float32, 0.2);
  EXPECT_EQ(simplify(a + b), UOp::const_(dtypes::float32, static_cast<double>(0.1f + 0.2f)));
  UOp h = UOp::const_(dtypes::float16, 65504.0);
  EXPECT_EQ(simplify(h + UOp::const_(dtypes::float16, 32.0)), UOp::const_(dtypes::float16, INFINITY));
  UOp bf = UOp::const_(dtypes::bfloat16, 1.0);
  EXPECT_EQ(simplify(bf + UOp::const_(dtypes::bfloat16, 1.0 / 256)), bf);  // 1 + 2^-8 rounds to even: 1
}

TEST_F(SymbolicTest, FoldsDivisionByZeroToZeroAndModuloByZeroToTheDividend) {
  EXPECT_EQ(simplify(c(5).floordiv(c(0))), c(0));
  EXPECT_EQ(simplify(c(-5).floormod(c(0))), c(-5));
  EXPECT_EQ(simplify(x.floordiv(c(0))), c(0)) << "x // 0 = 0 for every x";
  EXPECT_EQ(simplify(x.floormod(c(0))), x) << "x % 0 = x for every x";
}

TEST_F(SymbolicTest, XDividedByXIsOneOnlyWhereXCannotBeZero) {
  UOp z = UOp::variable("z", 0, 10), p = UOp::variable("p", 1, 10);
  EXPECT_NE(simplify(z.floordiv(z)), z.const_like(int64_t{1})) << "0 // 0 is 0";
  EXPECT_EQ(simplify(p.floordiv(p)), p.const_like(int64_t{1}));
}

TEST_F(SymbolicTest, AppliesIdentities) {
  EXPECT_EQ(simplify(x + 0), x);
  EXPECT_EQ(simplify(x * 1), x);
  EXPECT_EQ(simplify(x * 0), c(0));
  EXPECT_EQ(simplify(x.floordiv(1)), x);
  EXPECT_EQ(simplify(x.floormod(1)), c(0));
  EXPECT_EQ(simplify(x - x), c(0));
  EXPECT_EQ(simplify(x ^ x), c(0));
  EXPECT_EQ(simplify(x.maximum(x)), x);
  UOp f = UOp::variable("f", 0, 1, dtypes::int32).cast(dtypes::float32);
  EXPECT_EQ(simplify(f + 0.0), f);
  EXPECT_EQ(simplify(f * 1.0), f);
  EXPECT_EQ(simplify(f * 0.0).op(), Ops::MUL) << "x*0 is not 0 for floats (NaN, inf)";
}

TEST_F(SymbolicTest, CombinesTerms) {
  EXPECT_EQ(simplify(x + x), simplify(x * 2));
  EXPECT_EQ(simplify(x * 3 + x * 4), simplify(x * 7));
  EXPECT_EQ(simplify((x + 3) + 4), simplify(x + 7));
  EXPECT_EQ(simplify((x * 2) * 3), simplify(x * 6));
  EXPECT_EQ(simplify(x + y - x), y);
  EXPECT_EQ(simplify((x + 1) * 2 - x * 2), c(2));
  // order does not matter: both spellings reach one canonical node
  EXPECT_EQ(simplify(y + x + 1), simplify(1 + x + y));
}

TEST_F(SymbolicTest, BoundsOfVariablesAndRanges) {
  UOp r = UOp::range(16, 0, AxisType::LOOP, dtypes::int32);
  EXPECT_EQ(r.vmin(), 0);
  EXPECT_EQ(r.vmax(), 15);
  UOp e = x * 4 + y;
  EXPECT_EQ(e.vmin(), 0);
  EXPECT_EQ(e.vmax(), 47);
  EXPECT_EQ(simplify(UOp::range(1, 3, AxisType::LOOP, dtypes::int32)), c(0)) << "a range of one iteration is 0";
}

TEST_F(SymbolicTest, DecidesComparisonsByBounds) {
  EXPECT_EQ(simplify(x.lt(11)), UOp::const_(dtypes::bool_, true));
  EXPECT_EQ(simplify(x.lt(0)), UOp::const_(dtypes::bool_, false));
  EXPECT_EQ(simplify((x + y).lt(18)), UOp::const_(dtypes::bool_, true));
  EXPECT_EQ(simplify(x.ne(c(20))), UOp::const_(dtypes::bool_, true));
  EXPECT_EQ(simplify(x.lt(5)).op(), Ops::CMPLT);
}

TEST_F(SymbolicTest, MovesConstantsAcrossComparisons) {
  EXPECT_EQ(simplify((x + 3).lt(7)), simplify(x.lt(4)));
  EXPECT_EQ(simplify((x * 4).lt(9)), simplify(x.lt(3)));  // 4x < 9 <=> x < ceil(9/4)
  EXPECT_EQ(simplify(x.floordiv(4).lt(2)), simplify(x.lt(8)));
  EXPECT_EQ(simplify((x + 2).ne(c(5))), simplify(x.ne(c(3))));
}

TEST_F(SymbolicTest, SplitsMultiplesOfTheDivisorOutOfDivAndMod) {
  EXPECT_EQ(simplify((x * 4 + y).floordiv(4)), simplify(x + y.floordiv(4)));
  EXPECT_EQ(simplify((x * 4 + y).floormod(4)), simplify(y.floormod(4)));
  EXPECT_EQ(simplify((x * 8 + 3).floordiv(4)), simplify(x * 2));  // 3//4 is 0
  EXPECT_EQ(simplify((x * 4 + 3).floormod(4)), c(3));
  EXPECT_EQ(simplify((x + 9).floordiv(4)), simplify((x + 1).floordiv(4) + 2));
}

TEST_F(SymbolicTest, DivisionAndModuloUseFloorSemantics) {
  // z in [-5, 5]: floor division of negatives rounds down
  EXPECT_EQ(simplify((z * 4 - 1).floordiv(4)), simplify(z - 1));
  EXPECT_EQ(simplify((z * 4 - 1).floormod(4)), c(3));
  EXPECT_EQ(simplify(z.floormod(3)).vmin(), 0);
  EXPECT_EQ(simplify(z.floormod(3)).vmax(), 2);
}

TEST_F(SymbolicTest, SimplifiesNestedDivisionAndModulo) {
  UOp w = UOp::variable("w", 0, 1000, dtypes::int32);
  EXPECT_EQ(simplify(w.floordiv(4).floordiv(3)), simplify(w.floordiv(12)));
  EXPECT_EQ(simplify(w.floormod(12).floormod(4)), simplify(w.floormod(4)));
  EXPECT_EQ(simplify(w.floormod(12).floordiv(4)), simplify(w.floordiv(4).floormod(3)));
  EXPECT_EQ(simplify(x.floormod(11)), x) << "x in [0, 10] is its own remainder";
  EXPECT_EQ(simplify(x.floordiv(11)), c(0));
  EXPECT_EQ(simplify((x * 6 + y * 2).floordiv(2)), simplify(x * 3 + y)) << "common factor";
  EXPECT_EQ(simplify((x * 6 + y * 2).floormod(4)), simplify((x * 3 + y).floormod(2) * 2));
}

TEST_F(SymbolicTest, TruncatingDivisionOfNonNegativesBecomesFloorDivision) {
  EXPECT_EQ(simplify(UOp::infer(Ops::CDIV, {x, c(3)})), simplify(x.floordiv(3)));
  EXPECT_EQ(simplify(UOp::infer(Ops::CDIV, {z, c(3)})).op(), Ops::CDIV) << "z may be negative";
}

TEST_F(SymbolicTest, RulesThatNeedExactArithmeticRespectWraparound) {
  // a = int32 in a range where a*4 overflows: (a*4)//4 must not become a
  UOp a = UOp::variable("a", 0, 1 << 30, dtypes::int32);
  UOp e = (a * 4).floordiv(4);
  EXPECT_NE(simplify(e), a);
  UOp b = UOp::variable("b", 0, 1000, dtypes::int32);
  EXPECT_EQ(simplify((b * 4).floordiv(4)), b);
}

TEST_F(SymbolicTest, Uint64CoefficientsWrapWithoutOverflowingTheArithmetic) {
  UOp u = UOp::variable("u", 0, 5, dtypes::uint64);
  UOp m3 = UOp::const_(dtypes::uint64, int64_t{-3}), m6 = UOp::const_(dtypes::uint64, int64_t{-6});  // 2^64-3, 2^64-6
  EXPECT_EQ(simplify((u * m3) * m6), simplify(u * 18));   // (2^64-3)(2^64-6) = 18 modulo 2^64
  EXPECT_EQ(simplify((u + m3) * m6), simplify(u * m6 + 18));
}

TEST_F(SymbolicTest, FoldsWhere) {
  UOp t = UOp::const_(dtypes::bool_, true), f = UOp::const_(dtypes::bool_, false);
  EXPECT_EQ(simplify(t.where(x, y)), x);
  EXPECT_EQ(simplify(f.where(x, y)), y);
  UOp cond = z.lt(0);
  EXPECT_EQ(simplify(cond.where(x, x)), x);
  EXPECT_EQ(simplify(cond.where(t, f)), cond);
  EXPECT_EQ(simplify(cond.logical_not().where(x, y)), simplify(cond.where(y, x)));
  EXPECT_EQ(simplify(cond.where(cond.where(x, y), z)), simplify(cond.where(x, z)));
  EXPECT_EQ(simplify(x.lt(20).where(x, y)), x) << "a condition decided by bounds";
}

TEST_F(SymbolicTest, BoolLogic) {
  UOp b = z.lt(0);
  EXPECT_EQ(simplify(b.logical_not().logical_not()), b);
  EXPECT_EQ(simplify(b & UOp::const_(dtypes::bool_, true)), b);
}

TEST_F(SymbolicTest, CastFolding) {
  EXPECT_EQ(simplify(x.cast(dtypes::int32)), x);
  UOp i8 = UOp::variable("i", -3, 3, dtypes::int8);
  EXPECT_EQ(simplify(i8.cast(dtypes::int32).cast(dtypes::int64)), simplify(i8.cast(dtypes::int64)));
  EXPECT_EQ(simplify(UOp::const_(dtypes::int32, 300).cast(dtypes::uint8)), UOp::const_(dtypes::uint8, 44));
  EXPECT_EQ(simplify(UOp::const_(dtypes::float32, -2.7).cast(dtypes::int32)), c(-2));
}

TEST_F(SymbolicTest, MaxDecidedByBounds) {
  EXPECT_EQ(simplify(x.maximum(c(-1))), x);
  EXPECT_EQ(simplify((x + 20).maximum(y)), simplify(x + 20));
}

TEST_F(SymbolicTest, IsIdempotent) {
  std::vector<UOp> exprs = {(x * 4 + y + 3).floordiv(4), (x + y).floormod(3) + x * 2, z.lt(2).where(x + 1, y * 2),
                            ((z * 3 + 7).floordiv(2)).floormod(5)};
  for (const UOp& e : exprs) {
    UOp once = simplify(e);
    EXPECT_EQ(simplify(once), once) << render_expr(e);
  }
}

TEST_F(SymbolicTest, IndexExpressionOfAPaddedReshape) {
  // the kind of expression rangeify produces: r in [0, 20), idx = ((r % 5) + (r // 5) * 5)
  UOp r = UOp::range(20, 0, AxisType::LOOP, dtypes::int32);
  EXPECT_EQ(simplify(r.floormod(5) + r.floordiv(5) * 5), r);
}

TEST(ReadmeExample, TheIrInFiveLinesHoldsAsWritten) {
  UOp x = UOp::variable("x", 0, 10, dtypes::int32), y = UOp::variable("y", 0, 3, dtypes::int32);
  UOp e = (x * 4 + y).floordiv(4);
  EXPECT_EQ(e, (x * 4 + y).floordiv(4));
  EXPECT_EQ(simplify(e), x);
  PatternMatcher pm({{UPat::var("a") * UPat::const_(2), [](const Match& m) { return m["a"] + m["a"]; }}});
  EXPECT_EQ(graph_rewrite(x * 2, pm), UOp::make(Ops::ADD, dtypes::int32, {x, x}));
}

TEST_F(SymbolicTest, RuleHitCountsArePrintedAtDebugLevel5) {
  int before = debug_level();
  set_debug_level(5);
  ::testing::internal::CaptureStderr();
  simplify((x + 0) * 1 + (y + 0));
  std::string out = ::testing::internal::GetCapturedStderr();
  set_debug_level(before);
  EXPECT_NE(out.find("graph_rewrite 'simplify'"), std::string::npos) << out;
  EXPECT_NE(out.find("x+0"), std::string::npos) << out;
  EXPECT_NE(out.find("x*1"), std::string::npos) << out;
  set_debug_level(0);
  ::testing::internal::CaptureStderr();
  simplify((x + 0) * 1 + (y + 0));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "") << "nothing is printed below level 5";
  set_debug_level(before);
}

TEST_F(SymbolicTest, SimplifyFoldsAHundredThousandNodeAddChainWithoutRecursion) {
  constexpr int kChain = 100'000;
  UOp x = UOp::variable("x", 0, 10, dtypes::int32);
  UOp e = x;
  for (int i = 0; i < kChain; i++) e = e + 1;
  UOp s = simplify(e);
  EXPECT_EQ(s, x + kChain) << print_graph(s).substr(0, 200);
}

}  // namespace
}  // namespace doorbell
