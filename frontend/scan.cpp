// Scans along one axis: cumsum, cumprod, cummax, cummin. One stage (tinygrad _cumalu) pads n-1 identity elements
// in front of the axis and reduces a window of n at each position: n^2 combines. Axes longer than 2 * kScanSplit
// go in two stages (tinygrad _split_cumalu): the axis becomes (n / kScanSplit, kScanSplit) chunks scanned on their
// own, then each chunk adds the scan of the chunks before it (the chunk totals, shifted by one), so n * kScanSplit
// combines plus the scan of n / kScanSplit totals (split again when that is long).
#include <limits>

#include "frontend/shape.h"
#include "frontend/tensor.h"

namespace doorbell {

namespace {

// tinygrad tinygrad/mixin/op.py _split_cumalu: SPLIT = 256.
constexpr int64_t kScanSplit = 256;

// The element that leaves the combine unchanged, in dtype dt (0 for sum, 1 for prod, the lowest value for max).
Scalar identity(Ops op, DType dt) {
  auto value = [&](int64_t v) { return dt.is_float() ? ConstValue(static_cast<double>(v)) : dt.is_bool() ? ConstValue(v != 0) : ConstValue(v); };
  if (op == Ops::ADD) return Scalar::typed(value(0), dt);
  if (op == Ops::MUL) return Scalar::typed(value(1), dt);
  if (dt.is_float()) return Scalar::typed(-std::numeric_limits<double>::infinity(), dt);
  if (dt.is_bool()) return Scalar::typed(false, dt);
  return Scalar::typed(static_cast<int64_t>(int_min(dt)), dt);
}

// Constant padding of the last axis by (before, after), with the op's identity.
Tensor pad_last(const Tensor& x, int64_t before, int64_t after, Ops op) {
  Padding p(static_cast<size_t>(x.ndim()), {0, 0});
  p.back() = {before, after};
  return x.pad(p, identity(op, x.dtype()));
}

Tensor reduce_last(const Tensor& x, Ops op) {
  if (op == Ops::ADD) return x.sum(-1);
  if (op == Ops::MUL) return x.prod(-1);
  return x.max(-1);
}

Tensor combine(const Tensor& a, const Tensor& b, Ops op) {
  if (op == Ops::ADD) return a + b;
  if (op == Ops::MUL) return a * b;
  return a.maximum(b);
}

// One stage over the last axis: windows of n over n-1 identity elements and the axis (tinygrad _cumalu).
Tensor scan_windows(const Tensor& x, Ops op) {
  int64_t n = x.shape().back();
  return reduce_last(pad_last(x, n - 1, 0, op).pool({n}), op);
}

// The scan of the last axis (non-empty), in two stages when it is long.
Tensor scan_last(const Tensor& x, Ops op) {
  int64_t n = x.shape().back();
  if (n <= 2 * kScanSplit) return scan_windows(x, op);
  int64_t padded = (n + kScanSplit - 1) / kScanSplit * kScanSplit;
  IntTuple chunked(x.shape().begin(), x.shape().end() - 1);
  chunked.insert(chunked.end(), {padded / kScanSplit, kScanSplit});
  // Identity elements in front, so the last chunk is whole and the real elements end the axis.
  Tensor chunks = scan_windows(pad_last(x, padded - n, 0, op).reshape(chunked), op);
  int64_t nd = chunks.ndim();
  std::vector<std::pair<int64_t, int64_t>> last(static_cast<size_t>(nd), {0, 0});
  for (int64_t i = 0; i < nd; i++) last[i] = {0, chunks.shape()[i]};
  last.back() = {kScanSplit - 1, kScanSplit};
  Tensor totals = chunks.shrink(last).squeeze(-1);
  // The combined totals of the chunks before each one: the scan shifted right by one, the identity first.
  Tensor before = pad_last(scan_last(totals, op), 1, -1, op);
  Tensor out = combine(chunks, before.unsqueeze(-1), op).flatten(-2);
  std::vector<std::pair<int64_t, int64_t>> keep(static_cast<size_t>(out.ndim()), {0, 0});
  for (int64_t i = 0; i < out.ndim(); i++) keep[i] = {0, out.shape()[i]};
  keep.back() = {padded - n, padded};
  return out.shrink(keep);
}

Tensor scan(const Tensor& x, std::string_view name, int64_t axis, Ops op) {
  DType out = op == Ops::ADD ? x.sum().dtype() : x.dtype();
  if (x.ndim() == 0) return x.cast(out);
  int64_t a = frontend::resolve_axis(name, axis, x.shape());
  if (x.shape()[a] == 0) return x.cast(out);
  return scan_last(x.transpose(a, -1), op).transpose(a, -1);
}

// A decreasing bijection, so cummin(x) = inverse(cummax(inverse(x))) (tinygrad's _inverse).
Tensor inverse(const Tensor& x) { return x.dtype().is_float() ? x.neg() : x.bitwise_not(); }

}  // namespace

Tensor Tensor::cumsum(int64_t axis) const { return scan(*this, "cumsum", axis, Ops::ADD); }
Tensor Tensor::cumprod(int64_t axis) const { return scan(*this, "cumprod", axis, Ops::MUL); }

std::pair<Tensor, Tensor> Tensor::cummax(int64_t axis) const {
  Tensor values = scan(*this, "cummax", axis, Ops::MAX);
  if (ndim() == 0 || numel() == 0) return {values, zeros(shape(), dtypes::int32)};
  int64_t a = frontend::resolve_axis("cummax", axis, shape());
  int64_t n = shape()[a];
  // The first element equal to the running max is where the running max last rose (values only rise), so the index
  // is the running max of "position where it rose, else 0": a scan too, not tinygrad's n x n comparison.
  Tensor v = values.transpose(a, -1);
  Padding shift(static_cast<size_t>(ndim()), {0, 0});
  shift.back() = {1, -1};
  Tensor previous = v.pad(shift, PadMode::replicate);  // v[i-1], and v[0] itself at 0
  IntTuple pos_shape(static_cast<size_t>(ndim()), 1);
  pos_shape.back() = n;
  Tensor positions = arange(n).reshape(pos_shape);
  Tensor rose = v.ne(previous);  // false at 0, where the index is 0 anyway
  Tensor idx = scan_last(rose.where(positions, 0).expand(v.shape()), Ops::MAX);
  return {values, idx.transpose(a, -1)};
}

std::pair<Tensor, Tensor> Tensor::cummin(int64_t axis) const {
  auto [values, idx] = inverse(*this).cummax(axis);
  return {inverse(values), idx};
}

}  // namespace doorbell
