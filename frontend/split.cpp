// Splitting an axis: into several tensors (split, chunk: shrinks of the axis) or into several axes (unflatten).
#include "frontend/shape.h"
#include "frontend/tensor.h"

namespace doorbell {

using frontend::fail;
using frontend::shape_str;

std::vector<Tensor> Tensor::split(const IntTuple& sizes, int64_t axis) const {
  int64_t a = frontend::resolve_axis("split", axis, shape());
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) fail("split", "sizes " + shape_str(sizes) + " have a negative size; expected sizes >= 0");
    total += s;
  }
  if (total != shape()[a])
    fail("split", "sizes " + shape_str(sizes) + " sum to " + std::to_string(total) + "; expected the " + std::to_string(shape()[a]) +
                      " elements of axis " + std::to_string(a) + " of shape " + shape_str(shape()));
  std::vector<Tensor> out;
  int64_t at = 0;
  for (int64_t s : sizes) {
    out.push_back(narrow(a, at, s));
    at += s;
  }
  return out;
}

std::vector<Tensor> Tensor::split(int64_t size, int64_t axis) const {
  int64_t a = frontend::resolve_axis("split", axis, shape());
  if (size <= 0) fail("split", "size " + std::to_string(size) + "; expected a size >= 1");
  IntTuple sizes;
  for (int64_t left = shape()[a]; left > 0; left -= size) sizes.push_back(std::min(size, left));
  if (sizes.empty()) sizes.push_back(0);  // an empty axis: one empty piece, as torch
  return split(sizes, a);
}

std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t axis) const {
  int64_t a = frontend::resolve_axis("chunk", axis, shape());
  if (chunks <= 0) fail("chunk", std::to_string(chunks) + " chunks; expected at least 1");
  return split(std::max<int64_t>(1, (shape()[a] + chunks - 1) / chunks), a);
}

Tensor Tensor::unflatten(int64_t axis, IntTuple sizes) const {
  int64_t a = frontend::resolve_axis("unflatten", axis, shape());
  IntTuple out(shape().begin(), shape().begin() + a);
  size_t at = out.size();
  out.insert(out.end(), sizes.begin(), sizes.end());
  out.insert(out.end(), shape().begin() + a + 1, shape().end());
  // An inferred -1 among `sizes` is resolved against this axis alone, not the whole tensor.
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < sizes.size(); i++) {
    if (sizes[i] == -1 && infer < 0) infer = static_cast<int64_t>(i);
    else known *= sizes[i];
  }
  if (infer >= 0 && known > 0 && shape()[a] % known == 0) out[at + infer] = shape()[a] / known;
  if (frontend::prod(IntTuple(out.begin() + at, out.begin() + at + sizes.size())) != shape()[a])
    fail("unflatten", "axis " + std::to_string(a) + " of shape " + shape_str(shape()) + " cannot become " + shape_str(sizes));
  return reshape(out);
}

}  // namespace doorbell
