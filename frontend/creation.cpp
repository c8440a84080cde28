// Creation: data tensors (a BUFFER filled on the host, no kernel), virtual constants (a CONST reshaped and
// expanded: no buffer, no kernel), and the host-generated ranges arange, linspace and eye.
#include <cmath>

#include "frontend/host_data.h"
#include "frontend/lazy_uops.h"
#include "frontend/shape.h"
#include "frontend/tensor.h"
#include "hcq/host_buffers.h"
#include "scheduler/schedule.h"

namespace doorbell {

using frontend::fail;
using frontend::shape_str;

namespace {


void check_storage_dtype(const char* op, DType dt) {
  if (dt.is_weak() || dt.is_void() || dt.lanes != 1) fail(op, "cannot store dtype " + dt.name() + "; expected a scalar storage dtype");
}

// The values of a new BUFFER of `shape`, converted from `src` (count elements stored as src_dt).
Tensor buffer_tensor(const char* op, const std::byte* src, DType src_dt, size_t count, const IntTuple& shape, DType dt) {
  check_storage_dtype(op, dt);
  frontend::check_size(op, shape, dt);
  if (frontend::prod(shape) != static_cast<int64_t>(count))
    fail(op, std::to_string(count) + " values cannot fill shape " + shape_str(shape) + " of " +
                 std::to_string(frontend::prod(shape)) + " elements");
  UOp buffer = new_buffer(dt, static_cast<int64_t>(count));
  // Into the buffer through its device (write_buffer: a GPU's copy engine for large data), converted first if need be.
  if (count && src_dt == dt) {
    write_buffer(buffer, std::span<const std::byte>(src, count * dt.itemsize()));
  } else if (count) {
    std::vector<std::byte> converted(count * dt.itemsize());
    frontend::convert_elements(op, src, src_dt, count, dt, converted.data());
    write_buffer(buffer, converted);
  }
  return Tensor(frontend::reshape_uop(buffer, shape));
}

template <class T>
Tensor values_tensor(const char* op, const std::vector<T>& v, const IntTuple& shape, DType dt) {
  return buffer_tensor(op, reinterpret_cast<const std::byte*>(v.data()), dtype_of<T>(), v.size(), shape, dt);
}

}  // namespace

Tensor Tensor::from_data(const void* data, DType src_dtype, size_t count, IntTuple shape, std::optional<DType> dtype) {
  return buffer_tensor("Tensor", static_cast<const std::byte*>(data), src_dtype, count, shape, dtype.value_or(src_dtype));
}

Tensor Tensor::empty(IntTuple shape, DType dtype) {
  check_storage_dtype("empty", dtype);
  frontend::check_size("empty", shape, dtype);
  return Tensor(frontend::reshape_uop(new_buffer(dtype, frontend::prod(shape)), shape));
}

namespace {

// full and the creation ops built on it; `op` is the entry point the user called, so its errors name it.
Tensor full_named(const char* op, IntTuple shape, Scalar value, std::optional<DType> dtype) {
  DType dt = dtype.value_or(strong_dtype(value.dtype()));
  check_storage_dtype(op, dt);
  frontend::check_size(op, shape, dt);
  if (std::holds_alternative<double>(value.value()) && !dt.is_float() && !dt.is_bool()) {
    double d = std::get<double>(value.value());
    if (!std::isfinite(d) || std::fabs(d) >= 0x1p63)
      fail(op, "the value " + std::to_string(d) + " has no " + dt.name() + " value; expected a finite number in range");
    value = Scalar::typed(static_cast<int64_t>(std::trunc(d)), dt);  // as a float cast to int: toward zero
  }
  return Tensor(frontend::const_uop(dt, value.value(), shape));
}

}  // namespace

Tensor Tensor::full(IntTuple shape, Scalar value, std::optional<DType> dtype) { return full_named("full", std::move(shape), value, dtype); }
Tensor Tensor::zeros(IntTuple shape, DType dtype) { return full_named("zeros", std::move(shape), 0, dtype); }
Tensor Tensor::ones(IntTuple shape, DType dtype) { return full_named("ones", std::move(shape), 1, dtype); }

Tensor Tensor::arange(Scalar stop) { return arange(0, stop, 1); }

Tensor Tensor::arange(Scalar start, Scalar stop, Scalar step) {
  bool all_int = !start.dtype().is_float() && !stop.dtype().is_float() && !step.dtype().is_float();
  return arange(start, stop, step, all_int ? dtypes::default_int : dtypes::default_float);
}

Tensor Tensor::arange(Scalar start, Scalar stop, Scalar step, DType dtype) {
  check_storage_dtype("arange", dtype);
  double a = start.as_double(), b = stop.as_double(), s = step.as_double();
  if (s == 0) fail("arange", "step is 0; expected a non-zero step");
  if (!std::isfinite(a) || !std::isfinite(b) || !std::isfinite(s)) fail("arange", "bounds and step must be finite");
  bool exact_int = !start.dtype().is_float() && !stop.dtype().is_float() && !step.dtype().is_float();
  if (exact_int) {  // integer bounds: exact in int64, no rounding of the count
    auto as_int = [](const Scalar& x) {
      return std::holds_alternative<bool>(x.value()) ? int64_t{std::get<bool>(x.value())} : std::get<int64_t>(x.value());
    };
    int64_t i0 = as_int(start), i1 = as_int(stop), is = as_int(step);
    __int128 span = static_cast<__int128>(i1) - i0;
    __int128 n = span / is + ((span % is != 0 && ((span > 0) == (is > 0))) ? 1 : 0);  // ceil(span / step)
    if (n < 0) n = 0;
    if (n > (__int128{1} << 40)) fail("arange", "[" + std::to_string(i0) + ", " + std::to_string(i1) + ") by " + std::to_string(is) + " has too many elements");
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<int64_t>(i0 + static_cast<__int128>(i) * is);
    return values_tensor("arange", v, {static_cast<int64_t>(v.size())}, dtype);
  }
  double n = std::ceil((b - a) / s);
  if (n > 1e12) fail("arange", "[" + std::to_string(a) + ", " + std::to_string(b) + ") by " + std::to_string(s) + " has too many elements");
  std::vector<double> v(n > 0 ? static_cast<size_t>(n) : 0);
  for (size_t i = 0; i < v.size(); i++) v[i] = a + static_cast<double>(i) * s;
  return values_tensor("arange", v, {static_cast<int64_t>(v.size())}, dtype);
}

Tensor Tensor::linspace(Scalar start, Scalar stop, int64_t steps, DType dtype) {
  check_storage_dtype("linspace", dtype);
  if (steps < 0) fail("linspace", "steps is " + std::to_string(steps) + "; expected steps >= 0");
  double a = start.as_double(), b = stop.as_double();
  std::vector<double> v(static_cast<size_t>(steps));
  for (int64_t i = 0; i < steps; i++) v[i] = steps == 1 ? a : a + static_cast<double>(i) * ((b - a) / static_cast<double>(steps - 1));
  if (steps > 1) v.back() = b;  // the end point exactly, as numpy
  return values_tensor("linspace", v, {steps}, dtype);
}

Tensor Tensor::eye(int64_t n, std::optional<int64_t> m, DType dtype) {
  int64_t cols = m.value_or(n);
  if (n < 0 || cols < 0) fail("eye", "size (" + std::to_string(n) + ", " + std::to_string(cols) + ") is negative; expected sizes >= 0");
  frontend::check_size("eye", {n, cols}, dtype);
  std::vector<uint8_t> v(static_cast<size_t>(n * cols), 0);
  for (int64_t i = 0; i < std::min(n, cols); i++) v[i * cols + i] = 1;
  return values_tensor("eye", v, {n, cols}, dtype);
}

Tensor Tensor::empty_like(const Tensor& t, std::optional<DType> dtype) { return empty(t.shape(), dtype.value_or(t.dtype())); }
Tensor Tensor::full_like(const Tensor& t, Scalar value, std::optional<DType> dtype) {
  return full_named("full_like", t.shape(), value, dtype.value_or(t.dtype()));
}
Tensor Tensor::zeros_like(const Tensor& t, std::optional<DType> dtype) { return full_named("zeros_like", t.shape(), 0, dtype.value_or(t.dtype())); }
Tensor Tensor::ones_like(const Tensor& t, std::optional<DType> dtype) { return full_named("ones_like", t.shape(), 1, dtype.value_or(t.dtype())); }

}  // namespace doorbell
