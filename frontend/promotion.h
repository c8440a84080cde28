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
// The dtype an op computes in so that every weak integer literal keeps its exact value: `dtype`, or int64 when
// `dtype` is an integer dtype narrower than 64 bits and a weak integer literal among `xs` lies outside its range
// (uint8 < 300, int8 // -200). The op's result converts back to `dtype` (wrapping), so a comparison sees the exact
// literal and uint8.maximum(300) is 300 wrapped to 44. A 64-bit dtype holds every literal (uint64 takes a negative
// literal's two's complement bits, as a C++ uint64_t literal above INT64_MAX is stored).
DType exact_dtype(const std::vector<Operand>& xs, DType dtype);
// The dtype unary float math computes in: floats keep theirs, ints and bool use the default float.
DType float_dtype(DType d);

}  // namespace doorbell::frontend
