#include "compiler/range_split.h"

#include <algorithm>
#include <stdexcept>

#include "ir/graph_map.h"
#include "ir/graph_rewrite.h"
#include "ir/printer.h"

namespace doorbell {

std::optional<int64_t> const_size(const UOp& range) {
  const UOp& end = range.src(0);
  if (end.op() != Ops::CONST || !std::holds_alternative<int64_t>(end.const_value())) return std::nullopt;
  return std::get<int64_t>(end.const_value());
}

int64_t next_free_axis(const UOp& sink) {
  int64_t next = 0;
  for (const UOp& u : sink.toposort())
    if (u.op() == Ops::RANGE) next = std::max(next, u.arg_as<RangeArg>().axis + 1);
  return next;
}

Split split_range(const UOp& r, const std::vector<std::pair<int64_t, AxisType>>& parts, int64_t& next_axis) {
  std::optional<int64_t> n = const_size(r);
  if (!n) throw std::invalid_argument("split_range: expected a range of constant size: " + print_node(r));
  int64_t known = 1, free_parts = 0;
  for (const auto& [size, type] : parts) size == 0 ? free_parts++ : known *= size;
  if (free_parts > 1 || known <= 0 || *n % known != 0 || (free_parts == 0 && known != *n))
    throw std::invalid_argument("split_range: the parts do not divide the range's size " + std::to_string(*n) + ": " + print_node(r));
  // Axis numbers are handed out innermost first (the order the optimizers always used, so kernels keep their names).
  std::vector<UOp> ranges(parts.size());
  for (size_t i = parts.size(); i-- > 0;) {
    int64_t s = parts[i].first == 0 ? *n / known : parts[i].first;
    if (s != 1) ranges[i] = UOp::range(s, next_axis++, parts[i].second, r.dtype());
  }
  Split out;
  int64_t stride = *n;
  for (size_t i = 0; i < parts.size(); i++) {
    stride /= parts[i].first == 0 ? *n / known : parts[i].first;
    if (!ranges[i]) continue;
    out.ranges.push_back(ranges[i]);
    UOp term = stride == 1 ? ranges[i] : ranges[i] * stride;
    out.value = out.value ? out.value + term : term;
  }
  if (!out.value) out.value = UOp::const_(r.dtype(), int64_t{0});
  return out;
}

UOp apply_splits(const UOp& sink, const Splits& splits) {
  GraphMap map("apply_splits", [&](const UOp& u, std::vector<UOp>& src) {
    if (u.op() != Ops::REDUCE && u.op() != Ops::END) return rebuilt(u, std::move(src));
    // A split range listed by a REDUCE or END becomes its new ranges there (in value position, its expression).
    std::vector<UOp> out{src[0]};
    for (size_t i = 1; i < src.size(); i++) {
      if (auto it = splits.find(u.src(i).get()); it != splits.end()) out.insert(out.end(), it->second.ranges.begin(), it->second.ranges.end());
      else out.push_back(src[i]);
    }
    return rebuilt(u, std::move(out));
  });
  for (const auto& [range, split] : splits) map.set(range, split.value);
  return map(sink);
}

bool contiguous_in(const UOp& index, const UOp& r) {
  std::vector<UOp> stack{index};
  while (!stack.empty()) {
    UOp t = stack.back();
    stack.pop_back();
    if (t == r) return true;
    if (t.op() == Ops::ADD) stack.insert(stack.end(), t.src().begin(), t.src().end());
  }
  return false;
}

}  // namespace doorbell
