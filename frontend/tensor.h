// Tensor: a lazy value over the UOp graph (tinygrad tensor.py). A Tensor is a handle to a small shared state that
// holds one UOp; copies share the state, as Python references share an object, so `Tensor b = a; a.assign(x)` is
// seen through b. Every op builds UOps and nothing runs until realize(), tolist() or run_linear(schedule_linear()).
//
// The graph follows scheduler/schedule.h: data lives in BUFFERs, constants are CONSTs reshaped and expanded (no
// buffer, no kernel), movement ops carry IntTuple args, REDUCE keeps reduced axes as size 1, and assign is
// AFTER(target, STORE(target, value)).
//
// Bad input (shapes that cannot broadcast, bad axes, impossible reshapes, dtype misuse) throws
// std::invalid_argument naming the op, the shapes or dtypes, and what was expected.
#pragma once
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "ir/uop.h"
#include "scheduler/schedule_options.h"

namespace doorbell {

template <class T>
concept Number = std::is_arithmetic_v<T>;

// The dtype that stores C++ type T: float -> float32, double -> float64, int -> int32, int64_t -> int64,
// bool -> bool, uint8_t -> uint8, ...
template <Number T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, bool>) return dtypes::bool_;
  else if constexpr (std::is_floating_point_v<T>) {
    static_assert(sizeof(T) <= 8, "long double has no dtype; use double");
    return sizeof(T) == 4 ? dtypes::float32 : dtypes::float64;
  } else if constexpr (std::is_signed_v<T>) {
    return sizeof(T) == 1 ? dtypes::int8 : sizeof(T) == 2 ? dtypes::int16 : sizeof(T) == 4 ? dtypes::int32 : dtypes::int64;
  } else {
    return sizeof(T) == 1 ? dtypes::uint8 : sizeof(T) == 2 ? dtypes::uint16 : sizeof(T) == 4 ? dtypes::uint32 : dtypes::uint64;
  }
}

// A C++ number used as an operand or fill value. It is a weak literal (tinygrad): an integer is weakint and a
// floating-point number weakfloat, so it adopts the tensor's dtype (uint8 + 300 stays uint8 and wraps to 44;
// int32 * 2.5 becomes float32). A bool is a strong bool.
class Scalar {
 public:
  template <Number T>
  Scalar(T v) {  // NOLINT: numbers convert implicitly, as Python literals do
    if constexpr (std::is_same_v<T, bool>) value_ = v, dtype_ = dtypes::bool_;
    else if constexpr (std::is_floating_point_v<T>) value_ = static_cast<double>(v), dtype_ = dtypes::weakfloat;
    else value_ = static_cast<int64_t>(v), dtype_ = dtypes::weakint;  // a uint64 above INT64_MAX keeps its bits
  }
  // A literal of a given (strong or weak) dtype.
  static Scalar typed(ConstValue v, DType dt) {
    Scalar s(0);
    s.value_ = v;
    s.dtype_ = dt;
    return s;
  }
  const ConstValue& value() const { return value_; }
  DType dtype() const { return dtype_; }
  double as_double() const;

 private:
  ConstValue value_;
  DType dtype_;
};

// One axis of a subscript with Python's slice semantics: missing bounds mean "from the start" and "to the end"
// (reversed for a negative step), negative bounds count from the end, out-of-range bounds clamp.
struct Slice {
  std::optional<int64_t> start, stop;
  int64_t step = 1;
};
inline Slice slice(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt, int64_t step = 1) {
  return Slice{start, stop, step};
}
struct NewAxis {};
inline constexpr NewAxis newaxis{};
struct Ellipsis {};
inline constexpr Ellipsis ellipsis{};

// An entry of t[{...}]: an integer (the axis goes away), a Slice, newaxis (a new size-1 axis) or ellipsis.
class Index {
 public:
  template <class T>
    requires std::is_integral_v<T> && (!std::is_same_v<T, bool>)
  Index(T i) : v_(static_cast<int64_t>(i)) {}  // NOLINT
  Index(Slice s) : v_(s) {}                      // NOLINT
  Index(NewAxis n) : v_(n) {}                    // NOLINT
  Index(Ellipsis e) : v_(e) {}                   // NOLINT
  const std::variant<int64_t, Slice, NewAxis, Ellipsis>& value() const { return v_; }

 private:
  std::variant<int64_t, Slice, NewAxis, Ellipsis> v_;
};

// The axes a reduction runs over: all of them (the default), one (negative counts from the end) or a list.
class Axes {
 public:
  Axes() = default;
  template <class T>
    requires std::is_integral_v<T> && (!std::is_same_v<T, bool>)
  Axes(T axis) : axes_(IntTuple{static_cast<int64_t>(axis)}) {}          // NOLINT
  Axes(IntTuple axes) : axes_(std::move(axes)) {}                        // NOLINT
  Axes(std::initializer_list<int64_t> axes) : axes_(IntTuple(axes)) {}   // NOLINT
  const std::optional<IntTuple>& axes() const { return axes_; }

 private:
  std::optional<IntTuple> axes_;  // nullopt: every axis
};

// A padding amount per axis: (before, after). Negative amounts remove elements, as tinygrad's pad allows.
using Padding = std::vector<std::pair<int64_t, int64_t>>;
// What pad puts in the new elements (tinygrad's pad modes): `value` (constant); the elements mirrored about the edge,
// the edge itself not repeated (reflect, numpy's "reflect"); the edge element repeated (replicate, numpy's "edge");
// the other end of the axis, wrapping around (circular, numpy's "wrap").
enum class PadMode { constant, reflect, replicate, circular };
// How div rounds an exact quotient to an integer (torch's and tinygrad's rounding_mode): toward zero, or toward -inf.
enum class Rounding { trunc, floor };
// gelu's form: x * Phi(x) through erf (none, exact), or tinygrad's default tanh approximation.
enum class GeluApproximation { tanh, none };

[[noreturn]] void throw_item(int64_t numel, const IntTuple& shape);

class Tensor {
 public:
  // ---- construction -------------------------------------------------------------------------------------
  Tensor();  // an empty handle: every op on it throws
  explicit Tensor(UOp uop);
  // From data, stored in a new BUFFER (no kernel). The dtype follows T unless one is given.
  template <Number T>
  Tensor(std::initializer_list<T> data, std::optional<DType> dtype = std::nullopt)  // NOLINT
      : Tensor(from_data(data.begin(), data.size(), {static_cast<int64_t>(data.size())}, dtype)) {}
  template <Number T>
  Tensor(std::initializer_list<std::initializer_list<T>> rows, std::optional<DType> dtype = std::nullopt)  // NOLINT
      : Tensor(from_rows(rows, dtype)) {}
  template <Number T>
  Tensor(const std::vector<T>& data, IntTuple shape, std::optional<DType> dtype = std::nullopt)
      : Tensor(from_data(data, std::move(shape), dtype)) {}
  template <Number T>
  explicit Tensor(const std::vector<T>& data, std::optional<DType> dtype = std::nullopt)
      : Tensor(from_data(data, {static_cast<int64_t>(data.size())}, dtype)) {}
  // A 0-d constant (virtual: a CONST, no buffer). The dtype follows T (int -> int32) unless one is given.
  template <Number T>
  explicit Tensor(T value, std::optional<DType> dtype = std::nullopt)
      : Tensor(full({}, Scalar(value), dtype ? dtype : std::optional<DType>(strong_dtype(Scalar(value).dtype())))) {}

  template <Number T>
  static Tensor from_data(const std::vector<T>& data, IntTuple shape, std::optional<DType> dtype = std::nullopt) {
    if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> packs bits: unpack to one byte each
      std::vector<uint8_t> bytes(data.begin(), data.end());
      return from_data(static_cast<const void*>(bytes.data()), dtypes::bool_, bytes.size(), std::move(shape), dtype);
    } else {
      return from_data(data.data(), data.size(), std::move(shape), dtype);
    }
  }

  static Tensor empty(IntTuple shape, DType dtype = dtypes::float32);  // a BUFFER, contents unspecified
  static Tensor full(IntTuple shape, Scalar value, std::optional<DType> dtype = std::nullopt);
  static Tensor zeros(IntTuple shape, DType dtype = dtypes::float32);
  static Tensor ones(IntTuple shape, DType dtype = dtypes::float32);
  // [0, stop) or [start, stop) by step. int32 when every bound is an integer, float32 otherwise.
  static Tensor arange(Scalar stop);
  static Tensor arange(Scalar start, Scalar stop, Scalar step = 1);
  static Tensor arange(Scalar start, Scalar stop, Scalar step, DType dtype);
  static Tensor linspace(Scalar start, Scalar stop, int64_t steps, DType dtype = dtypes::float32);
  static Tensor eye(int64_t n, std::optional<int64_t> m = std::nullopt, DType dtype = dtypes::float32);

  // Random data generated on the host from (seed, counter), so a seed gives the same values on every machine.
  // Each call consumes counters; manual_seed restarts the sequence.
  static void manual_seed(uint64_t seed);
  static Tensor rand(IntTuple shape, DType dtype = dtypes::float32);   // uniform in [0, 1)
  static Tensor randn(IntTuple shape, DType dtype = dtypes::float32);  // standard normal (Box-Muller)
  static Tensor randint(IntTuple shape, int64_t low, int64_t high, DType dtype = dtypes::int32);  // [low, high)

  static Tensor empty_like(const Tensor& t, std::optional<DType> dtype = std::nullopt);
  static Tensor full_like(const Tensor& t, Scalar value, std::optional<DType> dtype = std::nullopt);
  static Tensor zeros_like(const Tensor& t, std::optional<DType> dtype = std::nullopt);
  static Tensor ones_like(const Tensor& t, std::optional<DType> dtype = std::nullopt);
  static Tensor rand_like(const Tensor& t, std::optional<DType> dtype = std::nullopt);
  static Tensor randn_like(const Tensor& t, std::optional<DType> dtype = std::nullopt);

  // ---- queries ------------------------------------------------------------------------------------------
  // The graph now (a copy: another thread's realize may repoint this tensor at a buffer meanwhile).
  UOp uop() const;
  const IntTuple& shape() const;
  DType dtype() const;
  std::string device() const;
  int64_t numel() const;
  int64_t ndim() const;
  int64_t size(int64_t axis) const;  // negative counts from the end
  // Whether two handles share one state (Python's `is`).
  bool same_state(const Tensor& o) const { return state_ == o.state_; }

  // ---- movement -----------------------------------------------------------------------------------------
  Tensor reshape(IntTuple shape) const;  // one -1 is inferred
  Tensor view(IntTuple shape) const { return reshape(std::move(shape)); }
  Tensor permute(IntTuple order) const;
  Tensor transpose(int64_t a = 1, int64_t b = 0) const;
  Tensor expand(IntTuple shape) const;  // numpy rules; -1 keeps an axis
  Tensor broadcast_to(IntTuple shape) const { return expand(std::move(shape)); }
  Tensor pad(const Padding& padding, Scalar value = 0) const;
  // reflect needs each amount < the axis size, circular <= it; negative amounts crop after the padding is taken.
  Tensor pad(const Padding& padding, PadMode mode, Scalar value = 0) const;
  Tensor shrink(const std::vector<std::pair<int64_t, int64_t>>& bounds) const;  // (begin, end) per axis
  // `length` elements of `axis` from `start` (torch's narrow). With a UOp start, an integer expression of bound
  // variables (UOp::variable(...).bind(v)): a window at a symbolic offset, so one compiled kernel serves every offset.
  Tensor narrow(int64_t axis, int64_t start, int64_t length) const;
  Tensor narrow(int64_t axis, const UOp& start, int64_t length) const;
  Tensor flip(Axes axes) const;
  Tensor squeeze(std::optional<int64_t> axis = std::nullopt) const;
  Tensor unsqueeze(int64_t axis) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor repeat(IntTuple repeats) const;
  static Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
  static Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
  Tensor operator[](const std::vector<Index>& index) const { return getitem(index); }
  Tensor operator[](int64_t i) const { return getitem({i}); }
  Tensor getitem(const std::vector<Index>& index) const;
  // tinygrad's _pool: a view (..., o_1.., k_1..) of windows of size k (stride 1 by default).
  Tensor pool(const IntTuple& kernel, const IntTuple& stride = {}, const IntTuple& dilation = {}) const;
  // Elements shifted by `shift` along `axis`, those that fall off one end coming back at the other (torch's roll).
  Tensor roll(int64_t shift, int64_t axis) const;
  // Axis `axis` as the axes `sizes` (one -1 is inferred).
  Tensor unflatten(int64_t axis, IntTuple sizes) const;
  // Pieces along `axis` of `size` elements each (the last may be shorter), or of the sizes given (summing to it).
  std::vector<Tensor> split(int64_t size, int64_t axis = 0) const;
  std::vector<Tensor> split(const IntTuple& sizes, int64_t axis = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t axis = 0) const;  // ceil(n / chunks) elements a piece
  // The upper (triu: j - i >= diagonal) or lower (tril: j - i <= diagonal) triangle of the last two axes; 0 elsewhere.
  Tensor triu(int64_t diagonal = 0) const;
  Tensor tril(int64_t diagonal = 0) const;

  // ---- elementwise --------------------------------------------------------------------------------------
  Tensor add(const Tensor& x) const;
  Tensor add(Scalar x) const;
  Tensor sub(const Tensor& x) const;
  Tensor sub(Scalar x) const;
  Tensor mul(const Tensor& x) const;
  Tensor mul(Scalar x) const;
  Tensor div(const Tensor& x) const;  // true division: integers divide as the default float
  Tensor div(Scalar x) const;
  Tensor floordiv(const Tensor& x) const;  // Python //: rounds toward -inf
  Tensor floordiv(Scalar x) const;
  // Division rounded as `rounding` says: integers stay integers (exact), floats round the float quotient.
  Tensor div(const Tensor& x, Rounding rounding) const;
  Tensor div(Scalar x, Rounding rounding) const;
  Tensor fmod(const Tensor& x) const;  // C's remainder: the sign of the dividend (x - trunc(x / y) * y)
  Tensor fmod(Scalar x) const;
  Tensor mod(const Tensor& x) const;  // Python %: the sign of the divisor
  Tensor mod(Scalar x) const;
  Tensor pow(const Tensor& x) const;
  Tensor pow(Scalar x) const;
  Tensor maximum(const Tensor& x) const;
  Tensor maximum(Scalar x) const;
  Tensor minimum(const Tensor& x) const;
  Tensor minimum(Scalar x) const;
  Tensor neg() const;
  Tensor lt(const Tensor& x) const;
  Tensor lt(Scalar x) const;
  Tensor le(const Tensor& x) const;
  Tensor le(Scalar x) const;
  Tensor gt(const Tensor& x) const;
  Tensor gt(Scalar x) const;
  Tensor ge(const Tensor& x) const;
  Tensor ge(Scalar x) const;
  Tensor eq(const Tensor& x) const;
  Tensor eq(Scalar x) const;
  Tensor ne(const Tensor& x) const;
  Tensor ne(Scalar x) const;
  // this (cast to bool) selects x where true and y where false.
  Tensor where(const Tensor& x, const Tensor& y) const;
  Tensor where(const Tensor& x, Scalar y) const;
  Tensor where(Scalar x, const Tensor& y) const;
  Tensor where(Scalar x, Scalar y) const;
  Tensor bitwise_and(const Tensor& x) const;
  Tensor bitwise_and(Scalar x) const;
  Tensor bitwise_or(const Tensor& x) const;
  Tensor bitwise_or(Scalar x) const;
  Tensor bitwise_xor(const Tensor& x) const;
  Tensor bitwise_xor(Scalar x) const;
  Tensor bitwise_not() const;
  Tensor lshift(const Tensor& x) const;
  Tensor lshift(Scalar x) const;
  Tensor rshift(const Tensor& x) const;
  Tensor rshift(Scalar x) const;
  Tensor logical_not() const;
  Tensor cast(DType dtype) const;
  Tensor bitcast(DType dtype) const;  // same itemsize: reinterprets the bits
  Tensor float_() const { return cast(dtypes::float32); }
  Tensor int_() const { return cast(dtypes::int32); }
  Tensor bool_() const { return cast(dtypes::bool_); }

  // ---- math (floats; integer inputs compute in the default float) ----------------------------------------
  Tensor abs() const;
  Tensor sign() const;
  Tensor relu() const;
  Tensor leaky_relu(double neg_slope = 0.01) const;
  Tensor sigmoid() const;
  Tensor tanh() const;
  Tensor gelu() const;
  Tensor gelu(GeluApproximation approximation) const;
  Tensor quick_gelu() const;  // x * sigmoid(1.702 x)
  Tensor swish() const { return silu(); }
  Tensor relu6() const;
  Tensor hardswish() const;
  Tensor hardsigmoid(double alpha = 1.0 / 6, double beta = 0.5) const;
  Tensor hardtanh(double min_val = -1, double max_val = 1) const;
  Tensor elu(double alpha = 1) const;
  Tensor celu(double alpha = 1) const;
  Tensor selu(double alpha = 1.67326, double gamma = 1.0507) const;
  Tensor softplus(double beta = 1) const;
  Tensor mish() const;
  Tensor logsigmoid() const;
  Tensor softsign() const;
  Tensor erf() const;  // Abramowitz and Stegun 7.1.26, |error| < 1.5e-7, as tinygrad
  Tensor silu() const;
  Tensor exp() const;
  Tensor exp2() const;
  Tensor log() const;
  Tensor log2() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor tan() const;
  Tensor log10() const;
  Tensor sinh() const;
  Tensor cosh() const;
  Tensor asin() const;  // Abramowitz and Stegun 4.4.46, as tinygrad
  Tensor acos() const;
  Tensor atan() const;
  Tensor asinh() const;
  Tensor acosh() const;
  Tensor atanh() const;
  Tensor reciprocal() const;
  Tensor square() const { return mul(*this); }
  Tensor trunc() const;
  Tensor floor() const;
  Tensor ceil() const;
  // Half to even (numpy, torch, tinygrad): 0.5 -> 0, 1.5 -> 2, 2.5 -> 2. Integers are unchanged.
  Tensor round() const;
  Tensor isnan() const;
  Tensor isinf(bool detect_positive = true, bool detect_negative = true) const;
  Tensor isfinite() const;
  // |this - other| <= atol + rtol * |other| for finite values; equal infinities; NaNs when equal_nan.
  Tensor isclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false) const;
  Tensor copysign(const Tensor& other) const;  // |this| with the sign of other (-0.0 counts as negative)
  Tensor copysign(Scalar other) const;
  Tensor logaddexp(const Tensor& other) const;  // log(exp(this) + exp(other)) without overflow
  Tensor logaddexp(Scalar other) const;
  Tensor masked_fill(const Tensor& mask, const Tensor& value) const { return mask.where(value, *this); }
  Tensor masked_fill(const Tensor& mask, Scalar value) const { return mask.where(value, *this); }
  Tensor lerp(const Tensor& end, const Tensor& weight) const;  // this + (end - this) * weight
  Tensor lerp(const Tensor& end, Scalar weight) const;
  Tensor clip(std::optional<Scalar> min, std::optional<Scalar> max) const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max) const { return clip(min, max); }

  // ---- reductions ---------------------------------------------------------------------------------------
  // With a dtype, the input is cast to it and accumulates in it (tinygrad's dtype=); without, sum accumulates in
  // sum_acc_dtype (int8 -> int32, uint8 -> uint32, float16 -> float32 then back) and prod in the input's dtype.
  Tensor sum(Axes axis = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor prod(Axes axis = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor max(Axes axis = {}, bool keepdim = false) const;
  Tensor min(Axes axis = {}, bool keepdim = false) const;
  Tensor mean(Axes axis = {}, bool keepdim = false) const;
  // The mean accumulated and returned in `dtype` (torch's mean(dtype=)): a float dtype.
  Tensor mean(Axes axis, bool keepdim, DType dtype) const;
  Tensor var(Axes axis = {}, bool keepdim = false, double correction = 1) const;
  Tensor std(Axes axis = {}, bool keepdim = false, double correction = 1) const;
  Tensor argmax(std::optional<int64_t> axis = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> axis = std::nullopt, bool keepdim = false) const;
  Tensor any(Axes axis = {}, bool keepdim = false) const;
  Tensor all(Axes axis = {}, bool keepdim = false) const;
  Tensor softmax(int64_t axis = -1) const;
  Tensor log_softmax(int64_t axis = -1) const;
  Tensor logsumexp(int64_t axis = -1, bool keepdim = false) const;
  // Scans along one axis (frontend/scan.cpp). cumsum's dtype is sum's; cummax and cummin also give the index of the
  // first element that holds each running extreme (int32), as tinygrad.
  Tensor cumsum(int64_t axis = 0) const;
  Tensor cumprod(int64_t axis = 0) const;
  std::pair<Tensor, Tensor> cummax(int64_t axis = 0) const;
  std::pair<Tensor, Tensor> cummin(int64_t axis = 0) const;
  Tensor dot(const Tensor& w) const;
  Tensor matmul(const Tensor& w) const { return dot(w); }

  // ---- realization --------------------------------------------------------------------------------------
  // In place: this tensor (and every copy of it) becomes AFTER(target, STORE(target, value)).
  Tensor assign(const Tensor& value) const;
  Tensor assign(Scalar value) const;
  Tensor contiguous() const;
  // Schedules this tensor, repoints every live tensor that held a scheduled value at its buffer, and returns
  // the LINEAR of kernel CALLs. Execute it (run_linear) before reading the outputs.
  UOp schedule_linear() const;
  static UOp schedule_linear(const std::vector<Tensor>& outputs);
  // A copy of the value on device `device` ("CPU", "NV", "NV:1"...; this tensor when it is there already): computed
  // on its own device, then copied buffer to buffer by run_linear's COPY (between two devices through host memory).
  // Runs when called. Throws as device() (hcq/devices.h) does for a device it cannot open.
  Tensor to(const std::string& device) const;
  // Computes this tensor into a buffer (nothing to do for a buffer or a constant) and returns it.
  Tensor realize() const;
  static void realize(const std::vector<Tensor>& tensors);
  // Whether the value already lives in a buffer (a plain reshape of a BUFFER) or is a virtual constant.
  bool is_realized() const;
  // The values in row-major order, converted to T.
  template <Number T>
  std::vector<T> tolist() const;
  template <Number T>
  T item() const;

  // Substitutes old -> new throughout the graph of every live tensor (tinygrad _apply_map_to_tensors).
  static void apply_map_to_tensors(const std::vector<std::pair<UOp, UOp>>& becomes);
  static size_t live_tensor_count();

  // The shared state behind the handles (frontend/state.h); public only so the registry can list states.
  struct State;

 private:
  std::shared_ptr<State> state_;

  static Tensor from_data(const void* data, DType src_dtype, size_t count, IntTuple shape, std::optional<DType> dtype);
  template <Number T>
  static Tensor from_data(const T* data, size_t count, IntTuple shape, std::optional<DType> dtype) {
    static_assert(!std::is_same_v<T, bool> || sizeof(bool) == 1, "bool data is read as one byte, 0 or 1");
    return from_data(static_cast<const void*>(data), dtype_of<T>(), count, std::move(shape), dtype);
  }
  template <Number T>
  static Tensor from_rows(std::initializer_list<std::initializer_list<T>> rows, std::optional<DType> dtype) {
    std::vector<std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>> flat;  // bytes for bool, not vector<bool>
    int64_t cols = rows.size() ? static_cast<int64_t>(rows.begin()->size()) : 0;
    for (const auto& r : rows) {
      if (static_cast<int64_t>(r.size()) != cols) throw_ragged(cols, static_cast<int64_t>(r.size()));
      flat.insert(flat.end(), r.begin(), r.end());
    }
    return from_data(static_cast<const void*>(flat.data()), dtype_of<T>(), flat.size(), {static_cast<int64_t>(rows.size()), cols}, dtype);
  }
  [[noreturn]] static void throw_ragged(int64_t expected, int64_t got);
  // The values converted to dtype `as`, as host bytes (itemsize of `as` each), after realizing what is needed.
  std::vector<std::byte> host_values(DType as) const;
};

// Operators: Tensor with Tensor, and with a number on either side (a weak literal).
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, Scalar b);
Tensor operator+(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, Scalar b);
Tensor operator-(Scalar a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, Scalar b);
Tensor operator*(Scalar a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, Scalar b);
Tensor operator/(Scalar a, const Tensor& b);
Tensor operator%(const Tensor& a, const Tensor& b);
Tensor operator%(const Tensor& a, Scalar b);
Tensor operator%(Scalar a, const Tensor& b);
Tensor operator&(const Tensor& a, const Tensor& b);
Tensor operator&(const Tensor& a, Scalar b);
Tensor operator&(Scalar a, const Tensor& b);
Tensor operator|(const Tensor& a, const Tensor& b);
Tensor operator|(const Tensor& a, Scalar b);
Tensor operator|(Scalar a, const Tensor& b);
Tensor operator^(const Tensor& a, const Tensor& b);
Tensor operator^(const Tensor& a, Scalar b);
Tensor operator^(Scalar a, const Tensor& b);
Tensor operator<<(const Tensor& a, const Tensor& b);
Tensor operator<<(const Tensor& a, Scalar b);
Tensor operator>>(const Tensor& a, const Tensor& b);
Tensor operator>>(const Tensor& a, Scalar b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, Scalar b);
Tensor operator<(Scalar a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, Scalar b);
Tensor operator<=(Scalar a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, Scalar b);
Tensor operator>(Scalar a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, Scalar b);
Tensor operator>=(Scalar a, const Tensor& b);
// Elementwise comparisons, as in tinygrad and numpy: they build a bool tensor, not a C++ bool.
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, Scalar b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, Scalar b);
Tensor operator-(const Tensor& a);
Tensor operator~(const Tensor& a);
Tensor pow(Scalar base, const Tensor& exponent);
// A number on the left of // (Python's __rfloordiv__); operator% already takes one.
Tensor floordiv(Scalar a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y);

// The layout choices (scheduler/schedule_options.h) that the target of the device named `device` makes
// (compiler/target.h LoweringOptions): what schedule_linear passes to schedule() for outputs on that device. Opens
// the device; throws as device() (hcq/devices.h) does for a name it cannot open.
ScheduleOptions schedule_options_for(const std::string& device);

// ---- templates --------------------------------------------------------------------------------------------

template <Number T>
std::vector<T> Tensor::tolist() const {
  constexpr DType dt = dtype_of<T>();
  std::vector<std::byte> bytes = host_values(dt);
  size_t n = bytes.size() / sizeof(T);
  std::vector<T> out(n);
  if constexpr (std::is_same_v<T, bool>) {
    for (size_t i = 0; i < n; i++) out[i] = bytes[i] != std::byte{0};
  } else {
    if (n) std::memcpy(out.data(), bytes.data(), n * sizeof(T));
  }
  return out;
}

template <Number T>
T Tensor::item() const {
  if (numel() != 1) throw_item(numel(), shape());
  return tolist<T>()[0];
}

}  // namespace doorbell
