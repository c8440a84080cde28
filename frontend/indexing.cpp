// Basic indexing: t[{1, slice(0, 4, 2), newaxis, ellipsis}] with Python's semantics. Integers and slices become
// one SHRINK, negative steps a FLIP, other steps a pad + reshape + shrink that keeps every step-th element
// (tinygrad's _getitem), and a final RESHAPE drops integer-indexed axes and inserts new ones.
#include "frontend/shape.h"
#include "frontend/tensor.h"

namespace doorbell {

using frontend::fail;
using frontend::shape_str;

namespace {

struct AxisPlan {
  int64_t begin = 0, end = 0;  // the region kept, before flipping and striding
  int64_t count = 0;           // elements selected
  int64_t stride = 1;          // |step|
  bool flip = false;
  bool drop = false;           // indexed by an integer
};

// Python's slice.indices(length), then the region it covers.
AxisPlan plan_slice(const Slice& sl, int64_t length, size_t axis) {
  if (sl.step == 0) fail("getitem", "slice step is 0 on axis " + std::to_string(axis) + "; expected a non-zero step");
  int64_t step = sl.step;
  int64_t lower = step > 0 ? 0 : -1, upper = step > 0 ? length : length - 1;
  auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v;
    if (x < 0) return std::max(x + length, lower);
    return std::min(x, upper);
  };
  int64_t start = clamp(sl.start, step > 0 ? lower : upper), stop = clamp(sl.stop, step > 0 ? upper : lower);
  AxisPlan p;
  p.stride = step > 0 ? step : -step;
  if (step > 0) p.count = stop > start ? (stop - start - 1) / step + 1 : 0;
  else p.count = start > stop ? (start - stop - 1) / (-step) + 1 : 0;
  if (p.count == 0) return p;  // an empty region at 0
  int64_t last = start + (p.count - 1) * step;
  p.begin = step > 0 ? start : last;
  p.end = (step > 0 ? last : start) + 1;
  p.flip = step < 0;
  return p;
}

}  // namespace

Tensor Tensor::getitem(const std::vector<Index>& index) const {
  const IntTuple& s = shape();
  size_t consumed = 0, ellipses = 0;
  for (const Index& i : index) {
    if (std::holds_alternative<int64_t>(i.value()) || std::holds_alternative<Slice>(i.value())) consumed++;
    if (std::holds_alternative<Ellipsis>(i.value())) ellipses++;
  }
  if (ellipses > 1) fail("getitem", "more than one ellipsis; expected at most one");
  if (consumed > s.size())
    fail("getitem", std::to_string(consumed) + " indices for shape " + shape_str(s) + " of " + std::to_string(s.size()) + " axes");
  std::vector<Index> full;  // the ellipsis (or the end) stands for full slices of the remaining axes
  bool expanded = false;
  for (const Index& i : index) {
    if (std::holds_alternative<Ellipsis>(i.value())) {
      for (size_t k = 0; k < s.size() - consumed; k++) full.push_back(Slice{});
      expanded = true;
    } else {
      full.push_back(i);
    }
  }
  if (!expanded)
    for (size_t k = 0; k < s.size() - consumed; k++) full.push_back(Slice{});

  std::vector<AxisPlan> plans;
  IntTuple final_shape;
  for (const Index& i : full) {
    size_t axis = plans.size();
    if (const int64_t* n = std::get_if<int64_t>(&i.value())) {
      int64_t len = s[axis], x = *n < 0 ? *n + len : *n;
      if (x < 0 || x >= len)
        fail("getitem", "index " + std::to_string(*n) + " is out of range for axis " + std::to_string(axis) + " of size " +
                            std::to_string(len) + " in shape " + shape_str(s));
      AxisPlan p;
      p.begin = x, p.end = x + 1, p.count = 1, p.drop = true;
      plans.push_back(p);
    } else if (const Slice* sl = std::get_if<Slice>(&i.value())) {
      plans.push_back(plan_slice(*sl, s[axis], axis));
      final_shape.push_back(plans.back().count);
    } else {  // newaxis
      final_shape.push_back(1);
    }
  }

  std::vector<std::pair<int64_t, int64_t>> bounds;
  IntTuple flips;
  bool strided = false;
  for (size_t a = 0; a < plans.size(); a++) {
    bounds.emplace_back(plans[a].begin, plans[a].end);
    if (plans[a].flip) flips.push_back(static_cast<int64_t>(a));
    strided |= plans[a].stride != 1 && plans[a].count > 1;
  }
  Tensor x = shrink(bounds);
  if (!flips.empty()) x = x.flip(flips);
  if (strided) {
    // Region length (count-1)*stride+1: pad it to count*stride, split into (count, stride), keep column 0.
    Padding pad;
    IntTuple split, keep_shape;
    std::vector<std::pair<int64_t, int64_t>> keep;
    for (const AxisPlan& p : plans) {
      bool st = p.stride != 1 && p.count > 1;
      int64_t len = p.end - p.begin;
      pad.emplace_back(0, st ? p.count * p.stride - len : 0);
      if (st) {
        split.insert(split.end(), {p.count, p.stride});
        keep.emplace_back(0, p.count);
        keep.emplace_back(0, 1);
      } else {
        split.push_back(len);
        keep.emplace_back(0, len);
      }
      keep_shape.push_back(p.count);
    }
    x = x.pad(pad).reshape(split).shrink(keep).reshape(keep_shape);
  }
  return x.reshape(final_shape);
}

}  // namespace doorbell
