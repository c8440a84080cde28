// pad's modes beyond a constant (tinygrad's pad mode=): reflect and replicate concatenate, per axis, flipped or
// expanded edge slices on both sides; circular repeats the axis and shrinks out the window. Negative amounts crop
// after, so the mirrored or wrapped elements are taken from the whole axis (as tinygrad).
#include "frontend/shape.h"
#include "frontend/tensor.h"

namespace doorbell {

using frontend::fail;
using frontend::shape_str;

namespace {

using Bounds = std::vector<std::pair<int64_t, int64_t>>;

Bounds whole(const Tensor& x) {
  Bounds b;
  for (int64_t d : x.shape()) b.emplace_back(0, d);
  return b;
}

Tensor slice_axis(const Tensor& x, size_t axis, int64_t begin, int64_t end) {
  Bounds b = whole(x);
  b[axis] = {begin, end};
  return x.shrink(b);
}

// The crop that negative amounts ask for, on the padded tensor.
Tensor crop_negative(const Tensor& x, const Padding& padding) {
  Bounds b = whole(x);
  for (size_t i = 0; i < padding.size(); i++) {
    auto [before, after] = padding[i];
    b[i] = {before < 0 ? -before : 0, x.shape()[i] - (after < 0 ? -after : 0)};
    if (b[i].first > b[i].second)
      fail("pad", "negative padding (" + std::to_string(before) + ", " + std::to_string(after) + ") removes more than the " +
                      std::to_string(x.shape()[i]) + " elements of axis " + std::to_string(i));
  }
  return x.shrink(b);
}

Tensor pad_reflect_replicate(const Tensor& x0, const Padding& padding, PadMode mode) {
  Tensor x = x0;
  for (size_t d = 0; d < padding.size(); d++) {
    int64_t before = std::max<int64_t>(padding[d].first, 0), after = std::max<int64_t>(padding[d].second, 0);
    if (!before && !after) continue;
    int64_t s = x.shape()[d];
    std::vector<Tensor> parts;
    if (mode == PadMode::reflect) {
      if (before >= s || after >= s)
        fail("pad", "reflect padding (" + std::to_string(before) + ", " + std::to_string(after) + ") of axis " + std::to_string(d) +
                        " of shape " + shape_str(x0.shape()) + "; expected amounts below the axis size " + std::to_string(s));
      // x[before:0:-1] and x[s-2:s-2-after:-1]: the edge element itself is not repeated.
      if (before) parts.push_back(slice_axis(x, d, 1, before + 1).flip(static_cast<int64_t>(d)));
      parts.push_back(x);
      if (after) parts.push_back(slice_axis(x, d, s - 1 - after, s - 1).flip(static_cast<int64_t>(d)));
    } else {
      if (s == 0)
        fail("pad", "replicate padding of the empty axis " + std::to_string(d) + " of shape " + shape_str(x0.shape()) +
                        "; expected an element to repeat");
      IntTuple shape = x.shape();
      if (before) shape[d] = before, parts.push_back(slice_axis(x, d, 0, 1).expand(shape));
      parts.push_back(x);
      if (after) shape[d] = after, parts.push_back(slice_axis(x, d, s - 1, s).expand(shape));
    }
    x = Tensor::cat(parts, static_cast<int64_t>(d));
  }
  return crop_negative(x, padding);
}

Tensor pad_circular(const Tensor& x0, const Padding& padding) {
  // Crop first for negative amounts, then wrap the rest (tinygrad _pad_circular).
  Bounds crop = whole(x0);
  for (size_t i = 0; i < padding.size(); i++) {
    auto [before, after] = padding[i];
    int64_t s = x0.shape()[i];
    crop[i] = {before < 0 ? -before : 0, std::min(s, s + after)};
    if (crop[i].first > crop[i].second)
      fail("pad", "negative padding (" + std::to_string(before) + ", " + std::to_string(after) + ") removes more than the " +
                      std::to_string(s) + " elements of axis " + std::to_string(i));
  }
  Tensor x = x0.shrink(crop);
  IntTuple reps;
  Bounds window;
  for (size_t i = 0; i < padding.size(); i++) {
    int64_t before = std::max<int64_t>(padding[i].first, 0), after = std::max<int64_t>(padding[i].second, 0);
    int64_t s = x.shape()[i];
    if (before > s || after > s)
      fail("pad", "circular padding (" + std::to_string(before) + ", " + std::to_string(after) + ") of axis " + std::to_string(i) +
                      " of size " + std::to_string(s) + " wraps around more than once; expected amounts up to the axis size");
    int64_t r = 1 + (before > 0) + (after > 0);
    reps.push_back(r);
    int64_t begin = before ? s - before : 0;
    window.emplace_back(begin, begin + before + s + after);
  }
  return x.repeat(reps).shrink(window);
}

}  // namespace

Tensor Tensor::pad(const Padding& padding, PadMode mode, Scalar value) const {
  if (padding.size() != shape().size())
    fail("pad", std::to_string(padding.size()) + " (before, after) pairs for shape " + shape_str(shape()) + "; expected one per axis");
  if (mode == PadMode::constant) return pad(padding, value);
  bool zero = std::visit([](auto v) { return v == decltype(v){0}; }, value.value());
  if (!zero) fail("pad", "a fill value with a mode other than constant; expected the value only for PadMode::constant");
  if (mode == PadMode::circular) return pad_circular(*this, padding);
  return pad_reflect_replicate(*this, padding, mode);
}

}  // namespace doorbell

namespace doorbell {

Tensor Tensor::roll(int64_t shift, int64_t axis) const {
  int64_t a = frontend::resolve_axis("roll", axis, shape());
  int64_t n = shape()[a];
  if (n == 0) return Tensor(uop());
  int64_t k = ((shift % n) + n) % n;
  if (k == 0) return Tensor(uop());
  Padding p(static_cast<size_t>(ndim()), {0, 0});
  p[a] = {k, 0};
  Bounds b = whole(*this);
  return pad(p, PadMode::circular).shrink(b);
}

}  // namespace doorbell
