#include "float64_reference.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace doorbell::e2e {

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

namespace {

struct FloatFormat {
  int mantissa_bits;  // explicit fraction bits
  int min_exp;        // exponent of the smallest normal
  double max_finite;
};

FloatFormat format_of(DType dt) {
  if (dt == dtypes::float16) return {10, -14, 65504.0};
  if (dt == dtypes::bfloat16) return {7, -126, 0x1.FEp127};
  if (dt == dtypes::float32) return {23, -126, 0x1.FFFFFEp127};
  if (dt == dtypes::float64) return {52, -1022, 0x1.FFFFFFFFFFFFFp1023};
  throw std::invalid_argument("float64_reference: " + dt.name() + " is not a float dtype");
}

int bits_of(DType dt) {
  if (dt == dtypes::int8 || dt == dtypes::uint8) return 8;
  if (dt == dtypes::int16 || dt == dtypes::uint16) return 16;
  if (dt == dtypes::int32 || dt == dtypes::uint32) return 32;
  if (dt == dtypes::int64 || dt == dtypes::uint64) return 64;
  throw std::invalid_argument("float64_reference: " + dt.name() + " is not an integer dtype");
}

}  // namespace

double round_to(DType dt, double x) {
  FloatFormat f = format_of(dt);
  if (dt == dtypes::float64 || x == 0 || !std::isfinite(x)) return x;
  // The quantum (spacing of representable values) at x's binade, clamped at the subnormal range; x / quantum is
  // exact (a power-of-two scale), nearbyint rounds half to even in the default rounding mode.
  int e = std::max(std::ilogb(x), f.min_exp);
  double quantum = std::ldexp(1.0, e - f.mantissa_bits);
  double r = std::nearbyint(x / quantum) * quantum;
  if (std::fabs(r) > f.max_finite) return std::copysign(INFINITY, x);
  return r;
}

double epsilon(DType dt) { return std::ldexp(1.0, -format_of(dt).mantissa_bits); }

int64_t wrap_to(DType dt, int64_t v) {
  if (dt == dtypes::bool_) return v != 0;
  int bits = bits_of(dt);
  if (bits == 64) return v;
  uint64_t u = static_cast<uint64_t>(v) & ((uint64_t{1} << bits) - 1);
  if (!dt.is_unsigned() && (u >> (bits - 1))) return static_cast<int64_t>(u) - (int64_t{1} << bits);
  return static_cast<int64_t>(u);
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) q--;
  return q;
}

int64_t floor_mod(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

Shape broadcast(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; i++) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) throw std::invalid_argument("float64_reference: shapes do not broadcast");
    out[i] = x == 1 ? y : x;
  }
  return out;
}

std::vector<int64_t> unravel(int64_t flat, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    idx[i] = flat % shape[i];
    flat /= shape[i];
  }
  return idx;
}

int64_t ravel(const std::vector<int64_t>& idx, const Shape& shape) {
  int64_t flat = 0;
  for (size_t i = 0; i < shape.size(); i++) flat = flat * shape[i] + idx[i];
  return flat;
}

std::vector<int64_t> broadcast_index(const Shape& from, const Shape& to) {
  std::vector<int64_t> out(static_cast<size_t>(numel(to)));
  size_t off = to.size() - from.size();
  for (int64_t k = 0; k < numel(to); k++) {
    std::vector<int64_t> idx = unravel(k, to), src(from.size());
    for (size_t i = 0; i < from.size(); i++) src[i] = from[i] == 1 ? 0 : idx[i + off];
    out[k] = ravel(src, from);
  }
  return out;
}

Shape without_axes(const Shape& shape, const std::vector<int64_t>& axes) {
  Shape s;
  for (size_t i = 0; i < shape.size(); i++)
    if (std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) == axes.end()) s.push_back(shape[i]);
  return s;
}

Shape permuted(const Shape& in, const Shape& order) {
  Shape out;
  for (int64_t o : order) out.push_back(in[o]);
  return out;
}

IndexMap permute_map(const Shape& in, const Shape& order) {
  return [in, order](const std::vector<int64_t>& idx) -> std::optional<int64_t> {
    std::vector<int64_t> src(in.size());
    for (size_t i = 0; i < order.size(); i++) src[order[i]] = idx[i];
    return ravel(src, in);
  };
}

IndexMap expand_map(const Shape& in) {
  return [in](const std::vector<int64_t>& idx) -> std::optional<int64_t> {
    std::vector<int64_t> src(in.size());
    size_t off = idx.size() - in.size();
    for (size_t i = 0; i < in.size(); i++) src[i] = in[i] == 1 ? 0 : idx[i + off];
    return ravel(src, in);
  };
}

Shape padded(const Shape& in, const std::vector<std::pair<int64_t, int64_t>>& pad) {
  Shape out = in;
  for (size_t i = 0; i < in.size(); i++) out[i] += pad[i].first + pad[i].second;
  return out;
}

IndexMap pad_map(const Shape& in, const std::vector<std::pair<int64_t, int64_t>>& pad) {
  return [in, pad](const std::vector<int64_t>& idx) -> std::optional<int64_t> {
    std::vector<int64_t> src(in.size());
    for (size_t i = 0; i < in.size(); i++) {
      src[i] = idx[i] - pad[i].first;
      if (src[i] < 0 || src[i] >= in[i]) return std::nullopt;
    }
    return ravel(src, in);
  };
}

IndexMap strided_map(const Shape& in, const std::vector<int64_t>& start, const std::vector<int64_t>& step) {
  return [in, start, step](const std::vector<int64_t>& idx) -> std::optional<int64_t> {
    std::vector<int64_t> src(in.size());
    for (size_t i = 0; i < in.size(); i++) src[i] = start[i] + idx[i] * step[i];
    return ravel(src, in);
  };
}

namespace {

// Batched matmul over shapes already made at least 2-d; `op` accumulates one product.
template <class T, class Acc>
Array<T> matmul_impl(const Array<T>& a0, const Array<T>& b0, Acc acc) {
  Array<T> a = a0, b = b0;
  bool va = a.shape.size() == 1, vb = b.shape.size() == 1;
  if (va) a.shape.insert(a.shape.begin(), 1);
  if (vb) b.shape.push_back(1);
  int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back(), n = b.shape.back();
  if (b.shape[b.shape.size() - 2] != k) throw std::invalid_argument("float64_reference: matmul shapes");
  Shape ba(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  Shape batch = broadcast(ba, bb);
  std::vector<int64_t> ia = broadcast_index(ba, batch), ib = broadcast_index(bb, batch);
  Shape out_shape = batch;
  out_shape.push_back(m);
  out_shape.push_back(n);
  Array<T> out{out_shape, std::vector<T>(static_cast<size_t>(numel(out_shape)))};
  for (size_t bi = 0; bi < ia.size(); bi++)
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        T s{};
        for (int64_t q = 0; q < k; q++) s = acc(s, a.data[(ia[bi] * m + i) * k + q], b.data[(ib[bi] * k + q) * n + j]);
        out.data[(bi * m + i) * n + j] = s;
      }
  // Drop the temporary axes again.
  if (vb) out.shape.pop_back();
  if (va) out.shape.erase(out.shape.end() - (vb ? 1 : 2));
  return out;
}

}  // namespace

F64 matmul(const F64& a, const F64& b, bool abs) {
  return matmul_impl(a, b, [abs](double s, double x, double y) { return s + (abs ? std::fabs(x * y) : x * y); });
}

I64 matmul_wrapped(const I64& a, const I64& b, DType dt) {
  return matmul_impl(a, b, [dt](int64_t s, int64_t x, int64_t y) {
    return wrap_to(dt, static_cast<int64_t>(static_cast<uint64_t>(s) + static_cast<uint64_t>(x) * static_cast<uint64_t>(y)));
  });
}

F64 softmax(const F64& a, int64_t axis, bool log) {
  std::vector<int64_t> axes{axis};
  F64 mx = reduce(a, axes, true, -static_cast<double>(INFINITY), [](double s, double v) { return std::max(s, v); });
  std::vector<int64_t> im = broadcast_index(mx.shape, a.shape);
  F64 shifted = a;
  for (size_t k = 0; k < a.data.size(); k++) shifted.data[k] = a.data[k] - mx.data[im[k]];
  F64 sum = reduce(map(shifted, [](double v) { return std::exp(v); }), axes, true, 0.0,
                   [](double s, double v) { return s + v; });
  F64 out = shifted;
  for (size_t k = 0; k < a.data.size(); k++)
    out.data[k] = log ? shifted.data[k] - std::log(sum.data[im[k]]) : std::exp(shifted.data[k]) / sum.data[im[k]];
  return out;
}

F64 cumsum(const F64& a, int64_t axis) { return scan(a, axis, [](double s, double v) { return s + v; }); }

F64 scan(const F64& a, int64_t axis, const std::function<double(double, double)>& f, std::vector<int64_t>* first_index) {
  F64 out = a;
  if (first_index) first_index->assign(a.data.size(), 0);
  int64_t inner = 1;
  for (size_t i = static_cast<size_t>(axis) + 1; i < a.shape.size(); i++) inner *= a.shape[i];
  int64_t n = a.shape[axis], outer = numel(a.shape) / std::max<int64_t>(1, n * inner);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      double s = 0;
      int64_t at = 0;
      for (int64_t j = 0; j < n; j++) {
        size_t k = static_cast<size_t>((o * n + j) * inner + in);
        double next = j == 0 ? a.data[k] : f(s, a.data[k]);
        if (j == 0 || next != s) at = j;
        s = next;
        out.data[k] = s;
        if (first_index) (*first_index)[k] = at;
      }
    }
  return out;
}

IndexMap pad_mode_map(const Shape& in, const std::vector<std::pair<int64_t, int64_t>>& pad, PadKind kind) {
  return [in, pad, kind](const std::vector<int64_t>& o) -> std::optional<int64_t> {
    std::vector<int64_t> idx(o.size());
    for (size_t d = 0; d < o.size(); d++) {
      int64_t i = o[d] - pad[d].first, s = in[d];
      if (kind == PadKind::reflect) i = i < 0 ? -i : i >= s ? 2 * (s - 1) - i : i;
      else if (kind == PadKind::replicate) i = std::clamp<int64_t>(i, 0, s - 1);
      else i = ((i % s) + s) % s;
      idx[d] = i;
    }
    return ravel(idx, in);
  };
}

}  // namespace doorbell::e2e
