// graph_rewrite: the three traversal modes, fixed points, memoization, endless-rewrite detection, deep graphs,
// statistics and CALL bodies.
#include "ir/graph_rewrite.h"

#include <gtest/gtest.h>

#include "tests/ir/ir_test_util.h"

namespace doorbell {
namespace {

using testing::error_of;

UOp i32(int64_t v) { return UOp::const_(dtypes::int32, v); }
UPat param_named(const UOp& v) { return UPat(Ops::PARAM).arg(v.arg()); }
// A rule that rewrites the variable `from` to `to`.
Rule rename(const UOp& from, const UOp& to, std::string name = "") {
  return Rule(param_named(from), [to](const Match&) { return to; }, std::move(name));
}
// A rule that records every node it is offered (in ctx, a std::vector<UOp>) and rewrites nothing.
Rule recorder() {
  return Rule(UPat(), [](const Match& m) {
    m.ctx<std::vector<UOp>>().push_back(m.root());
    return UOp();
  }, "recorder");
}

// Options without designated initializers (GCC 12 warns about the fields they skip).
RewriteOptions opts(RewriteMode mode = RewriteMode::Default, void* ctx = nullptr) {
  RewriteOptions o;
  o.mode = mode;
  o.ctx = ctx;
  return o;
}
RewriteOptions named(std::string name, RewriteMode mode = RewriteMode::Default) {
  RewriteOptions o = opts(mode);
  o.name = std::move(name);
  return o;
}
RewriteOptions with_stats(RewriteStats* stats, RewriteMode mode = RewriteMode::Default) {
  RewriteOptions o = opts(mode);
  o.stats = stats;
  return o;
}
RewriteOptions entering_calls(RewriteMode mode) {
  RewriteOptions o = opts(mode);
  o.enter_calls = true;
  return o;
}

class GraphRewriteTest : public ::testing::Test {
 protected:
  UOp a = UOp::variable("a", 0, 10, dtypes::int32);
  UOp b = UOp::variable("b", 0, 10, dtypes::int32);
  UOp c = UOp::variable("c", 0, 10, dtypes::int32);
  UOp x = UOp::variable("x", 0, 10, dtypes::int32);
  UOp y = UOp::variable("y", 0, 10, dtypes::int32);
  UOp z = UOp::variable("z", 0, 10, dtypes::int32);
};

// ---- default mode ---------------------------------------------------------------------------------------------

TEST_F(GraphRewriteTest, DefaultModeReachesAFixedPointPerNode) {
  PatternMatcher pm({rename(a, b, "a->b"), rename(b, c, "b->c")});
  EXPECT_EQ(graph_rewrite(a, pm), c) << "a becomes b, and b is rewritten again to c";
  EXPECT_EQ(graph_rewrite(a + 1, pm), c + 1);
  EXPECT_EQ(graph_rewrite((a * b).lt(a), pm), (c * c).lt(c));
}

TEST_F(GraphRewriteTest, DefaultModeRewritesResultsAndRebuiltNodesAgain) {
  PatternMatcher pm({
      {UPat::var("v") * UPat::const_(2), [](const Match& m) { return m["v"] + m["v"]; }, "v*2 -> v+v"},
      {UPat::var("v") + UPat::var("v"), [](const Match& m) { return m["v"] << 1; }, "v+v -> v<<1"},
      {UPat::var("v") + UPat::const_(0), [](const Match& m) { return m["v"]; }, "v+0 -> v"},
      rename(a, i32(0), "a->0"),
  });
  EXPECT_EQ(graph_rewrite(x * 2, pm), x << 1) << "the result x+x is rewritten again";
  EXPECT_EQ(graph_rewrite(x + a, pm), x) << "x+a is rebuilt as x+0, which is rewritten again";
  EXPECT_EQ(graph_rewrite((x + a) * 2, pm), x << 1);
}

TEST_F(GraphRewriteTest, DefaultModeVisitsSourcesFirst) {
  PatternMatcher pm({recorder()});
  std::vector<UOp> order;
  UOp root = (x + y) * z;
  EXPECT_EQ(graph_rewrite(root, pm, opts(RewriteMode::Default, &order)), root);
  std::vector<UOp> expected{x, y, x + y, z, root};
  EXPECT_EQ(order, expected);
}

TEST_F(GraphRewriteTest, SharedNodesAreRewrittenOnce) {
  int adds = 0;
  PatternMatcher pm({{UPat(Ops::ADD), [&](const Match&) { adds++; return UOp(); }, "count adds"}});
  UOp s = x + y;
  graph_rewrite((s * s) - s, pm);
  EXPECT_EQ(adds, 1);
}

TEST_F(GraphRewriteTest, NullRootIsRejected) {
  EXPECT_EQ(error_of<std::invalid_argument>([] { graph_rewrite(UOp(), PatternMatcher()); }),
            "graph_rewrite: the root is a null UOp");
}

// ---- bottom-up mode -------------------------------------------------------------------------------------------

TEST_F(GraphRewriteTest, BottomUpVisitsParentsBeforeChildren) {
  PatternMatcher pm({recorder()});
  std::vector<UOp> order;
  UOp root = (x + y) * z;
  EXPECT_EQ(graph_rewrite(root, pm, opts(RewriteMode::BottomUp, &order)), root);
  std::vector<UOp> expected{root, x + y, x, y, z};
  EXPECT_EQ(order, expected);
}

TEST_F(GraphRewriteTest, BottomUpRewritesANodeToAFixedPointBeforeItsSources) {
  // (x+y)*2 -> (x+y)+(x+y) at the top first; then x -> z inside it
  PatternMatcher pm({
      {UPat::var("v") * UPat::const_(2), [](const Match& m) { return m["v"] + m["v"]; }, "v*2"},
      rename(x, z, "x->z"),
      rename(a, b, "a->b"),
      rename(b, c, "b->c"),
  });
  EXPECT_EQ(graph_rewrite((x + y) * 2, pm, opts(RewriteMode::BottomUp)), (z + y) + (z + y));
  EXPECT_EQ(graph_rewrite(a + 1, pm, opts(RewriteMode::BottomUp)), c + 1);
}

TEST_F(GraphRewriteTest, BottomUpGateStopsDescent) {
  std::vector<UOp> order;
  PatternMatcher pm({
      {UPat(Ops::MUL), [](const Match& m) -> UOp {
         m.ctx<std::vector<UOp>>().push_back(m.root());
         throw BottomUpGate{};
       }, "gate"},
      {UPat(Ops::PARAM), [&](const Match& m) { m.ctx<std::vector<UOp>>().push_back(m.root()); return z; }, "param->z"},
  });
  UOp root = (x * 2) + y;
  EXPECT_EQ(graph_rewrite(root, pm, opts(RewriteMode::BottomUp, &order)), (x * 2) + z)
      << "the gated MUL keeps its x; y outside the gate is rewritten";
  // x is never offered. z, y's result, is offered in y's fixed-point loop, and once more as a source of the
  // rebuilt parent (x*2)+z, a node of its own.
  std::vector<UOp> expected{x * 2, y, z, z};
  EXPECT_EQ(order, expected);
}

// ---- walk mode ------------------------------------------------------------------------------------------------

TEST_F(GraphRewriteTest, WalkAppliesEachNodeOnceAndDoesNotRevisitResults) {
  PatternMatcher pm({rename(a, b, "a->b"), rename(b, c, "b->c")});
  EXPECT_EQ(graph_rewrite(a, pm, opts(RewriteMode::Walk)), b);
  EXPECT_EQ(graph_rewrite(a + b, pm, opts(RewriteMode::Walk)), b + c) << "one pass over the original graph";
  std::vector<UOp> order;
  PatternMatcher rec({recorder()});
  UOp root = (x + y) * (x + y);
  graph_rewrite(root, rec, opts(RewriteMode::Walk, &order));
  std::vector<UOp> expected{x, y, x + y, root};
  EXPECT_EQ(order, expected);
}

TEST_F(GraphRewriteTest, WalkSeesRebuiltNodes) {
  std::vector<UOp> offered;
  PatternMatcher pm({
      rename(a, x, "a->x"),
      {UPat(Ops::ADD), [&](const Match& m) { offered.push_back(m.root()); return UOp(); }, "record add"},
  });
  EXPECT_EQ(graph_rewrite(a + 1, pm, opts(RewriteMode::Walk)), x + 1);
  ASSERT_EQ(offered.size(), 1u);
  EXPECT_EQ(offered[0], x + 1) << "the rule sees the node with its rewritten sources";
}

// ---- rebuilding -----------------------------------------------------------------------------------------------

TEST_F(GraphRewriteTest, RebuildRederivesDtypes) {
  UOp x64 = UOp::variable("x", 0, 10, dtypes::int64);
  PatternMatcher pm({rename(x, x64, "widen x")});
  UOp root = (x + x).lt(x * x);
  UOp out = graph_rewrite(root, pm);
  EXPECT_EQ(out, (x64 + x64).lt(x64 * x64));
  EXPECT_EQ(out.src(0).dtype(), dtypes::int64);
  EXPECT_EQ(out.dtype(), dtypes::bool_);
  EXPECT_EQ(rebuild_with_src(x + y, {x64, x64}).dtype(), dtypes::int64);
  EXPECT_EQ(rebuild_with_src(x.cast(dtypes::float32), {x64}), x64.cast(dtypes::float32)) << "a CAST keeps its dtype";
  UOp cond = x.lt(y);
  EXPECT_EQ(rebuild_with_src(cond.where(x, y), {cond, x64, x64}).dtype(), dtypes::int64);
  EXPECT_EQ(rebuild_with_src((x + y).with_tag(3), {x64, x64}).tag(), 3);
}

// ---- endless rewrites -----------------------------------------------------------------------------------------

TEST_F(GraphRewriteTest, RewriteThatRecreatesItsNodeIsReported) {
  PatternMatcher pm({
      {UPat(Ops::PARAM).named("v"), [](const Match& m) { return m["v"] + 0; }, "wrap x+0"},
      {UPat::var("v") + UPat::const_(0), [](const Match& m) { return m["v"]; }, "unwrap x+0"},
  });
  std::string msg = error_of<RewriteError>([&] { graph_rewrite(x * 3, pm, named("loop")); });
  EXPECT_EQ(msg,
            "graph_rewrite 'loop': endless rewrite: rule 'wrap x+0' produced a graph that contains the node being "
            "rewritten, PARAM int32 arg=x[0..10]; it would be rewritten again forever");
  std::string bottom_up = error_of<RewriteError>([&] { graph_rewrite(x * 3, pm, opts(RewriteMode::BottomUp)); });
  EXPECT_NE(bottom_up.find("endless rewrite"), std::string::npos) << bottom_up;
  EXPECT_NE(bottom_up.find("rule 'unwrap x+0'"), std::string::npos) << bottom_up;
}

TEST_F(GraphRewriteTest, RuleThatWrapsANodeForeverIsReported) {
  PatternMatcher pm({{UPat::ops(OpSet{Ops::PARAM, Ops::NEG}).named("v"), [](const Match& m) { return -m["v"]; }, "wrap in NEG"}});
  for (RewriteMode mode : {RewriteMode::Default, RewriteMode::BottomUp}) {
    std::string msg = error_of<RewriteError>([&] { graph_rewrite(x + 1, pm, opts(mode)); });
    EXPECT_NE(msg.find("rule 'wrap in NEG'"), std::string::npos) << msg;
  }
  EXPECT_EQ(graph_rewrite(x + 1, pm, opts(RewriteMode::Walk)), -x + 1) << "a walk applies the rule once";
}

TEST_F(GraphRewriteTest, RuleThatBuildsNewNodesForeverIsReported) {
  // CONST k -> CONST k+1 never meets a node twice; only a bound on rewrites nested in one another stops it
  PatternMatcher pm({{UPat::cvar("k", dtypes::int32), [](const Match& m) {
                        return i32(std::get<int64_t>(m["k"].const_value()) + 1);
                      }, "count up"}});
  EXPECT_EQ(error_of<RewriteError>([&] { graph_rewrite(x + 1, pm, named("count")); }),
            "graph_rewrite 'count': endless rewrite: more than 100000 rewrites nested in one another, the last by rule "
            "'count up'");
  // each new node hides the next one below a fresh parent: in bottom-up mode the descent is what nests
  PatternMatcher nested({{UPat::cvar("k", dtypes::int32), [](const Match& m) {
                            return -i32(std::get<int64_t>(m["k"].const_value()) + 1);
                          }, "nest"}});
  std::string msg = error_of<RewriteError>([&] { graph_rewrite(x + 1, nested, opts(RewriteMode::BottomUp)); });
  EXPECT_NE(msg.find("rule 'nest'"), std::string::npos) << msg;
}

// ---- deep graphs ----------------------------------------------------------------------------------------------

TEST_F(GraphRewriteTest, MillionNodeChainIsTraversedWithoutRecursion) {
  constexpr int kChain = 1'000'000;
  UOp one = i32(1);
  UOp chain = x;
  for (int i = 0; i < kChain; i++) chain = UOp::make(Ops::ADD, dtypes::int32, {chain, one});
  size_t offered = 0;
  PatternMatcher pm({{UPat(Ops::ADD), [&](const Match&) { offered++; return UOp(); }, "offered"}});
  RewriteStats stats;
  EXPECT_EQ(graph_rewrite(chain, pm, with_stats(&stats)), chain);
  EXPECT_EQ(offered, static_cast<size_t>(kChain)) << "every ADD once, sources first, on an explicit stack";
  EXPECT_EQ(stats.nodes_visited, static_cast<size_t>(kChain) + 2);
}

TEST_F(GraphRewriteTest, DeepChainIsRebuiltInEveryMode) {
  // deep enough that a recursive rebuild would overflow an 8 MiB stack
  constexpr int kChain = 50'000;
  UOp one = i32(1);
  UOp chain = x;
  for (int i = 0; i < kChain; i++) chain = UOp::make(Ops::ADD, dtypes::int32, {chain, one});
  PatternMatcher pm({rename(x, y, "x->y")});
  for (RewriteMode mode : {RewriteMode::Default, RewriteMode::BottomUp, RewriteMode::Walk}) {
    RewriteStats stats;
    UOp out = graph_rewrite(chain, pm, with_stats(&stats, mode));
    EXPECT_EQ(stats.rewrites, 1u);
    EXPECT_EQ(out.vmin(), kChain);
    const UOp* p = &out;
    int depth = 0;
    while (p->op() == Ops::ADD) {
      ASSERT_EQ(p->src(1), one);
      p = &p->src(0);
      depth++;
    }
    EXPECT_EQ(depth, kChain);
    EXPECT_EQ(*p, y) << "every node of the chain was rebuilt over the renamed leaf";
  }
}

// ---- statistics and CALL bodies -------------------------------------------------------------------------------

TEST_F(GraphRewriteTest, StatsCountHitsPerRule) {
  PatternMatcher pm({
      {UPat(Ops::PARAM), [](const Match&) { return i32(1); }, "param->1"},
      {UPat::cvar("p") + UPat::cvar("q"), [](const Match& m) {
         return i32(std::get<int64_t>(m["p"].const_value()) + std::get<int64_t>(m["q"].const_value()));
       }, "fold add"},
      {UPat(Ops::MUL), [](const Match&) { return UOp(); }, "never"},
  });
  RewriteStats stats;
  EXPECT_EQ(graph_rewrite((x + y) + z, pm, with_stats(&stats)), i32(3));
  EXPECT_EQ(stats.rewrites, 5u);
  // x, y, z, the two original ADDs, 1+1, 1+1's result 2, 2+1, its result 3, and 1 (x's result; y's and z's are
  // the same node)
  EXPECT_EQ(stats.nodes_visited, 10u);
  std::vector<std::pair<std::string, size_t>> expected{{"param->1", 3}, {"fold add", 2}};
  EXPECT_EQ(stats.rule_hits, expected);
}

TEST_F(GraphRewriteTest, CallBodiesAreEnteredOnlyWhenAsked) {
  UOp call = UOp::make(Ops::CALL, dtypes::void_, {UOp::sink({x + 1}), x});
  UOp func = UOp::make(Ops::FUNCTION, dtypes::void_, {UOp::sink({x}), x});
  PatternMatcher pm({rename(x, y, "x->y")});
  for (RewriteMode mode : {RewriteMode::Default, RewriteMode::BottomUp, RewriteMode::Walk}) {
    UOp out = graph_rewrite(call, pm, opts(mode));
    EXPECT_EQ(out, UOp::make(Ops::CALL, dtypes::void_, {UOp::sink({x + 1}), y})) << "src[0] untouched";
    UOp entered = graph_rewrite(call, pm, entering_calls(mode));
    EXPECT_EQ(entered, UOp::make(Ops::CALL, dtypes::void_, {UOp::sink({y + 1}), y}));
    EXPECT_EQ(graph_rewrite(func, pm, opts(mode)), UOp::make(Ops::FUNCTION, dtypes::void_, {UOp::sink({x}), y}));
  }
}

}  // namespace
}  // namespace doorbell
