#include "scheduler/layout.h"

#include <cstdio>
#include <vector>

#include "ir/debug.h"
#include "ir/graph_rewrite.h"
#include "scheduler/movement_uops.h"
#include "scheduler/split_reduce.h"

namespace doorbell {
namespace {

// ---- pack_matmul_panels --------------------------------------------------------------------------------------

constexpr int64_t kPanel = 32;  // columns of w per panel: the CPU matmul kernel's widest column tile

// Tensor::dot of a float32 (M, K) and (K, N): x as (M, 1, K) and w as (1, K, N) transposed to (1, N, K), both
// expanded to (M, N, K), multiplied, summed over K.
UPat matmul_pattern() {
  UPat x_side = UPat(Ops::EXPAND, {UPat::var("x")});
  UPat w_side = UPat(Ops::EXPAND, {UPat(Ops::PERMUTE, {UPat::var("w")}).arg(IntTuple{0, 2, 1})});
  return UPat(Ops::REDUCE, {UPat(Ops::MUL, {x_side, w_side})}).arg(ReduceArg{Ops::ADD, {2}}).dtype(dtypes::float32);
}

UOp pack_matmul_panels(const Match& m) {
  const UOp &x = m["x"], &w = m["w"];
  // A CAST under x's expand is Tensor::mul promoting a narrower x (it casts before it broadcasts): not a float32 x.
  if (x.op() == Ops::CAST || x.dtype() != dtypes::float32 || w.dtype() != dtypes::float32) return UOp();
  const IntTuple &xs = *x.shape(), &ws = *w.shape();
  if (xs.size() != 3 || xs[1] != 1 || ws.size() != 3 || ws[0] != 1 || xs[2] != ws[1]) return UOp();
  int64_t rows = xs[0], k = xs[2], n = ws[2];
  if (n % kPanel != 0 || (n * 4) % 4096 != 0 || k < 64 || rows < 16) return UOp();
  // (N / 32, K, 32), each panel contiguous; then the matmul over (M, N / 32, 32, K), as the frontend built it.
  UOp panels = permute_uop(reshape_uop(w, {k, n / kPanel, kPanel}), {1, 0, 2});
  panels = UOp::make(Ops::CONTIGUOUS, panels.dtype(), {panels});
  IntTuple full{rows, n / kPanel, kPanel, k};
  UOp a = expand_uop(reshape_uop(x, {rows, 1, 1, k}), full);
  UOp b = expand_uop(reshape_uop(permute_uop(panels, {0, 2, 1}), {1, n / kPanel, kPanel, k}), full);
  UOp prod = UOp::infer(Ops::MUL, {a, b});
  UOp sum = UOp::make(Ops::REDUCE, prod.dtype(), {prod}, ReduceArg{Ops::ADD, {3}});
  return reshape_uop(sum, *m.root().shape());
}

// ---- split_leading_reduce ------------------------------------------------------------------------------------

constexpr int64_t kLeadingSplitMinElements = int64_t{1} << 20, kLeadingSplitMaxRow = 4096;

UOp split_leading_reduce(const Match& m) {
  const UOp& r = m.root();
  const UOp& x = r.src(0);
  const IntTuple& shape = *x.shape();
  if (r.arg_as<ReduceArg>().axes != IntTuple{0} || shape.size() < 2) return UOp();
  int64_t numel = 1;
  for (int64_t s : shape) numel *= s;
  if (numel < kLeadingSplitMinElements) return UOp();
  int64_t rows = shape[0], row = numel / rows;
  if (row > kLeadingSplitMaxRow || row % 16 != 0) return UOp();
  for (int64_t p = 32; p >= 2; p--) {  // p parts of rows / p rows each
    if (rows % p != 0) continue;
    IntTuple parts = shape;
    parts[0] = rows / p;
    parts.insert(parts.begin(), p);
    return reduce_in_two(r, reshape_uop(x, parts), IntTuple{1}, 0);
  }
  return UOp();
}

// ---- running the passes --------------------------------------------------------------------------------------

std::vector<UOp> reduces_of(const UOp& sink) {
  std::vector<UOp> out;
  for (const UOp& u : sink.toposort())
    if (u.op() == Ops::REDUCE) out.push_back(u);
  return out;
}

// graph_rewrite visits every node (a few hundred ns each), and most graphs hold no reduction these rules rewrite: a
// schedule cache miss looks at the graph's REDUCEs (one toposort for both passes) instead of running a pass for
// nothing. A Walk's first rewrite is of a node of the graph as it is, and the rules fire on REDUCEs (the fold only
// after a rewrite, as the frontend never builds RESHAPE(RESHAPE(REDUCE))): when none fires on the graph's REDUCEs,
// the pass would change nothing. `reduces` are the REDUCEs of `graph`, kept so when the pass rewrites it.
void walk_pass(UOp& graph, std::vector<UOp>& reduces, const PatternMatcher& pm, const char* name) {
  for (const UOp& r : reduces)
    if (pm.rewrite(r)) {
      graph = graph_rewrite(graph, pm, {.mode = RewriteMode::Walk, .name = name});
      reduces = reduces_of(graph);
      return;
    }
  if (debug_level() >= 5) std::fprintf(stderr, "graph_rewrite '%s': skipped, no reduction it rewrites\n", name);
}

}  // namespace

const PatternMatcher& pack_matmul_panels_rules() {
  static const PatternMatcher pm =
      PatternMatcher({{matmul_pattern(), pack_matmul_panels, "pack_matmul_panels"}}) + fold_reshape_of_rewritten_reduce();
  return pm;
}

const PatternMatcher& split_leading_reduce_rules() {
  static const PatternMatcher pm({{UPat(Ops::REDUCE), split_leading_reduce, "split_leading_reduce"}});
  return pm;
}

UOp layout_passes(const UOp& sink, const ScheduleOptions& options) {
  UOp graph = sink;
  std::vector<UOp> reduces = reduces_of(sink);
  if (options.pack_matmul_panels) walk_pass(graph, reduces, pack_matmul_panels_rules(), "pack_matmul_panels");
  // split_leading_reduce's rule comes after split_reduceop's: a reduction both would split is split_reduceop's.
  static const PatternMatcher with_leading = split_reduceop_rules() + split_leading_reduce_rules();
  walk_pass(graph, reduces, options.split_leading_reduce ? with_leading : split_reduceop_rules(), "split_reduceop");
  return graph;
}

}  // namespace doorbell
