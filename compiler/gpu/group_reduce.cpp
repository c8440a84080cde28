#include "compiler/gpu/group_reduce.h"

#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "ir/graph_rewrite.h"
#include "ir/printer.h"
#include "ir/reduce_identity.h"

namespace doorbell {
namespace {

using NodeSet = std::unordered_set<const UOpNode*>;

int64_t const_size(const UOp& range) {
  const UOp& end = range.src(0);
  if (end.op() != Ops::CONST || !std::holds_alternative<int64_t>(end.const_value()))
    throw std::invalid_argument("group_reduces: a reduce range of symbolic size cannot be grouped: " + print_node(range));
  return std::get<int64_t>(end.const_value());
}

UOp index_const(int64_t v) { return UOp::const_(dtypes::weakint, v); }

// For every node, the ranges its value varies with: its own if it is a RANGE, its sources', less those a REDUCE
// closes.
class FreeRanges {
 public:
  // Sources first on an explicit stack that stops at nodes already known: a deep kernel does not recurse.
  const NodeSet& of(const UOp& u) {
    std::vector<std::pair<const UOp*, size_t>> stack{{&u, 0}};
    while (!stack.empty()) {
      auto& [n, i] = stack.back();
      if (memo_.count(n->get())) {
        stack.pop_back();
      } else if (i < n->src().size()) {
        const UOp* s = &n->src()[i++];
        if (!memo_.count(s->get())) stack.push_back({s, 0});
      } else {
        const UOp node = *n;
        stack.pop_back();
        compute(node);
      }
    }
    return memo_.at(u.get());
  }

 private:
  void compute(const UOp& u) {
    NodeSet s;
    for (const UOp& x : u.src()) {
      const NodeSet& xs = memo_.at(x.get());
      s.insert(xs.begin(), xs.end());
    }
    if (u.op() == Ops::RANGE) s.insert(u.get());
    if (u.op() == Ops::REDUCE)
      for (size_t i = 1; i < u.src().size(); i++) s.erase(u.src(i).get());
    memo_.emplace(u.get(), std::move(s));
  }

  std::unordered_map<const UOpNode*, NodeSet> memo_;
};

}  // namespace

std::vector<UOp> top_level_reduces(const UOp& sink) {
  FreeRanges free;
  std::vector<UOp> out;
  for (const UOp& u : sink.toposort()) {
    if (u.op() != Ops::REDUCE || u.src().size() < 2) continue;
    bool nested = false;
    for (const UOpNode* r : free.of(u)) nested |= std::get<RangeArg>(r->arg).type != AxisType::LOOP;
    if (!nested) out.push_back(u);
  }
  return out;
}

UOp group_lane_range(const UOp& sink) {
  for (const UOp& u : sink.toposort())
    if (u.op() == Ops::RANGE && u.arg_as<RangeArg>().type == AxisType::GROUP_REDUCE) return u;
  return UOp();
}

UOp group_reduces(const UOp& sink, int64_t lanes) {
  if (lanes < 2) throw std::invalid_argument("group_reduces: " + std::to_string(lanes) + " lanes, expected 2 or more");
  if (!sink || sink.op() != Ops::SINK) throw std::invalid_argument("group_reduces: expected a kernel SINK");
  if (group_lane_range(sink)) throw std::invalid_argument("group_reduces: the kernel is grouped already");
  std::vector<UOp> reduces = top_level_reduces(sink);
  if (reduces.empty()) return sink;

  int64_t next_axis = 0;
  for (const UOp& u : sink.toposort())
    if (u.op() == Ops::RANGE) next_axis = std::max(next_axis, u.arg_as<RangeArg>().axis + 1);
  const UOp lane = UOp::range(lanes, next_axis++, AxisType::GROUP_REDUCE);

  std::unordered_map<const UOpNode*, UOp> grouped;  // each grouped REDUCE -> its result
  int64_t slot = 0;
  for (const UOp& u : reduces) {
    std::vector<int64_t> sizes;
    int64_t total = 1;
    for (size_t i = 1; i < u.src().size(); i++) sizes.push_back(const_size(u.src(i))), total *= sizes.back();
    if (total == 0) continue;  // an empty reduce is its identity; nothing to share
    // Inputs that close one of this reduce's ranges themselves cannot have that range replaced under them.
    NodeSet own;
    for (size_t i = 1; i < u.src().size(); i++) own.insert(u.src(i).get());
    bool reuses_range = false;
    for (const UOp& x : u.src(0).toposort())
      if (x.op() == Ops::REDUCE && !grouped.count(x.get()))
        for (size_t i = 1; i < x.src().size(); i++) reuses_range |= own.count(x.src(i).get()) > 0;
    if (reuses_range) continue;

    const ReduceArg& arg = u.arg_as<ReduceArg>();
    UOp r = UOp::range((total + lanes - 1) / lanes, next_axis++, AxisType::REDUCE);
    UOp f = r * index_const(lanes) + lane;
    UOp valid = total % lanes ? f.lt(index_const(total)) : UOp();
    UOp fc = valid ? valid.where(f, index_const(total - 1)) : f;
    // The original ranges from the flat index, the last one varying fastest.
    std::unordered_map<const UOpNode*, UOp> ranges;
    int64_t inner = 1;
    for (size_t i = sizes.size(); i-- > 0;) {
      UOp v = inner > 1 ? fc.floordiv(index_const(inner)) : fc;
      if (i > 0) v = v.floormod(index_const(sizes[i]));
      inner *= sizes[i];
      ranges[u.src(i + 1).get()] = v;
    }
    UOp x = substitute(substitute(u.src(0), grouped), ranges);
    // a lane past the end combines the identity (-0.0 for float sums, which leaves any sum as it is)
    if (valid) x = valid.where(x, UOp::const_(u.dtype(), accumulator_start(arg.op, u.dtype())));
    UOp partial = UOp::make(Ops::REDUCE, u.dtype(), {x, r}, arg);

    UOp local = UOp::make(Ops::PARAM, u.dtype(), {}, ParamArg{slot, AddrSpace::LOCAL, "db_local" + std::to_string(slot), 0, lanes - 1});
    slot++;
    UOp store = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, u.dtype(), {local, lane}), partial});
    UOp barrier = UOp::make(Ops::BARRIER, dtypes::void_, {store});
    UOp shared = UOp::make(Ops::AFTER, u.dtype(), {local, barrier});
    UOp r2 = UOp::range(lanes, next_axis++, AxisType::REDUCE);
    UOp load = UOp::make(Ops::LOAD, u.dtype(), {UOp::make(Ops::INDEX, u.dtype(), {shared, r2})});
    grouped[u.get()] = UOp::make(Ops::REDUCE, u.dtype(), {load, r2}, arg);
  }
  if (grouped.empty()) return sink;
  return substitute(sink, grouped);
}

}  // namespace doorbell
