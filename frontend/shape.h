// Shape arithmetic shared by the Tensor ops: printing, element counts, numpy broadcasting, axis resolution.
// Every check throws std::invalid_argument that names the op, so a user sees which call was wrong.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "ir/arg.h"
#include "ir/dtype.h"

namespace doorbell::frontend {

// "(2, 3)", "(4,)", "()": Python's tuple spelling, as tinygrad's messages print shapes.
std::string shape_str(const IntTuple& shape);
int64_t prod(const IntTuple& shape);  // of a shape already checked (check_size), so it cannot overflow
// Checks that `shape` has sizes >= 0 and that its element count and its bytes as `dtype` fit int64 (2^63-1);
// throws "op: shape (...) of float32 is N bytes, over the 2^63-1 limit". Returns the element count.
int64_t check_size(std::string_view op, const IntTuple& shape, DType dtype);
// a + b and a * b of sizes; throws naming the op and `what` when the result does not fit int64.
int64_t checked_add(std::string_view op, int64_t a, int64_t b, const std::string& what);
int64_t checked_mul(std::string_view op, int64_t a, int64_t b, const std::string& what);
[[noreturn]] void fail(std::string_view op, const std::string& what);

// The numpy broadcast of two shapes (right-aligned; 1 stretches). Throws "op: shapes A and B cannot broadcast".
IntTuple broadcast_shape(std::string_view op, const IntTuple& a, const IntTuple& b);
// An axis in [-ndim, ndim) as a non-negative index; throws naming the op, the axis and the shape.
int64_t resolve_axis(std::string_view op, int64_t axis, const IntTuple& shape);
// As resolve_axis for an insertion point, where ndim + 1 positions exist (unsqueeze, stack).
int64_t resolve_insert_axis(std::string_view op, int64_t axis, size_t ndim);
// Distinct resolved axes in the order given; throws on a repeat.
IntTuple resolve_axes(std::string_view op, const IntTuple& axes, const IntTuple& shape);

}  // namespace doorbell::frontend
