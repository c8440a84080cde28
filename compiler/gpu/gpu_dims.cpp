#include "compiler/gpu/gpu_dims.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "compiler/gpu/group_reduce.h"
#include "ir/graph_rewrite.h"
#include "ir/printer.h"

namespace doorbell {
namespace {

[[noreturn]] void fail(const std::string& what, const UOp& u) {
  throw std::invalid_argument("lower_for_gpu: " + what + ": " + print_node(u));
}

UOp index_const(int64_t v) { return UOp::const_(dtypes::weakint, v); }

UOp special(const std::string& name, int64_t bound) {
  return UOp::make(Ops::SPECIAL, dtypes::weakint, {index_const(bound)}, name);
}

int64_t const_size(const UOp& range) {
  const UOp& end = range.src(0);
  if (end.op() != Ops::CONST) fail("a loop of symbolic size cannot be launched on a GPU yet", range);
  return std::get<int64_t>(end.const_value());
}

// The LOOP ranges of an output, outermost first, and the output without them.
struct Output {
  UOp body;  // STORE or GROUP of STOREs
  std::vector<UOp> loops;
  std::vector<UOp> other_ranges;  // non-LOOP ranges the END also closes (none in the scheduler's form)
};

Output split_output(const UOp& out) {
  if (out.op() == Ops::STORE || out.op() == Ops::GROUP) return Output{out, {}, {}};
  if (out.op() != Ops::END || out.src().empty()) fail("expected END(STORE, ranges...) or STORE as an output", out);
  Output o{out.src(0), {}, {}};
  for (size_t i = 1; i < out.src().size(); i++) {
    const UOp& r = out.src(i);
    if (r.op() == Ops::RANGE && r.arg_as<RangeArg>().type == AxisType::LOOP) o.loops.push_back(r);
    else o.other_ranges.push_back(r);
  }
  if (!o.other_ranges.empty()) fail("an output closes a non-LOOP range", out);
  return o;
}

}  // namespace

GpuKernel lower_for_gpu(const UOp& sink, const GpuTarget& target, const GpuDimsOptions& options) {
  if (!sink || sink.op() != Ops::SINK) throw std::invalid_argument("lower_for_gpu: expected a kernel SINK");
  std::vector<Output> outs;
  for (const UOp& s : sink.src()) outs.push_back(split_output(s));
  if (outs.empty()) throw std::invalid_argument("lower_for_gpu: a kernel SINK without outputs");
  const std::vector<UOp>& loops = outs[0].loops;
  for (const Output& o : outs)
    if (o.loops != loops) fail("outputs over different loops cannot share one launch", sink);

  // Hardware dimension of each loop: the innermost to x; beyond three, the outer loops share z.
  const size_t n = loops.size();
  std::vector<int64_t> sizes;
  for (const UOp& r : loops) sizes.push_back(const_size(r));
  size_t dims = std::min<size_t>(n, 3);
  std::array<int64_t, 3> dim_size{1, 1, 1};
  std::vector<size_t> dim_of(n);
  for (size_t i = 0; i < n; i++) {
    size_t from_inner = n - 1 - i;
    dim_of[i] = std::min<size_t>(from_inner, 2);
    dim_size[dim_of[i]] *= sizes[i];
  }

  // A grouped kernel (compiler/gpu/group_reduce.h): its lanes are the block's x threads, and its outputs get one
  // block each.
  const UOp lane = group_lane_range(sink);
  const int64_t lanes = lane ? const_size(lane) : 1;
  if (lanes > std::min(target.max_threads_per_block, target.max_local[0]))
    throw std::invalid_argument("lower_for_gpu: " + std::to_string(lanes) + " lanes of a grouped reduce exceed " + target.arch +
                                "'s " + std::to_string(std::min(target.max_threads_per_block, target.max_local[0])) + " threads per block");

  GpuKernel k;
  int64_t budget = lane ? 1 : std::min(options.max_threads, target.max_threads_per_block);
  for (size_t d = 0; d < dims; d++) {
    int64_t l = std::max<int64_t>(1, std::min({dim_size[d], budget, target.max_local[d]}));
    k.local_size[d] = l;
    k.global_size[d] = (dim_size[d] + l - 1) / l;
    budget = std::max<int64_t>(1, budget / l);
    if (k.global_size[d] > target.max_global[d])
      throw std::invalid_argument("lower_for_gpu: dimension " + std::to_string(d) + " needs " + std::to_string(k.global_size[d]) +
                                  " blocks of " + std::to_string(l) + " threads; " + target.arch + " allows " +
                                  std::to_string(target.max_global[d]));
  }

  // The flat index of each hardware dimension, clamped into range, and the store gate.
  std::array<UOp, 3> flat;
  UOp gate;
  for (size_t d = 0; d < dims; d++) {
    const std::string axis = std::to_string(d);
    UOp g = k.global_size[d] > 1 ? special("gidx" + axis, k.global_size[d]) : UOp();
    UOp l = k.local_size[d] > 1 ? special("lidx" + axis, k.local_size[d]) : UOp();
    UOp idx = g && l ? g * index_const(k.local_size[d]) + l : g ? g : l ? l : index_const(0);
    if (k.global_size[d] * k.local_size[d] != dim_size[d]) {  // threads past the end: clamp loads, gate stores
      UOp in_range = idx.lt(index_const(dim_size[d]));
      gate = gate ? (gate & in_range) : in_range;
      idx = UOp::make(Ops::WHERE, dtypes::weakint, {in_range, idx, index_const(dim_size[d] - 1)});
    }
    flat[d] = idx;
  }
  // Each loop's value from its dimension's flat index: loops merged into z are split back by div and mod.
  std::unordered_map<const UOpNode*, UOp> value_of;
  std::array<int64_t, 3> inner{1, 1, 1};  // product of the sizes of the loops inside, per dimension
  for (size_t i = n; i-- > 0;) {
    size_t d = dim_of[i];
    UOp v = flat[d];
    if (inner[d] > 1) v = v.floordiv(index_const(inner[d]));
    if (inner[d] * sizes[i] != dim_size[d]) v = v.floormod(index_const(sizes[i]));
    inner[d] *= sizes[i];
    value_of[loops[i].get()] = v;
  }

  if (lane) {
    k.local_size[0] = lanes;
    UOp lidx = special("lidx0", lanes);
    value_of[lane.get()] = lidx;
    UOp first = lidx.eq(index_const(0));  // one lane stores the block's result
    gate = gate ? (gate & first) : first;
  }

  // Loops replaced by their values; outputs lose their loops, and their stores get the gate.
  auto gated = [&](const UOp& store) {
    if (!gate) return store;
    UOp index = store.src(0);
    std::vector<UOp> isrc = index.src();
    if (isrc.size() == 3) isrc[2] = isrc[2] & gate;
    else isrc.push_back(gate);
    return store.replace_src({index.replace_src(std::move(isrc)), store.src(1)});
  };
  std::vector<UOp> new_outs;
  for (const Output& o : outs) {
    UOp body = substitute(o.body, value_of);
    if (body.op() == Ops::STORE) {
      new_outs.push_back(gated(body));
      continue;
    }
    std::vector<UOp> stores;
    for (const UOp& st : body.src()) stores.push_back(st.op() == Ops::STORE ? gated(st) : st);
    new_outs.push_back(body.replace_src(std::move(stores)));
  }
  k.sink = UOp::sink(new_outs);
  return k;
}

}  // namespace doorbell
