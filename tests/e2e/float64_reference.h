// An independent float64 (and exact int64) reference for the op conformance suite: n-d arrays on the host and the
// ops of the Tensor frontend written directly from their definitions (numpy / Python semantics), sharing no code
// with the library's interpreter or exec_alu, so a bug there cannot hide in the expected values.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "ir/dtype.h"

namespace doorbell::e2e {

using Shape = std::vector<int64_t>;

int64_t numel(const Shape& s);

// A row-major n-d array of values (doubles for float and small-integer data, int64 for exact integer data).
template <class T>
struct Array {
  Shape shape;
  std::vector<T> data;
};
using F64 = Array<double>;
using I64 = Array<int64_t>;

// ---- dtype facts, written from IEEE 754 / two's complement ------------------------------------------------
// Rounds x to the nearest value of a float dtype (ties to even), overflowing to +-inf; float64 is unchanged.
double round_to(DType dt, double x);
// The distance from 1 to the next value of a float dtype (2^-mantissa_bits).
double epsilon(DType dt);
// Wraps an integer to an integer dtype (modulo 2^bits, two's complement); bool is v != 0.
int64_t wrap_to(DType dt, int64_t v);
// Python's // and % on integers: the quotient rounds toward -inf and the remainder has the sign of the divisor.
int64_t floor_div(int64_t a, int64_t b);
int64_t floor_mod(int64_t a, int64_t b);

// ---- shapes and indices ---------------------------------------------------------------------------------------
Shape broadcast(const Shape& a, const Shape& b);
std::vector<int64_t> unravel(int64_t flat, const Shape& shape);
int64_t ravel(const std::vector<int64_t>& idx, const Shape& shape);

// out[i] = f(a[i]) and out[i] = f(a[i'], b[i'']) with numpy broadcasting.
template <class T, class F>
auto map(const Array<T>& a, F f) {
  Array<decltype(f(a.data[0]))> out{a.shape, {}};
  out.data.reserve(a.data.size());
  for (const T& v : a.data) out.data.push_back(f(v));
  return out;
}
// The flat index into `from` of each element of `to` when `from` is broadcast to `to`.
std::vector<int64_t> broadcast_index(const Shape& from, const Shape& to);
template <class T, class F>
auto zip(const Array<T>& a, const Array<T>& b, F f) {
  Shape s = broadcast(a.shape, b.shape);
  std::vector<int64_t> ia = broadcast_index(a.shape, s), ib = broadcast_index(b.shape, s);
  Array<decltype(f(a.data[0], b.data[0]))> out{s, {}};
  out.data.reserve(ia.size());
  for (size_t k = 0; k < ia.size(); k++) out.data.push_back(f(a.data[ia[k]], b.data[ib[k]]));
  return out;
}

// ---- movement: each output element is an input element or (padding) a fill value -----------------------------
// out_shape and, for each output index, the input flat index or nullopt for the fill.
using IndexMap = std::function<std::optional<int64_t>(const std::vector<int64_t>& out_idx)>;
template <class T>
Array<T> gather(const Array<T>& a, const Shape& out_shape, const IndexMap& m, T fill = T{}) {
  Array<T> out{out_shape, std::vector<T>(static_cast<size_t>(numel(out_shape)))};
  for (int64_t k = 0; k < numel(out_shape); k++) {
    std::optional<int64_t> src = m(unravel(k, out_shape));
    out.data[k] = src ? a.data[*src] : fill;
  }
  return out;
}
IndexMap permute_map(const Shape& in, const Shape& order);
IndexMap expand_map(const Shape& in);
// pad with (before, after) per axis; negative amounts crop.
IndexMap pad_map(const Shape& in, const std::vector<std::pair<int64_t, int64_t>>& pad);
// Python slices with explicit start and step per axis (start already resolved, out size given by out_shape).
// pad's modes with amounts >= 0: mirrored without the edge (reflect), the edge repeated (replicate), wrapped around
// (circular; amounts up to the axis size).
enum class PadKind { reflect, replicate, circular };
IndexMap pad_mode_map(const Shape& in, const std::vector<std::pair<int64_t, int64_t>>& pad, PadKind kind);
IndexMap strided_map(const Shape& in, const std::vector<int64_t>& start, const std::vector<int64_t>& step);

Shape permuted(const Shape& in, const Shape& order);
Shape padded(const Shape& in, const std::vector<std::pair<int64_t, int64_t>>& pad);

// ---- reductions ------------------------------------------------------------------------------------------------
// The shape with `axes` removed (a reduction without keepdim).
Shape without_axes(const Shape& shape, const std::vector<int64_t>& axes);
// Folds the elements along `axes` (sorted, distinct) from `init`; keepdim keeps them as size 1.
template <class T, class F>
Array<T> reduce(const Array<T>& a, const std::vector<int64_t>& axes, bool keepdim, T init, F f) {
  Shape kept = a.shape;
  for (int64_t ax : axes) kept[ax] = 1;
  Array<T> out{kept, std::vector<T>(static_cast<size_t>(numel(kept)), init)};
  for (int64_t k = 0; k < numel(a.shape); k++) {
    std::vector<int64_t> idx = unravel(k, a.shape);
    for (int64_t ax : axes) idx[ax] = 0;
    T& acc = out.data[ravel(idx, kept)];
    acc = f(acc, a.data[k]);
  }
  if (!keepdim) out.shape = without_axes(a.shape, axes);
  return out;
}

// numpy matmul: 1-d operands get a temporary axis, batch axes broadcast. `abs` sums |products| instead.
F64 matmul(const F64& a, const F64& b, bool abs = false);
I64 matmul_wrapped(const I64& a, const I64& b, DType dt);
F64 softmax(const F64& a, int64_t axis, bool log);
F64 cumsum(const F64& a, int64_t axis);
// Running f along `axis` (cumsum, cumprod, cummax). first_index, when given, gets for each element the position of
// the first element along the axis where the running value became what it is (cummax's index).
F64 scan(const F64& a, int64_t axis, const std::function<double(double, double)>& f, std::vector<int64_t>* first_index = nullptr);

}  // namespace doorbell::e2e
