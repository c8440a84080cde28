// PatternMatcher: rule order, "no rewrite" results, the op index and its early reject, contexts and rule names.
#include "ir/pattern_matcher.h"

#include <gtest/gtest.h>

namespace doorbell {
namespace {

class PatternMatcherTest : public ::testing::Test {
 protected:
  UOp x = UOp::variable("x", 0, 10, dtypes::int32);
  UOp y = UOp::variable("y", 0, 10, dtypes::int32);
  UOp z = UOp::variable("z", 0, 10, dtypes::int32);
};

TEST_F(PatternMatcherTest, FirstMatchingRuleWins) {
  PatternMatcher pm({
      {UPat(Ops::MUL), [&](const Match&) { return z; }, "mul"},
      {UPat(Ops::ADD), [&](const Match&) { return x; }, "first add"},
      {UPat(Ops::ADD), [&](const Match&) { return y; }, "second add"},
  });
  size_t fired = 99;
  EXPECT_EQ(pm.rewrite(x + y, nullptr, &fired), x);
  EXPECT_EQ(fired, 1u);
  EXPECT_EQ(pm.rewrite(x * y, nullptr, &fired), z);
  EXPECT_EQ(fired, 0u);
}

TEST_F(PatternMatcherTest, NullOrSameNodeMeansNoRewrite) {
  int calls = 0;
  PatternMatcher pm({
      {UPat(Ops::ADD), [&](const Match&) { calls++; return UOp(); }, "null"},
      {UPat(Ops::ADD), [&](const Match& m) { calls++; return m.root(); }, "same"},
      {UPat(Ops::ADD), [&](const Match&) { calls++; return z; }, "real"},
  });
  size_t fired = 99;
  EXPECT_EQ(pm.rewrite(x + y, nullptr, &fired), z);
  EXPECT_EQ(fired, 2u);
  EXPECT_EQ(calls, 3);
  PatternMatcher none({{UPat(Ops::ADD), [](const Match&) { return UOp(); }, "null"}});
  fired = 99;
  EXPECT_FALSE(none.rewrite(x + y, nullptr, &fired));
  EXPECT_EQ(fired, 99u) << "nothing fired";
  EXPECT_FALSE(none.rewrite(x * y)) << "no rule for MUL";
}

TEST_F(PatternMatcherTest, RuleIsTriedOnEveryMatchUntilOneRewrites) {
  // ADD{a, b} matches x+y as (a=x, b=y) and (a=y, b=x); the rule only accepts the second
  std::vector<UOp> seen;
  PatternMatcher pm({{UPat::var("a") + UPat::var("b"), [&](const Match& m) {
                        seen.push_back(m["a"]);
                        return m["a"] == y ? z : UOp();
                      }}});
  EXPECT_EQ(pm.rewrite(x + y), z);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], x);
  EXPECT_EQ(seen[1], y);
}

TEST_F(PatternMatcherTest, BindingsAndRootReachTheRule) {
  std::vector<UOp> roots;
  PatternMatcher pm({{UPat::var("a") * UPat::cvar("c"), [&](const Match& m) {
                        roots.push_back(m.root());
                        EXPECT_EQ(m.find("missing"), nullptr);
                        return m["a"] + m["c"];
                      }}});
  EXPECT_EQ(pm.rewrite(x * 3), x + 3);
  EXPECT_EQ(pm.rewrite(3 * x), x + 3);
  std::vector<UOp> expected{x * 3, 3 * x};
  EXPECT_EQ(roots, expected);
}

TEST_F(PatternMatcherTest, MatchCtxReachesTheRule) {
  struct Counter {
    int hits = 0;
  } counter;
  PatternMatcher pm({{UPat(Ops::PARAM), [](const Match& m) {
                        m.ctx<Counter>().hits++;
                        return UOp();
                      }}});
  pm.rewrite(x, &counter);
  pm.rewrite(y, &counter);
  EXPECT_EQ(counter.hits, 2);
  void* seen = nullptr;
  PatternMatcher raw({{UPat(), [&](const Match& m) { seen = m.raw_ctx(); return UOp(); }}});
  raw.rewrite(x, &counter);
  EXPECT_EQ(seen, &counter);
}

TEST_F(PatternMatcherTest, RuleNamesDefaultToFileAndLine) {
  Rule r(UPat(Ops::ADD), [](const Match&) { return UOp(); }); const int line = __LINE__;
  EXPECT_EQ(r.name, "pattern_matcher_test.cpp:" + std::to_string(line));
  Rule named(UPat(Ops::ADD), [](const Match&) { return UOp(); }, "mine");
  EXPECT_EQ(named.name, "mine");
  PatternMatcher pm({{UPat(Ops::ADD), [](const Match&) { return UOp(); }}});
  EXPECT_EQ(pm.rules()[0].name.rfind("pattern_matcher_test.cpp:", 0), 0u) << pm.rules()[0].name;
}

TEST_F(PatternMatcherTest, EarlyRejectDoesNotDropMatches) {
  // each rule names a source op; the node's sources must include it, and nothing else is rejected
  PatternMatcher pm({
      {UPat(Ops::ADD, {UPat(Ops::MUL), UPat(Ops::CONST)}), [&](const Match&) { return UOp::const_(dtypes::int32, 1); }, "mul+const"},
      {UPat(Ops::ADD, {UPat::ops(OpSet{Ops::PARAM, Ops::CONST}), UPat::var()}), [&](const Match&) { return UOp::const_(dtypes::int32, 2); }, "set"},
      {UPat(Ops::ADD, {UPat::any({UPat(Ops::MUL), UPat(Ops::PARAM)}), UPat::var()}), [&](const Match&) { return UOp::const_(dtypes::int32, 3); }, "any"},
      {UPat(Ops::ADD).src_each(UPat(Ops::SUB)), [&](const Match&) { return UOp::const_(dtypes::int32, 4); }, "each"},
      {UPat::any({UPat(Ops::ADD, {UPat(Ops::FLOORDIV), UPat::var()}), UPat(Ops::ADD, {UPat::var(), UPat(Ops::FLOORMOD)})}),
       [&](const Match&) { return UOp::const_(dtypes::int32, 5); }, "top any"},
  });
  auto c = [](int64_t v) { return UOp::const_(dtypes::int32, v); };
  EXPECT_EQ(pm.rewrite(x * 2 + 3), c(1));
  EXPECT_EQ(pm.rewrite(y + (x * 2)), c(2)) << "y is in the set {PARAM, CONST}";
  EXPECT_EQ(pm.rewrite((x * 2) + (y * 2)), c(3));
  EXPECT_EQ(pm.rewrite((x - 1) + (y - 1)), c(4));
  EXPECT_EQ(pm.rewrite((x / 2) + (x / 2)), c(5));
  EXPECT_EQ(pm.rewrite((x * 2) + (x % 2)), c(3));
  EXPECT_EQ(pm.rewrite((x - 1) + (x % 2)), c(5)) << "the second alternative of the top any";
  EXPECT_FALSE(pm.rewrite((x - 1) + (x * 2)));
}

TEST_F(PatternMatcherTest, AnyOpPatternsAreTriedForEveryOp) {
  int seen = 0;
  PatternMatcher pm({{UPat::var("n"), [&](const Match&) { seen++; return UOp(); }}});
  pm.rewrite(x);
  pm.rewrite(x + y);
  pm.rewrite(UOp::sink({x}));
  EXPECT_EQ(seen, 3);
}

TEST_F(PatternMatcherTest, AddingMatchersKeepsRuleOrder) {
  PatternMatcher a({{UPat(Ops::ADD), [&](const Match&) { return UOp(); }, "a"}});
  PatternMatcher b({{UPat(Ops::ADD), [&](const Match&) { return z; }, "b"}});
  PatternMatcher ab = a + b;
  ASSERT_EQ(ab.rules().size(), 2u);
  EXPECT_EQ(ab.rules()[0].name, "a");
  EXPECT_EQ(ab.rules()[1].name, "b");
  size_t fired = 99;
  EXPECT_EQ(ab.rewrite(x + y, nullptr, &fired), z);
  EXPECT_EQ(fired, 1u);
  EXPECT_FALSE(PatternMatcher().rewrite(x + y)) << "an empty matcher rewrites nothing";
}

}  // namespace
}  // namespace doorbell
