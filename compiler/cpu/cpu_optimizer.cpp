#include "compiler/cpu/cpu_optimizer.h"

#include <stdexcept>

#include "compiler/cpu/vectorize.h"
#include "compiler/expander.h"
#include "compiler/optimizer.h"
#include "compiler/range_split.h"
#include "compiler/transcendental.h"
#include "ir/graph_rewrite.h"

namespace doorbell {
namespace {

constexpr int64_t kReduceUnroll = 4;
constexpr int64_t kMaxAccumulators = 12;  // vector accumulators of a register tile (of 32 AVX-512 registers)

bool depends_on(const UOp& u, const UOp& r) {
  for (const UOp& x : u.backward_slice())
    if (x == r) return true;
  return false;
}

struct Access {
  UOp index;  // the INDEX's address expression
  bool loaded;
};

// Every LOAD's and STORE's address in the kernel.
std::vector<Access> accesses(const std::vector<UOp>& topo) {
  std::vector<Access> out;
  for (const UOp& u : topo)
    if ((u.op() == Ops::LOAD || u.op() == Ops::STORE) && u.src(0).op() == Ops::INDEX && u.src(0).src().size() >= 2)
      out.push_back({u.src(0).src(1), u.op() == Ops::LOAD});
  return out;
}

// Whether every access that varies with r walks it with stride 1 (a vector load or store), and none is gated by it.
bool vectorizable_along(const std::vector<Access>& acc, const UOp& r) {
  for (const Access& a : acc)
    if (depends_on(a.index, r) && !contiguous_in(a.index, r)) return false;
  return true;
}

int64_t first_divisor(int64_t n, std::initializer_list<int64_t> options) {
  for (int64_t k : options)
    if (k >= 1 && n % k == 0) return k;
  return 1;
}

}  // namespace

int cpu_vector_lanes() {
  static const int lanes = [] {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return 16;
#endif
    return 8;
  }();
  return lanes;
}

UOp optimize_for_cpu(const UOp& sink) {
  if (!sink || sink.op() != Ops::SINK) throw std::invalid_argument("optimize_for_cpu: expected a kernel SINK");
  std::vector<UOp> topo = sink.toposort();
  // one output, END(STORE(INDEX), ranges...), in the scheduler's form
  if (sink.src().size() != 1) return sink;
  const UOp& out = sink.src(0);
  if (out.op() != Ops::END || out.src(0).op() != Ops::STORE || out.src(0).src(0).op() != Ops::INDEX) return sink;
  const int64_t lanes = cpu_vector_lanes();
  std::vector<Access> acc = accesses(topo);
  std::vector<UOp> reduces;
  for (const UOp& u : topo)
    if (u.op() == Ops::REDUCE) reduces.push_back(u);
  const UOp& store_index = out.src(0).src(0).src(1);

  int64_t next_axis = next_free_axis(sink);
  Splits splits;
  // (a) the output's innermost stride-1 loop
  UOp vec_out;
  for (size_t i = out.src().size() - 1; i >= 1 && !vec_out; i--) {
    const UOp& r = out.src(i);
    std::optional<int64_t> n = const_size(r);
    if (r.op() != Ops::RANGE || r.arg_as<RangeArg>().type != AxisType::LOOP || !n || *n % lanes != 0) continue;
    if (contiguous_in(store_index, r) && vectorizable_along(acc, r)) vec_out = r;
  }
  if (vec_out) {
    int64_t n = *const_size(vec_out);
    if (reduces.empty()) {
      splits.emplace(vec_out.get(), split_range(vec_out, {{0, AxisType::LOOP}, {lanes, AxisType::VECTOR}}, next_axis));
      return apply_splits(sink, splits);
    }
    // A register tile: rows (an output loop some load does not vary with) x vectors of columns.
    UOp rows;
    for (size_t i = 1; i < out.src().size(); i++) {
      const UOp& r = out.src(i);
      if (r == vec_out || r.op() != Ops::RANGE || r.arg_as<RangeArg>().type != AxisType::LOOP || !const_size(r)) continue;
      bool reused = false;
      for (const Access& a : acc) reused |= a.loaded && !depends_on(a.index, r) && depends_on(a.index, vec_out);
      if (reused) rows = r;
    }
    // 8 accumulators: 4 rows x 2 vectors, or up to 8 rows x 1 vector when the vectors do not pair; without rows
    // (a sum over axis 0) 8 vectors of columns share each row's loads
    int64_t col_tile = first_divisor(n / lanes, rows ? std::initializer_list<int64_t>{2, 1} : std::initializer_list<int64_t>{8, 4, 2});
    int64_t row_tile = !rows ? 1 : col_tile == 2 ? first_divisor(*const_size(rows), {4, 6, 3, 2}) : first_divisor(*const_size(rows), {8, 12, 6, 4, 3, 2});
    while (row_tile * col_tile > kMaxAccumulators) col_tile /= 2;
    Split cols = split_range(vec_out, {{0, AxisType::LOOP}, {col_tile, AxisType::UPCAST}, {lanes, AxisType::VECTOR}}, next_axis);
    UOp col_loop = cols.ranges.front();
    splits.emplace(vec_out.get(), std::move(cols));
    if (row_tile > 1) splits.emplace(rows.get(), split_range(rows, {{0, AxisType::LOOP}, {row_tile, AxisType::UPCAST}}, next_axis));
    UOp tiled = apply_splits(sink, splits);
    // Column tiles outermost: one core's panel of B (K x tile columns) stays in its L2 while every row tile reads
    // it; rows outermost would stream all of B from L3 for each row tile.
    const UOp& end = tiled.src(0);
    if (!rows || col_loop.arg_as<RangeArg>().type != AxisType::LOOP) return tiled;
    std::vector<UOp> src{end.src(0), col_loop};
    for (size_t i = 1; i < end.src().size(); i++)
      if (!(end.src(i) == col_loop)) src.push_back(end.src(i));
    return UOp::make(Ops::SINK, tiled.dtype(), {rebuild_with_src(end, std::move(src))}, tiled.arg(), tiled.tag());
  }
  // (b) a reduce's stride-1 range: a vector accumulator folded at the end
  if (reduces.size() >= 1) {
    for (const UOp& red : reduces) {
      for (size_t i = red.src().size() - 1; i >= 1; i--) {
        const UOp& r = red.src(i);
        std::optional<int64_t> n = const_size(r);
        if (r.op() != Ops::RANGE || r.arg_as<RangeArg>().type != AxisType::REDUCE || !n || *n % lanes != 0 || splits.count(r.get())) continue;
        bool stride1 = false;
        for (const Access& a : acc) stride1 |= a.loaded && contiguous_in(a.index, r);
        if (!stride1 || !vectorizable_along(acc, r)) continue;
        int64_t unroll = first_divisor(*n / lanes, {kReduceUnroll, 2});
        splits.emplace(r.get(), split_range(r, {{0, AxisType::REDUCE}, {unroll, AxisType::UNROLL}, {lanes, AxisType::VECTOR}}, next_axis));
        break;
      }
      if (!splits.empty()) break;
    }
    if (!splits.empty()) return apply_splits(sink, splits);
  }
  return sink;
}

UOp lower_for_cpu(const UOp& sink, bool noopt) {
  if (noopt) return decompose_transcendentals(sink);
  UOp opt = optimize_for_cpu(sink);
  if (!(opt == sink)) {
    if (std::optional<UOp> v = vectorize_kernel(decompose_transcendentals(expand_kernel(opt)))) return *v;
  }
  return decompose_transcendentals(expand_kernel(apply_optimizations(sink)));
}

}  // namespace doorbell
