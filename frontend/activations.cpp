// Activations composed from the math ops as tinygrad composes them (tinygrad/mixin/elementwise.py). Integer and bool
// inputs compute in the default float, as the math ops they use do.
#include <cmath>
#include <numbers>

#include "frontend/promotion.h"
#include "frontend/tensor.h"

namespace doorbell {

namespace {

Tensor as_float(const Tensor& x) { return x.cast(frontend::float_dtype(x.dtype())); }

}  // namespace

Tensor Tensor::gelu(GeluApproximation approximation) const {
  if (approximation == GeluApproximation::tanh) return gelu();
  Tensor x = as_float(*this);
  return x * 0.5 * (1 + (x * (1 / std::numbers::sqrt2)).erf());
}

Tensor Tensor::quick_gelu() const {
  Tensor x = as_float(*this);
  return x * (x * 1.702).sigmoid();
}

Tensor Tensor::relu6() const { return relu() - (*this - 6).relu(); }
Tensor Tensor::hardswish() const { return *this * (*this + 3).relu6() * (1.0 / 6); }

Tensor Tensor::hardsigmoid(double alpha, double beta) const {
  Tensor y = as_float(*this) * alpha + beta;
  return y.relu() - (y - 1).relu();
}

Tensor Tensor::hardtanh(double min_val, double max_val) const { return as_float(*this).clip(min_val, max_val); }
Tensor Tensor::elu(double alpha) const { return relu() - alpha * (1 - exp()).relu(); }

Tensor Tensor::celu(double alpha) const {
  Tensor x = as_float(*this);
  return x.maximum(0) + (alpha * ((x / alpha).exp() - 1)).minimum(0);
}

Tensor Tensor::selu(double alpha, double gamma) const {
  Tensor x = as_float(*this);
  return gamma * x.ge(0).where(x, alpha * (x.exp() - 1));
}

Tensor Tensor::softplus(double beta) const { return (1 / beta) * (as_float(*this) * beta).logaddexp(0.0); }
Tensor Tensor::mish() const { return as_float(*this) * softplus().tanh(); }
Tensor Tensor::logsigmoid() const { return -(-as_float(*this)).softplus(); }

Tensor Tensor::softsign() const {
  Tensor x = as_float(*this);
  return x / (1 + x.abs());
}

}  // namespace doorbell
