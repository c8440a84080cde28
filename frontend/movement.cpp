// Movement: reshape, permute, expand, pad, shrink, flip and the views composed from them (squeeze, flatten,
// repeat, cat, stack, pool). Each builds RESHAPE/PERMUTE/EXPAND/PAD/SHRINK/FLIP UOps and skips no-ops.
#include <cstdint>
#include <numeric>

#include "frontend/lazy_uops.h"
#include "frontend/promotion.h"
#include "frontend/shape.h"
#include "frontend/tensor.h"

namespace doorbell {

using frontend::fail;
using frontend::shape_str;

Tensor Tensor::reshape(IntTuple shape) const {
  const IntTuple& in = this->shape();
  int64_t n = numel();
  int64_t infer_at = -1, known = 1;
  for (size_t i = 0; i < shape.size(); i++) {
    if (shape[i] == -1) {
      if (infer_at >= 0) fail("reshape", "shape " + shape_str(shape) + " has more than one -1; expected at most one axis to infer");
      infer_at = static_cast<int64_t>(i);
    } else if (shape[i] < 0) {
      fail("reshape", "shape " + shape_str(shape) + " has a negative size; expected sizes >= 0 and at most one -1");
    } else {
      known = frontend::checked_mul("reshape", known, shape[i], "shape " + shape_str(shape) + " element count");
    }
  }
  if (infer_at >= 0) {
    if (known == 0 || n % known != 0)
      fail("reshape", std::to_string(n) + " elements cannot become shape " + shape_str(shape));
    shape[infer_at] = n / known;
  }
  if (frontend::prod(shape) != n) fail("reshape", std::to_string(n) + " elements cannot become shape " + shape_str(shape));
  if (shape == in) return Tensor(uop());
  return Tensor(frontend::reshape_uop(uop(), shape));
}

Tensor Tensor::permute(IntTuple order) const {
  const IntTuple& s = shape();
  if (order.size() != s.size())
    fail("permute", shape_str(order) + " is not a permutation of the " + std::to_string(s.size()) + " axes of shape " + shape_str(s));
  std::vector<bool> seen(s.size(), false);
  for (int64_t& a : order) {
    a = frontend::resolve_axis("permute", a, s);
    if (seen[a]) fail("permute", shape_str(order) + " is not a permutation of the " + std::to_string(s.size()) + " axes of shape " + shape_str(s));
    seen[a] = true;
  }
  return Tensor(frontend::permute_uop(uop(), order));
}

Tensor Tensor::transpose(int64_t a, int64_t b) const {
  int64_t x = frontend::resolve_axis("transpose", a, shape()), y = frontend::resolve_axis("transpose", b, shape());
  IntTuple order(shape().size());
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[x], order[y]);
  return permute(order);
}

Tensor Tensor::expand(IntTuple shape) const {
  const IntTuple& in = this->shape();
  if (shape.size() < in.size())
    fail("expand", "shape " + shape_str(in) + " cannot expand to " + shape_str(shape) + "; expected at least " +
                       std::to_string(in.size()) + " axes");
  size_t lead = shape.size() - in.size();
  for (size_t i = 0; i < shape.size(); i++) {
    int64_t have = i < lead ? 1 : in[i - lead];
    if (shape[i] == -1) {
      if (i < lead) fail("expand", "-1 at new axis " + std::to_string(i) + " of " + shape_str(shape) + "; expected -1 only for existing axes");
      shape[i] = have;
    }
    if (shape[i] < 0) fail("expand", "shape " + shape_str(shape) + " has a negative size");
    if (have != shape[i] && have != 1)
      fail("expand", "shape " + shape_str(in) + " cannot expand to " + shape_str(shape) + ": axis " + std::to_string(i) + " is " +
                         std::to_string(have) + ", expected 1 or " + std::to_string(shape[i]));
  }
  frontend::check_size("expand", shape, dtype());
  return Tensor(frontend::broadcast_uop(uop(), shape));
}

Tensor Tensor::pad(const Padding& padding, Scalar value) const {
  const IntTuple& s = shape();
  if (padding.size() != s.size())
    fail("pad", std::to_string(padding.size()) + " (before, after) pairs for shape " + shape_str(s) + "; expected one per axis");
  // Negative amounts remove elements: shrink those first, then pad the rest.
  IntTuple bounds, amounts, padded_shape;
  for (size_t i = 0; i < s.size(); i++) {
    auto [b, a] = padding[i];
    if (b == INT64_MIN || a == INT64_MIN) fail("pad", "amount " + std::to_string(INT64_MIN) + " on axis " + std::to_string(i) + " removes more than any axis holds");
    int64_t begin = b < 0 ? -b : 0, end = s[i] - (a < 0 ? -a : 0);
    if (begin > end) fail("pad", "negative padding (" + std::to_string(b) + ", " + std::to_string(a) + ") removes more than the " + std::to_string(s[i]) + " elements of axis " + std::to_string(i));
    bounds.insert(bounds.end(), {begin, end});
    amounts.insert(amounts.end(), {std::max<int64_t>(b, 0), std::max<int64_t>(a, 0)});
    std::string what = "axis " + std::to_string(i) + " of shape " + shape_str(s) + " padded by (" + std::to_string(b) + ", " + std::to_string(a) + ")";
    padded_shape.push_back(frontend::checked_add("pad", frontend::checked_add("pad", end - begin, std::max<int64_t>(b, 0), what), std::max<int64_t>(a, 0), what));
  }
  frontend::check_size("pad", padded_shape, dtype());
  UOp x = frontend::pad_uop(frontend::shrink_uop(uop(), bounds), amounts);
  Tensor padded(x);
  bool zero = std::visit([](auto v) { return v == decltype(v){0}; }, value.value());
  if (zero || x == frontend::shrink_uop(uop(), bounds)) return padded;
  // PAD fills 0; another value goes where a padded all-true mask is false (tinygrad).
  Tensor mask(frontend::pad_uop(frontend::const_uop(dtypes::bool_, true, *frontend::shrink_uop(uop(), bounds).shape()), amounts));
  return mask.where(padded, value);
}

Tensor Tensor::shrink(const std::vector<std::pair<int64_t, int64_t>>& bounds) const {
  const IntTuple& s = shape();
  if (bounds.size() != s.size())
    fail("shrink", std::to_string(bounds.size()) + " (begin, end) pairs for shape " + shape_str(s) + "; expected one per axis");
  IntTuple flat;
  for (size_t i = 0; i < s.size(); i++) {
    auto [b, e] = bounds[i];
    if (b < 0 || b > e || e > s[i])
      fail("shrink", "bounds (" + std::to_string(b) + ", " + std::to_string(e) + ") on axis " + std::to_string(i) + " of shape " +
                         shape_str(s) + "; expected 0 <= begin <= end <= " + std::to_string(s[i]));
    flat.insert(flat.end(), {b, e});
  }
  return Tensor(frontend::shrink_uop(uop(), flat));
}

Tensor Tensor::narrow(int64_t axis, int64_t start, int64_t length) const {
  int64_t a = frontend::resolve_axis("narrow", axis, shape());
  if (length < 0 || start < 0 || start > shape()[a] - length)
    fail("narrow", "a window of " + std::to_string(length) + " from " + std::to_string(start) + " on axis " + std::to_string(a) + " of shape " +
                       shape_str(shape()) + "; expected 0 <= start and start + length <= " + std::to_string(shape()[a]));
  std::vector<std::pair<int64_t, int64_t>> bounds;
  for (int64_t i = 0; i < ndim(); i++) bounds.emplace_back(0, shape()[i]);
  bounds[a] = {start, start + length};
  return shrink(bounds);
}

Tensor Tensor::narrow(int64_t axis, const UOp& start, int64_t length) const {
  const IntTuple& s = shape();
  int64_t a = frontend::resolve_axis("narrow", axis, s);
  if (!start || !start.dtype().is_int() || !start.has_bounds() || !start.shape() || !start.shape()->empty())
    fail("narrow", "start " + (start ? start.to_string() : std::string("(null)")) + "; expected an integer scalar expression of (bound) variables");
  if (length < 0 || start.vmin() < 0 || start.vmax() + length > s[a])
    fail("narrow", "a window of " + std::to_string(length) + " from " + std::to_string(static_cast<int64_t>(start.vmin())) + ".." +
                       std::to_string(static_cast<int64_t>(start.vmax())) + " on axis " + std::to_string(a) + " of shape " + shape_str(s) +
                       "; expected every start the variables allow to keep the window inside the axis");
  IntTuple flat;
  std::vector<UOp> src{uop()};
  for (int64_t i = 0; i < ndim(); i++) {
    flat.insert(flat.end(), {0, i == a ? length : s[i]});
    src.push_back(i != a ? UOp::const_(dtypes::weakint, int64_t{0}) : start.dtype() == dtypes::weakint ? start : start.cast(dtypes::weakint));
  }
  return Tensor(UOp::make(Ops::SHRINK, dtype(), std::move(src), flat));
}

Tensor Tensor::flip(Axes axes) const {
  IntTuple a;
  if (axes.axes()) a = frontend::resolve_axes("flip", *axes.axes(), shape());
  else for (int64_t i = 0; i < ndim(); i++) a.push_back(i);
  return Tensor(frontend::flip_uop(uop(), a));
}

Tensor Tensor::squeeze(std::optional<int64_t> axis) const {
  const IntTuple& s = shape();
  IntTuple out;
  if (axis) {
    int64_t a = frontend::resolve_axis("squeeze", *axis, s);
    if (s[a] != 1) return Tensor(uop());  // as torch and tinygrad: squeezing an axis that is not 1 keeps it
    out = s;
    out.erase(out.begin() + a);
  } else {
    for (int64_t d : s)
      if (d != 1) out.push_back(d);
  }
  return reshape(out);
}

Tensor Tensor::unsqueeze(int64_t axis) const {
  IntTuple s = shape();
  s.insert(s.begin() + frontend::resolve_insert_axis("unsqueeze", axis, s.size()), 1);
  return reshape(s);
}

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  const IntTuple& s = shape();
  if (s.empty()) return reshape({1});
  int64_t a = frontend::resolve_axis("flatten", start_dim, s), b = frontend::resolve_axis("flatten", end_dim, s);
  if (a > b) fail("flatten", "start_dim " + std::to_string(start_dim) + " comes after end_dim " + std::to_string(end_dim) + " in shape " + shape_str(s));
  IntTuple out(s.begin(), s.begin() + a);
  out.push_back(frontend::prod(IntTuple(s.begin() + a, s.begin() + b + 1)));
  out.insert(out.end(), s.begin() + b + 1, s.end());
  return reshape(out);
}

Tensor Tensor::repeat(IntTuple repeats) const {
  const IntTuple& s = shape();
  if (repeats.size() < s.size())
    fail("repeat", shape_str(repeats) + " has fewer entries than the " + std::to_string(s.size()) + " axes of shape " + shape_str(s));
  for (int64_t r : repeats)
    if (r < 0) fail("repeat", shape_str(repeats) + " has a negative count; expected counts >= 0");
  IntTuple base(repeats.size() - s.size(), 1);
  base.insert(base.end(), s.begin(), s.end());
  // (s) -> (1, s) -> (r, s) -> (r*s) for each repeated axis (tinygrad).
  IntTuple unsqueezed, expanded, final;
  for (size_t i = 0; i < base.size(); i++) {
    if (repeats[i] != 1) unsqueezed.push_back(1), expanded.push_back(repeats[i]);
    unsqueezed.push_back(base[i]);
    expanded.push_back(base[i]);
    final.push_back(frontend::checked_mul("repeat", repeats[i], base[i], "axis " + std::to_string(i) + " of shape " + shape_str(s) + " repeated"));
  }
  frontend::check_size("repeat", final, dtype());
  return reshape(unsqueezed).expand(expanded).reshape(final);
}

Tensor Tensor::cat(const std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty()) fail("cat", "no tensors; expected at least one");
  const Tensor& first = tensors[0];
  int64_t d = frontend::resolve_axis("cat", dim, first.shape());
  std::vector<frontend::Operand> ops;
  int64_t total = 0;
  for (const Tensor& t : tensors) {
    bool ok = t.ndim() == first.ndim();
    for (int64_t i = 0; ok && i < first.ndim(); i++) ok = i == d || t.shape()[i] == first.shape()[i];
    if (!ok)
      fail("cat", "shapes " + shape_str(first.shape()) + " and " + shape_str(t.shape()) + " differ outside axis " +
                      std::to_string(d) + "; expected equal shapes except along it");
    ops.emplace_back(t);
    total += t.shape()[d];
  }
  if (tensors.size() == 1) return Tensor(first.uop());
  DType dt = frontend::promoted_dtype(ops);
  // Each part padded to the full length along dim, then summed: the pads are zero where the others are.
  std::optional<Tensor> out;
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    Padding p(t.ndim(), {0, 0});
    p[d] = {offset, total - offset - t.shape()[d]};
    offset += t.shape()[d];
    Tensor part = t.cast(dt).pad(p);
    out = out ? *out + part : part;
  }
  return *out;
}

Tensor Tensor::stack(const std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty()) fail("stack", "no tensors; expected at least one");
  for (const Tensor& t : tensors)
    if (t.shape() != tensors[0].shape())
      fail("stack", "shapes " + shape_str(tensors[0].shape()) + " and " + shape_str(t.shape()) + " differ; expected equal shapes");
  int64_t d = frontend::resolve_insert_axis("stack", dim, tensors[0].shape().size());
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) parts.push_back(t.unsqueeze(d));
  return cat(parts, d);
}

Tensor Tensor::pool(const IntTuple& k, const IntTuple& stride, const IntTuple& dilation) const {
  const IntTuple& shp = shape();
  size_t nk = k.size();
  if (shp.size() < nk) fail("pool", "kernel " + shape_str(k) + " has more axes than shape " + shape_str(shp));
  IntTuple s = stride.empty() ? IntTuple(nk, 1) : stride, dl = dilation.empty() ? IntTuple(nk, 1) : dilation;
  if (s.size() != nk || dl.size() != nk)
    fail("pool", "kernel " + shape_str(k) + ", stride " + shape_str(s) + " and dilation " + shape_str(dl) + " differ in length");
  size_t lead = shp.size() - nk;
  IntTuple noop(shp.begin(), shp.begin() + lead), in(shp.begin() + lead, shp.end());
  auto ceildiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  IntTuple o(nk), f(nk);
  for (size_t i = 0; i < nk; i++) {
    if (k[i] < 1 || s[i] < 1 || dl[i] < 1) fail("pool", "kernel, stride and dilation must be >= 1");
    if (dl[i] * (k[i] - 1) + 1 > in[i])
      fail("pool", "kernel " + shape_str(k) + " with dilation " + shape_str(dl) + " does not fit in shape " + shape_str(shp));
    o[i] = ceildiv(in[i] - dl[i] * (k[i] - 1), s[i]);
    f[i] = std::max<int64_t>(1, ceildiv(o[i] * s[i] - dl[i], in[i]));  // input scale so the stride shrink fits
  }
  auto with = [&](const IntTuple& tail) {
    IntTuple r = noop;
    r.insert(r.end(), tail.begin(), tail.end());
    return r;
  };
  auto shrink_to = [&](const Tensor& x, const IntTuple& sizes) {
    std::vector<std::pair<int64_t, int64_t>> b;
    for (int64_t d : sizes) b.emplace_back(0, d);
    return x.shrink(b);
  };
  // Repeats so that no padding is needed, then dilation, then stride, as tinygrad's _pool.
  IntTuple reps(lead, 1), t1, t2, t3, t4, t5, t6;
  for (size_t i = 0; i < nk; i++) {
    int64_t span = in[i] * f[i] + dl[i];
    reps.push_back(ceildiv(k[i] * span, in[i]));
    t1.push_back(k[i] * span);
    t2.insert(t2.end(), {k[i], span});
    t3.insert(t3.end(), {k[i], o[i] * s[i]});
    t4.insert(t4.end(), {k[i], o[i], s[i]});
    t5.insert(t5.end(), {k[i], o[i], 1});
    t6.insert(t6.end(), {k[i], o[i]});
  }
  Tensor x = repeat(reps);
  x = shrink_to(x, with(t1)).reshape(with(t2));
  x = shrink_to(x, with(t3)).reshape(with(t4));
  x = shrink_to(x, with(t5)).reshape(with(t6));
  IntTuple order(lead);
  std::iota(order.begin(), order.end(), 0);
  for (size_t i = 0; i < nk; i++) order.push_back(static_cast<int64_t>(lead + 2 * i + 1));
  for (size_t i = 0; i < nk; i++) order.push_back(static_cast<int64_t>(lead + 2 * i));
  return x.permute(order);
}

}  // namespace doorbell
