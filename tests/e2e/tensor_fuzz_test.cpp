// The tensor-program fuzzer: random programs built from the frontend's ops (elementwise, weak literals, where, casts,
// movement chains, reductions) over random shapes (0-size, 0-d, broadcasting) and dtypes (float32, int32, bool), realized on
// the device of this run (DEV, NOOPT: ctest registers the binary once per backend) and checked against a float64 /
// exact-integer reference of the same program computed here.
//
// The reference carries, for every float element, a bound on the error float32 arithmetic may have accumulated (each
// rounding, propagated through the ops, and the n*eps*sum|x| bound of any summation order), so a correct backend
// never fails it whatever order it sums in or whether it fuses a multiply-add. Where the bound leaves the answer open
// (a comparison of two values closer than their errors, a float->int cast within the error of an integer, a value near
// float32 overflow) the element is "unknown": not compared, and unknown in everything computed from it.
//
// A failing program is minimized before it is printed: each value is realized on its own, the first that fails is
// kept with only the ops it depends on. CI runs a few dozen programs per backend; a long run by hand:
//   TENSOR_FUZZ_COUNT=5000 TENSOR_FUZZ_SEED=7 build/dev/tests/e2e/test_tensor_fuzz
//   DEV=NV MOCKGPU=1 TENSOR_FUZZ_COUNT=2000 build/dev/tests/e2e/test_tensor_fuzz
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "float64_reference.h"
#include "frontend/tensor.h"

namespace doorbell::e2e {
namespace {

// ---- the program --------------------------------------------------------------------------------------------------

enum class Kind { Input, Full, Arange, Unary, Binary, Literal, Where, Cast, Reshape, Permute, Expand, Pad, Shrink, Flip, Reduce, Slice, Cat, Cumsum, Dot };
enum class UnaryOp { Neg, Abs, Relu, Square, Exp2, Sin, Exp, Log, Sqrt, BitNot, LogicalNot };
enum class BinaryOp { Add, Sub, Mul, Div, FloorDiv, Mod, Maximum, Minimum, Lt, Eq, Ne, And, Or, Xor, Shl, Shr };
enum class ReduceOp { Sum, Max, Min };

const char* name_of(UnaryOp u) {
  static const char* names[] = {"neg", "abs", "relu", "square", "exp2", "sin", "exp", "log", "sqrt", "bitwise_not", "logical_not"};
  return names[static_cast<int>(u)];
}
const char* name_of(BinaryOp b) {
  static const char* names[] = {"add", "sub", "mul", "div", "floordiv", "mod", "maximum", "minimum", "lt", "eq", "ne",
                                "bitwise_and", "bitwise_or", "bitwise_xor", "lshift", "rshift"};
  return names[static_cast<int>(b)];
}
const char* name_of(ReduceOp r) {
  static const char* names[] = {"sum", "max", "min"};
  return names[static_cast<int>(r)];
}

struct Op {
  Kind kind;
  std::vector<int> in;  // operand value indices (earlier ops)
  int sub = 0;          // UnaryOp / BinaryOp / ReduceOp
  DType dtype = dtypes::float32;
  Shape shape;                                     // Input/Full/Reshape/Expand; Arange: {n}
  std::vector<int64_t> ints;                       // Permute order, Flip/Reduce axes; Slice: axis, start, stop (-1: none), step; Cat/Cumsum: axis
  std::vector<std::pair<int64_t, int64_t>> pairs;  // Pad (before, after), Shrink (begin, end)
  double scalar = 0;                               // Full / Literal value
  bool scalar_is_int = true;                       // a weak int literal or a weak float literal
  bool keepdim = false;
  std::vector<double> data;                        // Input values (already in the dtype)
};

struct Program {
  std::vector<Op> ops;
  std::vector<int> outputs;
};

std::string shape_text(const Shape& s) {
  std::string t = "{";
  for (size_t i = 0; i < s.size(); i++) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "}";
}

std::string number_text(double v, bool is_int) {
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "-INFINITY";
  if (is_int) return std::to_string(static_cast<int64_t>(v));
  std::ostringstream os;
  os.precision(9);
  os << v;
  std::string s = os.str();
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string dtype_text(DType d) { return "dtypes::" + std::string(d == dtypes::bool_ ? "bool_" : d.name()); }

// One line of C++ per op, so a printed failure can be pasted into a test.
std::string op_text(const Op& op, int index) {
  std::ostringstream os;
  auto v = [](int i) { return "t" + std::to_string(i); };
  auto ints = [](const std::vector<int64_t>& xs) { return shape_text(xs); };
  os << "Tensor t" << index << " = ";
  switch (op.kind) {
    case Kind::Input: {
      os << "Tensor::from_data(std::vector<double>{";
      for (size_t i = 0; i < op.data.size(); i++) os << (i ? ", " : "") << number_text(op.data[i], !op.dtype.is_float());
      os << "}, " << shape_text(op.shape) << ", " << dtype_text(op.dtype) << ");";
      break;
    }
    case Kind::Full: os << "Tensor::full(" << shape_text(op.shape) << ", " << number_text(op.scalar, op.scalar_is_int) << ", " << dtype_text(op.dtype) << ");"; break;
    case Kind::Arange: os << "Tensor::arange(0, " << op.shape[0] << ", 1, " << dtype_text(op.dtype) << ");"; break;
    case Kind::Unary: os << v(op.in[0]) << "." << name_of(static_cast<UnaryOp>(op.sub)) << "();"; break;
    case Kind::Binary: os << v(op.in[0]) << "." << name_of(static_cast<BinaryOp>(op.sub)) << "(" << v(op.in[1]) << ");"; break;
    case Kind::Literal: os << v(op.in[0]) << "." << name_of(static_cast<BinaryOp>(op.sub)) << "(" << number_text(op.scalar, op.scalar_is_int) << ");"; break;
    case Kind::Where: os << v(op.in[0]) << ".where(" << v(op.in[1]) << ", " << v(op.in[2]) << ");"; break;
    case Kind::Cast: os << v(op.in[0]) << ".cast(" << dtype_text(op.dtype) << ");"; break;
    case Kind::Reshape: os << v(op.in[0]) << ".reshape(" << shape_text(op.shape) << ");"; break;
    case Kind::Permute: os << v(op.in[0]) << ".permute(" << ints(op.ints) << ");"; break;
    case Kind::Expand: os << v(op.in[0]) << ".expand(" << shape_text(op.shape) << ");"; break;
    case Kind::Pad:
    case Kind::Shrink: {
      os << v(op.in[0]) << (op.kind == Kind::Pad ? ".pad({" : ".shrink({");
      for (size_t i = 0; i < op.pairs.size(); i++) os << (i ? ", " : "") << "{" << op.pairs[i].first << ", " << op.pairs[i].second << "}";
      os << "});";
      break;
    }
    case Kind::Flip: os << v(op.in[0]) << ".flip(" << ints(op.ints) << ");"; break;
    case Kind::Reduce: os << v(op.in[0]) << "." << name_of(static_cast<ReduceOp>(op.sub)) << "(" << ints(op.ints) << ", " << (op.keepdim ? "true" : "false") << ");"; break;
    case Kind::Slice: {
      os << v(op.in[0]) << ".getitem({";
      for (int64_t i = 0; i < op.ints[0]; i++) os << "slice(), ";
      os << "slice(" << op.ints[1] << ", " << (op.ints[2] < 0 ? std::string("std::nullopt") : std::to_string(op.ints[2])) << ", " << op.ints[3] << ")});";
      break;
    }
    case Kind::Cat: os << "Tensor::cat({" << v(op.in[0]) << ", " << v(op.in[1]) << "}, " << op.ints[0] << ");"; break;
    case Kind::Cumsum: os << v(op.in[0]) << ".cumsum(" << op.ints[0] << ");"; break;
    case Kind::Dot: os << v(op.in[0]) << ".dot(" << v(op.in[1]) << ");"; break;
  }
  return os.str();
}

std::string program_text(const Program& p, size_t max_line = std::string::npos) {
  std::string s;
  for (size_t i = 0; i < p.ops.size(); i++) {
    std::string line = op_text(p.ops[i], static_cast<int>(i));
    if (line.size() > max_line) line = line.substr(0, max_line) + " ...";
    s += "  " + line + "\n";
  }
  s += "  realize:";
  for (int o : p.outputs) s += " t" + std::to_string(o);
  return s + "\n";
}

// ---- dtypes ---------------------------------------------------------------------------------------------------------

// The unit roundoff of a float dtype, and the magnitude above which a value is too close to overflow to compare.
double eps_of(DType d) { return d == dtypes::float16 ? 0x1p-11 : 0x1p-24; }
double limit_of(DType d) { return d == dtypes::float16 ? 6e4 : 1e30; }
// The smallest normal value: a backend may flush smaller results to zero.
double tiny_of(DType d) { return d == dtypes::float16 ? 0x1p-14 : 0x1p-126; }

int64_t bits_of(DType d) { return d.itemsize() * 8; }
double lowest_of(DType d) { return d == dtypes::bool_ ? 0 : d.is_unsigned() ? 0 : -std::ldexp(1.0, d.itemsize() * 8 - 1); }
double highest_of(DType d) { return d == dtypes::bool_ ? 1 : d.is_unsigned() ? std::ldexp(1.0, d.itemsize() * 8) - 1 : std::ldexp(1.0, d.itemsize() * 8 - 1) - 1; }

// tinygrad's promotion lattice (tinygrad/dtype.py promo_lattice) restricted to the fuzzer's dtypes:
// bool < {int8, uint8} < int16 < int32 < float16 < float32, with uint8 v int8 = int16.
DType promote(DType a, DType b) {
  if (a == b) return a;
  if (a.is_float() || b.is_float()) {
    if (a.is_float() && b.is_float()) return dtypes::float32;
    return a.is_float() ? a : b;
  }
  if (a == dtypes::bool_) return b;
  if (b == dtypes::bool_) return a;
  if (a == dtypes::int32 || b == dtypes::int32) return dtypes::int32;
  return dtypes::int16;  // any two distinct of int8, uint8, int16
}

// The dtype of `tensor op literal`: the tensor's, except that a float literal makes an int or bool tensor float32 and
// an int literal makes a bool tensor int32 (tinygrad tensor.py _broadcasted: a python scalar is a weak dtype).
DType literal_dtype(DType t, bool literal_is_int) {
  if (t.is_float()) return t;
  if (!literal_is_int) return dtypes::float32;
  return t == dtypes::bool_ ? dtypes::int32 : t;
}

// tinygrad's sum_acc_dtype: bool and signed ints sum in int32 (or wider), unsigned in uint32, floats in float32;
// float16 is cast back after the sum (tensor.py sum).
DType sum_dtype(DType d) {
  if (d == dtypes::float16 || d == dtypes::float32) return d;
  if (d.is_unsigned()) return dtypes::uint32;
  return dtypes::int32;
}

// ---- the reference ----------------------------------------------------------------------------------------------

struct Ref {
  Shape shape;
  DType dtype = dtypes::float32;
  std::vector<double> v, err;  // value; bound on its float error (0 for ints and bools)
  std::vector<uint8_t> unknown;
  size_t size() const { return v.size(); }
};

Ref make_ref(Shape shape, DType dt) {
  size_t n = static_cast<size_t>(numel(shape));
  return Ref{std::move(shape), dt, std::vector<double>(n), std::vector<double>(n), std::vector<uint8_t>(n)};
}

// Brings an exact result into the dtype: floats round (the rounding joins the error bound; values near overflow
// become unknown), ints wrap, bools are v != 0.
void settle(Ref& r, size_t k) {
  DType dt = r.dtype;
  if (dt.is_float()) {
    double exact = r.v[k];
    if (std::isinf(exact) && r.err[k] == 0) return;  // an exact infinity (the identity of max over nothing)
    r.v[k] = round_to(dt, exact);
    r.err[k] += std::fabs(exact) * eps_of(dt);
    if (!std::isfinite(r.v[k]) || std::fabs(r.v[k]) > limit_of(dt) || r.err[k] > limit_of(dt)) r.unknown[k] = 1;
  } else if (dt == dtypes::bool_) {
    r.v[k] = r.v[k] != 0;
  } else {
    r.v[k] = static_cast<double>(wrap_to(dt, static_cast<int64_t>(r.v[k])));
  }
}

// Converts element ka of a into dtype `to` at element k of out.
void convert_into(const Ref& a, size_t ka, DType to, Ref& out, size_t k) {
  double v = a.v[ka], e = a.err[ka];
  out.unknown[k] = a.unknown[ka];
  out.err[k] = 0;
  if (to == dtypes::bool_) {
    out.v[k] = v != 0;
    if (e > 0 && std::fabs(v) <= e) out.unknown[k] = 1;
  } else if (!to.is_float()) {
    if (a.dtype.is_float()) {
      // truncate, saturate to the dtype's range, NaN -> 0 (README "Defined semantics"; ir/exec_alu.h)
      double t = std::isnan(v) ? 0 : std::clamp(std::trunc(v), lowest_of(to), highest_of(to)), nearest = std::round(v);
      if (e > 0 && nearest != 0 && std::fabs(v - nearest) <= e && nearest > lowest_of(to) && nearest <= highest_of(to)) out.unknown[k] = 1;
      out.v[k] = t;
    } else {
      out.v[k] = static_cast<double>(wrap_to(to, static_cast<int64_t>(v)));
    }
  } else {
    out.v[k] = v;
    out.err[k] = e;
    out.dtype = to;
    settle(out, k);
  }
}

Ref convert(const Ref& a, DType to) {
  if (a.dtype == to) return a;
  Ref out = make_ref(a.shape, to);
  for (size_t k = 0; k < a.size(); k++) convert_into(a, k, to, out, k);
  return out;
}

// out[k] = a[src]: the value with its error bound and unknown flag.
void copy_element(const Ref& a, int64_t src, Ref& out, int64_t k) {
  out.v[k] = a.v[src];
  out.err[k] = a.err[src];
  out.unknown[k] = a.unknown[src];
}

Ref gather(const Ref& a, const Shape& out_shape, const IndexMap& m, double fill = 0) {
  Ref out = make_ref(out_shape, a.dtype);
  for (int64_t k = 0; k < numel(out_shape); k++) {
    std::optional<int64_t> src = m(unravel(k, out_shape));
    if (src) {
      copy_element(a, *src, out, k);
    } else {
      out.v[k] = fill;
    }
  }
  return out;
}

bool is_compare(BinaryOp b) { return b == BinaryOp::Lt || b == BinaryOp::Eq || b == BinaryOp::Ne; }

// out[k] = x op y computed exactly in the computation dtype `dt`, then settled into out's dtype. The operands are
// already in dt, except a literal, which keeps its exact value (so `uint8 < 300` is true: frontend/elementwise.cpp).
void binary_element(BinaryOp op, DType dt, double x, double ex, double y, double ey, Ref& out, size_t k) {
  out.err[k] = 0;
  if (is_compare(op)) {
    if ((ex + ey) > 0 && std::fabs(x - y) <= ex + ey) out.unknown[k] = 1;
    out.v[k] = op == BinaryOp::Lt ? x < y : op == BinaryOp::Eq ? x == y : x != y;
    return;
  }
  if (dt.is_float()) {
    switch (op) {
      case BinaryOp::Add: out.v[k] = x + y; out.err[k] = ex + ey; break;
      case BinaryOp::Sub: out.v[k] = x - y; out.err[k] = ex + ey; break;
      case BinaryOp::Mul: out.v[k] = x * y; out.err[k] = std::fabs(x) * ey + std::fabs(y) * ex + ex * ey; break;
      case BinaryOp::Div:
        if (std::fabs(y) <= 2 * ey || std::fabs(y) < 1.0 / 64) out.unknown[k] = 1;
        out.v[k] = y != 0 ? x / y : 0;
        out.err[k] = y != 0 ? (ex + std::fabs(out.v[k]) * ey) / std::max(std::fabs(y) - ey, 1e-30) : 0;
        break;
      case BinaryOp::Maximum: out.v[k] = std::max(x, y); out.err[k] = std::max(ex, ey); break;
      case BinaryOp::Minimum: out.v[k] = std::min(x, y); out.err[k] = std::max(ex, ey); break;
      default: throw std::logic_error(std::string("tensor fuzz: ") + name_of(op) + " on floats is not generated");
    }
    settle(out, k);
    return;
  }
  auto xi = static_cast<int64_t>(x), yi = static_cast<int64_t>(y);
  int64_t r = 0;
  switch (op) {
    case BinaryOp::Add: r = xi + yi; break;
    case BinaryOp::Sub: r = xi - yi; break;
    case BinaryOp::Mul: r = static_cast<int64_t>(static_cast<uint64_t>(xi) * static_cast<uint64_t>(yi)); break;  // wraps mod 2^64 first: same low bits
    case BinaryOp::FloorDiv: r = yi == 0 ? 0 : floor_div(xi, yi); break;  // x // 0 = 0 (README "Defined semantics")
    case BinaryOp::Mod: r = yi == 0 ? xi : floor_mod(xi, yi); break;     // x % 0 = x
    case BinaryOp::Maximum: r = std::max(xi, yi); break;
    case BinaryOp::Minimum: r = std::min(xi, yi); break;
    case BinaryOp::And: r = xi & yi; break;
    case BinaryOp::Or: r = xi | yi; break;
    case BinaryOp::Xor: r = xi ^ yi; break;
    // an amount outside [0, bits) shifts everything out: 0, or -1 for a negative value shifted right
    case BinaryOp::Shl: r = yi < 0 || yi >= bits_of(dt) ? 0 : static_cast<int64_t>(static_cast<uint64_t>(xi) << yi); break;
    case BinaryOp::Shr: r = yi < 0 || yi >= bits_of(dt) ? (xi < 0 ? -1 : 0) : xi >> yi; break;  // arithmetic: x // 2^n
    default: throw std::logic_error(std::string("tensor fuzz: ") + name_of(op) + " on ints is not generated");
  }
  out.v[k] = static_cast<double>(wrap_to(out.dtype, r));  // wrapped in int64: a double would round products past 2^53
}

// The computation dtype of a tensor-tensor op: promotion, and true division of ints and bools in float32.
DType compute_dtype(BinaryOp op, DType a, DType b) {
  DType dt = promote(a, b);
  if (op == BinaryOp::Div && !dt.is_float()) dt = dtypes::float32;
  return dt;
}

Ref binary(BinaryOp op, const Ref& a0, const Ref& b0) {
  DType dt = compute_dtype(op, a0.dtype, b0.dtype);
  Ref a = convert(a0, dt), b = convert(b0, dt);
  Shape s = broadcast(a.shape, b.shape);
  std::vector<int64_t> ia = broadcast_index(a.shape, s), ib = broadcast_index(b.shape, s);
  Ref out = make_ref(s, is_compare(op) ? dtypes::bool_ : dt);
  for (size_t k = 0; k < ia.size(); k++) {
    out.unknown[k] = a.unknown[ia[k]] || b.unknown[ib[k]];
    binary_element(op, dt, a.v[ia[k]], a.err[ia[k]], b.v[ib[k]], b.err[ib[k]], out, k);
  }
  return out;
}

Ref literal_op(BinaryOp op, const Ref& t, double literal, bool literal_is_int) {
  DType dt = literal_dtype(t.dtype, literal_is_int);
  if (op == BinaryOp::Div && !dt.is_float()) dt = dtypes::float32;
  Ref a = convert(t, dt);
  double y = dt.is_float() ? round_to(dt, literal) : literal;
  Ref out = make_ref(a.shape, is_compare(op) ? dtypes::bool_ : dt);
  for (size_t k = 0; k < a.size(); k++) {
    out.unknown[k] = a.unknown[k];
    binary_element(op, dt, a.v[k], a.err[k], y, 0, out, k);
  }
  return out;
}

Ref unary(UnaryOp op, const Ref& a) {
  Ref out = make_ref(a.shape, a.dtype);
  const double eps = a.dtype.is_float() ? eps_of(a.dtype) : 0;
  for (size_t k = 0; k < a.size(); k++) {
    double x = a.v[k], e = a.err[k];
    out.unknown[k] = a.unknown[k];
    double& y = out.v[k];
    double& ey = out.err[k];
    if (a.dtype.is_float()) {
      switch (op) {
        case UnaryOp::Neg: y = -x; ey = e; break;
        case UnaryOp::Abs: y = std::fabs(x); ey = e; break;
        case UnaryOp::Relu: y = std::max(x, 0.0); ey = e; break;
        case UnaryOp::Square: y = x * x; ey = 2 * std::fabs(x) * e + e * e; break;
        case UnaryOp::Exp2:  // the derivative's bound over [x-e, x+e], plus a few ulp of the approximation
          y = std::exp2(x);
          ey = std::exp2(x + e) * std::log(2.0) * e + std::fabs(y) * 8 * eps;
          if (x > 100) out.unknown[k] = 1;
          break;
        case UnaryOp::Exp:
          y = std::exp(x);
          ey = std::exp(x + e) * e + std::fabs(y) * 8 * eps;
          if (x > 80) out.unknown[k] = 1;
          break;
        case UnaryOp::Log:
          if (x - e <= 1.0 / 1024) out.unknown[k] = 1;
          y = x > 0 ? std::log(x) : 0;
          ey = x - e > 0 ? e / (x - e) + std::fabs(y) * 8 * eps + 4 * eps : 0;
          break;
        case UnaryOp::Sqrt:
          if (x - e <= 1.0 / 1024) out.unknown[k] = 1;
          y = x > 0 ? std::sqrt(x) : 0;
          ey = x - e > 0 ? e / (2 * std::sqrt(x - e)) + std::fabs(y) * 4 * eps : 0;
          break;
        case UnaryOp::Sin:
          y = std::sin(x);
          ey = e + 8 * eps + std::fabs(x) * 4 * eps;  // argument reduction loses about ulp(x)
          if (std::fabs(x) > 1e4) out.unknown[k] = 1;
          break;
        default: throw std::logic_error(std::string("tensor fuzz: ") + name_of(op) + " on floats is not generated");
      }
    } else if (a.dtype == dtypes::bool_) {
      y = x == 0;  // logical_not is the only unary the fuzzer applies to bools
    } else {
      auto xi = static_cast<int64_t>(x);
      int64_t r = 0;
      switch (op) {
        case UnaryOp::Neg: r = -xi; break;
        case UnaryOp::Abs: r = xi < 0 ? -xi : xi; break;
        case UnaryOp::Relu: r = std::max<int64_t>(xi, 0); break;
        case UnaryOp::Square: r = static_cast<int64_t>(static_cast<uint64_t>(xi) * static_cast<uint64_t>(xi)); break;
        case UnaryOp::BitNot: r = ~xi; break;
        default: throw std::logic_error(std::string("tensor fuzz: ") + name_of(op) + " on ints is not generated");
      }
      y = static_cast<double>(wrap_to(a.dtype, r));
    }
    settle(out, k);
  }
  return out;
}

// max/min of nothing: the identity (tinygrad: -inf for a float max, the dtype's minimum for an int max).
double reduce_identity(ReduceOp op, DType d) {
  if (d.is_float()) return op == ReduceOp::Max ? -INFINITY : INFINITY;
  return op == ReduceOp::Max ? lowest_of(d) : highest_of(d);
}

Ref reduce_ref(ReduceOp op, const Ref& a0, const std::vector<int64_t>& axes, bool keepdim) {
  DType out_dt = op == ReduceOp::Sum ? sum_dtype(a0.dtype) : a0.dtype;
  Ref a = convert(a0, out_dt);
  Shape kept = a.shape;
  for (int64_t ax : axes) kept[ax] = 1;
  size_t n_out = static_cast<size_t>(numel(kept));
  Ref out = make_ref(kept, out_dt);
  std::vector<double> abs_sum(n_out), count(n_out);
  if (op != ReduceOp::Sum) std::fill(out.v.begin(), out.v.end(), reduce_identity(op, out_dt));
  for (int64_t k = 0; k < numel(a.shape); k++) {
    std::vector<int64_t> idx = unravel(k, a.shape);
    for (int64_t ax : axes) idx[ax] = 0;
    size_t o = static_cast<size_t>(ravel(idx, kept));
    double x = a.v[k];
    out.unknown[o] |= a.unknown[k];
    if (op == ReduceOp::Sum) {
      out.v[o] += x;  // ints: exact below 2^53 for the sizes made here, wrapped once at the end
      out.err[o] += a.err[k];
      abs_sum[o] += std::fabs(x);
      count[o] += 1;
    } else {
      if (op == ReduceOp::Max ? x > out.v[o] : x < out.v[o]) out.v[o] = x;
      out.err[o] = std::max(out.err[o], a.err[k]);
    }
  }
  for (size_t o = 0; o < n_out; o++) {
    if (op == ReduceOp::Sum && out_dt.is_float()) {
      // any summation order in float32: |error| <= (n - 1) * u * sum|x|; then the rounding into the dtype
      out.err[o] += count[o] * eps_of(dtypes::float32) * abs_sum[o];
      if (abs_sum[o] > limit_of(out_dt)) out.unknown[o] = 1;
    }
    if (op == ReduceOp::Sum) settle(out, o);
  }
  if (!keepdim) out.shape = without_axes(a.shape, axes);
  return out;
}

Ref cumsum_ref(const Ref& a0, int64_t axis) {
  DType dt = sum_dtype(a0.dtype);
  Ref a = convert(a0, dt);
  if (a.shape.empty()) return a;
  Ref out = make_ref(a.shape, dt);
  for (int64_t k = 0; k < numel(a.shape); k++) {
    std::vector<int64_t> idx = unravel(k, a.shape);
    double sum = 0, err = 0, abs_sum = 0, n = 0;
    uint8_t unknown = 0;
    for (int64_t j = 0; j <= idx[axis]; j++) {
      std::vector<int64_t> src = idx;
      src[axis] = j;
      int64_t f = ravel(src, a.shape);
      sum += a.v[f];
      err += a.err[f];
      abs_sum += std::fabs(a.v[f]);
      unknown |= a.unknown[f];
      n++;
    }
    out.v[k] = sum;
    out.unknown[k] = unknown;
    if (dt.is_float()) {
      out.err[k] = err + n * eps_of(dtypes::float32) * abs_sum;
      if (abs_sum > limit_of(dt)) out.unknown[k] = 1;
    }
    settle(out, k);
  }
  return out;
}

Ref dot_ref(const Ref& a, const Ref& b) {  // (m, k) . (k, n), float32
  int64_t m = a.shape[0], kk = a.shape[1], n = b.shape[1];
  Ref out = make_ref({m, n}, dtypes::float32);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double sum = 0, err = 0, abs_sum = 0;
      uint8_t unknown = 0;
      for (int64_t l = 0; l < kk; l++) {
        double x = a.v[i * kk + l], y = b.v[l * n + j], ex = a.err[i * kk + l], ey = b.err[l * n + j];
        sum += x * y;
        err += std::fabs(x) * ey + std::fabs(y) * ex + ex * ey;
        abs_sum += std::fabs(x * y);
        unknown |= a.unknown[i * kk + l] | b.unknown[l * n + j];
      }
      size_t o = static_cast<size_t>(i * n + j);
      out.v[o] = sum;
      out.err[o] = err + static_cast<double>(kk + 1) * eps_of(dtypes::float32) * abs_sum;
      out.unknown[o] = unknown || abs_sum > limit_of(dtypes::float32);
      settle(out, o);
    }
  return out;
}

// Python slice indices of one axis: start, start+step, ... (stop < 0 means None).
std::vector<int64_t> slice_indices(int64_t size, int64_t start, int64_t stop, int64_t step) {
  std::vector<int64_t> idx;
  if (step > 0) {
    int64_t end = stop < 0 ? size : std::min(stop, size);
    for (int64_t i = start; i < end; i += step) idx.push_back(i);
  } else {
    int64_t end = stop < 0 ? -1 : stop;
    for (int64_t i = std::min(start, size - 1); i > end; i += step) idx.push_back(i);
  }
  return idx;
}

Ref evaluate_ref(const Op& op, const std::vector<Ref>& vals) {
  switch (op.kind) {
    case Kind::Input: {
      Ref r = make_ref(op.shape, op.dtype);
      r.v = op.data;
      return r;
    }
    case Kind::Full: {
      Ref r = make_ref(op.shape, op.dtype);
      std::fill(r.v.begin(), r.v.end(), op.scalar);
      return r;
    }
    case Kind::Arange: {
      Ref r = make_ref(op.shape, op.dtype);
      for (size_t k = 0; k < r.size(); k++) r.v[k] = static_cast<double>(k);
      return r;
    }
    case Kind::Unary: return unary(static_cast<UnaryOp>(op.sub), vals[op.in[0]]);
    case Kind::Binary: return binary(static_cast<BinaryOp>(op.sub), vals[op.in[0]], vals[op.in[1]]);
    case Kind::Literal: return literal_op(static_cast<BinaryOp>(op.sub), vals[op.in[0]], op.scalar, op.scalar_is_int);
    case Kind::Where: {
      const Ref &c = vals[op.in[0]], &x0 = vals[op.in[1]], &y0 = vals[op.in[2]];
      DType dt = promote(x0.dtype, y0.dtype);
      Ref x = convert(x0, dt), y = convert(y0, dt);
      Shape s = broadcast(c.shape, broadcast(x.shape, y.shape));
      std::vector<int64_t> ic = broadcast_index(c.shape, s), ix = broadcast_index(x.shape, s), iy = broadcast_index(y.shape, s);
      Ref out = make_ref(s, dt);
      for (size_t k = 0; k < ic.size(); k++) {
        bool take_x = c.v[ic[k]] != 0;
        const Ref& pick = take_x ? x : y;
        size_t ip = static_cast<size_t>(take_x ? ix[k] : iy[k]);
        copy_element(pick, static_cast<int64_t>(ip), out, static_cast<int64_t>(k));
        out.unknown[k] |= c.unknown[ic[k]];
      }
      return out;
    }
    case Kind::Cast: return convert(vals[op.in[0]], op.dtype);
    case Kind::Reshape: {
      Ref r = vals[op.in[0]];
      r.shape = op.shape;
      return r;
    }
    case Kind::Permute: {
      const Ref& a = vals[op.in[0]];
      return gather(a, permuted(a.shape, op.ints), permute_map(a.shape, op.ints));
    }
    case Kind::Expand: {
      const Ref& a = vals[op.in[0]];
      std::vector<int64_t> idx = broadcast_index(a.shape, op.shape);
      Ref out = make_ref(op.shape, a.dtype);
      for (size_t k = 0; k < idx.size(); k++) copy_element(a, idx[k], out, static_cast<int64_t>(k));
      return out;
    }
    case Kind::Pad: {
      const Ref& a = vals[op.in[0]];
      return gather(a, padded(a.shape, op.pairs), pad_map(a.shape, op.pairs));
    }
    case Kind::Shrink: {
      const Ref& a = vals[op.in[0]];
      std::vector<std::pair<int64_t, int64_t>> crop;
      for (size_t i = 0; i < a.shape.size(); i++) crop.emplace_back(-op.pairs[i].first, op.pairs[i].second - a.shape[i]);
      return gather(a, padded(a.shape, crop), pad_map(a.shape, crop));
    }
    case Kind::Flip: {
      const Ref& a = vals[op.in[0]];
      Shape shape = a.shape;
      std::vector<int64_t> axes = op.ints;
      return gather(a, shape, [shape, axes](const std::vector<int64_t>& idx) -> std::optional<int64_t> {
        std::vector<int64_t> src = idx;
        for (int64_t ax : axes) src[ax] = shape[ax] - 1 - idx[ax];
        return ravel(src, shape);
      });
    }
    case Kind::Reduce: return reduce_ref(static_cast<ReduceOp>(op.sub), vals[op.in[0]], op.ints, op.keepdim);
    case Kind::Slice: {
      const Ref& a = vals[op.in[0]];
      int64_t axis = op.ints[0];
      std::vector<int64_t> picked = slice_indices(a.shape[axis], op.ints[1], op.ints[2], op.ints[3]);
      Shape s = a.shape;
      s[axis] = static_cast<int64_t>(picked.size());
      Shape in_shape = a.shape;
      return gather(a, s, [in_shape, axis, picked](const std::vector<int64_t>& idx) -> std::optional<int64_t> {
        std::vector<int64_t> src = idx;
        src[axis] = picked[idx[axis]];
        return ravel(src, in_shape);
      });
    }
    case Kind::Cat: {
      const Ref &a = vals[op.in[0]], &b = vals[op.in[1]];
      int64_t axis = op.ints[0];
      Shape s = a.shape;
      s[axis] += b.shape[axis];
      Ref out = make_ref(s, a.dtype);
      for (int64_t k = 0; k < numel(s); k++) {
        std::vector<int64_t> idx = unravel(k, s);
        bool first = idx[axis] < a.shape[axis];
        const Ref& src = first ? a : b;
        if (!first) idx[axis] -= a.shape[axis];
        copy_element(src, ravel(idx, src.shape), out, k);
      }
      return out;
    }
    case Kind::Cumsum: return cumsum_ref(vals[op.in[0]], op.ints[0]);
    case Kind::Dot: return dot_ref(vals[op.in[0]], vals[op.in[1]]);
  }
  throw std::logic_error("tensor fuzz: unknown op kind");
}

// ---- the same program on the library ------------------------------------------------------------------------------

Tensor evaluate_tensor(const Op& op, const std::vector<Tensor>& t) {
  auto in = [&](int i) -> const Tensor& { return t[op.in[i]]; };
  Scalar literal = op.scalar_is_int ? Scalar(static_cast<int64_t>(op.scalar)) : Scalar(op.scalar);
  switch (op.kind) {
    case Kind::Input: return Tensor::from_data(op.data, op.shape, op.dtype);
    case Kind::Full: return Tensor::full(op.shape, literal, op.dtype);
    case Kind::Arange: return Tensor::arange(0, op.shape[0], 1, op.dtype);
    case Kind::Unary:
      switch (static_cast<UnaryOp>(op.sub)) {
        case UnaryOp::Neg: return in(0).neg();
        case UnaryOp::Abs: return in(0).abs();
        case UnaryOp::Relu: return in(0).relu();
        case UnaryOp::Square: return in(0).square();
        case UnaryOp::Exp2: return in(0).exp2();
        case UnaryOp::Sin: return in(0).sin();
        case UnaryOp::Exp: return in(0).exp();
        case UnaryOp::Log: return in(0).log();
        case UnaryOp::Sqrt: return in(0).sqrt();
        case UnaryOp::BitNot: return in(0).bitwise_not();
        case UnaryOp::LogicalNot: return in(0).logical_not();
      }
      break;
    case Kind::Binary:
    case Kind::Literal: {
      auto apply = [&](auto&& rhs) {
        switch (static_cast<BinaryOp>(op.sub)) {
          case BinaryOp::Add: return in(0).add(rhs);
          case BinaryOp::Sub: return in(0).sub(rhs);
          case BinaryOp::Mul: return in(0).mul(rhs);
          case BinaryOp::Div: return in(0).div(rhs);
          case BinaryOp::FloorDiv: return in(0).floordiv(rhs);
          case BinaryOp::Mod: return in(0).mod(rhs);
          case BinaryOp::Maximum: return in(0).maximum(rhs);
          case BinaryOp::Minimum: return in(0).minimum(rhs);
          case BinaryOp::Lt: return in(0).lt(rhs);
          case BinaryOp::Eq: return in(0).eq(rhs);
          case BinaryOp::Ne: return in(0).ne(rhs);
          case BinaryOp::And: return in(0).bitwise_and(rhs);
          case BinaryOp::Or: return in(0).bitwise_or(rhs);
          case BinaryOp::Xor: return in(0).bitwise_xor(rhs);
          case BinaryOp::Shl: return in(0).lshift(rhs);
          case BinaryOp::Shr: return in(0).rshift(rhs);
        }
        throw std::logic_error("tensor fuzz: unknown binary op");
      };
      return op.kind == Kind::Binary ? apply(in(1)) : apply(literal);
    }
    case Kind::Where: return in(0).where(in(1), in(2));
    case Kind::Cast: return in(0).cast(op.dtype);
    case Kind::Reshape: return in(0).reshape(op.shape);
    case Kind::Permute: return in(0).permute(op.ints);
    case Kind::Expand: return in(0).expand(op.shape);
    case Kind::Pad: return in(0).pad(op.pairs);
    case Kind::Shrink: return in(0).shrink(op.pairs);
    case Kind::Flip: return in(0).flip(Axes(op.ints));
    case Kind::Reduce: {
      Axes axes{op.ints};
      switch (static_cast<ReduceOp>(op.sub)) {
        case ReduceOp::Sum: return in(0).sum(axes, op.keepdim);
        case ReduceOp::Max: return in(0).max(axes, op.keepdim);
        case ReduceOp::Min: return in(0).min(axes, op.keepdim);
      }
      break;
    }
    case Kind::Slice: {
      std::vector<Index> index(static_cast<size_t>(op.ints[0]), Index(slice()));
      index.emplace_back(slice(op.ints[1], op.ints[2] < 0 ? std::nullopt : std::optional<int64_t>(op.ints[2]), op.ints[3]));
      return in(0).getitem(index);
    }
    case Kind::Cat: return Tensor::cat({in(0), in(1)}, op.ints[0]);
    case Kind::Cumsum: return in(0).cumsum(op.ints[0]);
    case Kind::Dot: return in(0).dot(in(1));
  }
  throw std::logic_error("tensor fuzz: unknown op kind");
}

// ---- generation -----------------------------------------------------------------------------------------------------

class Generator {
 public:
  explicit Generator(uint64_t seed) : g_(seed) {}

  Program program() {
    p_ = Program{};
    refs_.clear();
    int inputs = pick(1, 3);
    for (int i = 0; i < inputs; i++) leaf(random_shape(), random_dtype());
    int steps = pick(1, 10);
    for (int i = 0; i < steps; i++) step();
    // outputs: every value nothing uses (a multi-output schedule)
    std::vector<uint8_t> used(p_.ops.size());
    for (const Op& op : p_.ops)
      for (int x : op.in) used[x] = 1;
    for (size_t i = 0; i < p_.ops.size(); i++)
      if (!used[i] && p_.ops[i].kind != Kind::Input) p_.outputs.push_back(static_cast<int>(i));
    if (p_.outputs.empty()) p_.outputs.push_back(static_cast<int>(p_.ops.size()) - 1);
    return p_;
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(g_); }
  int64_t pick64(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(g_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(g_) < p; }
  int last() const { return static_cast<int>(p_.ops.size()) - 1; }

  int push(Op op) {
    refs_.push_back(evaluate_ref(op, refs_));
    p_.ops.push_back(std::move(op));
    return last();
  }

  DType random_dtype() {
    static const DType kinds[] = {dtypes::float32, dtypes::float32, dtypes::float32, dtypes::float32, dtypes::float16,
                                  dtypes::int32,   dtypes::int32,   dtypes::int8,    dtypes::uint8,   dtypes::int16, dtypes::bool_};
    return kinds[pick(0, 10)];
  }

  Shape random_shape() {
    static const int64_t dims[] = {1, 1, 2, 3, 4, 5, 7, 8, 16, 17, 33};
    int rank = pick(0, 4);
    Shape s;
    for (int i = 0; i < rank; i++) s.push_back(chance(0.04) ? 0 : dims[pick(0, 10)]);
    while (numel(s) > 2048) *std::max_element(s.begin(), s.end()) = 1;
    return s;
  }

  double random_value(DType dt, bool nonzero = false) {
    for (;;) {
      double v;
      if (dt == dtypes::bool_) v = pick(0, 1);
      else if (!dt.is_float()) v = chance(0.06) ? (chance(0.5) ? highest_of(dt) : lowest_of(dt)) : std::clamp<double>(pick(-9, 9), lowest_of(dt), highest_of(dt));
      else if (chance(0.1)) v = pick(-3, 3);  // exact small integers make ties in max, where and comparisons
      else v = round_to(dt, std::uniform_real_distribution<double>(-4, 4)(g_));
      if (!nonzero || v != 0) return v;
    }
  }

  int leaf(const Shape& shape, DType dt, bool nonzero = false) {
    Op op;
    op.dtype = dt;
    op.shape = shape;
    int r = pick(0, 9);
    if (r < 7 || shape.empty() || nonzero) {
      op.kind = Kind::Input;
      op.data.resize(static_cast<size_t>(numel(shape)));
      for (double& v : op.data) v = random_value(dt, nonzero);
    } else if (r < 9 || dt == dtypes::bool_ || shape.size() != 1 || shape[0] > highest_of(dt)) {
      op.kind = Kind::Full;
      op.scalar = random_value(dt);
      op.scalar_is_int = !dt.is_float();
    } else {
      op.kind = Kind::Arange;
    }
    return push(std::move(op));
  }

  // A value from the program, recent ones more often.
  int any_value() {
    int n = static_cast<int>(p_.ops.size());
    return chance(0.6) ? n - 1 : pick(0, n - 1);
  }

  // An operand that broadcasts with `a`: an existing value if one fits, or a new leaf with a compatible shape.
  int partner_for(int a, bool nonzero = false) {
    const Shape& sa = refs_[a].shape;
    std::vector<int> fits;
    for (int i = 0; i < static_cast<int>(refs_.size()) && !nonzero; i++) {
      try {
        if (numel(broadcast(sa, refs_[i].shape)) <= 4096) fits.push_back(i);
      } catch (const std::invalid_argument&) {
      }
    }
    if (!fits.empty() && chance(0.6)) return fits[pick(0, static_cast<int>(fits.size()) - 1)];
    Shape s = sa;
    for (int64_t& d : s)
      if (chance(0.3)) d = 1;
    if (!s.empty() && chance(0.3)) s.erase(s.begin(), s.begin() + pick(0, static_cast<int>(s.size())));
    DType dt = random_dtype();
    if (nonzero && !refs_[a].dtype.is_float()) dt = chance(0.5) ? refs_[a].dtype : dtypes::int32;
    if (nonzero && dt == dtypes::bool_) dt = dtypes::int32;
    return leaf(s, dt, nonzero);
  }

  int bool_for(int a) {
    if (refs_[a].dtype == dtypes::bool_ && chance(0.5)) return a;
    Op op;
    op.kind = Kind::Literal;
    op.in = {a};
    op.sub = static_cast<int>(chance(0.5) ? BinaryOp::Lt : BinaryOp::Ne);
    op.scalar_is_int = !refs_[a].dtype.is_float() || chance(0.5);
    op.scalar = op.scalar_is_int ? pick(-2, 2) : pick(-8, 8) / 4.0;
    return push(std::move(op));
  }

  // A weak literal for `t op literal`: small, or (on narrow ints) outside the dtype's range.
  void literal_for(Op& op, DType t) {
    op.scalar_is_int = chance(0.65);
    if (!op.scalar_is_int) {
      op.scalar = pick(-12, 12) / 4.0;
    } else if (!t.is_float() && t != dtypes::bool_ && chance(0.2)) {
      op.scalar = static_cast<double>(chance(0.5) ? static_cast<int64_t>(highest_of(t)) + pick(1, 300) : static_cast<int64_t>(lowest_of(t)) - pick(1, 300));
    } else {
      op.scalar = pick(-5, 5);
    }
  }

  void binary_op(Op& op, DType a, DType b) {
    DType dt = promote(a, b);
    std::vector<BinaryOp> ok = {BinaryOp::Maximum, BinaryOp::Minimum, BinaryOp::Lt, BinaryOp::Eq, BinaryOp::Ne};
    if (dt.is_float()) ok.insert(ok.end(), {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div});
    else if (dt == dtypes::bool_) ok.insert(ok.end(), {BinaryOp::And, BinaryOp::Or, BinaryOp::Xor});
    else ok.insert(ok.end(), {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::And, BinaryOp::Or, BinaryOp::Xor, BinaryOp::Div});
    op.sub = static_cast<int>(ok[pick(0, static_cast<int>(ok.size()) - 1)]);
  }

  void step() {
    int a = any_value();
    const Ref ra = refs_[a];
    Op op;
    op.in = {a};
    int r = pick(0, 99);
    if (r < 12) {
      op.kind = Kind::Unary;
      std::vector<UnaryOp> ok;
      if (ra.dtype == dtypes::bool_) ok = {UnaryOp::LogicalNot};
      else if (!ra.dtype.is_float()) ok = {UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Relu, UnaryOp::Square, UnaryOp::BitNot};
      else ok = {UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Relu, UnaryOp::Square, UnaryOp::Exp2, UnaryOp::Sin, UnaryOp::Exp, UnaryOp::Log, UnaryOp::Sqrt};
      op.sub = static_cast<int>(ok[pick(0, static_cast<int>(ok.size()) - 1)]);
    } else if (r < 28) {
      op.kind = Kind::Binary;
      int b = partner_for(a);
      op.in = {a, b};
      binary_op(op, refs_[a].dtype, refs_[b].dtype);
    } else if (r < 32 && !ra.dtype.is_float() && ra.dtype != dtypes::bool_) {
      op.kind = Kind::Binary;  // integer // and % by a tensor of divisors (0 and -1 among them)
      int b = partner_for(a, chance(0.5));
      op.in = {a, b};
      op.sub = static_cast<int>(chance(0.5) ? BinaryOp::FloorDiv : BinaryOp::Mod);
      if (promote(refs_[a].dtype, refs_[b].dtype).is_float()) op.sub = static_cast<int>(BinaryOp::Div);
    } else if (r < 42) {
      op.kind = Kind::Literal;
      literal_for(op, ra.dtype);
      DType dt = literal_dtype(ra.dtype, op.scalar_is_int);
      binary_op(op, dt, dt);
      bool int_compute = !dt.is_float() && dt != dtypes::bool_;
      if (int_compute && ra.dtype != dtypes::bool_ && chance(0.3)) {  // shifts refuse bools (frontend/elementwise.cpp)
        static const BinaryOp int_ops[] = {BinaryOp::FloorDiv, BinaryOp::Mod, BinaryOp::Shl, BinaryOp::Shr};
        op.sub = static_cast<int>(int_ops[pick(0, 3)]);
        if (op.sub >= static_cast<int>(BinaryOp::Shl)) op.scalar = pick(-2, dt.itemsize() * 8 + 2);
      }
      if (!int_compute && dt != dtypes::bool_ && (op.sub == static_cast<int>(BinaryOp::And) || op.sub >= static_cast<int>(BinaryOp::Or))) op.sub = static_cast<int>(BinaryOp::Add);
      if (op.sub == static_cast<int>(BinaryOp::Div) && std::fabs(op.scalar) < 0.25) op.scalar = 2;
    } else if (r < 47) {
      op.kind = Kind::Where;
      int c = bool_for(a);
      int x = partner_for(c), y = partner_for(c);
      try {
        (void)broadcast(refs_[c].shape, broadcast(refs_[x].shape, refs_[y].shape));
      } catch (const std::invalid_argument&) {
        y = leaf(refs_[c].shape, random_dtype());
      }
      op.in = {c, x, y};
    } else if (r < 53) {
      op.kind = Kind::Cast;
      op.dtype = random_dtype();
    } else if (r < 60) {
      op.kind = Kind::Reshape;
      op.shape = reshape_target(ra.shape);
    } else if (r < 65) {
      op.kind = Kind::Permute;
      op.ints.resize(ra.shape.size());
      for (size_t i = 0; i < op.ints.size(); i++) op.ints[i] = static_cast<int64_t>(i);
      std::shuffle(op.ints.begin(), op.ints.end(), g_);
    } else if (r < 70) {
      op.kind = Kind::Expand;
      Shape s = ra.shape;
      for (int64_t& d : s)
        if (d == 1 && chance(0.7)) d = pick(2, 5);
      if (chance(0.3) && s.size() < 4) s.insert(s.begin(), pick(1, 4));
      if (numel(s) > 4096) s = ra.shape;
      op.shape = s;
    } else if (r < 74) {
      op.kind = Kind::Pad;
      for (size_t i = 0; i < ra.shape.size(); i++) op.pairs.emplace_back(pick(0, 2), pick(0, 2));
      if (numel(padded(ra.shape, op.pairs)) > 4096) op.pairs.assign(ra.shape.size(), {0, 0});
    } else if (r < 78) {
      op.kind = Kind::Shrink;
      for (int64_t d : ra.shape) {
        int64_t b = pick64(0, d), e = pick64(b, d);
        op.pairs.emplace_back(b, e);
      }
    } else if (r < 81) {
      op.kind = Kind::Flip;
      for (size_t i = 0; i < ra.shape.size(); i++)
        if (chance(0.5)) op.ints.push_back(static_cast<int64_t>(i));
    } else if (r < 85 && !ra.shape.empty()) {
      op.kind = Kind::Slice;
      int64_t axis = pick(0, static_cast<int>(ra.shape.size()) - 1), d = ra.shape[axis];
      int64_t step = std::array<int64_t, 4>{1, 2, -1, -2}[pick(0, 3)];
      if (step > 0) {
        int64_t start = pick64(0, d), stop = chance(0.3) ? -1 : pick64(start, d);
        op.ints = {axis, start, stop, step};
      } else {
        int64_t start = d > 0 ? pick64(0, d - 1) : 0, stop = chance(0.5) || start == 0 ? -1 : pick64(0, start - 1);
        op.ints = {axis, start, stop, step};
      }
    } else if (r < 88 && !ra.shape.empty()) {
      op.kind = Kind::Cat;
      int64_t axis = pick(0, static_cast<int>(ra.shape.size()) - 1);
      Shape s = ra.shape;
      s[axis] = pick(0, 4);
      if (numel(s) > 4096) s[axis] = 0;
      op.in = {a, leaf(s, ra.dtype)};
      op.ints = {axis};
    } else if (r < 91 && !ra.shape.empty() && (ra.dtype == dtypes::float32 || ra.dtype == dtypes::int32)) {
      op.kind = Kind::Cumsum;
      op.ints = {pick(0, static_cast<int>(ra.shape.size()) - 1)};
    } else if (r < 93 && ra.dtype == dtypes::float32 && ra.shape.size() == 2) {
      op.kind = Kind::Dot;
      int64_t n = std::array<int64_t, 4>{1, 3, 8, 17}[pick(0, 3)];
      op.in = {a, leaf({ra.shape[1], n}, dtypes::float32)};
    } else {
      op.kind = Kind::Reduce;
      op.sub = pick(0, 2);
      op.keepdim = chance(0.4);
      for (size_t i = 0; i < ra.shape.size(); i++)
        if (chance(0.5)) op.ints.push_back(static_cast<int64_t>(i));
      if (op.ints.empty() && !ra.shape.empty()) op.ints.push_back(pick(0, static_cast<int>(ra.shape.size()) - 1));
    }
    push(std::move(op));
  }

  Shape reshape_target(const Shape& s) {
    int64_t n = numel(s);
    Shape out;
    if (n == 0) {
      int rank = pick(1, 3);
      for (int i = 0; i < rank; i++) out.push_back(pick(1, 3));
      out[pick(0, rank - 1)] = 0;
      return out;
    }
    // split n into random factors (rank <= 4), with some 1s
    while (n > 1 && out.size() < 3) {
      std::vector<int64_t> divisors;
      for (int64_t d = 2; d <= n; d++)
        if (n % d == 0) divisors.push_back(d);
      int64_t d = chance(0.4) ? n : divisors[pick(0, static_cast<int>(divisors.size()) - 1)];
      out.push_back(d);
      n /= d;
    }
    if (n > 1) out.push_back(n);
    if (chance(0.3) && out.size() < 4) out.insert(out.begin() + pick(0, static_cast<int>(out.size())), 1);
    return out;
  }

  std::mt19937_64 g_;
  Program p_;
  std::vector<Ref> refs_;
};

// ---- running and checking -------------------------------------------------------------------------------------------

std::vector<Ref> reference_of(const Program& p) {
  std::vector<Ref> refs;
  for (const Op& op : p.ops) refs.push_back(evaluate_ref(op, refs));
  return refs;
}

// Realizes `outputs` of a fresh build of the program; returns the first disagreement, or nullopt.
std::optional<std::string> check(const Program& p, const std::vector<int>& outputs, const std::vector<Ref>& refs) {
  try {
    std::vector<Tensor> t;
    for (const Op& op : p.ops) t.push_back(evaluate_tensor(op, t));
    std::vector<Tensor> outs;
    for (int o : outputs) outs.push_back(t[o]);
    Tensor::realize(outs);
    for (int o : outputs) {
      const Ref& r = refs[o];
      const Tensor& x = t[o];
      if (x.shape() != IntTuple(r.shape)) return "t" + std::to_string(o) + ": shape " + shape_text(x.shape()) + ", expected " + shape_text(r.shape);
      if (x.dtype() != r.dtype) return "t" + std::to_string(o) + ": dtype " + x.dtype().name() + ", expected " + r.dtype.name();
      std::vector<double> got = x.tolist<double>();
      for (size_t k = 0; k < got.size(); k++) {
        if (r.unknown[k]) continue;
        bool is_float = r.dtype.is_float();
        double tol = is_float ? 4 * r.err[k] + 4 * eps_of(r.dtype) * std::fabs(r.v[k]) + tiny_of(r.dtype) : 0;
        bool ok = is_float && std::isfinite(r.v[k]) ? std::fabs(got[k] - r.v[k]) <= tol : got[k] == r.v[k];
        if (!ok) {
          std::ostringstream os;
          os.precision(9);
          os << "t" << o << "[" << k << "] (index " << shape_text(unravel(static_cast<int64_t>(k), r.shape)) << ") is " << got[k]
             << ", expected " << r.v[k] << " within " << tol;
          return os.str();
        }
      }
    }
  } catch (const std::exception& e) {
    return std::string("threw: ") + e.what();
  }
  return std::nullopt;
}

// The ops `out` depends on, renumbered, with `out` as the only output.
Program slice_to(const Program& p, int out) {
  std::vector<uint8_t> need(p.ops.size());
  need[out] = 1;
  for (int i = out; i >= 0; i--)
    if (need[i])
      for (int x : p.ops[i].in) need[x] = 1;
  std::vector<int> renum(p.ops.size(), -1);
  Program q;
  for (int i = 0; i <= out; i++) {
    if (!need[i]) continue;
    Op op = p.ops[i];
    for (int& x : op.in) x = renum[x];
    renum[i] = static_cast<int>(q.ops.size());
    q.ops.push_back(std::move(op));
  }
  q.outputs = {renum[out]};
  return q;
}

// The smallest failing piece: the first value that fails realized on its own, with only what it depends on.
std::string minimized(const Program& p, const std::vector<Ref>& refs, const std::string& first_failure) {
  for (int i = 0; i < static_cast<int>(p.ops.size()); i++) {
    Program q = slice_to(p, i);
    std::optional<std::string> f = check(q, q.outputs, reference_of(q));
    if (f) return "minimized program:\n" + program_text(q) + "failure: " + *f + "\n";
  }
  (void)refs;
  return "the failure needs the whole program (no value fails on its own):\n" + program_text(p) + "failure: " + first_failure + "\n";
}

int64_t env_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::stoll(v) : fallback;
}

TEST(TensorFuzz, RandomProgramsMatchTheFloat64ReferenceOnThisDevice) {
  const int64_t count = env_int("TENSOR_FUZZ_COUNT", 40);
  const auto seed = static_cast<uint64_t>(env_int("TENSOR_FUZZ_SEED", 20261201));
  const bool print = env_int("TENSOR_FUZZ_PRINT", 0) != 0;  // each program before it runs (to find a hang)
  int failures = 0;
  const int64_t first = env_int("TENSOR_FUZZ_FIRST", 0);  // rerun one program of a long run: FIRST=i COUNT=1
  for (int64_t i = first; i < first + count && failures < 3; i++) {
    Generator gen(seed * 1000003u + static_cast<uint64_t>(i));
    Program p = gen.program();
    std::vector<Ref> refs = reference_of(p);
    if (print) std::fprintf(stderr, "program %lld:\n%s", static_cast<long long>(i), program_text(p, 160).c_str());
    std::optional<std::string> f = check(p, p.outputs, refs);
    if (f) {
      failures++;
      ADD_FAILURE() << "program " << i << " (TENSOR_FUZZ_SEED=" << seed << "):\n" << program_text(p) << "failure: " << *f << "\n"
                    << minimized(p, refs, *f);
    }
  }
}

// The checker itself: a wrong answer must be caught (a fuzzer whose check cannot fail proves nothing).
TEST(TensorFuzz, TheCheckCatchesAWrongReference) {
  Program p;
  Op in;
  in.kind = Kind::Input;
  in.dtype = dtypes::float32;
  in.shape = {3};
  in.data = {1.0, 2.0, 3.0};
  p.ops.push_back(in);
  Op add;
  add.kind = Kind::Literal;
  add.in = {0};
  add.sub = static_cast<int>(BinaryOp::Add);
  add.scalar = 1;
  p.ops.push_back(add);
  p.outputs = {1};
  std::vector<Ref> refs = reference_of(p);
  EXPECT_EQ(check(p, p.outputs, refs), std::nullopt);
  refs[1].v[2] += 1e-3;  // 4 + 1e-3 is far outside float32's error of one add
  std::optional<std::string> f = check(p, p.outputs, refs);
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->find("t1[2]"), std::string::npos) << *f;
}

TEST(TensorFuzz, MinimizingKeepsOnlyTheFirstFailingValueAndWhatItNeeds) {
  Program p;
  Op a;
  a.kind = Kind::Input;
  a.dtype = dtypes::int32;
  a.shape = {2};
  a.data = {1, 2};
  p.ops = {a, a};
  Op neg;
  neg.kind = Kind::Unary;
  neg.sub = static_cast<int>(UnaryOp::Neg);
  neg.in = {1};
  p.ops.push_back(neg);
  Op add;
  add.kind = Kind::Binary;
  add.sub = static_cast<int>(BinaryOp::Add);
  add.in = {0, 2};
  p.ops.push_back(add);
  p.outputs = {3};
  Program q = slice_to(p, 2);
  ASSERT_EQ(q.ops.size(), 2u);  // the second input and its negation; the first input is not needed
  EXPECT_EQ(q.ops[1].in, std::vector<int>{0});
  EXPECT_EQ(q.outputs, std::vector<int>{1});
  EXPECT_NE(program_text(q).find("Tensor t1 = t0.neg();"), std::string::npos) << program_text(q);
}

}  // namespace
}  // namespace doorbell::e2e
