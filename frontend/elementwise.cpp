// Elementwise arithmetic, comparisons, where, bitwise ops and casts, with numpy broadcasting and tinygrad's dtype
// promotion (a C++ number is a weak literal). Derived ops follow tinygrad: sub is a + (-b), true division is
// a * reciprocal(b) in a float dtype, minimum is a negated maximum.
#include <cmath>

#include "frontend/lazy_uops.h"
#include "frontend/promotion.h"
#include "frontend/shape.h"
#include "frontend/tensor.h"
#include "ir/exec_alu.h"

namespace doorbell {

using frontend::fail;
using frontend::Operand;

namespace {

struct Prepared {
  std::vector<UOp> uops;
  DType dtype;   // what the op computes in
  DType result;  // the op's dtype: differs from `dtype` only where exact_dtype widened for a literal
  IntTuple shape;
  // The op's value `r` (computed in `dtype`) in the result dtype; a comparison's bool stays bool.
  Tensor out(const Tensor& r) const { return r.dtype() == dtype && result != dtype ? r.cast(result) : r; }
};

// `exact`: a weak integer literal outside the dtype's range keeps its value (frontend::exact_dtype), as tinygrad
// keeps a weak CONST's value mathematical and widens a binary op from the bounds (tinygrad/uop/weak.py:10
// commit_weak, :46 lower_weak_node): uint8 < 300 is true everywhere. Ops whose wrapped result does not depend on
// the literal's high bits (+ - * & | ^, where) skip it: wrapping first gives the same values.
Prepared prepare(std::string_view op, const std::vector<Operand>& xs, std::optional<DType> force = std::nullopt,
                 bool exact = false) {
  Prepared p;
  p.shape = frontend::broadcast_shapes(op, xs);
  p.result = force.value_or(frontend::promoted_dtype(xs));
  p.dtype = exact ? frontend::exact_dtype(xs, p.result) : p.result;
  p.uops = frontend::prepare(xs, p.dtype, p.shape);
  return p;
}

Tensor make(Ops op, std::vector<UOp> src) { return Tensor(UOp::infer(op, std::move(src))); }

// -x in the graph: NEG for numbers, logical not for bool (tinygrad's neg).
UOp negate(const UOp& x) {
  if (x.dtype().is_bool()) return UOp::infer(Ops::CMPNE, {x, frontend::const_uop(dtypes::bool_, true, *x.shape())});
  return UOp::infer(Ops::NEG, {x});
}

UOp ones_complement(const UOp& x) {  // ~x: a decreasing bijection on every integer dtype
  return UOp::infer(Ops::XOR, {x, frontend::const_uop(x.dtype(), int64_t{-1}, *x.shape())});
}

Tensor binary(std::string_view name, Ops op, const Operand& a, const Operand& b) {
  Prepared p = prepare(name, {a, b});
  return make(op, p.uops);
}

Tensor sub_op(const Operand& a, const Operand& b) {
  Prepared p = prepare("sub", {a, b});
  return make(Ops::ADD, {p.uops[0], negate(p.uops[1])});
}

Tensor div_op(const Operand& a, const Operand& b) {
  DType dt = frontend::promoted_dtype({a, b});
  Prepared p = prepare("div", {a, b}, frontend::float_dtype(dt));  // integers divide as the default float
  return make(Ops::MUL, {p.uops[0], UOp::infer(Ops::RECIPROCAL, {p.uops[1]})});
}

// Integer dtype for // and %: bool computes as the default int.
DType int_division_dtype(DType dt) { return dt.is_bool() ? dtypes::default_int : dt; }

Tensor floordiv_op(const Operand& a, const Operand& b) {
  DType dt = frontend::promoted_dtype({a, b});
  if (dt.is_float()) return div_op(a, b).floor();
  Prepared p = prepare("floordiv", {a, b}, int_division_dtype(dt), true);
  return p.out(make(Ops::FLOORDIV, p.uops));
}

Tensor mod_op(const Operand& a, const Operand& b) {
  DType dt = frontend::promoted_dtype({a, b});
  if (dt.is_float()) {  // a - floor(a / b) * b: the sign of the divisor, as Python
    Prepared p = prepare("mod", {a, b});
    Tensor x(p.uops[0]), y(p.uops[1]);
    return x - (x / y).floor() * y;
  }
  Prepared p = prepare("mod", {a, b}, int_division_dtype(dt), true);
  return p.out(make(Ops::FLOORMOD, p.uops));
}

Tensor maximum_op(const Operand& a, const Operand& b) {
  Prepared p = prepare("maximum", {a, b}, std::nullopt, true);
  return p.out(make(Ops::MAX, p.uops));
}

Tensor minimum_op(const Operand& a, const Operand& b) {
  Prepared p = prepare("minimum", {a, b}, std::nullopt, true);
  const UOp &x = p.uops[0], &y = p.uops[1];
  if (p.dtype.is_bool()) return make(Ops::AND, {x, y});
  if (p.dtype.is_int()) return p.out(Tensor(ones_complement(UOp::infer(Ops::MAX, {ones_complement(x), ones_complement(y)}))));
  return Tensor(UOp::infer(Ops::NEG, {UOp::infer(Ops::MAX, {UOp::infer(Ops::NEG, {x}), UOp::infer(Ops::NEG, {y})})}));
}

Tensor pow_op(const Operand& base, const Operand& exponent) {
  DType dt = frontend::promoted_dtype({base, exponent});
  // An integer exponent that is a literal: repeated squaring, exact for integer dtypes (tinygrad does the same).
  if (!exponent.tensor && base.tensor && !std::holds_alternative<double>(exponent.scalar.value()) &&
      !exponent.scalar.dtype().is_bool()) {
    int64_t n = std::get<int64_t>(exponent.scalar.value());
    // As tinygrad (tinygrad/mixin/elementwise.py:563 "base needs to be float"), numpy and torch: an integer
    // to a negative integer power has no integer value.
    if (n < 0 && !dt.is_float())
      fail("pow", "base of dtype " + base.tensor->dtype().name() + " to the negative integer power " + std::to_string(n) +
                      "; expected a float base (cast it first)");
    Tensor x = base.tensor->cast(dt);
    if (n == 0) return Tensor::ones_like(x);
    uint64_t m = n < 0 ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
    std::optional<Tensor> acc;
    Tensor sq = x;
    while (m) {
      if (m & 1) acc = acc ? *acc * sq : sq;
      m >>= 1;
      if (m) sq = sq * sq;
    }
    return n < 0 ? acc->reciprocal() : *acc;
  }
  DType compute = frontend::float_dtype(dt);
  Prepared p = prepare("pow", {base, exponent}, compute);
  Tensor r = make(Ops::POW, p.uops);
  return dt.is_float() ? r : r.cast(dt);  // integer powers round to the integer dtype
}

enum class Cmp { LT, LE, GT, GE, EQ, NE };
Tensor compare(std::string_view name, Cmp c, const Operand& a, const Operand& b) {
  Prepared p = prepare(name, {a, b}, std::nullopt, true);
  const UOp &x = p.uops[0], &y = p.uops[1];
  auto lnot = [](const UOp& u) { return Tensor(negate(u)); };
  switch (c) {
    case Cmp::LT: return make(Ops::CMPLT, {x, y});
    case Cmp::GT: return make(Ops::CMPLT, {y, x});
    case Cmp::LE: return lnot(UOp::infer(Ops::CMPLT, {y, x}));  // not (b < a), as tinygrad
    case Cmp::GE: return lnot(UOp::infer(Ops::CMPLT, {x, y}));
    case Cmp::EQ: return make(Ops::CMPEQ, {x, y});
    case Cmp::NE: return make(Ops::CMPNE, {x, y});
  }
  return {};
}

Tensor bitwise(std::string_view name, Ops op, const Operand& a, const Operand& b) {
  DType dt = frontend::promoted_dtype({a, b});
  if (!dt.is_int() && !dt.is_bool())
    fail(name, "operands of dtypes " + a.dtype().name() + " and " + b.dtype().name() + " promote to " + dt.name() +
                   "; expected an integer or bool dtype");
  return binary(name, op, a, b);
}

Tensor shift(std::string_view name, Ops op, const Tensor& x, const Operand& amount) {
  DType dt = x.dtype();
  if (!dt.is_int()) fail(name, "dtype " + dt.name() + "; expected an integer dtype");
  if (!amount.dtype().is_int()) fail(name, "shift amount of dtype " + amount.dtype().name() + "; expected an integer");
  Prepared p = prepare(name, {x, amount}, dt);  // the shifted value keeps its dtype
  return make(op, p.uops);
}

Tensor where_op(const Tensor& cond, const Operand& x, const Operand& y) {
  Operand c(cond);
  IntTuple shape = frontend::broadcast_shapes("where", {c, x, y});
  DType dt = frontend::promoted_dtype({x, y});
  std::vector<UOp> u = frontend::prepare({x, y}, dt, shape);
  UOp cu = frontend::broadcast_uop(cond.cast(dtypes::bool_).uop(), shape);
  return make(Ops::WHERE, {cu, u[0], u[1]});
}

}  // namespace

// ---- methods ----------------------------------------------------------------------------------------------------

Tensor Tensor::add(const Tensor& x) const { return binary("add", Ops::ADD, *this, x); }
Tensor Tensor::add(Scalar x) const { return binary("add", Ops::ADD, *this, x); }
Tensor Tensor::sub(const Tensor& x) const { return sub_op(*this, x); }
Tensor Tensor::sub(Scalar x) const { return sub_op(*this, x); }
Tensor Tensor::mul(const Tensor& x) const { return binary("mul", Ops::MUL, *this, x); }
Tensor Tensor::mul(Scalar x) const { return binary("mul", Ops::MUL, *this, x); }
Tensor Tensor::div(const Tensor& x) const { return div_op(*this, x); }
Tensor Tensor::div(Scalar x) const { return div_op(*this, x); }
Tensor Tensor::floordiv(const Tensor& x) const { return floordiv_op(*this, x); }
Tensor Tensor::floordiv(Scalar x) const { return floordiv_op(*this, x); }
Tensor Tensor::mod(const Tensor& x) const { return mod_op(*this, x); }
Tensor Tensor::mod(Scalar x) const { return mod_op(*this, x); }
Tensor Tensor::pow(const Tensor& x) const { return pow_op(*this, x); }
Tensor Tensor::pow(Scalar x) const { return pow_op(*this, x); }
Tensor Tensor::maximum(const Tensor& x) const { return maximum_op(*this, x); }
Tensor Tensor::maximum(Scalar x) const { return maximum_op(*this, x); }
Tensor Tensor::minimum(const Tensor& x) const { return minimum_op(*this, x); }
Tensor Tensor::minimum(Scalar x) const { return minimum_op(*this, x); }
Tensor Tensor::neg() const { return Tensor(negate(uop())); }

Tensor Tensor::lt(const Tensor& x) const { return compare("lt", Cmp::LT, *this, x); }
Tensor Tensor::lt(Scalar x) const { return compare("lt", Cmp::LT, *this, x); }
Tensor Tensor::le(const Tensor& x) const { return compare("le", Cmp::LE, *this, x); }
Tensor Tensor::le(Scalar x) const { return compare("le", Cmp::LE, *this, x); }
Tensor Tensor::gt(const Tensor& x) const { return compare("gt", Cmp::GT, *this, x); }
Tensor Tensor::gt(Scalar x) const { return compare("gt", Cmp::GT, *this, x); }
Tensor Tensor::ge(const Tensor& x) const { return compare("ge", Cmp::GE, *this, x); }
Tensor Tensor::ge(Scalar x) const { return compare("ge", Cmp::GE, *this, x); }
Tensor Tensor::eq(const Tensor& x) const { return compare("eq", Cmp::EQ, *this, x); }
Tensor Tensor::eq(Scalar x) const { return compare("eq", Cmp::EQ, *this, x); }
Tensor Tensor::ne(const Tensor& x) const { return compare("ne", Cmp::NE, *this, x); }
Tensor Tensor::ne(Scalar x) const { return compare("ne", Cmp::NE, *this, x); }

Tensor Tensor::where(const Tensor& x, const Tensor& y) const { return where_op(*this, x, y); }
Tensor Tensor::where(const Tensor& x, Scalar y) const { return where_op(*this, x, y); }
Tensor Tensor::where(Scalar x, const Tensor& y) const { return where_op(*this, x, y); }
Tensor Tensor::where(Scalar x, Scalar y) const { return where_op(*this, x, y); }

Tensor Tensor::bitwise_and(const Tensor& x) const { return bitwise("bitwise_and", Ops::AND, *this, x); }
Tensor Tensor::bitwise_and(Scalar x) const { return bitwise("bitwise_and", Ops::AND, *this, x); }
Tensor Tensor::bitwise_or(const Tensor& x) const { return bitwise("bitwise_or", Ops::OR, *this, x); }
Tensor Tensor::bitwise_or(Scalar x) const { return bitwise("bitwise_or", Ops::OR, *this, x); }
Tensor Tensor::bitwise_xor(const Tensor& x) const { return bitwise("bitwise_xor", Ops::XOR, *this, x); }
Tensor Tensor::bitwise_xor(Scalar x) const { return bitwise("bitwise_xor", Ops::XOR, *this, x); }
Tensor Tensor::bitwise_not() const {
  if (dtype().is_bool()) return logical_not();
  if (!dtype().is_int()) fail("bitwise_not", "dtype " + dtype().name() + "; expected an integer or bool dtype");
  return Tensor(ones_complement(uop()));
}
Tensor Tensor::lshift(const Tensor& x) const { return shift("lshift", Ops::SHL, *this, x); }
Tensor Tensor::lshift(Scalar x) const { return shift("lshift", Ops::SHL, *this, x); }
Tensor Tensor::rshift(const Tensor& x) const { return shift("rshift", Ops::SHR, *this, x); }
Tensor Tensor::rshift(Scalar x) const { return shift("rshift", Ops::SHR, *this, x); }
Tensor Tensor::logical_not() const { return Tensor(negate(cast(dtypes::bool_).uop())); }

Tensor Tensor::cast(DType dt) const {
  if (dt.is_weak() || dt.is_void() || dt.lanes != 1) fail("cast", "cannot cast to " + dt.name() + "; expected a scalar storage dtype");
  if (dt == dtype()) return Tensor(uop());
  // A virtual constant stays virtual: the constant itself is converted (as the CAST would compute it).
  if (std::optional<ConstValue> c = frontend::virtual_const_value(uop()))
    if (std::optional<ConstValue> v = convert_value(dt, *c)) return Tensor(frontend::const_uop(dt, *v, shape()));
  return Tensor(UOp::make(Ops::CAST, dt, {uop()}));
}

Tensor Tensor::bitcast(DType dt) const {
  if (dt.is_weak() || dt.is_void() || dt.lanes != 1) fail("bitcast", "cannot reinterpret as " + dt.name() + "; expected a scalar storage dtype");
  if (dt.itemsize() != dtype().itemsize())
    fail("bitcast", dtype().name() + " (" + std::to_string(dtype().itemsize()) + " bytes) cannot become " + dt.name() + " (" +
                        std::to_string(dt.itemsize()) + " bytes); expected equal itemsizes");
  if (dt == dtype()) return Tensor(uop());
  return Tensor(UOp::make(Ops::BITCAST, dt, {uop()}));
}

// ---- operators --------------------------------------------------------------------------------------------------

Tensor operator+(const Tensor& a, const Tensor& b) { return a.add(b); }
Tensor operator+(const Tensor& a, Scalar b) { return a.add(b); }
Tensor operator+(Scalar a, const Tensor& b) { return binary("add", Ops::ADD, a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return a.sub(b); }
Tensor operator-(const Tensor& a, Scalar b) { return a.sub(b); }
Tensor operator-(Scalar a, const Tensor& b) { return sub_op(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return a.mul(b); }
Tensor operator*(const Tensor& a, Scalar b) { return a.mul(b); }
Tensor operator*(Scalar a, const Tensor& b) { return binary("mul", Ops::MUL, a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return a.div(b); }
Tensor operator/(const Tensor& a, Scalar b) { return a.div(b); }
Tensor operator/(Scalar a, const Tensor& b) { return div_op(a, b); }
Tensor operator%(const Tensor& a, const Tensor& b) { return a.mod(b); }
Tensor operator%(const Tensor& a, Scalar b) { return a.mod(b); }
Tensor operator%(Scalar a, const Tensor& b) { return mod_op(a, b); }
Tensor operator&(const Tensor& a, const Tensor& b) { return a.bitwise_and(b); }
Tensor operator&(const Tensor& a, Scalar b) { return a.bitwise_and(b); }
Tensor operator&(Scalar a, const Tensor& b) { return bitwise("bitwise_and", Ops::AND, a, b); }
Tensor operator|(const Tensor& a, const Tensor& b) { return a.bitwise_or(b); }
Tensor operator|(const Tensor& a, Scalar b) { return a.bitwise_or(b); }
Tensor operator|(Scalar a, const Tensor& b) { return bitwise("bitwise_or", Ops::OR, a, b); }
Tensor operator^(const Tensor& a, const Tensor& b) { return a.bitwise_xor(b); }
Tensor operator^(const Tensor& a, Scalar b) { return a.bitwise_xor(b); }
Tensor operator^(Scalar a, const Tensor& b) { return bitwise("bitwise_xor", Ops::XOR, a, b); }
Tensor operator<<(const Tensor& a, const Tensor& b) { return a.lshift(b); }
Tensor operator<<(const Tensor& a, Scalar b) { return a.lshift(b); }
Tensor operator>>(const Tensor& a, const Tensor& b) { return a.rshift(b); }
Tensor operator>>(const Tensor& a, Scalar b) { return a.rshift(b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return a.lt(b); }
Tensor operator<(const Tensor& a, Scalar b) { return a.lt(b); }
Tensor operator<(Scalar a, const Tensor& b) { return b.gt(a); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return a.le(b); }
Tensor operator<=(const Tensor& a, Scalar b) { return a.le(b); }
Tensor operator<=(Scalar a, const Tensor& b) { return b.ge(a); }
Tensor operator>(const Tensor& a, const Tensor& b) { return a.gt(b); }
Tensor operator>(const Tensor& a, Scalar b) { return a.gt(b); }
Tensor operator>(Scalar a, const Tensor& b) { return b.lt(a); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return a.ge(b); }
Tensor operator>=(const Tensor& a, Scalar b) { return a.ge(b); }
Tensor operator>=(Scalar a, const Tensor& b) { return b.le(a); }
Tensor operator==(const Tensor& a, const Tensor& b) { return a.eq(b); }
Tensor operator==(const Tensor& a, Scalar b) { return a.eq(b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return a.ne(b); }
Tensor operator!=(const Tensor& a, Scalar b) { return a.ne(b); }
Tensor operator-(const Tensor& a) { return a.neg(); }
Tensor operator~(const Tensor& a) { return a.bitwise_not(); }
Tensor pow(Scalar base, const Tensor& exponent) { return pow_op(base, exponent); }
Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y) { return cond.where(x, y); }

}  // namespace doorbell
