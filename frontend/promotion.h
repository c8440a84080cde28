// Operands of elementwise ops: numpy broadcasting of shapes and tinygrad's dtype promotion, where a C++ number
// is a weak literal that adopts the tensor's dtype (least_upper_dtype with weakint/weakfloat, then strong).
#pragma once
#include <string_view>
#include <vector>

#include "frontend/tensor.h"

namespace doorbell::frontend {

// A tensor or a number.
struct Operand {
  const Tensor* tensor = nullptr;
  Scalar scalar = 0;
  Operand(const Tensor& t) : tensor(&t) {}  // NOLINT
  Operand(Scalar s) : scalar(s) {}          // NOLINT
  DType dtype() const { return tensor ? tensor->dtype() : scalar.dtype(); }
};

// least_upper_dtype of all operands, made strong (weakint -> int32, weakfloat -> float32).
DType promoted_dtype(const std::vector<Operand>& xs);
// The broadcast shape of the tensor operands (numbers have shape ()).
IntTuple broadcast_shapes(std::string_view op, const std::vector<Operand>& xs);
// Each operand cast to `dtype` and broadcast to `shape`; numbers become constants of that dtype.
std::vector<UOp> prepare(const std::vector<Operand>& xs, DType dtype, const IntTuple& shape);
// The dtype unary float math computes in: floats keep theirs, ints and bool use the default float.
DType float_dtype(DType d);

}  // namespace doorbell::frontend
