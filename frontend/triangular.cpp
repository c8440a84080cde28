// Triangles of the last two axes (tinygrad's _tri): a (rows, cols) bool mask from two aranges, then where.
#include "frontend/shape.h"
#include "frontend/tensor.h"

namespace doorbell {

namespace {

Tensor triangle(const Tensor& x, std::string_view name, int64_t diagonal, bool upper) {
  if (x.ndim() < 2) frontend::fail(name, "shape " + frontend::shape_str(x.shape()) + "; expected at least 2 axes");
  int64_t r = x.shape()[x.ndim() - 2], c = x.shape().back();
  // j - i against the diagonal, for row i and column j.
  Tensor offset = Tensor::arange(c).reshape({1, c}) - Tensor::arange(r).reshape({r, 1});
  Tensor keep = upper ? offset.ge(diagonal) : offset.le(diagonal);
  return keep.where(x, Tensor::zeros_like(x));
}

}  // namespace

Tensor Tensor::triu(int64_t diagonal) const { return triangle(*this, "triu", diagonal, true); }
Tensor Tensor::tril(int64_t diagonal) const { return triangle(*this, "tril", diagonal, false); }

}  // namespace doorbell
