// UPat: what a pattern matches and what it binds.
#include "ir/upat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

namespace doorbell {
namespace {

using BoundMap = std::map<std::string, UOp>;

// Every way `p` matches `u`, each as the names it bound.
std::vector<BoundMap> all_matches(const UPat& p, const UOp& u, std::vector<std::string> names) {
  std::vector<BoundMap> out;
  Bindings b;
  p.match(u, b, [&](Bindings& bound) {
    BoundMap m;
    for (const std::string& n : names)
      if (const UOp* v = bound.find(n)) m[n] = *v;
    out.push_back(std::move(m));
    return false;  // keep enumerating
  });
  EXPECT_EQ(b.size(), 0u) << "a failed or exhausted match leaves no bindings behind";
  return out;
}
bool matches(const UPat& p, const UOp& u) { return !all_matches(p, u, {}).empty(); }

class UPatTest : public ::testing::Test {
 protected:
  UOp x = UOp::variable("x", 0, 10, dtypes::int32);
  UOp y = UOp::variable("y", 0, 10, dtypes::int32);
  UOp c3 = UOp::const_(dtypes::int32, 3);
};

TEST_F(UPatTest, NamedBindings) {
  auto ms = all_matches(UPat::var("a") + UPat::cvar("c"), x + 3, {"a", "c"});
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0]["a"], x);
  EXPECT_EQ(ms[0]["c"], c3);
  auto whole = all_matches(UPat(Ops::ADD, {UPat::var(), UPat::var()}, "root"), x + y, {"root"});
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0]["root"], x + y);
  EXPECT_EQ(all_matches(UPat(Ops::ADD).named("n"), x + y, {"n"})[0]["n"], x + y);
}

TEST_F(UPatTest, RepeatedNameMustBindTheSameNode) {
  UPat twice = UPat::var("a") + UPat::var("a");
  EXPECT_TRUE(matches(twice, x + x));
  EXPECT_FALSE(matches(twice, x + y));
  UPat sub = UPat(Ops::SUB, {UPat::var("a"), UPat::var("a")});
  EXPECT_TRUE(matches(sub, x - x));
  EXPECT_FALSE(matches(sub, x - y));
  // across levels: (a * 2) + a
  UPat nested = UPat::var("a") * UPat::const_(2) + UPat::var("a");
  EXPECT_TRUE(matches(nested, x * 2 + x));
  EXPECT_TRUE(matches(nested, x + x * 2));
  EXPECT_FALSE(matches(nested, x * 2 + y));
}

TEST_F(UPatTest, CommutativeSourcesMatchInEitherOrder) {
  UPat p = UPat::var("a") + UPat::cvar("c");
  auto m1 = all_matches(p, x + 3, {"a", "c"});
  auto m2 = all_matches(p, 3 + x, {"a", "c"});
  ASSERT_EQ(m1.size(), 1u);
  ASSERT_EQ(m2.size(), 1u);
  EXPECT_EQ(m2[0]["a"], x);
  EXPECT_EQ(m2[0]["c"], c3);
  // two free sources: both assignments are matches
  auto both = all_matches(UPat::var("a") * UPat::var("b"), x * y, {"a", "b"});
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0]["a"], x);
  EXPECT_EQ(both[1]["a"], y);
  // src_any_order on an op that is not commutative by itself
  UPat any_order = UPat(Ops::SUB).src_any_order({UPat::cvar("c"), UPat::var("a")});
  EXPECT_TRUE(matches(any_order, x - 3));
  EXPECT_TRUE(matches(any_order, 3 - x));
}

TEST_F(UPatTest, NonCommutativeSourcesArePositional) {
  UPat p = UPat(Ops::SUB, {UPat::var("a"), UPat::cvar("c")});
  EXPECT_TRUE(matches(p, x - 3));
  EXPECT_FALSE(matches(p, 3 - x));
  EXPECT_FALSE(matches(UPat::var("a") - UPat::cvar("c"), 3 - x));
  EXPECT_FALSE(matches(UPat::var("a").floordiv(UPat::cvar("c")), c3.floordiv(x)));
}

TEST_F(UPatTest, OpDtypeAndArgPredicates) {
  EXPECT_TRUE(matches(UPat(Ops::ADD), x + y));
  EXPECT_FALSE(matches(UPat(Ops::MUL), x + y));
  EXPECT_TRUE(matches(UPat::ops(OpSet{Ops::MUL, Ops::ADD}), x + y));
  EXPECT_TRUE(matches(UPat::var("a", dtypes::int32), x));
  EXPECT_FALSE(matches(UPat::var("a", dtypes::int64), x));
  EXPECT_TRUE(matches(UPat::var().dtype({dtypes::int64, dtypes::int32}), x));
  EXPECT_TRUE(matches(UPat(Ops::CONST).arg(int64_t{3}), c3));
  EXPECT_FALSE(matches(UPat(Ops::CONST).arg(int64_t{4}), c3));
  EXPECT_FALSE(matches(UPat(Ops::CONST).arg(Float(3.0)), c3)) << "args compare exactly, with their type";
  EXPECT_TRUE(matches(UPat::cvar("c", dtypes::int32), c3));
  EXPECT_FALSE(matches(UPat::cvar("c"), x));
  UPat small = UPat::var().where_pred([](const UOp& u) { return u.has_bounds() && u.vmax() <= 10; });
  EXPECT_TRUE(matches(small, x));
  EXPECT_FALSE(matches(small, x + 1));
  UPat both = small.where_pred([](const UOp& u) { return u.op() == Ops::CONST; });
  EXPECT_TRUE(matches(both, c3));
  EXPECT_FALSE(matches(both, x)) << "a second predicate is ANDed with the first";
}

TEST_F(UPatTest, ConstMatchesByNumericValue) {
  UPat zero = UPat::const_(0);
  EXPECT_TRUE(matches(zero, UOp::const_(dtypes::int32, 0)));
  EXPECT_TRUE(matches(zero, UOp::const_(dtypes::float32, 0.0)));
  EXPECT_TRUE(matches(zero, UOp::const_(dtypes::float32, -0.0)));
  EXPECT_TRUE(matches(zero, UOp::const_(dtypes::bool_, false)));
  EXPECT_FALSE(matches(zero, UOp::const_(dtypes::int32, 1)));
  EXPECT_FALSE(matches(zero, UOp::const_(dtypes::bool_, true)));
  EXPECT_FALSE(matches(zero, UOp::invalid()));
  EXPECT_FALSE(matches(zero, x));
  EXPECT_TRUE(matches(UPat::const_(1), UOp::const_(dtypes::bool_, true)));
  EXPECT_TRUE(matches(UPat::const_(-1), UOp::const_(dtypes::int8, -1)));
  EXPECT_FALSE(matches(UPat::const_(-1), UOp::const_(dtypes::uint8, 255))) << "255, not -1";
  EXPECT_TRUE(matches(UPat::const_(0).dtype(dtypes::bool_), UOp::const_(dtypes::bool_, false)));
  EXPECT_FALSE(matches(UPat::const_(0).dtype(dtypes::bool_), UOp::const_(dtypes::int32, 0)));
  EXPECT_FALSE(matches(UPat::const_(NAN), UOp::const_(dtypes::float32, NAN))) << "NaN equals no number";
}

TEST_F(UPatTest, AnyMatchesEachAlternative) {
  UPat p = UPat::any({UPat(Ops::ADD), UPat(Ops::MUL)});
  EXPECT_TRUE(matches(p, x + y));
  EXPECT_TRUE(matches(p, x * y));
  EXPECT_FALSE(matches(p, x - y));
  // bindings from the alternative that matched; a failed alternative leaves none behind
  UPat q = UPat::any({UPat(Ops::ADD, {UPat::var("a"), UPat::cvar("k")}), UPat(Ops::SUB, {UPat::var("a"), UPat::var("b")})});
  auto ms = all_matches(q, x - y, {"a", "b", "k"});
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].size(), 2u);
  EXPECT_EQ(ms[0]["a"], x);
  EXPECT_EQ(ms[0]["b"], y);
  // both alternatives matching give two matches
  EXPECT_EQ(all_matches(UPat::any({UPat(Ops::ADD), UPat::var()}), x + y, {}).size(), 2u);
}

TEST_F(UPatTest, AnyHonoursItsOwnNameAndDtype) {
  UPat p = UPat::any({UPat(Ops::ADD), UPat(Ops::MUL)}).named("n");
  auto ms = all_matches(p, x * y, {"n"});
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0]["n"], x * y);
  EXPECT_FALSE(matches(UPat::any({UPat(Ops::ADD)}).dtype(dtypes::int64), x + y));
  // a repeated name through an alternative
  UPat rep = UPat(Ops::SUB, {UPat::any({UPat(Ops::PARAM), UPat(Ops::CONST)}).named("a"), UPat::var("a")});
  EXPECT_TRUE(matches(rep, x - x));
  EXPECT_FALSE(matches(rep, x - y));
}

TEST_F(UPatTest, SrcEachMatchesEverySource) {
  UOp s1 = UOp::sink({c3, UOp::const_(dtypes::int32, 4)});
  UOp s2 = UOp::sink({c3, x});
  UPat consts = UPat(Ops::SINK).src_each(UPat(Ops::CONST));
  EXPECT_TRUE(matches(consts, s1));
  EXPECT_FALSE(matches(consts, s2));
  EXPECT_TRUE(matches(consts, UOp::sink({}))) << "no source fails";
  // a name in the repeated pattern must bind the same node every time
  UPat same = UPat(Ops::SINK).src_each(UPat::var("v"));
  EXPECT_TRUE(matches(same, UOp::sink({x, x, x})));
  EXPECT_FALSE(matches(same, UOp::sink({x, x, y})));
}

TEST_F(UPatTest, AllowAnyLen) {
  UOp s = UOp::sink({x, y, c3});
  UPat first = UPat(Ops::SINK, {UPat::var("first")});
  EXPECT_FALSE(matches(first, s)) << "a tuple of sources must match the count";
  auto ms = all_matches(first.allow_any_len(), s, {"first"});
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0]["first"], x);
  EXPECT_FALSE(matches(UPat(Ops::SINK, {UPat::var(), UPat::var(), UPat::var(), UPat::var()}).allow_any_len(), s))
      << "more patterns than sources";
  EXPECT_TRUE(matches(UPat(Ops::SINK, {}).allow_any_len(), s));
  EXPECT_FALSE(matches(UPat(Ops::SINK, {}), s));
}

TEST_F(UPatTest, ManySourcesMatchPositionally) {
  std::vector<UOp> srcs;
  std::vector<UPat> pats;
  for (int i = 0; i < 12; i++) {
    srcs.push_back(UOp::const_(dtypes::int32, i));
    pats.push_back(UPat(Ops::CONST).arg(int64_t{i}));
  }
  EXPECT_TRUE(matches(UPat(Ops::SINK, pats), UOp::sink(srcs)));
  std::swap(pats[10], pats[11]);
  EXPECT_FALSE(matches(UPat(Ops::SINK, pats), UOp::sink(srcs)));
}

TEST_F(UPatTest, OperatorsBuildAluPatterns) {
  EXPECT_EQ((UPat::var() + UPat::var()).op_set(), OpSet{Ops::ADD});
  EXPECT_EQ((UPat::var() * 2.0).op_set(), OpSet{Ops::MUL});
  EXPECT_EQ((UPat::var() % 2.0).op_set(), OpSet{Ops::FLOORMOD});
  EXPECT_EQ((-UPat::var()).op_set(), OpSet{Ops::NEG});
  EXPECT_EQ(UPat::var().lt(UPat::var()).op_set(), OpSet{Ops::CMPLT});
  EXPECT_TRUE(matches(UPat::var("c").where(UPat::var("t"), UPat::var("f")), x.lt(y).where(x, y)));
  EXPECT_TRUE(matches(UPat::var("a").cast(dtypes::int64), x.cast(dtypes::int64)));
  EXPECT_FALSE(matches(UPat::var("a").cast(dtypes::int8), x.cast(dtypes::int64)));
  EXPECT_TRUE(matches(UPat::var("a").cast(), x.cast(dtypes::int8)));
  EXPECT_TRUE(matches(UPat::var("a") & 1.0, x & 1));
  EXPECT_TRUE(matches(UPat::var("a") ^ 1.0, 1 ^ x)) << "XOR is commutative";
}

TEST_F(UPatTest, RequiredSrcOps) {
  EXPECT_EQ((UPat::var() + UPat::cvar()).required_src_ops(), OpSet{Ops::CONST});
  EXPECT_EQ(UPat(Ops::ADD, {UPat(Ops::MUL), UPat(Ops::CONST)}).required_src_ops(), (OpSet{Ops::MUL, Ops::CONST}));
  EXPECT_TRUE(UPat(Ops::ADD, {UPat::ops(OpSet{Ops::MUL, Ops::CONST}), UPat::var()}).required_src_ops().empty())
      << "a set of several ops requires none of them";
  EXPECT_TRUE(UPat(Ops::ADD, {UPat::any({UPat(Ops::MUL)}), UPat::var()}).required_src_ops().empty());
  EXPECT_TRUE(UPat(Ops::SINK).src_each(UPat(Ops::CONST)).required_src_ops().empty()) << "zero sources match too";
  EXPECT_EQ(UPat(Ops::REDUCE, {UPat::var(), UPat(Ops::RANGE)}).required_src_ops(), OpSet{Ops::RANGE});
  EXPECT_EQ(UPat(Ops::ADD, {UPat(Ops::REDUCE), UPat(Ops::CONST)}).required_src_ops(),
            (OpSet{Ops::REDUCE, Ops::CONST})) << "ops in both halves of the 128-bit set";
}

TEST_F(UPatTest, ToString) {
  EXPECT_EQ((UPat::var("a") + UPat::cvar("c")).to_string(), "ADD{*:a, CONST:c}");
  EXPECT_EQ(UPat(Ops::SUB, {UPat::var("a"), UPat::const_(0)}).to_string(), "SUB(*:a, CONST=0.0)");
  EXPECT_EQ(UPat(Ops::SINK).src_each(UPat(Ops::CONST)).to_string(), "SINK(CONST...)");
  EXPECT_EQ(UPat::any({UPat(Ops::ADD), UPat(Ops::MUL)}).to_string(), "any(ADD, MUL)");
  EXPECT_EQ(UPat(Ops::CONST).arg(int64_t{3}).to_string(), "CONST[3]");
  EXPECT_EQ(UPat::ops(OpSet{Ops::ADD, Ops::MUL}).to_string(), "ADD|MUL");
}

TEST_F(UPatTest, MissingBindingThrowsNamingIt) {
  Bindings b;
  try {
    (void)b["nope"];
    ADD_FAILURE() << "no exception";
  } catch (const std::out_of_range& e) {
    EXPECT_STREQ(e.what(), "Bindings: no UOp is bound to 'nope'");
  }
}

}  // namespace
}  // namespace doorbell
