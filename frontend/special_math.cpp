// Special functions composed from EXP2 LOG2 SQRT and the arithmetic ops: erf and asin by the polynomial
// approximations tinygrad uses (Abramowitz and Stegun 7.1.26 and 4.4.46), the hyperbolic functions and their
// inverses from exp and log. Integer and bool inputs compute in the default float.
#include <cmath>
#include <numbers>
#include <vector>

#include "frontend/promotion.h"
#include "frontend/tensor.h"

namespace doorbell {

namespace {

Tensor as_float(const Tensor& x) { return x.cast(frontend::float_dtype(x.dtype())); }

// c[0] * x^(n-1) + ... + c[n-1], by Horner's rule (tinygrad's polyN).
Tensor poly(const Tensor& x, const std::vector<double>& c) {
  Tensor acc = x * c[0] + c[1];
  for (size_t i = 2; i < c.size(); i++) acc = acc * x + c[i];
  return acc;
}

// +1 or -1 by the sign bit's side of zero, 0 for 0, as a float (sign() of the float input).
Tensor sign_of(const Tensor& x) { return x.gt(0).where(1.0, x.lt(0).where(-1.0, 0.0)).cast(x.dtype()); }

// Above 2^(mantissa bits / 2 + 1), x^2 + 1 rounds to x^2 (and x^2 overflows not far above), so
// log(x + sqrt(x^2 +- 1)) is log(2x) = log(x) + ln 2 to the dtype's precision.
double huge(DType dt) {
  int mantissa = dt == dtypes::float16 ? 10 : dt == dtypes::bfloat16 ? 7 : dt == dtypes::float64 ? 52 : 23;
  return std::ldexp(1.0, mantissa / 2 + 1);
}

// log(a + sqrt(a^2 + c)) for a >= 1 (c = 1 for asinh, -1 for acosh), without the overflow of a^2.
Tensor log_hypot(const Tensor& a, double c) {
  Tensor big = a.gt(huge(a.dtype()));
  Tensor small_a = big.where(1.0, a);  // keeps the unused branch finite
  return big.where(a.log() + std::numbers::ln2, (small_a + (small_a.square() + c).sqrt()).log());
}

}  // namespace

Tensor Tensor::erf() const {
  // Abramowitz and Stegun 7.1.26 (https://personal.math.ubc.ca/~cbm/aands/page_299.htm), |error| <= 1.5e-7.
  Tensor x = as_float(*this);
  Tensor t = 1.0 / (1.0 + 0.3275911 * x.abs());
  Tensor p = t * poly(t, {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592});
  return sign_of(x) * (1.0 - p * (-x.square()).exp());
}

Tensor Tensor::log10() const { return log2() * std::log10(2.0); }

Tensor Tensor::sinh() const {
  Tensor x = as_float(*this);
  return (x.exp() - x.neg().exp()) / 2;
}

Tensor Tensor::cosh() const {
  Tensor x = as_float(*this);
  return (x.exp() + x.neg().exp()) / 2;
}

Tensor Tensor::asin() const {
  // Abramowitz and Stegun 4.4.46 (https://personal.math.ubc.ca/~cbm/aands/page_81.htm), |error| <= 2e-8, on |x|.
  Tensor x = as_float(*this);
  Tensor a = x.abs();
  std::vector<double> c = {-0.0012624911, 0.0066700901, -0.0170881256, 0.0308918810,
                           -0.0501743046, 0.0889789874, -0.2145988016, 1.5707963050};
  return sign_of(x) * (std::numbers::pi / 2 - (1.0 - a).sqrt() * poly(a, c));
}

Tensor Tensor::acos() const { return std::numbers::pi / 2 - asin(); }

Tensor Tensor::atan() const {
  // atan(a) = asin(a / sqrt(1 + a^2)) on |x| <= 1, and pi/2 - atan(1 / |x|) above, where a^2 would overflow
  // (tinygrad uses the first form everywhere).
  Tensor x = as_float(*this);
  Tensor a = x.abs();
  Tensor small = a.le(1);
  Tensor y = small.where(a, a.reciprocal());
  Tensor r = (y / (1 + y * y).sqrt()).asin();
  return sign_of(x) * small.where(r, std::numbers::pi / 2 - r);
}

Tensor Tensor::asinh() const {
  // On |x|, then the sign: x + sqrt(x^2 + 1) cancels for negative x (tinygrad takes it as is), and x^2 overflows
  // for huge |x|.
  Tensor x = as_float(*this);
  return sign_of(x) * log_hypot(x.abs(), 1);
}

Tensor Tensor::acosh() const {
  Tensor x = as_float(*this);
  return log_hypot(x, -1);
}

Tensor Tensor::atanh() const {
  Tensor x = as_float(*this);
  return ((1 + x) / (1 - x)).log() / 2;
}

}  // namespace doorbell
