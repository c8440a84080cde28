#include "compiler/cpu/cpu_optimizer.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <stdexcept>

#include "compiler/cpu/vectorize.h"
#include "compiler/expander.h"
#include "compiler/optimizer.h"
#include "compiler/range_split.h"
#include "compiler/transcendental.h"
#include "ir/debug.h"
#include "ir/graph_rewrite.h"
#include "ir/symbolic.h"

namespace doorbell {
namespace {

constexpr int64_t kReduceUnroll = 4;
constexpr int64_t kMaxAccumulators = 12;  // vector accumulators of a register tile (of 32 AVX-512 registers)
// A reduce over an outer axis (sum over axis 0) walks rows of a column tile: 64 vectors (4 KiB of a row) per row,
// accumulators mostly in L1, so each row is one long contiguous run instead of a 16 KiB-strided hop every 512 bytes
// (measured on this machine: 2.4 ms against 2.9 ms with 8 vectors for 4096 x 4096).
constexpr int64_t kMaxColumnVectors = 64;
// With another output loop to divide across cores (the scheduler splits a big sum over axis 0 into parts of rows
// where the target asks for it, scheduler/layout.h), a whole row of up to 256 vectors (16 KiB of accumulators, in
// L1) is one tile: each core then streams whole rows (measured by hand on this machine: 1.75 ms against 3.7 ms in
// 1024-column tiles for 4096 x 4096).
constexpr int64_t kMaxRowVectors = 256;

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

// An output loop r addressed as r // c and r % c (a reshape the scheduler merged back into one range, such as a
// matmul over packed panels) becomes two loops, r_o of size n / c and r_i of size c, and the indices are simplified:
// (r_o * c + r_i) // c is r_o, the remainder r_i, so r_i is a stride-1 range the vectorizer can use.
UOp split_on_divisors(const UOp& sink) {
  const UOp& out = sink.src(0);
  int64_t next_axis = next_free_axis(sink);
  Splits splits;
  for (const UOp& u : sink.toposort()) {
    if ((u.op() != Ops::FLOORMOD && u.op() != Ops::FLOORDIV) || u.src(0).op() != Ops::RANGE || u.src(1).op() != Ops::CONST) continue;
    const UOp& r = u.src(0);
    if (splits.count(r.get()) || r.arg_as<RangeArg>().type != AxisType::LOOP ||
        std::find(out.src().begin() + 1, out.src().end(), r) == out.src().end())
      continue;
    std::optional<int64_t> n = const_size(r);
    const ConstValue& cv = u.src(1).const_value();
    if (!n || !std::holds_alternative<int64_t>(cv)) continue;
    int64_t c = std::get<int64_t>(cv);
    if (c <= 1 || c >= *n || *n % c != 0) continue;
    splits.emplace(r.get(), split_range(r, {{0, AxisType::LOOP}, {c, AxisType::LOOP}}, next_axis));
  }
  return splits.empty() ? sink : simplify(apply_splits(sink, splits));
}

}  // namespace

int cpu_vector_lanes() {
  static const int lanes = [] {
    if (const char* v = std::getenv("DOORBELL_CPU_VECTOR_LANES"); v && *v) {
      std::string s(v);
      if (s != "4" && s != "8" && s != "16")
        throw std::invalid_argument("DOORBELL_CPU_VECTOR_LANES=" + s + ": expected 4, 8 or 16 float32 lanes");
      return std::stoi(s);
    }
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
  // Recurses once: split_on_divisors leaves a kernel it has split as it is.
  if (UOp pre = split_on_divisors(sink); !(pre == sink)) return optimize_for_cpu(pre);
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
    // (a sum over axis 0) a wide tile of columns
    int64_t col_tile = 1;
    bool other_loop = false;  // another output loop the cores can share (a split reduce's parts)
    for (size_t i = 1; i < out.src().size(); i++)
      other_loop |= !(out.src(i) == vec_out) && out.src(i).op() == Ops::RANGE && out.src(i).arg_as<RangeArg>().type == AxisType::LOOP;
    if (rows) {
      col_tile = first_divisor(n / lanes, {2, 1});
    } else if (other_loop && n / lanes <= kMaxRowVectors) {
      col_tile = n / lanes;  // whole rows: each row one contiguous run, the accumulators in L1
    } else {
      // at least two tiles, so two cores share them
      for (int64_t k = std::min(kMaxColumnVectors, n / lanes / 2); k >= 2 && col_tile == 1; k /= 2) col_tile = first_divisor(n / lanes, {k});
    }
    int64_t row_tile = !rows ? 1 : col_tile == 2 ? first_divisor(*const_size(rows), {4, 6, 3, 2}) : first_divisor(*const_size(rows), {8, 12, 6, 4, 3, 2});
    while (rows && row_tile * col_tile > kMaxAccumulators) col_tile /= 2;
    splits.emplace(vec_out.get(), split_range(vec_out, {{0, AxisType::LOOP}, {col_tile, AxisType::UPCAST}, {lanes, AxisType::VECTOR}}, next_axis));
    std::vector<UOp> row_ranges{rows};
    if (row_tile > 1) {
      Split r = split_range(rows, {{0, AxisType::LOOP}, {row_tile, AxisType::UPCAST}}, next_axis);
      row_ranges = r.ranges;
      splits.emplace(rows.get(), std::move(r));
    }
    UOp tiled = apply_splits(sink, splits);
    if (!rows) return tiled;
    // Column tiles outermost, rows inside: one core's panel of B (K x tile columns) stays in its L2 while every
    // row tile reads it; rows outermost would stream all of B from L3 for each row tile.
    const UOp& end = tiled.src(0);
    std::vector<UOp> src{end.src(0)}, row_part;
    for (size_t i = 1; i < end.src().size(); i++) {
      bool is_row = std::find(row_ranges.begin(), row_ranges.end(), end.src(i)) != row_ranges.end();
      (is_row ? row_part : src).push_back(end.src(i));
    }
    // rows go after the column loops (before the UPCAST and VECTOR parts, which are no loops)
    size_t at = 1;
    while (at < src.size() && src[at].arg_as<RangeArg>().type == AxisType::LOOP) at++;
    src.insert(src.begin() + static_cast<std::ptrdiff_t>(at), row_part.begin(), row_part.end());
    return UOp::make(Ops::SINK, tiled.dtype(), {rebuild_with_src(end, std::move(src))}, tiled.arg(), tiled.tag());
  }
  // (b) a reduce's stride-1 range: a vector accumulator folded at the end
  if (!reduces.empty()) {
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

}  // namespace doorbell
