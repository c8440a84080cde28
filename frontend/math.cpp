// Unary math and activations, composed from the primitive EXP2 LOG2 SIN SQRT RECIPROCAL TRUNC as tinygrad does:
// exp(x) = exp2(x * log2(e)), log(x) = log2(x) * ln(2), cos(x) = sin(pi/2 - x), sigmoid = 1 / (1 + exp(-x)).
// Integer and bool inputs compute in the default float.
#include <cmath>
#include <numbers>

#include "frontend/promotion.h"
#include "frontend/shape.h"
#include "frontend/tensor.h"

namespace doorbell {

using frontend::fail;

namespace {

// exp and cos compute in at least float32 and round once to the input's float dtype, as tinygrad does
// (tinygrad/mixin/elementwise.py:497 cos, :508 exp): float16's x * log2(e) and pi/2 - x lose the low bits that
// exp2 and sin magnify (float16 exp(5.6953125) would be 296.25, not 297.5). The other unary ops compute in the
// input's dtype there too.
DType wide_float(DType d) { return least_upper_dtype(frontend::float_dtype(d), dtypes::float32); }

Tensor unary(const Tensor& x, Ops op) {
  Tensor f = x.cast(frontend::float_dtype(x.dtype()));
  return Tensor(UOp::infer(op, {f.uop()}));
}

}  // namespace

Tensor Tensor::exp2() const { return unary(*this, Ops::EXP2); }
Tensor Tensor::log2() const { return unary(*this, Ops::LOG2); }
Tensor Tensor::sqrt() const { return unary(*this, Ops::SQRT); }
Tensor Tensor::sin() const { return unary(*this, Ops::SIN); }
Tensor Tensor::reciprocal() const { return unary(*this, Ops::RECIPROCAL); }
Tensor Tensor::exp() const {
  return cast(wide_float(dtype())).mul(1 / std::numbers::ln2).exp2().cast(frontend::float_dtype(dtype()));
}
Tensor Tensor::log() const { return log2().mul(std::numbers::ln2); }
Tensor Tensor::rsqrt() const { return sqrt().reciprocal(); }
Tensor Tensor::cos() const {
  return (std::numbers::pi / 2 - cast(wide_float(dtype()))).sin().cast(frontend::float_dtype(dtype()));
}
Tensor Tensor::tan() const { return sin() / cos(); }

Tensor Tensor::sigmoid() const {
  return (1 + cast(frontend::float_dtype(dtype())).mul(-1 / std::numbers::ln2).exp2()).reciprocal();
}
Tensor Tensor::tanh() const { return 2.0 * (2.0 * cast(frontend::float_dtype(dtype()))).sigmoid() - 1.0; }
Tensor Tensor::gelu() const {  // the tanh approximation, as tinygrad
  Tensor x = cast(frontend::float_dtype(dtype()));
  return 0.5 * x * (1 + (std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x)).tanh());
}
Tensor Tensor::silu() const { return mul(sigmoid()); }
Tensor Tensor::relu() const { return gt(0).where(*this, 0); }
Tensor Tensor::leaky_relu(double neg_slope) const { return lt(0).where(mul(neg_slope), *this); }

Tensor Tensor::abs() const {
  if (dtype().is_unsigned() || dtype().is_bool()) return Tensor(uop());
  return lt(0).where(neg(), *this);
}

Tensor Tensor::sign() const {
  if (dtype().is_bool()) return Tensor(uop());
  // tinygrad's sign (tinygrad/mixin/elementwise.py:897): nan != 0 and not < 0, so sign(nan) is 1; sign(+-inf) is
  // +-1 and sign(-0.0) is 0.
  return ne(0).where(lt(0).where(-1, 1), 0).cast(dtype());
}

Tensor Tensor::trunc() const {
  if (!dtype().is_float()) return Tensor(uop());
  return Tensor(UOp::infer(Ops::TRUNC, {uop()}));
}

Tensor Tensor::floor() const {
  if (!dtype().is_float()) return Tensor(uop());
  Tensor t = trunc();
  return t.gt(*this).where(t - 1, t);
}

Tensor Tensor::ceil() const {
  if (!dtype().is_float()) return Tensor(uop());
  Tensor t = trunc();
  return t.lt(*this).where(t + 1, t);
}

Tensor Tensor::clip(std::optional<Scalar> min, std::optional<Scalar> max) const {
  if (!min && !max) fail("clip", "neither min nor max given; expected at least one bound");
  Tensor x(uop());
  if (min) x = x.maximum(*min);
  if (max) x = x.minimum(*max);
  return x;
}

}  // namespace doorbell
