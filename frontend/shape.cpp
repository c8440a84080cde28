#include "frontend/shape.h"

#include <stdexcept>

namespace doorbell::frontend {

std::string shape_str(const IntTuple& shape) { return arg_to_string(Arg(shape)); }

int64_t prod(const IntTuple& shape) {
  int64_t p = 1;
  for (int64_t d : shape) p *= d;
  return p;
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
