#include "compiler/expander.h"

#include <stdexcept>
#include <unordered_map>

#include "ir/graph_map.h"
#include "ir/graph_rewrite.h"
#include "ir/printer.h"

namespace doorbell {
namespace {

using NodeMap = std::unordered_map<const UOpNode*, UOp>;

bool is_expand_range(const UOp& u) {
  if (u.op() != Ops::RANGE) return false;
  AxisType t = u.arg_as<RangeArg>().type;
  return t == AxisType::UPCAST || t == AxisType::UNROLL;
}

int64_t expand_size(const UOp& r) {
  const UOp& end = r.src(0);
  if (end.op() != Ops::CONST || !std::holds_alternative<int64_t>(end.const_value()))
    throw std::invalid_argument("expand_kernel: expected an UPCAST or UNROLL range of constant size: " + print_node(r));
  return std::get<int64_t>(end.const_value());
}

// One copy of `u` per combination of values of `ranges`, the last range varying fastest.
std::vector<UOp> replicate(const UOp& u, const std::vector<UOp>& ranges) {
  std::vector<int64_t> size, at(ranges.size(), 0);
  for (const UOp& r : ranges) size.push_back(expand_size(r));
  std::vector<UOp> copies;
  for (int64_t s : size)
    if (s <= 0) return copies;
  while (true) {
    NodeMap m;
    for (size_t i = 0; i < ranges.size(); i++) m[ranges[i].get()] = UOp::const_(ranges[i].dtype(), at[i]);
    copies.push_back(substitute(u, m));
    size_t i = ranges.size();
    while (i > 0 && ++at[i - 1] == size[i - 1]) at[--i] = 0;
    if (i == 0) return copies;
  }
}

}  // namespace

UOp expand_kernel(const UOp& sink) {
  if (!sink || sink.op() != Ops::SINK) throw std::invalid_argument("expand_kernel: expected a kernel SINK");
  std::vector<UOp> topo = sink.toposort();
  bool any = false;
  for (const UOp& u : topo) any |= is_expand_range(u);
  if (!any) return sink;

  return map_graph(sink, "expand", [](const UOp& u, std::vector<UOp>& src) -> UOp {
    if (u.op() == Ops::REDUCE || u.op() == Ops::END) {
      std::vector<UOp> expand, rest{src[0]};
      for (size_t i = 1; i < src.size(); i++) (is_expand_range(src[i]) ? expand : rest).push_back(src[i]);
      if (expand.empty()) return rebuilt(u, std::move(src));
      if (u.op() == Ops::REDUCE) {
        std::vector<UOp> copies = replicate(src[0], expand);
        if (copies.empty()) throw std::invalid_argument("expand_kernel: an UNROLL range of size 0 in " + print_node(u));
        // Left to right from the first copy: a fully unrolled reduce gives the bits of the loop it replaces.
        Ops op = u.arg_as<ReduceArg>().op;
        UOp v = copies[0];
        for (size_t i = 1; i < copies.size(); i++) v = UOp::make(op, u.dtype(), {v, copies[i]});
        rest[0] = v;
        return rest.size() == 1 ? v : UOp::make(Ops::REDUCE, u.dtype(), std::move(rest), u.arg(), u.tag());
      }
      // The stores of every copy in one loop nest; an already grouped output is replicated store by store.
      std::vector<UOp> stores;
      for (const UOp& c : replicate(src[0], expand)) {
        if (c.op() == Ops::GROUP) stores.insert(stores.end(), c.src().begin(), c.src().end());
        else stores.push_back(c);
      }
      rest[0] = UOp::make(Ops::GROUP, dtypes::void_, std::move(stores));
      return rest.size() == 1 ? rest[0] : UOp::make(Ops::END, u.dtype(), std::move(rest), u.arg(), u.tag());
    }
    if (u.op() == Ops::SINK) {
      std::vector<UOp> outs;  // an output whose every range was upcast is a GROUP of stores: each is an output
      for (const UOp& s : src) {
        if (s.op() == Ops::GROUP) outs.insert(outs.end(), s.src().begin(), s.src().end());
        else outs.push_back(s);
      }
      return UOp::make(Ops::SINK, u.dtype(), std::move(outs), u.arg(), u.tag());
    }
    return rebuilt(u, std::move(src));
  });
}

}  // namespace doorbell
