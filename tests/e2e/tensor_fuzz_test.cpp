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

constexpr double kEps32 = 0x1p-24;  // float32 unit roundoff (round to nearest)
constexpr double kUnknownAbove = 1e30;  // float32 overflows at 3.4e38: values this large are not compared

// ---- the program --------------------------------------------------------------------------------------------------

enum class Kind { Input, Full, Arange, Unary, Binary, Literal, Where, Cast, Reshape, Permute, Expand, Pad, Shrink, Flip, Reduce };
enum class UnaryOp { Neg, Abs, Relu, Square, Exp2, Sin, BitNot, LogicalNot };
enum class BinaryOp { Add, Sub, Mul, Maximum, Minimum, Lt, Eq, Ne };
enum class ReduceOp { Sum, Max, Min };

const char* name_of(UnaryOp u) {
  static const char* names[] = {"neg", "abs", "relu", "square", "exp2", "sin", "bitwise_not", "logical_not"};
  return names[static_cast<int>(u)];
}
const char* name_of(BinaryOp b) {
  static const char* names[] = {"add", "sub", "mul", "maximum", "minimum", "lt", "eq", "ne"};
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
  Shape shape;                                       // Input/Full/Reshape/Expand; Arange: {n}
  std::vector<int64_t> ints;                         // Permute order, Flip/Reduce axes
  std::vector<std::pair<int64_t, int64_t>> pairs;    // Pad (before, after), Shrink (begin, end)
  double scalar = 0;                                 // Full / Literal value
  bool scalar_is_int = true;                         // a weak int literal or a weak float literal
  bool keepdim = false;
  std::vector<double> data;                          // Input values (already in the dtype)
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
      for (size_t i = 0; i < op.data.size(); i++) os << (i ? ", " : "") << number_text(op.data[i], op.dtype != dtypes::float32);
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

// ---- the reference ----------------------------------------------------------------------------------------------

struct Ref {
  Shape shape;
  DType dtype = dtypes::float32;
  std::vector<double> v, err;  // value; bound on its float32 error (0 for ints and bools)
  std::vector<uint8_t> unknown;
  size_t size() const { return v.size(); }
};

Ref make_ref(Shape shape, DType dt) {
  size_t n = static_cast<size_t>(numel(shape));
  return Ref{std::move(shape), dt, std::vector<double>(n), std::vector<double>(n), std::vector<uint8_t>(n)};
}

bool is_float(DType d) { return d == dtypes::float32; }

int64_t wrap32(int64_t x) { return wrap_to(dtypes::int32, x); }

// Rounds an exact result to float32 and adds the rounding to its error; huge values become unknown.
void settle_float(Ref& r, size_t k) {
  double exact = r.v[k];
  r.v[k] = round_to(dtypes::float32, exact);
  r.err[k] += std::fabs(exact) * kEps32;
  if (!std::isfinite(r.v[k]) || std::fabs(r.v[k]) > kUnknownAbove || r.err[k] > kUnknownAbove) r.unknown[k] = 1;
}

// Converts element k of a to dtype `to` (value, error, unknown).
void convert_into(const Ref& a, size_t ka, DType to, Ref& out, size_t k) {
  double v = a.v[ka], e = a.err[ka];
  out.unknown[k] = a.unknown[ka];
  out.err[k] = 0;
  if (to == dtypes::bool_) {
    out.v[k] = v != 0;
    if (e > 0 && std::fabs(v) <= e) out.unknown[k] = 1;
  } else if (to == dtypes::int32) {
    if (is_float(a.dtype)) {
      double t = std::trunc(v), nearest = std::round(v);
      if (std::fabs(v) >= 2147483647.0 || (e > 0 && nearest != 0 && std::fabs(v - nearest) <= e)) out.unknown[k] = 1;
      out.v[k] = std::fabs(v) < 2147483647.0 ? t : 0;
    } else {
      out.v[k] = static_cast<double>(wrap32(static_cast<int64_t>(v)));
    }
  } else {  // float32
    out.v[k] = v;
    out.err[k] = e;
    settle_float(out, k);
  }
}

Ref convert(const Ref& a, DType to) {
  Ref out = make_ref(a.shape, to);
  for (size_t k = 0; k < a.size(); k++) convert_into(a, k, to, out, k);
  return out;
}

Ref gather(const Ref& a, const Shape& out_shape, const IndexMap& m, double fill = 0) {
  Ref out = make_ref(out_shape, a.dtype);
  for (int64_t k = 0; k < numel(out_shape); k++) {
    std::optional<int64_t> src = m(unravel(k, out_shape));
    if (src) {
      out.v[k] = a.v[*src];
      out.err[k] = a.err[*src];
      out.unknown[k] = a.unknown[*src];
    } else {
      out.v[k] = fill;
    }
  }
  return out;
}

// tinygrad's promotion for the dtypes the fuzzer makes: bool < int32 < float32.
DType promote(DType a, DType b) {
  if (a == dtypes::float32 || b == dtypes::float32) return dtypes::float32;
  if (a == dtypes::int32 || b == dtypes::int32) return dtypes::int32;
  return dtypes::bool_;
}

// A weak literal takes the tensor's dtype, except that a float literal makes an int or bool tensor float32 and an
// int literal makes a bool tensor int32 (tinygrad tensor.py, _broadcasted with python scalars).
DType literal_dtype(DType t, bool literal_is_int) {
  if (t == dtypes::float32) return t;
  if (!literal_is_int) return dtypes::float32;
  return dtypes::int32;
}

bool is_compare(BinaryOp b) { return b == BinaryOp::Lt || b == BinaryOp::Eq || b == BinaryOp::Ne; }

// out[k] = f(a, b) for operands already converted to the computation dtype `dt`.
void binary_element(BinaryOp op, DType dt, const Ref& a, size_t ia, const Ref& b, size_t ib, Ref& out, size_t k) {
  double x = a.v[ia], y = b.v[ib], ex = a.err[ia], ey = b.err[ib];
  out.unknown[k] = a.unknown[ia] || b.unknown[ib];
  out.err[k] = 0;
  if (is_compare(op)) {
    bool close = (ex + ey) > 0 && std::fabs(x - y) <= ex + ey;
    if (close) out.unknown[k] = 1;
    out.v[k] = op == BinaryOp::Lt ? x < y : op == BinaryOp::Eq ? x == y : x != y;
    return;
  }
  if (dt == dtypes::float32) {
    switch (op) {
      case BinaryOp::Add: out.v[k] = x + y; out.err[k] = ex + ey; break;
      case BinaryOp::Sub: out.v[k] = x - y; out.err[k] = ex + ey; break;
      case BinaryOp::Mul: out.v[k] = x * y; out.err[k] = std::fabs(x) * ey + std::fabs(y) * ex + ex * ey; break;
      case BinaryOp::Maximum: out.v[k] = std::max(x, y); out.err[k] = std::max(ex, ey); break;
      case BinaryOp::Minimum: out.v[k] = std::min(x, y); out.err[k] = std::max(ex, ey); break;
      default: break;
    }
    settle_float(out, k);
    return;
  }
  auto xi = static_cast<int64_t>(x), yi = static_cast<int64_t>(y);
  int64_t r = 0;
  switch (op) {
    case BinaryOp::Add: r = xi + yi; break;
    case BinaryOp::Sub: r = xi - yi; break;
    case BinaryOp::Mul: r = xi * yi; break;  // |int32 * int32| < 2^62: exact before the wrap
    case BinaryOp::Maximum: r = std::max(xi, yi); break;
    case BinaryOp::Minimum: r = std::min(xi, yi); break;
    default: break;
  }
  out.v[k] = static_cast<double>(dt == dtypes::bool_ ? (r != 0) : wrap32(r));
}

Ref binary(BinaryOp op, const Ref& a0, const Ref& b0) {
  DType dt = promote(a0.dtype, b0.dtype);
  Ref a = convert(a0, dt), b = convert(b0, dt);
  Shape s = broadcast(a.shape, b.shape);
  std::vector<int64_t> ia = broadcast_index(a.shape, s), ib = broadcast_index(b.shape, s);
  Ref out = make_ref(s, is_compare(op) ? dtypes::bool_ : dt);
  for (size_t k = 0; k < ia.size(); k++) binary_element(op, dt, a, ia[k], b, ib[k], out, k);
  return out;
}

Ref scalar_ref(double v, DType dt) {
  Ref r = make_ref({}, dt);
  r.v[0] = v;
  return r;
}

Ref unary(UnaryOp op, const Ref& a) {
  Ref out = make_ref(a.shape, a.dtype);
  for (size_t k = 0; k < a.size(); k++) {
    double x = a.v[k], e = a.err[k];
    out.unknown[k] = a.unknown[k];
    if (a.dtype == dtypes::float32) {
      switch (op) {
        case UnaryOp::Neg: out.v[k] = -x; out.err[k] = e; break;
        case UnaryOp::Abs: out.v[k] = std::fabs(x); out.err[k] = e; break;
        case UnaryOp::Relu: out.v[k] = std::max(x, 0.0); out.err[k] = e; break;
        case UnaryOp::Square: out.v[k] = x * x; out.err[k] = 2 * std::fabs(x) * e + e * e; break;
        case UnaryOp::Exp2:
          out.v[k] = std::exp2(x);
          // the derivative's bound over [x-e, x+e], plus a few ulp of the approximation
          out.err[k] = std::exp2(x + e) * std::log(2.0) * e + std::fabs(out.v[k]) * 8 * kEps32;
          if (x > 100) out.unknown[k] = 1;
          break;
        case UnaryOp::Sin:
          out.v[k] = std::sin(x);
          out.err[k] = e + 1e-6 + std::fabs(x) * 4 * kEps32;  // argument reduction loses ~ulp(x)
          if (std::fabs(x) > 1e4) out.unknown[k] = 1;
          break;
        default: break;
      }
      settle_float(out, k);
    } else if (a.dtype == dtypes::int32) {
      auto xi = static_cast<int64_t>(x);
      switch (op) {
        case UnaryOp::Neg: out.v[k] = static_cast<double>(wrap32(-xi)); break;
        case UnaryOp::Abs: out.v[k] = static_cast<double>(wrap32(xi < 0 ? -xi : xi)); break;
        case UnaryOp::Relu: out.v[k] = static_cast<double>(std::max<int64_t>(xi, 0)); break;
        case UnaryOp::Square: out.v[k] = static_cast<double>(wrap32(xi * xi)); break;
        case UnaryOp::BitNot: out.v[k] = static_cast<double>(~xi); break;
        default: break;
      }
    } else {  // bool
      out.v[k] = x == 0;  // logical_not is the only unary the fuzzer applies to bools
    }
  }
  return out;
}

Ref reduce_ref(ReduceOp op, const Ref& a0, const std::vector<int64_t>& axes, bool keepdim) {
  // tinygrad sums bools as int32 (sum_acc_dtype); max and min keep the dtype.
  Ref a = op == ReduceOp::Sum && a0.dtype == dtypes::bool_ ? convert(a0, dtypes::int32) : a0;
  Shape kept = a.shape;
  for (int64_t ax : axes) kept[ax] = 1;
  size_t n_out = static_cast<size_t>(numel(kept));
  Ref out = make_ref(kept, a.dtype);
  std::vector<double> abs_sum(n_out), count(n_out);
  std::vector<uint8_t> seen(n_out);
  for (int64_t k = 0; k < numel(a.shape); k++) {
    std::vector<int64_t> idx = unravel(k, a.shape);
    for (int64_t ax : axes) idx[ax] = 0;
    size_t o = static_cast<size_t>(ravel(idx, kept));
    double x = a.v[k];
    out.unknown[o] |= a.unknown[k];
    if (op == ReduceOp::Sum) {
      if (a.dtype == dtypes::int32) out.v[o] = static_cast<double>(wrap32(static_cast<int64_t>(out.v[o]) + static_cast<int64_t>(x)));
      else out.v[o] += x;
      out.err[o] += a.err[k];
      abs_sum[o] += std::fabs(x);
      count[o] += 1;
    } else {
      bool better = !seen[o] || (op == ReduceOp::Max ? x > out.v[o] : x < out.v[o]);
      if (better) out.v[o] = x;
      out.err[o] = std::max(out.err[o], a.err[k]);
      seen[o] = 1;
    }
  }
  for (size_t o = 0; o < n_out; o++) {
    if (op == ReduceOp::Sum && a.dtype == dtypes::float32) {
      // any summation order: |error| <= (n - 1) * u * sum|x|, plus the rounding of the result
      out.err[o] += count[o] * kEps32 * abs_sum[o];
      settle_float(out, o);
      if (abs_sum[o] > kUnknownAbove) out.unknown[o] = 1;
    }
  }
  if (!keepdim) {
    Shape s;
    for (size_t i = 0; i < a.shape.size(); i++)
      if (std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) == axes.end()) s.push_back(a.shape[i]);
    out.shape = s;
  }
  return out;
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
    case Kind::Literal: {
      const Ref& a = vals[op.in[0]];
      DType dt = literal_dtype(a.dtype, op.scalar_is_int);
      return binary(static_cast<BinaryOp>(op.sub), convert(a, dt), scalar_ref(op.scalar, dt));
    }
    case Kind::Where: {
      const Ref &c = vals[op.in[0]], &x0 = vals[op.in[1]], &y0 = vals[op.in[2]];
      DType dt = promote(x0.dtype, y0.dtype);
      Ref x = convert(x0, dt), y = convert(y0, dt);
      Shape s = broadcast(c.shape, broadcast(x.shape, y.shape));
      std::vector<int64_t> ic = broadcast_index(c.shape, s), ix = broadcast_index(x.shape, s), iy = broadcast_index(y.shape, s);
      Ref out = make_ref(s, dt);
      for (size_t k = 0; k < ic.size(); k++) {
        const Ref& pick = c.v[ic[k]] != 0 ? x : y;
        size_t ip = static_cast<size_t>(c.v[ic[k]] != 0 ? ix[k] : iy[k]);
        out.v[k] = pick.v[ip];
        out.err[k] = pick.err[ip];
        out.unknown[k] = c.unknown[ic[k]] || pick.unknown[ip];
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
      for (size_t k = 0; k < idx.size(); k++) {
        out.v[k] = a.v[idx[k]];
        out.err[k] = a.err[idx[k]];
        out.unknown[k] = a.unknown[idx[k]];
      }
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
          case BinaryOp::Maximum: return in(0).maximum(rhs);
          case BinaryOp::Minimum: return in(0).minimum(rhs);
          case BinaryOp::Lt: return in(0).lt(rhs);
          case BinaryOp::Eq: return in(0).eq(rhs);
          case BinaryOp::Ne: return in(0).ne(rhs);
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
    case Kind::Pad: {
      return in(0).pad(op.pairs);
    }
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
    // outputs: the last value and any value nothing uses (a multi-output schedule)
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
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(g_) < p; }
  int last() const { return static_cast<int>(p_.ops.size()) - 1; }

  int push(Op op) {
    refs_.push_back(evaluate_ref(op, refs_));
    p_.ops.push_back(std::move(op));
    return last();
  }

  DType random_dtype() {
    int r = pick(0, 9);
    return r < 6 ? dtypes::float32 : r < 9 ? dtypes::int32 : dtypes::bool_;
  }

  Shape random_shape() {
    static const int64_t dims[] = {1, 1, 2, 3, 4, 5, 7, 8, 16, 17, 33};
    int rank = pick(0, 4);
    Shape s;
    for (int i = 0; i < rank; i++) s.push_back(chance(0.04) ? 0 : dims[pick(0, 10)]);
    while (numel(s) > 2048) *std::max_element(s.begin(), s.end()) = 1;
    return s;
  }

  double random_value(DType dt) {
    if (dt == dtypes::bool_) return pick(0, 1);
    if (dt == dtypes::int32) {
      if (chance(0.05)) return chance(0.5) ? 2147483647.0 : -2147483648.0;
      return pick(-9, 9);
    }
    if (chance(0.1)) return pick(-3, 3);  // exact small integers make ties in max, where and comparisons
    return round_to(dtypes::float32, std::uniform_real_distribution<double>(-4, 4)(g_));
  }

  int leaf(const Shape& shape, DType dt) {
    Op op;
    op.dtype = dt;
    op.shape = shape;
    int r = pick(0, 9);
    if (r < 7 || shape.empty()) {
      op.kind = Kind::Input;
      op.data.resize(static_cast<size_t>(numel(shape)));
      for (double& v : op.data) v = random_value(dt);
    } else if (r < 9 || dt == dtypes::bool_ || shape.size() != 1) {
      op.kind = Kind::Full;
      op.scalar = random_value(dt);
      op.scalar_is_int = dt != dtypes::float32;
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
  int partner_for(int a) {
    const Shape& sa = refs_[a].shape;
    std::vector<int> fits;
    for (int i = 0; i < static_cast<int>(refs_.size()); i++) {
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
    return leaf(s, random_dtype());
  }

  int bool_for(int a) {
    if (refs_[a].dtype == dtypes::bool_ && chance(0.5)) return a;
    Op op;
    op.kind = Kind::Literal;
    op.in = {a};
    op.sub = static_cast<int>(chance(0.5) ? BinaryOp::Lt : BinaryOp::Ne);
    op.scalar_is_int = refs_[a].dtype != dtypes::float32 || chance(0.5);
    op.scalar = op.scalar_is_int ? pick(-2, 2) : pick(-8, 8) / 4.0;
    return push(std::move(op));
  }

  void step() {
    int a = any_value();
    const Ref& ra = refs_[a];
    Op op;
    op.in = {a};
    int r = pick(0, 99);
    if (r < 14) {
      op.kind = Kind::Unary;
      if (ra.dtype == dtypes::bool_) op.sub = static_cast<int>(UnaryOp::LogicalNot);
      else if (ra.dtype == dtypes::int32) {
        static const UnaryOp ops[] = {UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Relu, UnaryOp::Square, UnaryOp::BitNot};
        op.sub = static_cast<int>(ops[pick(0, 4)]);
      } else {
        static const UnaryOp ops[] = {UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Relu, UnaryOp::Square, UnaryOp::Exp2, UnaryOp::Sin};
        op.sub = static_cast<int>(ops[pick(0, 5)]);
      }
    } else if (r < 32) {
      op.kind = Kind::Binary;
      int b = partner_for(a);
      op.in = {a, b};
      op.sub = pick(0, 7);
      // bool arithmetic is or/and in tinygrad; the fuzzer keeps to the ops whose bool meaning is unambiguous
      if (promote(refs_[a].dtype, refs_[b].dtype) == dtypes::bool_ && op.sub <= static_cast<int>(BinaryOp::Mul)) op.sub = static_cast<int>(BinaryOp::Ne);
    } else if (r < 42) {
      op.kind = Kind::Literal;
      op.sub = pick(0, 7);
      op.scalar_is_int = chance(0.6);
      op.scalar = op.scalar_is_int ? pick(-5, 5) : pick(-12, 12) / 4.0;
      if (ra.dtype == dtypes::bool_ && op.sub == static_cast<int>(BinaryOp::Sub)) op.sub = static_cast<int>(BinaryOp::Add);
    } else if (r < 48) {
      op.kind = Kind::Where;
      int c = bool_for(a);
      int x = partner_for(c), y = partner_for(c);
      op.in = {c, x, y};
    } else if (r < 55) {
      op.kind = Kind::Cast;
      op.dtype = random_dtype();
    } else if (r < 63) {
      op.kind = Kind::Reshape;
      op.shape = reshape_target(ra.shape);
    } else if (r < 69) {
      op.kind = Kind::Permute;
      op.ints.resize(ra.shape.size());
      for (size_t i = 0; i < op.ints.size(); i++) op.ints[i] = static_cast<int64_t>(i);
      std::shuffle(op.ints.begin(), op.ints.end(), g_);
    } else if (r < 75) {
      op.kind = Kind::Expand;
      Shape s = ra.shape;
      for (int64_t& d : s)
        if (d == 1 && chance(0.7)) d = pick(2, 5);
      if (chance(0.3) && s.size() < 4) s.insert(s.begin(), pick(1, 4));
      if (numel(s) > 4096) s = ra.shape;
      op.shape = s;
    } else if (r < 80) {
      op.kind = Kind::Pad;
      for (size_t i = 0; i < ra.shape.size(); i++) op.pairs.emplace_back(pick(0, 2), pick(0, 2));
      if (numel(padded(ra.shape, op.pairs)) > 4096) op.pairs.assign(ra.shape.size(), {0, 0});
    } else if (r < 85) {
      op.kind = Kind::Shrink;
      for (int64_t d : ra.shape) {
        int64_t b = pick(0, static_cast<int>(d)), e = pick(static_cast<int>(b), static_cast<int>(d));
        op.pairs.emplace_back(b, e);
      }
    } else if (r < 89) {
      op.kind = Kind::Flip;
      for (size_t i = 0; i < ra.shape.size(); i++)
        if (chance(0.5)) op.ints.push_back(static_cast<int64_t>(i));
    } else {
      op.kind = Kind::Reduce;
      op.sub = pick(0, 2);
      op.keepdim = chance(0.4);
      for (size_t i = 0; i < ra.shape.size(); i++)
        if (chance(0.5)) op.ints.push_back(static_cast<int64_t>(i));
      if (op.ints.empty() && !ra.shape.empty()) op.ints.push_back(pick(0, static_cast<int>(ra.shape.size()) - 1));
      bool empty_group = false;
      for (int64_t ax : op.ints) empty_group |= ra.shape[ax] == 0;
      if (empty_group) op.sub = static_cast<int>(ReduceOp::Sum);  // max/min of nothing has no value to check
      if (ra.shape.empty()) op.ints.clear();
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
        double tol = 4 * r.err[k] + (r.dtype == dtypes::float32 ? 4 * kEps32 * std::fabs(r.v[k]) : 0);
        bool ok = r.dtype == dtypes::float32 ? std::fabs(got[k] - r.v[k]) <= tol : got[k] == r.v[k];
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
