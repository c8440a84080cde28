// Elementwise questions about float values (isnan, isinf, isfinite, isclose) and the binary float helpers that
// combine magnitudes and signs (copysign, logaddexp, lerp), as tinygrad composes them.
#include <limits>

#include "frontend/promotion.h"
#include "frontend/tensor.h"

namespace doorbell {

using frontend::Operand;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::pair<Tensor, Tensor> promoted(std::string_view name, const Operand& a, const Operand& b) {
  DType dt = frontend::promoted_dtype({a, b});
  std::vector<UOp> u = frontend::prepare({a, b}, dt, frontend::broadcast_shapes(name, {a, b}));
  return {Tensor(u[0]), Tensor(u[1])};
}

Tensor copysign_op(const Operand& a, const Operand& b) {
  auto [x, y] = promoted("copysign", a, b);
  Tensor mag = x.abs();
  // 1 / -0.0 is -inf: the sign bit of a zero counts.
  Tensor negative = y.dtype().is_float() ? y.lt(0) | y.reciprocal().lt(0) : y.lt(0);
  return negative.where(-mag, mag);
}

Tensor logaddexp_op(const Operand& a, const Operand& b) {
  auto [x, y] = promoted("logaddexp", a, b);
  Tensor m = x.maximum(y);
  return ((x - m).exp() + (y - m).exp()).log() + m;
}

}  // namespace

Tensor Tensor::isnan() const { return ne(*this); }

Tensor Tensor::isinf(bool detect_positive, bool detect_negative) const {
  Tensor r = full_like(*this, false, dtypes::bool_);
  if (!dtype().is_float()) return r;
  if (detect_positive) r = r | eq(kInf);
  if (detect_negative) r = r | eq(-kInf);
  return r;
}

Tensor Tensor::isfinite() const { return (isinf() | isnan()).logical_not(); }

Tensor Tensor::isclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  auto [x, y] = promoted("isclose", *this, other);
  Tensor finite_close = x.isfinite() & y.isfinite() & (x - y).abs().le(atol + rtol * y.abs());
  Tensor infinite_close = (x.isinf() | y.isinf()) & x.eq(y);
  Tensor r = finite_close | infinite_close;
  return equal_nan ? r | (x.isnan() & y.isnan()) : r;
}

Tensor Tensor::copysign(const Tensor& other) const { return copysign_op(*this, other); }
Tensor Tensor::copysign(Scalar other) const { return copysign_op(*this, other); }
Tensor Tensor::logaddexp(const Tensor& other) const { return logaddexp_op(*this, other); }
Tensor Tensor::logaddexp(Scalar other) const { return logaddexp_op(*this, other); }
Tensor Tensor::lerp(const Tensor& end, const Tensor& weight) const { return *this + (end - *this) * weight; }
Tensor Tensor::lerp(const Tensor& end, Scalar weight) const { return *this + (end - *this) * weight; }

}  // namespace doorbell
