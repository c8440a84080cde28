#include "frontend/shape.h"

#include <limits>
#include <stdexcept>

namespace doorbell::frontend {

std::string shape_str(const IntTuple& shape) { return arg_to_string(Arg(shape)); }

int64_t prod(const IntTuple& shape) {
  int64_t p = 1;
  for (int64_t d : shape) p *= d;
  return p;
}

namespace {
std::string u128_str(unsigned __int128 v) {
  std::string s;
  do s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10))); while (v /= 10);
  return s;
}
}  // namespace

int64_t check_size(std::string_view op, const IntTuple& shape, DType dtype) {
  unsigned __int128 n = 1;
  constexpr unsigned __int128 kLimit = std::numeric_limits<int64_t>::max();
  for (int64_t d : shape) {
    if (d < 0) fail(op, "shape " + shape_str(shape) + " has a negative dimension; expected sizes >= 0");
    if (n != 0 && static_cast<unsigned __int128>(d) > kLimit / n + 1) n = kLimit + 1;  // saturate: stays over the limit
    else n *= static_cast<unsigned __int128>(d);
  }
  for (int64_t d : shape)
    if (d == 0) n = 0;
  if (n > kLimit) fail(op, "shape " + shape_str(shape) + " of " + dtype.name() + " has over 2^63-1 elements");
  int item = dtype.is_weak() || dtype.is_void() ? 1 : dtype.itemsize();
  unsigned __int128 bytes = n * static_cast<unsigned>(item);
  if (bytes > kLimit)
    fail(op, "shape " + shape_str(shape) + " of " + dtype.name() + " is " + u128_str(bytes) + " bytes, over the 2^63-1 limit");
  return static_cast<int64_t>(n);
}

int64_t checked_add(std::string_view op, int64_t a, int64_t b, const std::string& what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) fail(op, what + ": " + std::to_string(a) + " + " + std::to_string(b) + " is over 2^63-1");
  return r;
}

int64_t checked_mul(std::string_view op, int64_t a, int64_t b, const std::string& what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) fail(op, what + ": " + std::to_string(a) + " * " + std::to_string(b) + " is over 2^63-1");
  return r;
}

void fail(std::string_view op, const std::string& what) { throw std::invalid_argument(std::string(op) + ": " + what); }

IntTuple broadcast_shape(std::string_view op, const IntTuple& a, const IntTuple& b) {
  if (a == b) return a;
  size_t n = std::max(a.size(), b.size());
  IntTuple out(n);
  for (size_t i = 0; i < n; i++) {
    // right-aligned: missing leading axes act as 1
    int64_t da = i + a.size() >= n ? a[i + a.size() - n] : 1;
    int64_t db = i + b.size() >= n ? b[i + b.size() - n] : 1;
    if (da != db && da != 1 && db != 1) fail(op, "shapes " + shape_str(a) + " and " + shape_str(b) + " cannot broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t resolve_axis(std::string_view op, int64_t axis, const IntTuple& shape) {
  int64_t nd = static_cast<int64_t>(shape.size());
  if (axis < -nd || axis >= nd) {
    std::string range = nd == 0 ? "none: the tensor is 0-d" : "[" + std::to_string(-nd) + ", " + std::to_string(nd - 1) + "]";
    fail(op, "axis " + std::to_string(axis) + " is out of range for shape " + shape_str(shape) + "; expected " + range);
  }
  return axis < 0 ? axis + nd : axis;
}

int64_t resolve_insert_axis(std::string_view op, int64_t axis, size_t ndim) {
  int64_t n = static_cast<int64_t>(ndim) + 1;
  if (axis < -n || axis >= n)
    fail(op, "axis " + std::to_string(axis) + " is out of range for inserting into " + std::to_string(ndim) + " axes; expected [" +
                 std::to_string(-n) + ", " + std::to_string(n - 1) + "]");
  return axis < 0 ? axis + n : axis;
}

IntTuple resolve_axes(std::string_view op, const IntTuple& axes, const IntTuple& shape) {
  IntTuple out;
  out.reserve(axes.size());
  for (int64_t a : axes) {
    int64_t r = resolve_axis(op, a, shape);
    for (int64_t seen : out)
      if (seen == r) fail(op, "axis " + std::to_string(a) + " repeats in " + shape_str(axes) + " for shape " + shape_str(shape));
    out.push_back(r);
  }
  return out;
}

}  // namespace doorbell::frontend
