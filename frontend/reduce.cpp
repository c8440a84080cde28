// Reductions. REDUCE keeps the reduced axes as size 1 (ReduceArg{op, axes}); keepdim=false reshapes them away.
// sum accumulates in sum_acc_dtype (cast back for float16 and bfloat16), the rest compose as tinygrad does.
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

// x reduced over `axes` (kept as size 1) in two kernels: `parts` (x reshaped) reduced over `first` into a contiguous
// buffer of partial results, then those over `second`.
Tensor reduce_in_two(const Tensor& x, const Tensor& parts, Ops op, const IntTuple& axes, IntTuple first, int64_t second) {
  Tensor partial = Tensor(reduce_uop(parts.uop(), op, std::move(first))).contiguous();
  IntTuple kept = x.shape();
  for (int64_t b : axes) kept[b] = 1;
  return Tensor(reduce_uop(partial.uop(), op, IntTuple{second})).reshape(kept);
}

// Reductions of many elements into few outputs (at least 32768 per output) run as two kernels, so that the first has
// outputs enough for every core: an axis of size n is split into (d, n / d), d from 256 down to 8, the d parts are
// reduced into a contiguous buffer of d partial results per output and those reduced next (tinygrad's
// split_reduceop). The float sum then adds in another order than one loop would.
constexpr int64_t kSplitReduceRatio = 32768, kSplitMaxOutputs = int64_t{1} << 22;

std::optional<Tensor> split_reduce(const Tensor& x, Ops op, const IntTuple& axes) {
  int64_t in = x.numel(), reduced = 1;
  for (int64_t a : axes) reduced *= x.shape()[a];
  int64_t outputs = reduced == 0 ? 0 : in / reduced;
  if (reduced < kSplitReduceRatio || outputs == 0 || outputs > kSplitMaxOutputs / 8) return std::nullopt;
  // d from 256 down, preferring parts of a multiple of 64 elements, then of 16: a CPU kernel then walks each part in
  // whole vectors, unrolled (1e8 = 256 x 390625 would leave odd parts in scalar lanes; 250 x 400000 does not).
  auto pick = [&](int64_t n) -> int64_t {
    for (int64_t multiple : {64, 16, 1})
      for (int64_t d = std::min<int64_t>(256, kSplitMaxOutputs / outputs); d >= 8; d--)
        if (n % d == 0 && (n / d) % multiple == 0) return d;
    return 0;
  };
  for (int64_t a : axes) {
    int64_t n = x.shape()[a];
    if (int64_t d = pick(n); d != 0) {
      IntTuple shape = x.shape();
      shape[a] = n / d;
      shape.insert(shape.begin() + a, d);
      IntTuple order;
      for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); i++)
        if (i != a) order.push_back(i);
      order.push_back(a);  // the d parts last: the partial results of one output lie side by side
      // after the permute, axis a holds the n / d part
      return reduce_in_two(x, x.reshape(shape).permute(order), op, axes, axes, static_cast<int64_t>(shape.size()) - 1);
    }
  }
  return std::nullopt;
}

// On the CPU, a reduction over the leading axis of a big tensor whose rest is at most 4096 contiguous elements (a sum
// over axis 0) runs as parts of rows, each reduced into a row of partial results, then the parts: each core then
// streams whole rows with the row's accumulators in L1 (compiler/cpu/cpu_optimizer.h), where one pass over all rows
// in column tiles jumps a row's stride every tile (4096 x 4096: 2.9 ms against a 1.8 ms floor on this machine).
constexpr int64_t kLeadingSplitMinElements = int64_t{1} << 20, kLeadingSplitMaxRow = 4096;

std::optional<Tensor> split_leading_reduce(const Tensor& x, Ops op, const IntTuple& axes) {
  if (axes != IntTuple{0} || x.ndim() < 2 || x.device() != "CPU" || x.numel() < kLeadingSplitMinElements) return std::nullopt;
  int64_t rows = x.shape()[0], row = x.numel() / rows;
  if (row > kLeadingSplitMaxRow || row % 16 != 0) return std::nullopt;
  for (int64_t p = 32; p >= 2; p--) {
    if (rows % p != 0) continue;
    IntTuple shape = x.shape();
    shape[0] = rows / p;
    shape.insert(shape.begin(), p);
    return reduce_in_two(x, x.reshape(shape), op, axes, IntTuple{1}, 0);
  }
  return std::nullopt;
}

Tensor reduce(const Tensor& x, std::string_view name, Ops op, const Axes& axis, bool keepdim) {
  IntTuple axes = reduce_axes(name, axis, x.shape());
  UOp u = x.uop();
  std::optional<Tensor> split = axes.empty() ? std::nullopt : split_reduce(x, op, axes);
  if (!split && !axes.empty()) split = split_leading_reduce(x, op, axes);
  if (split) u = split->uop();
  else if (!axes.empty()) u = reduce_uop(u, op, axes);
  Tensor r(u);
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

Tensor Tensor::sum(Axes axis, bool keepdim) const {
  Tensor r = reduce(cast(sum_acc_dtype(dtype())), "sum", Ops::ADD, axis, keepdim);
  bool half = dtype() == dtypes::float16 || dtype() == dtypes::bfloat16;
  return half ? r.cast(dtype()) : r;
}

Tensor Tensor::prod(Axes axis, bool keepdim) const { return reduce(*this, "prod", Ops::MUL, axis, keepdim); }
Tensor Tensor::max(Axes axis, bool keepdim) const { return reduce(*this, "max", Ops::MAX, axis, keepdim); }
Tensor Tensor::min(Axes axis, bool keepdim) const { return inverse(inverse(*this).max(axis, keepdim)); }

Tensor Tensor::mean(Axes axis, bool keepdim) const {
  DType out = dtype().is_float() ? dtype() : dtypes::float32;
  int64_t n = reduced_count("mean", *this, axis);
  return cast(sum_acc_dtype(dtype())).sum(axis, keepdim).div(n).cast(out);
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

Tensor Tensor::cumsum(int64_t axis) const {
  if (ndim() == 0) return Tensor(uop());
  int64_t a = frontend::resolve_axis("cumsum", axis, shape());
  int64_t n = shape()[a];
  if (n == 0) return Tensor(uop());
  // Pad n-1 zeros in front of the axis, take windows of n (a pool view), and sum each window (tinygrad _cumalu).
  Tensor x = transpose(a, -1);
  Padding p(static_cast<size_t>(ndim()), {0, 0});
  p.back() = {n - 1, 0};
  return x.pad(p).pool({n}).sum(-1).transpose(a, -1);
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
  // On the CPU, a float32 (M, K) @ (K, N) whose rows of w are a multiple of 4 KiB apart first packs w into panels of
  // 32 columns, (N / 32, K, 32), each contiguous: the matmul kernel walks one panel per column tile
  // (compiler/cpu/cpu_optimizer.h), and with a 4 KiB stride every row of a panel maps to the same L1 and L2 sets, so
  // the panel cannot stay in cache (measured on this machine: 1024^3 in 31 ms unpacked, 1040^3 in 10.5 ms).
  constexpr int64_t kPanel = 32;
  if (dx == 2 && dw == 2 && device() == "CPU" && w.device() == "CPU" && dtype() == dtypes::float32 && w.dtype() == dtypes::float32) {
    int64_t m = shape()[0], k = shape()[1], n = w.shape()[1];
    if (n % kPanel == 0 && (n * 4) % 4096 == 0 && k >= 64 && m >= 16) {
      Tensor panels = w.reshape({k, n / kPanel, kPanel}).permute({1, 0, 2}).contiguous();
      Tensor prod = reshape({m, 1, 1, k}).mul(panels.permute({0, 2, 1}).reshape({1, n / kPanel, kPanel, k}));
      return prod.sum(-1).reshape({m, n}).cast(out);
    }
  }
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
