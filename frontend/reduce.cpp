// Reductions (scans: frontend/scan.cpp). REDUCE keeps the reduced axes as size 1 (ReduceArg{op, axes}); keepdim=false
// reshapes them away.
// sum accumulates in sum_acc_dtype (cast back for float16 and bfloat16), the rest compose as tinygrad does. The graph
// is what the user wrote: how a device's schedule splits a big reduction or lays out a matmul's operand is the
// scheduler's (scheduler/split_reduce.h, scheduler/layout.h).
#include <algorithm>
#include <optional>

#include "frontend/lazy_uops.h"
#include "frontend/shape.h"
#include "frontend/tensor.h"

namespace doorbell {

using frontend::fail;

namespace {

IntTuple reduce_axes(std::string_view op, const Axes& axis, const IntTuple& shape) {
  IntTuple axes;
  if (axis.axes()) axes = frontend::resolve_axes(op, *axis.axes(), shape);
  else for (size_t i = 0; i < shape.size(); i++) axes.push_back(static_cast<int64_t>(i));
  std::sort(axes.begin(), axes.end());
  return axes;
}

UOp reduce_uop(const UOp& u, Ops op, IntTuple axes) { return UOp::make(Ops::REDUCE, u.dtype(), {u}, ReduceArg{op, std::move(axes)}); }

Tensor reduce(const Tensor& x, std::string_view name, Ops op, const Axes& axis, bool keepdim) {
  IntTuple axes = reduce_axes(name, axis, x.shape());
  Tensor r(axes.empty() ? x.uop() : reduce_uop(x.uop(), op, axes));
  if (keepdim) return r;
  IntTuple out;
  for (size_t i = 0; i < x.shape().size(); i++)
    if (!std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i))) out.push_back(x.shape()[i]);
  return r.reshape(out);
}

// The number of elements each output of a reduction over `axis` combines.
int64_t reduced_count(std::string_view name, const Tensor& x, const Axes& axis) {
  int64_t n = 1;
  for (int64_t a : reduce_axes(name, axis, x.shape())) n *= x.shape()[a];
  return n;
}

// A decreasing bijection, so min(x) = inverse(max(inverse(x))) (tinygrad's _inverse).
Tensor inverse(const Tensor& x) {
  if (x.dtype().is_float()) return x.neg();
  return x.bitwise_not();  // ~x for integers, logical not for bool
}

}  // namespace

Tensor Tensor::sum(Axes axis, bool keepdim, std::optional<DType> dt) const {
  if (dt) return reduce(cast(*dt), "sum", Ops::ADD, axis, keepdim);  // cast rejects a weak or vector dtype
  Tensor r = reduce(cast(sum_acc_dtype(dtype())), "sum", Ops::ADD, axis, keepdim);
  bool half = dtype() == dtypes::float16 || dtype() == dtypes::bfloat16;
  return half ? r.cast(dtype()) : r;
}

Tensor Tensor::prod(Axes axis, bool keepdim, std::optional<DType> dt) const {
  return reduce(dt ? cast(*dt) : *this, "prod", Ops::MUL, axis, keepdim);
}
Tensor Tensor::max(Axes axis, bool keepdim) const { return reduce(*this, "max", Ops::MAX, axis, keepdim); }
Tensor Tensor::min(Axes axis, bool keepdim) const { return inverse(inverse(*this).max(axis, keepdim)); }

Tensor Tensor::mean(Axes axis, bool keepdim) const {
  DType out = dtype().is_float() ? dtype() : dtypes::float32;
  int64_t n = reduced_count("mean", *this, axis);
  return cast(sum_acc_dtype(dtype())).sum(axis, keepdim).div(n).cast(out);
}

Tensor Tensor::mean(Axes axis, bool keepdim, DType dt) const {
  if (!dt.is_float()) fail("mean", "dtype " + dt.name() + "; expected a float dtype");
  int64_t n = reduced_count("mean", *this, axis);
  return sum(axis, keepdim, dt).div(n);
}

Tensor Tensor::var(Axes axis, bool keepdim, double correction) const {
  int64_t n = reduced_count("var", *this, axis);
  Tensor centered = sub(mean(axis, true));
  return centered.square().sum(axis, keepdim).div(std::max(0.0, static_cast<double>(n) - correction));
}

Tensor Tensor::std(Axes axis, bool keepdim, double correction) const { return var(axis, keepdim, correction).sqrt(); }

Tensor Tensor::any(Axes axis, bool keepdim) const { return cast(dtypes::bool_).max(axis, keepdim); }
Tensor Tensor::all(Axes axis, bool keepdim) const { return logical_not().any(axis, keepdim).logical_not(); }

Tensor Tensor::argmax(std::optional<int64_t> axis, bool keepdim) const {
  if (!axis) return flatten().argmax(0);
  int64_t a = frontend::resolve_axis("argmax", *axis, shape());
  int64_t n = shape()[a];
  // Positions where the max sits, weighted n, n-1, ..., 1: the largest weight is the first max (tinygrad).
  Tensor is_max = eq(max(a, true));
  IntTuple wshape(static_cast<size_t>(ndim() - a), 1);
  wshape[0] = n;
  Tensor weights = arange(n, 0, -1).reshape(wshape);
  Tensor idx = is_max.mul(weights).max(a, keepdim);
  return (n - idx).cast(dtypes::int32);
}

Tensor Tensor::argmin(std::optional<int64_t> axis, bool keepdim) const { return inverse(*this).argmax(axis, keepdim); }

Tensor Tensor::softmax(int64_t axis) const {
  Tensor m = sub(max(axis, true));
  Tensor e = m.exp();
  return e.div(e.sum(axis, true));
}

Tensor Tensor::log_softmax(int64_t axis) const {
  Tensor m = sub(max(axis, true));
  return m.sub(m.exp().sum(axis, true).log());
}

Tensor Tensor::logsumexp(int64_t axis, bool keepdim) const {
  Tensor m = max(axis, true);
  Tensor r = sub(m).exp().sum(axis, true).log().add(m);
  return keepdim ? r : r.squeeze(axis);
}

Tensor Tensor::dot(const Tensor& w) const {
  int64_t dx = ndim(), dw = w.ndim();
  if (dx == 0 || dw == 0)
    fail("dot", "shapes " + frontend::shape_str(shape()) + " and " + frontend::shape_str(w.shape()) + "; expected both at least 1-D");
  int64_t axis_w = dw >= 2 ? dw - 2 : dw - 1;  // contracted axis of w: second to last, or the only one
  if (shape().back() != w.shape()[axis_w])
    fail("dot", "shapes " + frontend::shape_str(shape()) + " and " + frontend::shape_str(w.shape()) + " cannot multiply: " +
                    std::to_string(shape().back()) + " != " + std::to_string(w.shape()[axis_w]) +
                    "; expected the last axis of the first to equal the " + (dw >= 2 ? "second to last" : "only") + " axis of the second");
  IntTuple bx(shape().begin(), shape().end() - std::min<int64_t>(dx, 2)), bw(w.shape().begin(), w.shape().end() - std::min<int64_t>(dw, 2));
  bool batch_ok = true;
  for (size_t i = 1; i <= std::min(bx.size(), bw.size()); i++) {
    int64_t a = bx[bx.size() - i], b = bw[bw.size() - i];
    batch_ok &= a == b || a == 1 || b == 1;
  }
  if (!batch_ok)
    fail("dot", "shapes " + frontend::shape_str(shape()) + " and " + frontend::shape_str(w.shape()) + " have batch axes " +
                    frontend::shape_str(bx) + " and " + frontend::shape_str(bw) + " that cannot broadcast");
  DType out = least_upper_dtype(dtype(), w.dtype());
  // x: (..., [1], K); w: (..., [1], K, N) -> (..., [1], N, K); broadcasted multiply, then sum over K (tinygrad).
  int64_t extra = std::min<int64_t>({dx - 1, dw - 1, 1});
  IntTuple xs(shape().begin(), shape().end() - 1);
  for (int64_t i = 0; i < extra; i++) xs.push_back(1);
  xs.push_back(shape().back());
  IntTuple ws(w.shape().begin(), w.shape().begin() + axis_w);
  for (int64_t i = 0; i < extra; i++) ws.push_back(1);
  ws.insert(ws.end(), w.shape().begin() + axis_w, w.shape().end());
  Tensor xr = reshape(xs), wr = w.reshape(ws).transpose(-1, -static_cast<int64_t>(std::min<int64_t>(dw, 2)));
  return xr.mul(wr).sum(-1).cast(out);
}

}  // namespace doorbell
