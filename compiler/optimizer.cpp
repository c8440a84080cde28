#include "compiler/optimizer.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "compiler/range_split.h"
#include "ir/graph_rewrite.h"

namespace doorbell {
namespace {

// -1: follow the environment; 0 or 1: set by set_noopt.
std::atomic<int> g_noopt_override{-1};

// r -> r_o * k + r_i (r_i of type `inner`), or r_i alone when k is r's whole size n.
Split split_range(const UOp& r, int64_t n, int64_t k, AxisType inner, int64_t& next_axis) {
  return doorbell::split_range(r, {{n / k, r.arg_as<RangeArg>().type}, {k, inner}}, next_axis);
}

int64_t upcast_factor(int64_t n) {
  for (int64_t k : {4, 3, 2})
    if (n >= k && n % k == 0) return k;
  return 0;
}

}  // namespace

bool noopt_enabled() {
  int o = g_noopt_override.load(std::memory_order_relaxed);
  if (o >= 0) return o == 1;
  static const bool env = [] {
    const char* v = std::getenv("NOOPT");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return env;
}

void set_noopt(bool noopt) { g_noopt_override.store(noopt ? 1 : 0, std::memory_order_relaxed); }

UOp optimize_kernel(const UOp& sink) { return noopt_enabled() ? sink : apply_optimizations(sink); }

UOp apply_optimizations(const UOp& sink) {
  if (!sink || sink.op() != Ops::SINK) throw std::invalid_argument("optimize_kernel: expected a kernel SINK");
  std::vector<UOp> topo = sink.toposort();
  int64_t next_axis = next_free_axis(sink);

  Splits splits;
  int64_t upcast = 1;
  // UPCAST: one LOOP range per output, the innermost contiguous one if any divides, else the innermost that does.
  for (const UOp& out : sink.src()) {
    if (out.op() != Ops::END || out.src(0).op() != Ops::STORE || out.src(0).src(0).op() != Ops::INDEX) continue;
    const UOp& index = out.src(0).src(0).src(1);
    UOp best;
    bool best_contiguous = false;
    for (size_t i = out.src().size() - 1; i >= 1; i--) {
      const UOp& r = out.src(i);
      if (r.op() != Ops::RANGE || r.arg_as<RangeArg>().type != AxisType::LOOP || splits.count(r.get())) continue;
      std::optional<int64_t> n = const_size(r);
      if (!n || upcast_factor(*n) == 0) continue;
      bool contiguous = contiguous_in(index, r);
      if (!best || (contiguous && !best_contiguous)) best = r, best_contiguous = contiguous;
      if (best_contiguous) break;
    }
    if (!best) continue;
    int64_t n = *const_size(best), k = upcast_factor(n);
    splits.emplace(best.get(), split_range(best, n, k, AxisType::UPCAST, next_axis));
    upcast = std::max(upcast, k);
  }

  // UNROLL: reduce ranges, inner reduces first, while the kernel's replication stays within the cap.
  int64_t replication = upcast;
  for (const UOp& u : topo) {
    if (u.op() != Ops::REDUCE) continue;
    for (size_t i = 1; i < u.src().size(); i++) {
      const UOp& r = u.src(i);
      if (r.op() != Ops::RANGE || r.arg_as<RangeArg>().type != AxisType::REDUCE || splits.count(r.get())) continue;
      std::optional<int64_t> n = const_size(r);
      if (!n || *n < 2) continue;
      for (int64_t k : {*n <= 16 ? *n : int64_t{0}, int64_t{4}, int64_t{2}}) {
        if (k < 2 || *n % k != 0 || replication * k > kMaxReplication) continue;
        splits.emplace(r.get(), split_range(r, *n, k, AxisType::UNROLL, next_axis));
        replication *= k;
        break;
      }
    }
  }
  if (splits.empty()) return sink;
  return apply_splits(sink, splits);
}

}  // namespace doorbell
