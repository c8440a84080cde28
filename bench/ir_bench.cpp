// IR speed: hash-consed UOp construction and graph_rewrite over 100,000-node graphs, in nodes per second.
// Each has a baseline measured in the same run on the same machine, so the ratio travels between machines:
//  - construction against inserting the same 5-field keys into a std::unordered_set (the bare hash table cost);
//  - graph_rewrite against a plain iterative toposort of the same graph (the bare traversal cost).
#include <benchmark/benchmark.h>

#include <unordered_set>

#include "ir/graph_rewrite.h"
#include "ir/symbolic.h"

namespace doorbell {
namespace {

// Misses: every node is new (a fresh constant each time), so each construction allocates and inserts.
void BM_UOpConstructNew(benchmark::State& state) {
  UOp x = UOp::variable("x", 0, 1 << 20, dtypes::int32);
  int64_t i = 0;
  for (auto _ : state) {
    UOp c = UOp::const_(dtypes::int32, i++ % (1 << 30));
    UOp e = UOp::make(Ops::ADD, dtypes::int32, {x, c});
    benchmark::DoNotOptimize(e.get());
  }
  state.SetItemsProcessed(state.iterations() * 2);  // two nodes built per iteration
  state.counters["nodes_per_s"] = benchmark::Counter(state.iterations() * 2.0, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_UOpConstructNew);

// Hits: the node exists already, so construction is a lookup that returns the same node.
void BM_UOpConstructHit(benchmark::State& state) {
  UOp x = UOp::variable("x", 0, 1 << 20, dtypes::int32);
  std::vector<UOp> keep;
  for (int i = 0; i < 1024; i++) keep.push_back(UOp::make(Ops::ADD, dtypes::int32, {x, UOp::const_(dtypes::int32, i)}));
  size_t i = 0;
  for (auto _ : state) {
    const UOp& k = keep[i++ & 1023];
    UOp e = UOp::make(Ops::ADD, dtypes::int32, {x, k.src(1)});
    benchmark::DoNotOptimize(e.get());
  }
  state.counters["nodes_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_UOpConstructHit);

struct Key {
  int op, dtype;
  const void* a;
  const void* b;
  int64_t arg;
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = std::hash<const void*>()(k.a) * 31 + std::hash<const void*>()(k.b);
    return h * 1000003 + static_cast<size_t>(k.arg) * 17 + static_cast<size_t>(k.op * 8 + k.dtype);
  }
};

// Baseline for construction: the same number of inserts of comparable keys into a standard hash set.
void BM_Baseline_HashSetInsert(benchmark::State& state) {
  std::unordered_set<Key, KeyHash> set;
  int dummy;
  int64_t i = 0;
  for (auto _ : state) {
    auto [it, ok] = set.insert(Key{1, 2, &dummy, &set, i++});
    benchmark::DoNotOptimize(ok);
    if (set.size() > (1 << 20)) set.clear();  // keep it in the size range the UOp table sees
  }
  state.counters["nodes_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Baseline_HashSetInsert);

// 10,000 independent index expressions of 10 nodes each under one SINK: the shape of a schedule's index math.
UOp index_math_graph() {
  std::vector<UOp> outs;
  UOp r0 = UOp::range(64, 0, AxisType::LOOP, dtypes::int32), r1 = UOp::range(16, 1, AxisType::LOOP, dtypes::int32);
  for (int i = 0; i < 10000; i++) {
    UOp v = UOp::variable("v" + std::to_string(i), 0, 255, dtypes::int32);
    UOp e = ((r0 * 16 + r1 + v * 1024 + 0) * 1 + (i % 7)).floordiv(16) + (r1 + i).floormod(16);
    outs.push_back(e);
  }
  return UOp::sink(std::move(outs));
}

// A chain of 100,000 ADDs with +0 every other step: the simplest rule fires 50,000 times.
UOp chain_graph() {
  UOp x = UOp::variable("x", 0, 10, dtypes::int32);
  UOp zero = UOp::const_(dtypes::int32, 0), one = UOp::const_(dtypes::int32, 1);
  UOp e = x;
  for (int i = 0; i < 50000; i++) e = UOp::make(Ops::ADD, dtypes::int32, {UOp::make(Ops::ADD, dtypes::int32, {e, one}), zero});
  return e;
}

void report_nodes(benchmark::State& state, size_t nodes) {
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["nodes_per_s"] = benchmark::Counter(static_cast<double>(nodes) * state.iterations(), benchmark::Counter::kIsRate);
}

void BM_GraphRewrite_Symbolic_IndexMath100k(benchmark::State& state) {
  UOp g = index_math_graph();
  size_t nodes = g.toposort().size();
  for (auto _ : state) benchmark::DoNotOptimize(graph_rewrite(g, symbolic()).get());
  report_nodes(state, nodes);
}
BENCHMARK(BM_GraphRewrite_Symbolic_IndexMath100k)->Unit(benchmark::kMillisecond);

void BM_GraphRewrite_AddZero_Chain100k(benchmark::State& state) {
  static const PatternMatcher add_zero({{UPat::var("x") + UPat::const_(0), [](const Match& m) { return m["x"]; }, "x+0"}});
  UOp g = chain_graph();
  size_t nodes = g.toposort().size();
  for (auto _ : state) benchmark::DoNotOptimize(graph_rewrite(g, add_zero).get());
  report_nodes(state, nodes);
}
BENCHMARK(BM_GraphRewrite_AddZero_Chain100k)->Unit(benchmark::kMillisecond);

void BM_GraphRewrite_NoMatch_IndexMath100k(benchmark::State& state) {
  static const PatternMatcher none({{UPat(Ops::THREEFRY), [](const Match&) { return UOp(); }, "never"}});
  UOp g = index_math_graph();
  size_t nodes = g.toposort().size();
  for (auto _ : state) benchmark::DoNotOptimize(graph_rewrite(g, none).get());
  report_nodes(state, nodes);
}
BENCHMARK(BM_GraphRewrite_NoMatch_IndexMath100k)->Unit(benchmark::kMillisecond);

// Baseline for graph_rewrite: visiting every node once, nothing else.
void BM_Baseline_Toposort_IndexMath100k(benchmark::State& state) {
  UOp g = index_math_graph();
  size_t nodes = g.toposort().size();
  for (auto _ : state) benchmark::DoNotOptimize(g.toposort().size());
  report_nodes(state, nodes);
}
BENCHMARK(BM_Baseline_Toposort_IndexMath100k)->Unit(benchmark::kMillisecond);

void BM_Baseline_Toposort_Chain100k(benchmark::State& state) {
  UOp g = chain_graph();
  size_t nodes = g.toposort().size();
  for (auto _ : state) benchmark::DoNotOptimize(g.toposort().size());
  report_nodes(state, nodes);
}
BENCHMARK(BM_Baseline_Toposort_Chain100k)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace doorbell
