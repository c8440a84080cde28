// Rounding to integers: round (half to even), division with a rounding mode (tinygrad's div(rounding_mode=)), C's
// remainder fmod, and a number on the left of //. Integer division stays exact in the integer dtype: truncation is
// floor division moved one toward zero where the remainder is not 0 and the signs differ.
#include "frontend/promotion.h"
#include "frontend/shape.h"
#include "frontend/tensor.h"

namespace doorbell {

using frontend::Operand;

namespace {

// Both operands cast to their promoted dtype and broadcast.
std::pair<Tensor, Tensor> promoted(std::string_view name, const Operand& a, const Operand& b) {
  DType dt = frontend::promoted_dtype({a, b});
  std::vector<UOp> u = frontend::prepare({a, b}, dt, frontend::broadcast_shapes(name, {a, b}));
  return {Tensor(u[0]), Tensor(u[1])};
}

Tensor div_rounded(std::string_view name, const Operand& a, const Operand& b, Rounding rounding) {
  auto [x, y] = promoted(name, a, b);
  DType dt = x.dtype();
  if (dt.is_int()) {  // both integers (tinygrad): an integer result; bool divides as the default float below
    Tensor q = x.floordiv(y);
    if (rounding == Rounding::floor || dt.is_unsigned()) return q;
    Tensor inexact = (x - q * y).ne(0);
    return (inexact & x.lt(0).ne(y.lt(0))).where(q + 1, q);
  }
  Tensor d = x.div(y);
  return rounding == Rounding::trunc ? d.trunc() : d.floor();
}

Tensor fmod_op(const Operand& a, const Operand& b) {
  auto [x, y] = promoted("fmod", a, b);
  return x - div_rounded("fmod", x, y, Rounding::trunc) * y;
}

}  // namespace

Tensor Tensor::div(const Tensor& x, Rounding rounding) const { return div_rounded("div", *this, x, rounding); }
Tensor Tensor::div(Scalar x, Rounding rounding) const { return div_rounded("div", *this, x, rounding); }
Tensor Tensor::fmod(const Tensor& x) const { return fmod_op(*this, x); }
Tensor Tensor::fmod(Scalar x) const { return fmod_op(*this, x); }

Tensor floordiv(Scalar a, const Tensor& b) {
  auto [x, y] = promoted("floordiv", a, b);
  return x.floordiv(y);
}

Tensor Tensor::round() const {
  if (!dtype().is_float()) return Tensor(uop());
  // t = trunc(x) and the fraction x - t are exact, so ties are found exactly at every magnitude (tinygrad's
  // (x + 0.5).floor() form rounds x + 0.5 first and is one off for odd integers above 2^mantissa_bits).
  Tensor t = trunc();
  Tensor frac = *this - t;
  Tensor af = frac.abs();
  Tensor half_t = t * 0.5;
  Tensor odd = half_t.trunc().ne(half_t);
  Tensor away = af.gt(0.5) | (af.eq(0.5) & odd);
  return away.where(frac.gt(0).where(t + 1, t - 1), t);
}

}  // namespace doorbell
