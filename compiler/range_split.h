// Range splitting, shared by the kernel optimizers (compiler/optimizer.h, compiler/cpu/cpu_optimizer.h): a RANGE r of
// size n becomes nested ranges r_0 (outermost) .. r_k (innermost) of sizes n_0 .. n_k with n = n_0 * .. * n_k, and
// r's value becomes sum(r_i * stride_i). New ranges get axis numbers above every axis of the kernel, so they never
// hash-cons to an existing range.
#pragma once
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/uop.h"

namespace doorbell {

// What a split range becomes: `value` where it is used as a value, `ranges` where it is listed by a REDUCE or END.
struct Split {
  UOp value;
  std::vector<UOp> ranges;
};
using Splits = std::unordered_map<const UOpNode*, Split>;

// The size of a range whose end is an integer constant.
std::optional<int64_t> const_size(const UOp& range);

// The first axis number no range of `sink` uses.
int64_t next_free_axis(const UOp& sink);

// `r` (of constant size n) split into `parts` (size, axis type), outermost first; a part of size 0 takes the size
// that is left (n divided by the others). Parts of size 1 are left out.
Split split_range(const UOp& r, const std::vector<std::pair<int64_t, AxisType>>& parts, int64_t& next_axis);

// Rebuilds the kernel with every split range replaced: in value position by its expression, in the range list of
// a REDUCE or END by its new ranges.
UOp apply_splits(const UOp& sink, const Splits& splits);

// Whether `r` is a term of the index's sum with coefficient 1: consecutive iterations address consecutive elements.
bool contiguous_in(const UOp& index, const UOp& r);

}  // namespace doorbell
