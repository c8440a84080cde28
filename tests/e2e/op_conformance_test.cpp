// Op conformance: every frontend op over shapes (0-size, 1 element, odd, non-power-of-two, more than 2^16 elements),
// dtypes, broadcasting, movement, reductions, matmul and softmax, realized end to end (schedule, kernels, CPU device)
// and compared with an independent float64 / exact-integer reference (float64_reference.h) computed here from the
// same inputs the library sees (random values already rounded to the input dtype). Floats are checked within a few
// units of the output dtype's precision; integers and bools exactly (wraparound, floor division of negatives).
// Related ops of one dtype are stacked into one kernel (expect_stacked) and checked one by one, so the suite compiles
// ~300 kernels, not one per op. ctest runs every case twice: with the optimizer on and with NOOPT=1.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numbers>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "float64_reference.h"
#include "frontend/tensor.h"

namespace doorbell {
inline void PrintTo(const DType& d, std::ostream* os) { *os << d.name(); }  // readable gtest parameter names

}  // namespace doorbell

namespace doorbell::e2e {

namespace {

// Every case struct has a name: ctest lists it instead of the struct's bytes (found by ADL in this namespace).
template <class T>
  requires requires(const T& t) { std::string(t.name); }
void PrintTo(const T& t, std::ostream* os) {
  *os << t.name;
}
template <class T>
  requires requires(const T* t) { std::string(t->name); }
void PrintTo(const T* t, std::ostream* os) {
  *os << t->name;
}

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- inputs ------------------------------------------------------------------------------------------------------

// A generator seeded from the case name (FNV-1a), so every case has its own fixed inputs on every machine.
std::mt19937_64 rng_for(std::string_view name) {
  uint64_t h = 1469598103934665603ull;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return std::mt19937_64(h ^ 20261129u);
}

std::string current_case_name() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::string(info->test_suite_name()) + "." + info->name();
}

// Uniform values in [lo, hi), rounded to the float dtype `dt` (what the library will hold).
F64 uniform(const Shape& shape, double lo, double hi, DType dt, std::mt19937_64& g) {
  std::uniform_real_distribution<double> d(lo, hi);
  F64 a{shape, std::vector<double>(static_cast<size_t>(numel(shape)))};
  for (double& v : a.data) v = round_to(dt, d(g));
  return a;
}

// Uniform integers in [lo, hi].
I64 uniform_int(const Shape& shape, int64_t lo, int64_t hi, std::mt19937_64& g) {
  std::uniform_int_distribution<int64_t> d(lo, hi);
  I64 a{shape, std::vector<int64_t>(static_cast<size_t>(numel(shape)))};
  for (int64_t& v : a.data) v = d(g);
  return a;
}

int64_t min_of(DType dt) {
  if (dt == dtypes::bool_ || dt.is_unsigned()) return 0;
  return dt == dtypes::int8 ? INT8_MIN : dt == dtypes::int16 ? INT16_MIN : dt == dtypes::int32 ? INT32_MIN : INT64_MIN;
}
int64_t max_of(DType dt) {
  if (dt == dtypes::bool_) return 1;
  if (dt == dtypes::uint8) return UINT8_MAX;
  if (dt == dtypes::uint16) return UINT16_MAX;
  if (dt == dtypes::uint32) return UINT32_MAX;
  return dt == dtypes::int8 ? INT8_MAX : dt == dtypes::int16 ? INT16_MAX : dt == dtypes::int32 ? INT32_MAX : INT64_MAX;
}

// Tensors built from values that are exact in `dt`, so creation itself rounds nothing.
Tensor to_tensor(const F64& a, DType dt) {
  if (dt.is_float()) {
    std::vector<float> v(a.data.begin(), a.data.end());  // f16 / bf16 / f32 values are exact in float
    return Tensor(v, a.shape, dt);
  }
  std::vector<int64_t> v;
  for (double x : a.data) v.push_back(static_cast<int64_t>(x));
  return Tensor(v, a.shape, dt);
}
Tensor to_tensor(const I64& a, DType dt) { return Tensor(a.data, a.shape, dt); }

F64 to_f64(const I64& a) {
  return map(a, [](int64_t v) { return static_cast<double>(v); });
}

// ---- checks ------------------------------------------------------------------------------------------------------

struct Tol {
  double rtol = 0, atol = 0;
  double mag_rtol = 0;  // times mag[i] (the sum of |terms| of a reduction), for sums with cancellation
};
// `n` units of `dt`'s precision, relative to the value and, near zero, to `scale`.
Tol ulps(DType dt, double n, double scale = 1) { return {n * epsilon(dt), n * epsilon(dt) * scale, 0}; }

std::string index_str(int64_t flat, const Shape& shape) {
  std::ostringstream os;
  os << "[";
  std::vector<int64_t> idx = unravel(flat, shape);
  for (size_t i = 0; i < idx.size(); i++) os << (i ? ", " : "") << idx[i];
  os << "]";
  return os.str();
}

std::string shape_str(const Shape& s) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < s.size(); i++) os << (i ? ", " : "") << s[i];
  os << (s.size() == 1 ? ",)" : ")");
  return os.str();
}

// "" when every value matches `want` rounded to `dt` (NaN matches NaN, infinities match exactly, the rest within
// tol), else the first mismatch and the number of mismatches.
std::string mismatch(const double* got, const F64& want, DType dt, Tol tol, const F64* mag) {
  size_t bad = 0, first = 0;
  double first_allowed = 0, first_want = 0;
  for (size_t i = 0; i < want.data.size(); i++) {
    double w = dt.is_float() ? round_to(dt, want.data[i]) : want.data[i];
    double allowed = tol.atol + tol.rtol * std::fabs(w) + (mag ? tol.mag_rtol * mag->data[i] : 0);
    bool ok = std::isnan(w) ? std::isnan(got[i]) : std::isinf(w) || allowed == 0 ? got[i] == w : std::fabs(got[i] - w) <= allowed;
    if (!ok && bad++ == 0) first = i, first_allowed = allowed, first_want = w;
  }
  if (!bad) return "";
  std::ostringstream os;
  os.precision(9);
  os << bad << " of " << want.data.size() << " elements differ; first at " << index_str(static_cast<int64_t>(first), want.shape)
     << ": got " << got[first] << ", expected " << first_want << " (" << dt.name() << ", tolerance " << first_allowed << ")";
  return os.str();
}

std::string mismatch_exact(const int64_t* got, const I64& want, DType dt) {
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < want.data.size(); i++)
    if (got[i] != want.data[i] && bad++ == 0) first = i;
  if (!bad) return "";
  std::ostringstream os;
  os << bad << " of " << want.data.size() << " elements differ; first at " << index_str(static_cast<int64_t>(first), want.shape)
     << ": got " << got[first] << ", expected " << want.data[first] << " (" << dt.name() << ", exact)";
  return os.str();
}

// Realizes `t` and checks its dtype, shape and values.
void expect_close(const Tensor& t, const F64& want, DType dt, Tol tol, const F64* mag = nullptr) {
  ASSERT_EQ(t.dtype(), dt) << "dtype " << t.dtype().name() << ", expected " << dt.name();
  ASSERT_EQ(t.shape(), want.shape) << "shape " << shape_str(t.shape()) << ", expected " << shape_str(want.shape);
  std::vector<double> got = t.tolist<double>();
  ASSERT_EQ(got.size(), want.data.size());
  std::string m = mismatch(got.data(), want, dt, tol, mag);
  if (!m.empty()) ADD_FAILURE() << m;
}

// Exact check of an integer or bool result, read back as int64.
void expect_exact(const Tensor& t, const I64& want, DType dt) {
  ASSERT_EQ(t.dtype(), dt) << "dtype " << t.dtype().name() << ", expected " << dt.name();
  ASSERT_EQ(t.shape(), want.shape) << "shape " << shape_str(t.shape()) << ", expected " << shape_str(want.shape);
  std::vector<int64_t> got = t.tolist<int64_t>();
  ASSERT_EQ(got.size(), want.data.size());
  std::string m = mismatch_exact(got.data(), want, dt);
  if (!m.empty()) ADD_FAILURE() << m;
}

// Several results of one dtype and shape, computed by one kernel (stacked on a new axis 0, so their ops fuse into
// one meatier kernel instead of one small kernel each), then checked one by one under their own names.
struct Check {
  std::string what;
  Tensor result;
  F64 want;
  Tol tol;
};
void expect_stacked(const std::vector<Check>& checks, DType dt) {
  std::vector<Tensor> parts;
  for (const Check& c : checks) parts.push_back(c.result);
  Tensor all = Tensor::stack(parts, 0);
  const Shape& shape = checks.at(0).want.shape;
  for (const Check& c : checks) {
    ASSERT_EQ(c.result.dtype(), dt) << c.what << ": dtype " << c.result.dtype().name() << ", expected " << dt.name();
    ASSERT_EQ(c.result.shape(), shape) << c.what << ": shape " << shape_str(c.result.shape()) << ", expected " << shape_str(shape);
  }
  std::vector<double> got = all.tolist<double>();
  size_t n = static_cast<size_t>(numel(shape));
  ASSERT_EQ(got.size(), n * checks.size());
  for (size_t k = 0; k < checks.size(); k++) {
    std::string m = mismatch(got.data() + k * n, checks[k].want, dt, checks[k].tol, nullptr);
    if (!m.empty()) ADD_FAILURE() << checks[k].what << ": " << m;
  }
}

struct ExactCheck {
  std::string what;
  Tensor result;
  I64 want;
};
void expect_stacked_exact(const std::vector<ExactCheck>& checks, DType dt) {
  std::vector<Tensor> parts;
  for (const ExactCheck& c : checks) parts.push_back(c.result);
  Tensor all = Tensor::stack(parts, 0);
  const Shape& shape = checks.at(0).want.shape;
  for (const ExactCheck& c : checks) {
    ASSERT_EQ(c.result.dtype(), dt) << c.what << ": dtype " << c.result.dtype().name() << ", expected " << dt.name();
    ASSERT_EQ(c.result.shape(), shape) << c.what << ": shape " << shape_str(c.result.shape()) << ", expected " << shape_str(shape);
  }
  std::vector<int64_t> got = all.tolist<int64_t>();
  size_t n = static_cast<size_t>(numel(shape));
  ASSERT_EQ(got.size(), n * checks.size());
  for (size_t k = 0; k < checks.size(); k++) {
    std::string m = mismatch_exact(got.data() + k * n, checks[k].want, dt);
    if (!m.empty()) ADD_FAILURE() << checks[k].what << ": " << m;
  }
}

std::string param_name(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

template <class P>
std::string name_of(const ::testing::TestParamInfo<P>& info) {
  return param_name(info.param.name);
}

const DType kHalfTypes[] = {dtypes::float16, dtypes::bfloat16};

// ==== unary float math ==============================================================================================

struct UnaryOp {
  const char* name;
  Tensor (*op)(const Tensor&);
  double (*ref)(double);
  double lo, hi;       // input domain where the op is defined and well conditioned
  bool random_sign;    // inputs drawn in [lo, hi) then negated half the time (keeps them away from 0)
  double ulps;         // tolerance in units of the output dtype; composed ops round more than once
  double scale = 1;    // absolute tolerance near zero, times ulps * epsilon
  bool halves = true;  // also run for float16 and bfloat16
};

double sigmoid_ref(double x) { return 1 / (1 + std::exp(-x)); }
double gelu_ref(double x) {  // tinygrad's tanh approximation, which the frontend documents
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
}

const UnaryOp kUnaryOps[] = {
    {"neg", [](const Tensor& t) { return -t; }, [](double x) { return -x; }, -10, 10, false, 0},
    {"exp", [](const Tensor& t) { return t.exp(); }, [](double x) { return std::exp(x); }, -3, 3, false, 4},
    {"exp2", [](const Tensor& t) { return t.exp2(); }, [](double x) { return std::exp2(x); }, -10, 10, false, 2},
    {"log", [](const Tensor& t) { return t.log(); }, [](double x) { return std::log(x); }, 0.01, 100, false, 4, 4},
    {"log2", [](const Tensor& t) { return t.log2(); }, [](double x) { return std::log2(x); }, 0.01, 100, false, 2, 4},
    {"sin", [](const Tensor& t) { return t.sin(); }, [](double x) { return std::sin(x); }, -6, 6, false, 4},
    // cos(x) = sin(pi/2 - x): the subtraction rounds in the input dtype, an absolute error of ~|x| ulps.
    {"cos", [](const Tensor& t) { return t.cos(); }, [](double x) { return std::cos(x); }, -3, 3, false, 4, 3},
    {"tan", [](const Tensor& t) { return t.tan(); }, [](double x) { return std::tan(x); }, -1, 1, false, 8, 2, false},
    {"sqrt", [](const Tensor& t) { return t.sqrt(); }, [](double x) { return std::sqrt(x); }, 0, 100, false, 1},
    {"rsqrt", [](const Tensor& t) { return t.rsqrt(); }, [](double x) { return 1 / std::sqrt(x); }, 0.01, 100, false, 2, 1, false},
    {"reciprocal", [](const Tensor& t) { return t.reciprocal(); }, [](double x) { return 1 / x; }, 0.1, 10, true, 1},
    {"relu", [](const Tensor& t) { return t.relu(); }, [](double x) { return x > 0 ? x : 0.0; }, -5, 5, false, 0},
    {"sigmoid", [](const Tensor& t) { return t.sigmoid(); }, sigmoid_ref, -10, 10, false, 4},
    {"tanh", [](const Tensor& t) { return t.tanh(); }, [](double x) { return std::tanh(x); }, -5, 5, false, 8, 2},
    {"gelu", [](const Tensor& t) { return t.gelu(); }, gelu_ref, -3, 3, false, 16, 2, false},
    {"silu", [](const Tensor& t) { return t.silu(); }, [](double x) { return x * sigmoid_ref(x); }, -5, 5, false, 8, 2, false},
    {"abs", [](const Tensor& t) { return t.abs(); }, [](double x) { return std::fabs(x); }, -10, 10, false, 0},
    {"square", [](const Tensor& t) { return t.square(); }, [](double x) { return x * x; }, -10, 10, false, 1, 1, false},
    {"sign", [](const Tensor& t) { return t.sign(); }, [](double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; }, -3, 3, false, 0, 1, false},
    {"trunc", [](const Tensor& t) { return t.trunc(); }, [](double x) { return std::trunc(x); }, -100, 100, false, 0},
    {"floor", [](const Tensor& t) { return t.floor(); }, [](double x) { return std::floor(x); }, -100, 100, false, 0},
    {"ceil", [](const Tensor& t) { return t.ceil(); }, [](double x) { return std::ceil(x); }, -100, 100, false, 0, 1, false},
    // std::nearbyint rounds half to even in the default rounding mode.
    {"round", [](const Tensor& t) { return t.round(); }, [](double x) { return std::nearbyint(x); }, -100, 100, false, 0},
    // Abramowitz and Stegun 7.1.26: |error| <= 1.5e-7, about one float32 unit near 1.
    {"erf", [](const Tensor& t) { return t.erf(); }, [](double x) { return std::erf(x); }, -3, 3, false, 8, 2},
    {"gelu_erf", [](const Tensor& t) { return t.gelu(GeluApproximation::none); },
     [](double x) { return 0.5 * x * (1 + std::erf(x / std::numbers::sqrt2)); }, -3, 3, false, 16, 2, false},
};

// Infinities, NaN, signed zeros, subnormals and overflow edges appended to the float32 inputs of an op, where the
// frontend defines the same result as the math function (relu(NaN) is 0: it is (x > 0).where(x, 0), as in tinygrad).
struct Specials {
  const char* op;
  std::vector<double> extra;
  bool nan = true;
};

const Specials kSpecials[] = {
    {"exp", {89.0, -104.0, -200.0}},  // exp = exp2(x * log2(e)) is ~|x| units off for large |x|: only the edges
    {"exp2", {127.5, 128.0, -126.0, -140.0, -150.0}},
    {"log", {1e-38, 3e38, -1.0}},
    {"log2", {0x1p-126, 3e38, -1.0}},
    {"sqrt", {1e-38, 3e38, -1.0}},
    {"reciprocal", {3e38, -3e38}},
    {"sigmoid", {50.0, -50.0, 100.0}},
    {"tanh", {20.0, -20.0}},
    {"sin", {100.0, -30.0}},
    {"abs", {3e38, -3e38}},
    {"neg", {3e38, -3e38}},
    {"relu", {3e38, -3e38}, false},
    {"floor", {-0.5, 0.5, 1e30, -1e30, 8388607.5}},
    {"ceil", {-0.5, 0.5, 1e30, -1e30, -8388607.5}},
    {"trunc", {-0.5, 0.5, 1e30, -1e30, 8388607.5}},
    // Ties go to the even neighbour; 2^23 + 1 is odd with no fraction (x + 0.5 would round up first).
    {"round", {-3.5, -0.5, 0.5, 2.5, 3.5, -2.5, 8388607.5, 8388609.0, -8388609.0, 1e30, -1e30}},
    {"erf", {10.0, -10.0}},
};

F64 unary_input(const UnaryOp& op, const Shape& shape, DType dt, std::mt19937_64& g) {
  F64 x = uniform(shape, op.lo, op.hi, dt, g);
  if (op.random_sign)
    for (double& v : x.data) v = g() & 1 ? -v : v;
  return x;
}

class Unary : public ::testing::TestWithParam<const UnaryOp*> {};

// float32: random values in the op's domain, then the special values.
TEST_P(Unary, Float32MatchesFloat64Reference) {
  const UnaryOp& op = *GetParam();
  std::mt19937_64 g = rng_for(op.name);
  F64 x = unary_input(op, {65}, dtypes::float32, g);
  for (const Specials& s : kSpecials)
    if (s.op == std::string_view(op.name)) {
      std::vector<double> v = {0.0, -0.0, kInf, -kInf, 1e-40, -1e-40, 1.5, -2.5};
      if (s.nan) v.push_back(kNaN);
      v.insert(v.end(), s.extra.begin(), s.extra.end());
      for (double d : v) x.data.push_back(round_to(dtypes::float32, d));
      x.shape = {static_cast<int64_t>(x.data.size())};
    }
  // a multiple of 16 elements, so the CPU computes the special values in vector lanes too (compiler/cpu/vectorize.h)
  F64 more = unary_input(op, {16}, dtypes::float32, g);
  for (size_t i = 0; x.data.size() % 16 != 0; i++) x.data.push_back(more.data[i]);
  x.shape = {static_cast<int64_t>(x.data.size())};
  expect_close(op.op(to_tensor(x, dtypes::float32)), map(x, op.ref), dtypes::float32, ulps(dtypes::float32, op.ulps, op.scale));
}

std::vector<const UnaryOp*> unary_ops() {
  std::vector<const UnaryOp*> out;
  for (const UnaryOp& op : kUnaryOps) out.push_back(&op);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, Unary, ::testing::ValuesIn(unary_ops()),
                         [](const ::testing::TestParamInfo<const UnaryOp*>& i) { return std::string(i.param->name); });

// float16 and bfloat16: every op on its own input, all in one kernel per dtype.
class UnaryHalf : public ::testing::TestWithParam<DType> {};

TEST_P(UnaryHalf, AllOpsMatchFloat64Reference) {
  DType dt = GetParam();
  std::mt19937_64 g = rng_for(current_case_name());
  std::vector<Check> checks;
  for (const UnaryOp& op : kUnaryOps)
    if (op.halves) {
      F64 x = unary_input(op, {13, 5}, dt, g);
      checks.push_back({op.name, op.op(to_tensor(x, dt)), map(x, op.ref), ulps(dt, op.ulps, op.scale)});
    }
  expect_stacked(checks, dt);
}

// Infinities, NaN, signed zeros, the largest finite value, subnormals and overflow in the 16-bit formats.
TEST_P(UnaryHalf, SpecialValuesMatchFloat64Reference) {
  DType dt = GetParam();
  std::vector<double> v = {0.0, -0.0, kInf, -kInf, kNaN, 1.5, -2.5, 0x1p-24, -0x1p-20, 65504.0, 1e30};
  F64 x{{static_cast<int64_t>(v.size())}, {}};
  for (double d : v) x.data.push_back(round_to(dt, d));
  std::vector<Check> checks;
  for (const char* name : {"neg", "abs", "exp2", "sqrt", "reciprocal", "log2", "floor", "sigmoid"})
    for (const UnaryOp& op : kUnaryOps)
      if (op.name == std::string_view(name)) {
        // exp2(x) for x = 65504 and 1e30 overflows to inf, as do the reciprocals of subnormals in float16.
        checks.push_back({op.name, op.op(to_tensor(x, dt)), map(x, op.ref), ulps(dt, std::max(op.ulps, 1.0))});
      }
  expect_stacked(checks, dt);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, UnaryHalf, ::testing::ValuesIn(kHalfTypes),
                         [](const ::testing::TestParamInfo<DType>& i) { return param_name(i.param.name()); });

// Integer and bool inputs of float math compute in the default float (float32), in one kernel.
TEST(UnaryOfIntegers, ComputeInFloat32) {
  std::mt19937_64 g = rng_for(current_case_name());
  I64 i32 = uniform_int({13, 5}, 0, 1000000, g), i8 = uniform_int({13, 5}, -128, 127, g), u8 = uniform_int({13, 5}, 0, 255, g);
  I64 b = uniform_int({13, 5}, 0, 1, g);
  auto f = [](const I64& a) { return to_f64(a); };
  const DType f32 = dtypes::float32;
  expect_stacked({{"sqrt of int32", to_tensor(i32, dtypes::int32).sqrt(), map(f(i32), [](double v) { return std::sqrt(round_to(dtypes::float32, v)); }), ulps(f32, 1)},
                  {"sin of int8", to_tensor(i8, dtypes::int8).sin(), map(f(i8), [](double v) { return std::sin(v); }), ulps(f32, 4)},
                  {"log2 of uint8 + 1", (to_tensor(u8, dtypes::uint8).cast(dtypes::int32) + 1).log2(), map(f(u8), [](double v) { return std::log2(v + 1); }), ulps(f32, 2, 8)},
                  {"sigmoid of bool", to_tensor(b, dtypes::bool_).sigmoid(), map(f(b), sigmoid_ref), ulps(f32, 4)},
                  {"int32 times 2.5", to_tensor(i32, dtypes::int32) * 2.5, map(f(i32), [](double v) { return round_to(dtypes::float32, v) * 2.5; }), ulps(f32, 1)}},
                 f32);
}

// ==== binary float ops ==============================================================================================

struct BinaryFloatOp {
  const char* name;
  std::function<Tensor(const Tensor&, const Tensor&)> op;
  std::function<double(double, double)> ref;
  double alo, ahi, blo, bhi;
  bool b_random_sign, integral, compare;  // integral: small integer values, so == and ties happen
  double ulps;
  bool halves = true;
};

double python_fmod(double a, double b) {  // Python's float %: the sign of the divisor
  double r = std::fmod(a, b);
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

const BinaryFloatOp kBinaryFloatOps[] = {
    {"add", [](const Tensor& a, const Tensor& b) { return a + b; }, [](double a, double b) { return a + b; }, -10, 10, -10, 10, false, false, false, 1},
    {"sub", [](const Tensor& a, const Tensor& b) { return a - b; }, [](double a, double b) { return a - b; }, -10, 10, -10, 10, false, false, false, 1},
    {"mul", [](const Tensor& a, const Tensor& b) { return a * b; }, [](double a, double b) { return a * b; }, -10, 10, -10, 10, false, false, false, 1},
    // a / b = a * reciprocal(b): two roundings.
    {"div", [](const Tensor& a, const Tensor& b) { return a / b; }, [](double a, double b) { return a / b; }, -10, 10, 0.25, 8, true, false, false, 2},
    {"maximum", [](const Tensor& a, const Tensor& b) { return a.maximum(b); }, [](double a, double b) { return std::max(a, b); }, -4, 4, -4, 4, false, true, false, 0},
    {"minimum", [](const Tensor& a, const Tensor& b) { return a.minimum(b); }, [](double a, double b) { return std::min(a, b); }, -4, 4, -4, 4, false, true, false, 0},
    {"pow", [](const Tensor& a, const Tensor& b) { return a.pow(b); }, [](double a, double b) { return std::pow(a, b); }, 0.5, 4, -2, 2, false, false, false, 4},
    {"mod", [](const Tensor& a, const Tensor& b) { return a % b; }, python_fmod, -10, 10, 0.5, 4, true, false, false, 8, false},
    {"lt", [](const Tensor& a, const Tensor& b) { return a < b; }, [](double a, double b) { return double(a < b); }, -4, 4, -4, 4, false, true, true, 0},
    {"le", [](const Tensor& a, const Tensor& b) { return a <= b; }, [](double a, double b) { return double(a <= b); }, -4, 4, -4, 4, false, true, true, 0},
    {"eq", [](const Tensor& a, const Tensor& b) { return a == b; }, [](double a, double b) { return double(a == b); }, -4, 4, -4, 4, false, true, true, 0},
    {"ne", [](const Tensor& a, const Tensor& b) { return a != b; }, [](double a, double b) { return double(a != b); }, -4, 4, -4, 4, false, true, true, 0},
    {"gt", [](const Tensor& a, const Tensor& b) { return a > b; }, [](double a, double b) { return double(a > b); }, -4, 4, -4, 4, false, true, true, 0},
    // The quotient rounded to an integer: exact unless a / b lands within two units of an integer (not in these draws).
    {"div_trunc", [](const Tensor& a, const Tensor& b) { return a.div(b, Rounding::trunc); }, [](double a, double b) { return std::trunc(a / b); },
     -100, 100, 0.25, 8, true, false, false, 0, false},
    {"div_floor", [](const Tensor& a, const Tensor& b) { return a.div(b, Rounding::floor); }, [](double a, double b) { return std::floor(a / b); },
     -100, 100, 0.25, 8, true, false, false, 0, false},
    {"fmod", [](const Tensor& a, const Tensor& b) { return a.fmod(b); }, [](double a, double b) { return std::fmod(a, b); },
     -10, 10, 0.5, 4, true, false, false, 8, false},
};

struct BinaryFloatCase {
  std::string name;
  std::vector<const BinaryFloatOp*> ops;  // more than one: stacked into one kernel
  DType dt;
};

std::vector<BinaryFloatCase> binary_float_cases() {
  std::vector<BinaryFloatCase> out;
  std::vector<const BinaryFloatOp*> compares, half_arith, half_compares;
  for (const BinaryFloatOp& op : kBinaryFloatOps) {
    if (op.compare) compares.push_back(&op);
    else out.push_back({std::string(op.name) + "_float32", {&op}, dtypes::float32});
    if (op.halves) (op.compare ? half_compares : half_arith).push_back(&op);
  }
  out.push_back({"compare_float32", compares, dtypes::float32});
  for (DType dt : kHalfTypes) {
    out.push_back({"arithmetic_" + dt.name(), half_arith, dt});
    out.push_back({"compare_" + dt.name(), half_compares, dt});
  }
  return out;
}

class BinaryFloat : public ::testing::TestWithParam<BinaryFloatCase> {};

TEST_P(BinaryFloat, MatchesFloat64Reference) {
  const BinaryFloatCase& c = GetParam();
  std::mt19937_64 g = rng_for(c.name);
  std::vector<Check> checks;
  for (const BinaryFloatOp* op : c.ops) {
    // 16 columns: the CPU's vector lanes (odd shapes are the broadcast and movement tests' business)
    F64 a = uniform({13, 16}, op->alo, op->ahi, c.dt, g), b = uniform({13, 16}, op->blo, op->bhi, c.dt, g);
    if (op->integral) {
      for (double& v : a.data) v = std::round(v);
      for (double& v : b.data) v = std::round(v);
    }
    if (op->b_random_sign)
      for (double& v : b.data) v = g() & 1 ? -v : v;
    // mod is a - floor(a / b) * b: its error is relative to |b|, not to the result.
    Tol tol = op->compare ? Tol{} : ulps(c.dt, op->ulps, op->name == std::string_view("mod") || op->name == std::string_view("fmod") ? 4 : 1);
    checks.push_back({op->name, op->op(to_tensor(a, c.dt), to_tensor(b, c.dt)), zip(a, b, op->ref), tol});
  }
  DType out = c.ops.front()->compare ? dtypes::bool_ : c.dt;
  if (checks.size() == 1) expect_close(checks[0].result, checks[0].want, out, checks[0].tol);
  else expect_stacked(checks, out);
}

INSTANTIATE_TEST_SUITE_P(Ops, BinaryFloat, ::testing::ValuesIn(binary_float_cases()), name_of<BinaryFloatCase>);

// where selects between two tensors by a bool condition, with broadcasting of all three.
class Where : public ::testing::TestWithParam<DType> {};

TEST_P(Where, SelectsWithBroadcasting) {
  DType dt = GetParam();
  std::mt19937_64 g = rng_for(current_case_name());
  I64 c = uniform_int({13, 1}, 0, 1, g);
  F64 a, b;
  if (dt.is_float()) a = uniform({13, 5}, -100, 100, dt, g), b = uniform({5}, -100, 100, dt, g);
  else a = to_f64(uniform_int({13, 5}, min_of(dt), max_of(dt), g)), b = to_f64(uniform_int({5}, min_of(dt), max_of(dt), g));
  Tensor r = to_tensor(c, dtypes::bool_).where(to_tensor(a, dt), to_tensor(b, dt));
  Shape s = broadcast(c.shape, a.shape);
  F64 want{s, {}};
  std::vector<int64_t> ic = broadcast_index(c.shape, s), ib = broadcast_index(b.shape, s);
  for (size_t k = 0; k < ic.size(); k++) want.data.push_back(c.data[ic[k]] ? a.data[k] : b.data[ib[k]]);
  expect_close(r, want, dt, {});
}

INSTANTIATE_TEST_SUITE_P(Dtypes, Where,
                         ::testing::Values(dtypes::float32, dtypes::float16, dtypes::bfloat16, dtypes::int8, dtypes::int32,
                                           dtypes::int64, dtypes::uint8, dtypes::bool_),
                         [](const ::testing::TestParamInfo<DType>& i) { return param_name(i.param.name()); });

// ==== integer and bool ops: exact, with wraparound ==================================================================

int64_t wrapped_add(DType dt, int64_t a, int64_t b) {
  return wrap_to(dt, static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)));
}
int64_t wrapped_sub(DType dt, int64_t a, int64_t b) {
  return wrap_to(dt, static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)));
}
int64_t wrapped_mul(DType dt, int64_t a, int64_t b) {
  return wrap_to(dt, static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)));
}

struct IntOp {
  const char* name;
  std::function<Tensor(const Tensor&, const Tensor&)> op;
  std::function<int64_t(DType, int64_t, int64_t)> ref;
  bool divisor;  // b must be nonzero (and a != min when b == -1: that quotient overflows, undefined in C)
  bool compare;  // the result is bool
};

const IntOp kIntOps[] = {
    {"add", [](const Tensor& a, const Tensor& b) { return a + b; }, wrapped_add, false, false},
    {"sub", [](const Tensor& a, const Tensor& b) { return a - b; }, wrapped_sub, false, false},
    {"mul", [](const Tensor& a, const Tensor& b) { return a * b; }, wrapped_mul, false, false},
    {"floordiv", [](const Tensor& a, const Tensor& b) { return a.floordiv(b); },
     [](DType dt, int64_t a, int64_t b) { return wrap_to(dt, floor_div(a, b)); }, true, false},
    {"mod", [](const Tensor& a, const Tensor& b) { return a % b; },
     [](DType dt, int64_t a, int64_t b) { return wrap_to(dt, floor_mod(a, b)); }, true, false},
    // C's / and % on int64 truncate toward zero.
    {"div_trunc", [](const Tensor& a, const Tensor& b) { return a.div(b, Rounding::trunc); },
     [](DType dt, int64_t a, int64_t b) { return wrap_to(dt, a / b); }, true, false},
    {"fmod", [](const Tensor& a, const Tensor& b) { return a.fmod(b); }, [](DType dt, int64_t a, int64_t b) { return wrap_to(dt, a % b); }, true, false},
    {"maximum", [](const Tensor& a, const Tensor& b) { return a.maximum(b); }, [](DType, int64_t a, int64_t b) { return std::max(a, b); }, false, false},
    {"minimum", [](const Tensor& a, const Tensor& b) { return a.minimum(b); }, [](DType, int64_t a, int64_t b) { return std::min(a, b); }, false, false},
    {"lt", [](const Tensor& a, const Tensor& b) { return a < b; }, [](DType, int64_t a, int64_t b) -> int64_t { return a < b; }, false, true},
    {"eq", [](const Tensor& a, const Tensor& b) { return a == b; }, [](DType, int64_t a, int64_t b) -> int64_t { return a == b; }, false, true},
    {"ne", [](const Tensor& a, const Tensor& b) { return a != b; }, [](DType, int64_t a, int64_t b) -> int64_t { return a != b; }, false, true},
    // One kernel for and, or, xor and not.
    {"bitwise", [](const Tensor& a, const Tensor& b) { return ((a & b) ^ (a | ~b)) | (b ^ 5); },
     [](DType dt, int64_t a, int64_t b) { return wrap_to(dt, ((a & b) ^ (a | wrap_to(dt, ~b))) | (b ^ 5)); }, false, false},
    {"neg", [](const Tensor& a, const Tensor&) { return -a; }, [](DType dt, int64_t a, int64_t) { return wrapped_sub(dt, 0, a); }, false, false},
    // abs(min) wraps to min, as in C and numpy.
    {"abs", [](const Tensor& a, const Tensor&) { return a.abs(); },
     [](DType dt, int64_t a, int64_t) { return a < 0 ? wrapped_sub(dt, 0, a) : a; }, false, false},
};

const IntOp& int_op(std::string_view name) {
  for (const IntOp& op : kIntOps)
    if (op.name == name) return op;
  throw std::invalid_argument("no integer op " + std::string(name));
}

struct IntCase {
  std::string name;
  std::vector<const IntOp*> ops;  // stacked into one kernel; same result dtype
  DType dt;
};

std::vector<IntCase> int_cases() {
  const std::vector<std::pair<std::string, std::vector<std::string>>> groups = {
      {"add_sub", {"add", "sub"}},         {"mul", {"mul"}},         {"floordiv_mod", {"floordiv", "mod"}}, {"div_trunc_fmod", {"div_trunc", "fmod"}},
      {"maximum_minimum", {"maximum", "minimum"}}, {"compare", {"lt", "eq", "ne"}}, {"bitwise", {"bitwise"}},
      {"neg_abs", {"neg", "abs"}}};
  std::vector<IntCase> out;
  for (const auto& [name, ops] : groups)
    for (DType dt : {dtypes::int8, dtypes::int32, dtypes::int64, dtypes::uint8}) {
      IntCase c{name + "_" + dt.name(), {}, dt};
      for (const std::string& op : ops) c.ops.push_back(&int_op(op));
      out.push_back(c);
    }
  return out;
}

class IntegerOps : public ::testing::TestWithParam<IntCase> {};

TEST_P(IntegerOps, ExactWithWraparound) {
  const IntCase& c = GetParam();
  DType dt = c.dt;
  std::mt19937_64 g = rng_for(c.name);
  std::vector<ExactCheck> checks;
  for (const IntOp* op : c.ops) {
    // Values over the whole range, so sums and products wrap; b repeats a often, so == and ties happen.
    I64 a = uniform_int({13, 16}, min_of(dt), max_of(dt), g), b = uniform_int({13, 16}, min_of(dt), max_of(dt), g);
    for (size_t i = 0; i < b.data.size(); i++) {
      if (g() % 4 == 0) b.data[i] = a.data[i];
      if (op->divisor) {
        // Small divisors of both signs (the interesting floor cases), some large; never 0, never min / -1.
        if (g() % 2) b.data[i] = std::uniform_int_distribution<int64_t>(dt.is_unsigned() ? 1 : -9, 9)(g);
        if (b.data[i] == 0) b.data[i] = 3;
        if (a.data[i] == min_of(dt) && b.data[i] == -1) a.data[i] += 1;
      }
    }
    I64 want{a.shape, {}};
    for (size_t i = 0; i < a.data.size(); i++) want.data.push_back(op->ref(dt, a.data[i], b.data[i]));
    checks.push_back({op->name, op->op(to_tensor(a, dt), to_tensor(b, dt)), want});
  }
  DType out = c.ops.front()->compare ? dtypes::bool_ : dt;
  if (checks.size() == 1) expect_exact(checks[0].result, checks[0].want, out);
  else expect_stacked_exact(checks, out);
}

INSTANTIATE_TEST_SUITE_P(Ops, IntegerOps, ::testing::ValuesIn(int_cases()), name_of<IntCase>);

// bool arithmetic as the frontend defines it (tinygrad): + is or, * is and, max is or, min is and, - x is not x.
struct BoolOp {
  const char* name;
  std::function<Tensor(const Tensor&, const Tensor&)> op;
  std::function<int64_t(int64_t, int64_t)> ref;
  bool arithmetic;
};

const BoolOp kBoolOps[] = {
    {"add_is_or", [](const Tensor& a, const Tensor& b) { return a + b; }, [](int64_t a, int64_t b) -> int64_t { return a | b; }, true},
    {"mul_is_and", [](const Tensor& a, const Tensor& b) { return a * b; }, [](int64_t a, int64_t b) -> int64_t { return a & b; }, true},
    {"maximum_is_or", [](const Tensor& a, const Tensor& b) { return a.maximum(b); }, [](int64_t a, int64_t b) -> int64_t { return a | b; }, true},
    {"minimum_is_and", [](const Tensor& a, const Tensor& b) { return a.minimum(b); }, [](int64_t a, int64_t b) -> int64_t { return a & b; }, true},
    {"lt", [](const Tensor& a, const Tensor& b) { return a < b; }, [](int64_t a, int64_t b) -> int64_t { return a < b; }, false},
    {"eq", [](const Tensor& a, const Tensor& b) { return a == b; }, [](int64_t a, int64_t b) -> int64_t { return a == b; }, false},
    {"ne", [](const Tensor& a, const Tensor& b) { return a != b; }, [](int64_t a, int64_t b) -> int64_t { return a != b; }, false},
    {"bitwise", [](const Tensor& a, const Tensor& b) { return (a & b) ^ (a | ~b); }, [](int64_t a, int64_t b) -> int64_t { return (a & b) ^ (a | !b); }, false},
    {"neg_is_not", [](const Tensor& a, const Tensor&) { return -a; }, [](int64_t a, int64_t) -> int64_t { return !a; }, false},
    {"logical_not", [](const Tensor& a, const Tensor&) { return a.logical_not(); }, [](int64_t a, int64_t) -> int64_t { return !a; }, false},
};

class BoolOps : public ::testing::TestWithParam<bool> {};

TEST_P(BoolOps, Exact) {
  bool arithmetic = GetParam();
  std::mt19937_64 g = rng_for(current_case_name());
  std::vector<ExactCheck> checks;
  for (const BoolOp& op : kBoolOps)
    if (op.arithmetic == arithmetic) {
      I64 a = uniform_int({7, 3}, 0, 1, g), b = uniform_int({7, 3}, 0, 1, g);
      I64 want{a.shape, {}};
      for (size_t i = 0; i < a.data.size(); i++) want.data.push_back(op.ref(a.data[i], b.data[i]));
      checks.push_back({op.name, op.op(to_tensor(a, dtypes::bool_), to_tensor(b, dtypes::bool_)), want});
    }
  expect_stacked_exact(checks, dtypes::bool_);
}

INSTANTIATE_TEST_SUITE_P(Ops, BoolOps, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& i) { return std::string(i.param ? "arithmetic" : "logic"); });

// Integer true division computes in the default float; an integer literal exponent is exact repeated squaring.
TEST(IntegerMixed, TrueDivisionOfInt32IsFloat32) {
  std::mt19937_64 g = rng_for(current_case_name());
  I64 a = uniform_int({7, 3}, -1000000, 1000000, g), b = uniform_int({7, 3}, 1, 999, g);
  for (int64_t& v : b.data) v = g() & 1 ? -v : v;
  F64 want = zip(to_f64(a), to_f64(b), [](double x, double y) { return round_to(dtypes::float32, x) / y; });
  expect_close(to_tensor(a, dtypes::int32) / to_tensor(b, dtypes::int32), want, dtypes::float32, ulps(dtypes::float32, 2));
}

// A number on the left of // and %: Python's floor semantics with the tensor as divisor.
TEST(IntegerMixed, NumberOnTheLeftOfFloorDivisionAndModulo) {
  std::mt19937_64 g = rng_for(current_case_name());
  I64 b = uniform_int({13, 16}, 1, 40, g);
  for (int64_t& v : b.data) v = g() & 1 ? -v : v;
  Tensor t = to_tensor(b, dtypes::int32);
  I64 q = map(b, [](int64_t v) { return floor_div(-1000, v); }), r = map(b, [](int64_t v) { return floor_mod(1000, v); });
  expect_stacked_exact({{"floordiv", floordiv(-1000, t), q}, {"mod", 1000 % t, r}}, dtypes::int32);
}

TEST(IntegerMixed, PowLiteralOfInt32WrapsExactly) {
  std::mt19937_64 g = rng_for(current_case_name());
  I64 a = uniform_int({13}, -3000, 3000, g);
  I64 want = map(a, [](int64_t v) { return wrapped_mul(dtypes::int32, wrapped_mul(dtypes::int32, v, v), v); });
  expect_exact(to_tensor(a, dtypes::int32).pow(3), want, dtypes::int32);
}

TEST(IntegerMixed, PowLiteralOfInt8Wraps) {
  I64 a{{6}, {-128, -7, -1, 0, 5, 127}};
  I64 want = map(a, [](int64_t v) { return wrapped_mul(dtypes::int8, v, v); });
  expect_exact(to_tensor(a, dtypes::int8).pow(2), want, dtypes::int8);
}

// ==== named wraparound and rounding facts (literal expected values) ==================================================

TEST(Wraparound, Uint8AddTensorAndLiteral) {
  Tensor a = Tensor(std::vector<int>{200, 250, 0, 255}, {4}, dtypes::uint8);
  Tensor b = Tensor(std::vector<int>{100, 10, 0, 1}, {4}, dtypes::uint8);
  EXPECT_EQ((a + b).tolist<int64_t>(), (std::vector<int64_t>{44, 4, 0, 0}));
  EXPECT_EQ((a + 300).tolist<int64_t>(), (std::vector<int64_t>{244, 38, 44, 43}));  // the literal wraps to 44 first
}

TEST(Wraparound, Int8Overflow) {
  Tensor a = Tensor(std::vector<int>{100, -100, 16, -128}, {4}, dtypes::int8);
  Tensor b = Tensor(std::vector<int>{100, 100, 16, 1}, {4}, dtypes::int8);
  EXPECT_EQ((a + b).tolist<int64_t>(), (std::vector<int64_t>{-56, 0, 32, -127}));
  EXPECT_EQ((a - b).tolist<int64_t>(), (std::vector<int64_t>{0, 56, 0, 127}));
  EXPECT_EQ((a * b).tolist<int64_t>(), (std::vector<int64_t>{16, -16, 0, -128}));
}

TEST(Wraparound, Int32AndInt64Overflow) {
  Tensor a = Tensor(std::vector<int32_t>{INT32_MAX, INT32_MIN, 65536});
  EXPECT_EQ((a + 1).tolist<int64_t>(), (std::vector<int64_t>{INT32_MIN, INT32_MIN + 1, 65537}));
  EXPECT_EQ((a * a).tolist<int64_t>(), (std::vector<int64_t>{1, 0, 0}));
  Tensor c = Tensor(std::vector<int64_t>{INT64_MAX, INT64_MIN});
  EXPECT_EQ((c + 1).tolist<int64_t>(), (std::vector<int64_t>{INT64_MIN, INT64_MIN + 1}));
}

TEST(Wraparound, FloorDivisionAndModuloOfNegatives) {
  Tensor a = Tensor(std::vector<int32_t>{-7, 7, -7, 7, -1, 0});
  Tensor b = Tensor(std::vector<int32_t>{2, -2, -2, 2, 5, -3});
  EXPECT_EQ(a.floordiv(b).tolist<int64_t>(), (std::vector<int64_t>{-4, -4, 3, 3, -1, 0}));
  EXPECT_EQ((a % b).tolist<int64_t>(), (std::vector<int64_t>{1, -1, -1, 1, 4, 0}));
  Tensor f = Tensor(std::vector<float>{-7.5f, 7.5f, -7.5f});
  Tensor d = Tensor(std::vector<float>{2.f, -2.f, -2.f});
  EXPECT_EQ(f.floordiv(d).tolist<double>(), (std::vector<double>{-4, -4, 3}));
  EXPECT_EQ((f % d).tolist<double>(), (std::vector<double>{0.5, -0.5, -1.5}));
}

TEST(Wraparound, FloatToIntCastTruncatesTowardZero) {
  Tensor f = Tensor(std::vector<float>{-2.75f, 2.75f, -0.5f, 127.9f, -128.9f});
  EXPECT_EQ(f.cast(dtypes::int8).tolist<int64_t>(), (std::vector<int64_t>{-2, 2, 0, 127, -128}));
  EXPECT_EQ(f.cast(dtypes::bool_).tolist<int64_t>(), (std::vector<int64_t>{1, 1, 1, 1, 1}));
}

// ==== casts between every pair of dtypes ============================================================================

const DType kCastTypes[] = {dtypes::float32, dtypes::float16, dtypes::bfloat16, dtypes::int8,
                            dtypes::int32,   dtypes::int64,   dtypes::uint8,    dtypes::bool_};

struct CastCase {
  std::string name;
  std::vector<DType> from;  // one kind of source (float, int or bool), all cast in one kernel
  DType to;
};

std::vector<CastCase> cast_cases() {
  std::vector<CastCase> out;
  for (DType to : kCastTypes) {
    CastCase f{"floats_to_" + to.name(), {}, to}, i{"ints_to_" + to.name(), {}, to}, b{"bool_to_" + to.name(), {}, to};
    for (DType from : kCastTypes)
      if (from != to) (from.is_float() ? f : from.is_bool() ? b : i).from.push_back(from);
    for (CastCase* c : {&f, &i, &b})
      if (!c->from.empty()) out.push_back(*c);
  }
  return out;
}

// Values of `from` that cast to `to` with a defined result, with zeros mixed in (for the bool targets).
F64 cast_input(DType from, DType to, std::mt19937_64& g) {
  const Shape shape{37};
  F64 x{shape, {}};
  if (from.is_float()) {
    if (to.is_float()) {  // magnitudes from 2^-20 to 2^15: subnormal float16 up to near its max
      std::uniform_real_distribution<double> e(-20, 15), m(1, 2);
      for (int64_t i = 0; i < shape[0]; i++) x.data.push_back(round_to(from, std::min(65000.0, std::exp2(e(g)) * m(g)) * (g() & 1 ? -1 : 1)));
    } else {
      double lo = std::max<double>(static_cast<double>(min_of(to)), -1e6), hi = std::min<double>(static_cast<double>(max_of(to)), 1e6);
      if (from == dtypes::float16) lo = std::max(lo, -60000.0), hi = std::min(hi, 60000.0);
      x = uniform(shape, lo - 0.99, hi + 0.99, from, g);
      for (double& v : x.data)
        if (std::trunc(v) < lo || std::trunc(v) > hi) v = 0;  // rounding to the source dtype can leave the range
    }
  } else {
    int64_t lo = min_of(from), hi = max_of(from);
    int64_t bound = to == dtypes::float16 ? 60000 : int64_t{1} << 50;  // exact in float64; no float16 overflow
    lo = std::max(lo, -bound), hi = std::min(hi, bound);
    x = to_f64(uniform_int(shape, lo, hi, g));
  }
  for (size_t i = 0; i < x.data.size(); i += 5) x.data[i] = 0;
  return x;
}

class Cast : public ::testing::TestWithParam<CastCase> {};

// Float -> int truncates toward zero, values chosen in the target's range (out of range is undefined, as in C);
// int -> int wraps; int -> float rounds to nearest even; anything -> bool is != 0; bool -> anything is 0 or 1.
TEST_P(Cast, MatchesReference) {
  const CastCase& c = GetParam();
  std::mt19937_64 g = rng_for(c.name);
  std::vector<Check> checks;
  std::vector<ExactCheck> exact;
  for (DType from : c.from) {
    F64 x = cast_input(from, c.to, g);
    Tensor r = to_tensor(x, from).cast(c.to);
    std::string what = from.name() + " to " + c.to.name();
    if (c.to.is_float()) {
      checks.push_back({what, r, x, {}});  // a single correct rounding (the check rounds the expected value)
    } else {
      exact.push_back({what, r, map(x, [&](double v) {
                         if (c.to == dtypes::bool_) return static_cast<int64_t>(v != 0);
                         return wrap_to(c.to, static_cast<int64_t>(std::trunc(v)));
                       })});
    }
  }
  if (!checks.empty()) expect_stacked(checks, c.to);
  if (!exact.empty()) expect_stacked_exact(exact, c.to);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, Cast, ::testing::ValuesIn(cast_cases()), name_of<CastCase>);

// float32 -> float16 / bfloat16 at the edges: overflow to inf, ties to even, subnormals, underflow to zero, NaN.
TEST(CastSpecials, Float32ToHalfTypesRoundsAtTheEdges) {
  std::vector<double> v = {kInf, -kInf, kNaN, -0.0, 70000.0, 65519.0, 65520.0, -65536.0, 1.0 + 0x1p-11, 1.0 + 3 * 0x1p-11,
                           1.0 + 0x1p-8, 1.0 + 3 * 0x1p-8, 3e-8, -6e-8, 1e-9, 0x1p-126, 0x1p-140, 3.3e38};
  F64 x{{static_cast<int64_t>(v.size())}, {}};
  for (double d : v) x.data.push_back(round_to(dtypes::float32, d));
  for (DType dt : kHalfTypes) {
    SCOPED_TRACE(dt.name());
    expect_close(to_tensor(x, dtypes::float32).cast(dt), x, dt, {});
  }
}

// ==== shapes and broadcasting =======================================================================================

struct ShapeCase {
  std::string name;
  Shape a, b;
  DType dt;
  bool mul = false;  // a * b instead of a + b
};

std::vector<ShapeCase> shape_cases() {
  const std::vector<std::pair<std::string, std::pair<Shape, Shape>>> shapes = {
      {"empty", {{0}, {0}}},
      {"empty_with_1", {{0}, {1}}},
      {"one", {{1}, {1}}},
      {"seven", {{7}, {7}}},
      {"seven_with_scalar", {{7}, {}}},
      {"rows_with_row", {{13, 5}, {5}}},
      {"rows_with_column", {{13, 5}, {13, 1}}},
      {"3x1x4_with_1x5x4", {{3, 1, 4}, {1, 5, 4}}},
      {"over_2_16", {{70001}, {70001}}},
      {"empty_2d_with_row", {{0, 4}, {4}}},
      {"empty_2d_with_column", {{0, 4}, {0, 1}}},
  };
  std::vector<ShapeCase> out;
  for (const auto& [name, ab] : shapes)
    for (DType dt : {dtypes::float32, dtypes::int32}) out.push_back({"add_" + name + "_" + dt.name(), ab.first, ab.second, dt});
  for (const char* name : {"3x1x4_with_1x5x4", "over_2_16", "rows_with_column"})
    for (const auto& [n, ab] : shapes)
      if (n == name) {
        out.push_back({"add_" + n + "_bfloat16", ab.first, ab.second, dtypes::bfloat16});
        out.push_back({"mul_" + n + "_float16", ab.first, ab.second, dtypes::float16, true});
        out.push_back({"mul_" + n + "_uint8", ab.first, ab.second, dtypes::uint8, true});
      }
  return out;
}

class Shapes : public ::testing::TestWithParam<ShapeCase> {};

TEST_P(Shapes, ElementwiseBroadcasts) {
  const ShapeCase& c = GetParam();
  std::mt19937_64 g = rng_for(c.name);
  F64 a, b;
  if (c.dt.is_float()) {
    a = uniform(c.a, -10, 10, c.dt, g), b = uniform(c.b, -10, 10, c.dt, g);
  } else {
    a = to_f64(uniform_int(c.a, min_of(c.dt), max_of(c.dt), g)), b = to_f64(uniform_int(c.b, min_of(c.dt), max_of(c.dt), g));
  }
  Tensor ta = to_tensor(a, c.dt), tb = to_tensor(b, c.dt);
  Tensor r = c.mul ? ta * tb : ta + tb;
  F64 want = zip(a, b, [&](double x, double y) {
    if (c.dt.is_float()) return c.mul ? x * y : x + y;
    auto xi = static_cast<int64_t>(x), yi = static_cast<int64_t>(y);
    return static_cast<double>(c.mul ? wrapped_mul(c.dt, xi, yi) : wrapped_add(c.dt, xi, yi));
  });
  expect_close(r, want, c.dt, c.dt.is_float() ? ulps(c.dt, 1) : Tol{});
}

INSTANTIATE_TEST_SUITE_P(Broadcast, Shapes, ::testing::ValuesIn(shape_cases()), name_of<ShapeCase>);

// ==== movement ops, each followed by an elementwise op so the view is read through a kernel ==========================

struct MoveCase {
  const char* name;
  Shape in;
  std::function<Tensor(const Tensor&)> op;
  std::function<F64(const F64&)> ref;
  bool int8 = false;  // also run for int8
};

F64 reshaped(F64 a, Shape s) {
  a.shape = std::move(s);
  return a;
}
F64 flipped(const F64& a, const std::vector<int64_t>& axes) {
  std::vector<int64_t> start(a.shape.size(), 0), step(a.shape.size(), 1);
  for (int64_t ax : axes) start[ax] = a.shape[ax] - 1, step[ax] = -1;
  return gather(a, a.shape, strided_map(a.shape, start, step));
}
F64 concat(const F64& a, const F64& b, int64_t axis) {  // equal shapes but for `axis`
  Shape s = a.shape;
  s[axis] += b.shape[axis];
  F64 out{s, {}};
  for (int64_t k = 0; k < numel(s); k++) {
    std::vector<int64_t> idx = unravel(k, s);
    bool first = idx[axis] < a.shape[axis];
    if (!first) idx[axis] -= a.shape[axis];
    out.data.push_back(first ? a.data[ravel(idx, a.shape)] : b.data[ravel(idx, b.shape)]);
  }
  return out;
}

const MoveCase kMoveCases[] = {
    {"reshape", {13, 5}, [](const Tensor& x) { return x.reshape({5, 13}); }, [](const F64& a) { return reshaped(a, {5, 13}); }},
    {"reshape_infer", {3, 5, 7}, [](const Tensor& x) { return x.reshape({-1, 7}); }, [](const F64& a) { return reshaped(a, {15, 7}); }},
    {"permute", {3, 5, 7}, [](const Tensor& x) { return x.permute({2, 0, 1}); },
     [](const F64& a) { return gather(a, permuted(a.shape, {2, 0, 1}), permute_map(a.shape, {2, 0, 1})); }, true},
    {"transpose_plus_self", {9, 9}, [](const Tensor& x) { return x + x.transpose(); },
     [](const F64& a) { return zip(a, gather(a, a.shape, permute_map(a.shape, {1, 0})), std::plus<>()); }},
    {"expand_middle", {3, 1, 4}, [](const Tensor& x) { return x.expand({3, 5, 4}); },
     [](const F64& a) { return gather(a, {3, 5, 4}, expand_map(a.shape)); }, true},
    {"expand_new_axis", {5}, [](const Tensor& x) { return x.expand({4, 5}); }, [](const F64& a) { return gather(a, {4, 5}, expand_map(a.shape)); }},
    {"pad_zero", {13, 5}, [](const Tensor& x) { return x.pad({{1, 2}, {0, 3}}); },
     [](const F64& a) { return gather(a, padded(a.shape, {{1, 2}, {0, 3}}), pad_map(a.shape, {{1, 2}, {0, 3}})); }},
    {"pad_value", {13, 5}, [](const Tensor& x) { return x.pad({{2, 0}, {1, 1}}, 7); },
     [](const F64& a) { return gather(a, padded(a.shape, {{2, 0}, {1, 1}}), pad_map(a.shape, {{2, 0}, {1, 1}}), 7.0); }, true},
    {"pad_negative_crops", {13, 5}, [](const Tensor& x) { return x.pad({{-2, 1}, {1, -1}}); },
     [](const F64& a) { return gather(a, padded(a.shape, {{-2, 1}, {1, -1}}), pad_map(a.shape, {{-2, 1}, {1, -1}})); }, true},
    {"shrink", {13, 5}, [](const Tensor& x) { return x.shrink({{2, 9}, {1, 4}}); },
     [](const F64& a) { return gather(a, {7, 3}, strided_map(a.shape, {2, 1}, {1, 1})); }},
    {"flip_axis0", {13, 5}, [](const Tensor& x) { return x.flip(0); }, [](const F64& a) { return flipped(a, {0}); }},
    {"flip_all", {3, 5, 7}, [](const Tensor& x) { return x.flip({0, 1, 2}); }, [](const F64& a) { return flipped(a, {0, 1, 2}); }, true},
    {"slice_step_2", {13, 5}, [](const Tensor& x) { return x[{slice(1, std::nullopt, 2), slice()}]; },
     [](const F64& a) { return gather(a, {6, 5}, strided_map(a.shape, {1, 0}, {2, 1})); }},
    {"slice_negative_steps", {13, 5}, [](const Tensor& x) { return x[{slice(std::nullopt, std::nullopt, -3), slice(4, 0, -2)}]; },
     [](const F64& a) { return gather(a, {5, 2}, strided_map(a.shape, {12, 4}, {-3, -2})); }, true},
    {"index_and_newaxis", {3, 5, 7}, [](const Tensor& x) { return x[{2, newaxis, slice()}]; },
     [](const F64& a) { return gather(a, {1, 5, 7}, strided_map(a.shape, {2, 0, 0}, {0, 1, 1})); }},
    {"cat_with_flip", {13, 5}, [](const Tensor& x) { return Tensor::cat({x, x.flip(1)}, 1); },
     [](const F64& a) { return concat(a, flipped(a, {1}), 1); }, true},
    {"stack", {13, 5}, [](const Tensor& x) { return Tensor::stack({x, x.flip(0)}, 1); },
     [](const F64& a) { return reshaped(concat(reshaped(a, {13, 1, 5}), reshaped(flipped(a, {0}), {13, 1, 5}), 1), {13, 2, 5}); }, true},
    {"repeat", {3, 4}, [](const Tensor& x) { return x.repeat({2, 3}); },
     [](const F64& a) {
       return gather(a, {6, 12}, [&](const std::vector<int64_t>& i) -> std::optional<int64_t> { return (i[0] % 3) * 4 + i[1] % 4; });
     },
     true},
    {"pad_flip_shrink", {13, 5}, [](const Tensor& x) { return x.pad({{1, 1}, {2, 2}}).flip(1).shrink({{0, 14}, {1, 8}}); },
     [](const F64& a) {
       F64 p = flipped(gather(a, padded(a.shape, {{1, 1}, {2, 2}}), pad_map(a.shape, {{1, 1}, {2, 2}})), {1});
       return gather(p, {14, 7}, strided_map(p.shape, {0, 1}, {1, 1}));
     }},
    {"permute_then_reshape", {3, 5, 7}, [](const Tensor& x) { return x.permute({1, 0, 2}).reshape({5, 21}); },
     [](const F64& a) { return reshaped(gather(a, permuted(a.shape, {1, 0, 2}), permute_map(a.shape, {1, 0, 2})), {5, 21}); }},
    {"pad_reflect", {13, 5}, [](const Tensor& x) { return x.pad({{3, 12}, {4, 1}}, PadMode::reflect); },
     [](const F64& a) { return gather(a, padded(a.shape, {{3, 12}, {4, 1}}), pad_mode_map(a.shape, {{3, 12}, {4, 1}}, PadKind::reflect)); }, true},
    {"pad_replicate", {13, 5}, [](const Tensor& x) { return x.pad({{0, 3}, {6, 2}}, PadMode::replicate); },
     [](const F64& a) { return gather(a, padded(a.shape, {{0, 3}, {6, 2}}), pad_mode_map(a.shape, {{0, 3}, {6, 2}}, PadKind::replicate)); }, true},
    {"pad_circular", {13, 5}, [](const Tensor& x) { return x.pad({{13, 2}, {1, 5}}, PadMode::circular); },
     [](const F64& a) { return gather(a, padded(a.shape, {{13, 2}, {1, 5}}), pad_mode_map(a.shape, {{13, 2}, {1, 5}}, PadKind::circular)); }, true},
    {"flip_then_expand", {1, 5}, [](const Tensor& x) { return x.flip(1).expand({4, 5}); },
     [](const F64& a) { return gather(flipped(a, {1}), {4, 5}, expand_map(a.shape)); }},
};

struct MoveParam {
  std::string name;
  const MoveCase* c;
  DType dt;
};

std::vector<MoveParam> move_params() {
  std::vector<MoveParam> out;
  for (const MoveCase& c : kMoveCases) {
    out.push_back({std::string(c.name) + "_float32", &c, dtypes::float32});
    if (c.int8) out.push_back({std::string(c.name) + "_int8", &c, dtypes::int8});
  }
  return out;
}

class Movement : public ::testing::TestWithParam<MoveParam> {};

TEST_P(Movement, ThenAddOne) {
  const MoveParam& p = GetParam();
  std::mt19937_64 g = rng_for(p.name);
  F64 x = p.dt.is_float() ? uniform(p.c->in, -10, 10, p.dt, g) : to_f64(uniform_int(p.c->in, -60, 60, g));
  expect_close(p.c->op(to_tensor(x, p.dt)) + 1, map(p.c->ref(x), [](double v) { return v + 1; }), p.dt,
               p.dt.is_float() ? ulps(p.dt, 1, 32) : Tol{});  // x + x.T + 1 rounds twice
}

INSTANTIATE_TEST_SUITE_P(Ops, Movement, ::testing::ValuesIn(move_params()), name_of<MoveParam>);

// ==== reductions ====================================================================================================

enum class Red { Sum, Max, Min, Mean, Prod, Any, All, Var, Std, LogSumExp, ArgMax, ArgMin, CumSum, CumProd, CumMax, CumMaxIndex, SumAsFloat64 };

struct ReduceCase {
  std::string name;
  Red op;
  DType dt;
  Shape shape;
  std::optional<std::vector<int64_t>> axes;  // nullopt: all axes
  bool keepdim = false;
};

// The dtype the frontend documents for each reduction's result.
DType reduce_dtype(Red op, DType dt) {
  switch (op) {
    case Red::Sum: case Red::CumSum:
      return dt.is_float() ? dt : sum_acc_dtype(dt);  // sum_acc_dtype: int8 / bool -> int32, uint8 -> uint32
    case Red::Mean: return dt.is_float() ? dt : dtypes::float32;
    case Red::Any: case Red::All: return dtypes::bool_;
    case Red::ArgMax: case Red::ArgMin: case Red::CumMaxIndex: return dtypes::int32;
    case Red::SumAsFloat64: return dtypes::float64;
    default: return dt;
  }
}

std::vector<ReduceCase> reduce_cases() {
  using Axes3 = std::optional<std::vector<int64_t>>;
  const Shape s3{5, 7, 9};
  const std::vector<std::pair<std::string, Axes3>> every_axis = {
      {"axis0", std::vector<int64_t>{0}}, {"axis1", std::vector<int64_t>{1}}, {"axis2", std::vector<int64_t>{2}},
      {"axes02", std::vector<int64_t>{0, 2}}, {"all", std::nullopt}};
  const std::vector<std::pair<std::string, Red>> basic = {{"sum", Red::Sum}, {"max", Red::Max}, {"min", Red::Min}, {"mean", Red::Mean}};
  std::vector<ReduceCase> out;
  for (const auto& [on, op] : basic)
    for (const auto& [an, ax] : every_axis) out.push_back({on + "_" + an + "_float32", op, dtypes::float32, s3, ax});
  out.push_back({"sum_axis1_keepdim_float32", Red::Sum, dtypes::float32, s3, std::vector<int64_t>{1}, true});
  out.push_back({"max_axes02_keepdim_float32", Red::Max, dtypes::float32, s3, std::vector<int64_t>{0, 2}, true});
  out.push_back({"prod_axis2_float32", Red::Prod, dtypes::float32, s3, std::vector<int64_t>{2}});
  out.push_back({"var_axis1_float32", Red::Var, dtypes::float32, s3, std::vector<int64_t>{1}});
  out.push_back({"std_axis0_float32", Red::Std, dtypes::float32, s3, std::vector<int64_t>{0}});
  out.push_back({"logsumexp_axis0_float32", Red::LogSumExp, dtypes::float32, s3, std::vector<int64_t>{0}});
  out.push_back({"logsumexp_axis2_float32", Red::LogSumExp, dtypes::float32, s3, std::vector<int64_t>{2}});
  out.push_back({"argmax_axis1_float32", Red::ArgMax, dtypes::float32, s3, std::vector<int64_t>{1}});
  out.push_back({"argmin_axis2_float32", Red::ArgMin, dtypes::float32, s3, std::vector<int64_t>{2}});
  out.push_back({"cumsum_axis0_float32", Red::CumSum, dtypes::float32, {4, 37}, std::vector<int64_t>{0}});
  out.push_back({"cumsum_axis1_float32", Red::CumSum, dtypes::float32, {4, 37}, std::vector<int64_t>{1}});
  out.push_back({"cumsum_axis2_int32", Red::CumSum, dtypes::int32, s3, std::vector<int64_t>{2}});
  // Axes longer than 512 scan in two stages (frontend/scan.cpp): 70,000 elements, an odd prime, along axis 0, and
  // long enough (140,001: 547 chunks) that the chunk totals split again.
  out.push_back({"cumsum_70000_float32", Red::CumSum, dtypes::float32, {70000}, std::vector<int64_t>{0}});
  out.push_back({"cumsum_65537_int32", Red::CumSum, dtypes::int32, {65537}, std::vector<int64_t>{0}});
  out.push_back({"cumsum_axis0_1031x3_float32", Red::CumSum, dtypes::float32, {1031, 3}, std::vector<int64_t>{0}});
  out.push_back({"cumsum_140001_int32", Red::CumSum, dtypes::int32, {140001}, std::vector<int64_t>{0}});
  out.push_back({"cumsum_axis1_int8", Red::CumSum, dtypes::int8, {3, 600}, std::vector<int64_t>{1}});
  out.push_back({"cumprod_axis1_float32", Red::CumProd, dtypes::float32, {4, 37}, std::vector<int64_t>{1}});
  out.push_back({"cumprod_axis0_700x2_float32", Red::CumProd, dtypes::float32, {700, 2}, std::vector<int64_t>{0}});
  out.push_back({"cummax_axis1_float32", Red::CumMax, dtypes::float32, {4, 37}, std::vector<int64_t>{1}});
  out.push_back({"cummax_1031_int32", Red::CumMax, dtypes::int32, {1031}, std::vector<int64_t>{0}});
  out.push_back({"cummax_index_axis0_float32", Red::CumMaxIndex, dtypes::float32, {37, 4}, std::vector<int64_t>{0}});
  out.push_back({"cummax_index_1031_int32", Red::CumMaxIndex, dtypes::int32, {1031}, std::vector<int64_t>{0}});
  // sum(dtype=float64) of float32: accumulated in float64.
  out.push_back({"sum_as_float64_axis1_float32", Red::SumAsFloat64, dtypes::float32, s3, std::vector<int64_t>{1}});
  for (DType dt : kHalfTypes)
    for (const auto& [on, op] : std::vector<std::pair<std::string, Red>>{{"sum", Red::Sum}, {"max", Red::Max}, {"mean", Red::Mean}})
      for (const auto& [an, ax] : {every_axis[1], every_axis[4]}) out.push_back({on + "_" + an + "_" + dt.name(), op, dt, s3, ax});
  for (const auto& [on, op] : std::vector<std::pair<std::string, Red>>{{"sum", Red::Sum}, {"max", Red::Max}, {"min", Red::Min}})
    for (const auto& [an, ax] : {every_axis[0], every_axis[2], every_axis[4]}) out.push_back({on + "_" + an + "_int32", op, dtypes::int32, s3, ax});
  for (DType dt : {dtypes::int8, dtypes::uint8, dtypes::bool_})
    for (const auto& [an, ax] : {every_axis[1], every_axis[4]}) out.push_back({"sum_" + an + "_" + dt.name(), Red::Sum, dt, s3, ax});
  out.push_back({"sum_all_int64", Red::Sum, dtypes::int64, s3, std::nullopt});
  out.push_back({"max_axis0_int8", Red::Max, dtypes::int8, s3, std::vector<int64_t>{0}});
  out.push_back({"min_axis0_int8", Red::Min, dtypes::int8, s3, std::vector<int64_t>{0}});
  out.push_back({"max_all_uint8", Red::Max, dtypes::uint8, s3, std::nullopt});
  out.push_back({"min_axis2_uint8", Red::Min, dtypes::uint8, s3, std::vector<int64_t>{2}});
  out.push_back({"mean_axis1_int32", Red::Mean, dtypes::int32, s3, std::vector<int64_t>{1}});
  out.push_back({"any_axis1_bool", Red::Any, dtypes::bool_, s3, std::vector<int64_t>{1}});
  out.push_back({"all_axis1_bool", Red::All, dtypes::bool_, s3, std::vector<int64_t>{1}});
  out.push_back({"max_axis2_bool", Red::Max, dtypes::bool_, s3, std::vector<int64_t>{2}});
  // More than 2^16 elements into one value.
  out.push_back({"sum_70001_float32", Red::Sum, dtypes::float32, {70001}, std::nullopt});
  out.push_back({"sum_70001_int32", Red::Sum, dtypes::int32, {70001}, std::nullopt});
  out.push_back({"max_70001_float32", Red::Max, dtypes::float32, {70001}, std::nullopt});
  // Empty axes reduce to the op's identity (scheduler reduce_identity): 0 for sum, -inf / the int min for max, and
  // min = -max(-x) gives +inf; the mean of nothing is 0 / 0 = NaN.
  out.push_back({"sum_empty_axis_float32", Red::Sum, dtypes::float32, {0, 4}, std::vector<int64_t>{0}});
  out.push_back({"max_empty_axis_float32", Red::Max, dtypes::float32, {0, 4}, std::vector<int64_t>{0}});
  out.push_back({"min_empty_axis_float32", Red::Min, dtypes::float32, {0, 4}, std::vector<int64_t>{0}});
  out.push_back({"mean_empty_axis_float32", Red::Mean, dtypes::float32, {0, 4}, std::vector<int64_t>{0}});
  out.push_back({"max_empty_axis_int32", Red::Max, dtypes::int32, {0, 4}, std::vector<int64_t>{0}});
  out.push_back({"sum_empty_all_int32", Red::Sum, dtypes::int32, {0}, std::nullopt});
  out.push_back({"sum_nonempty_axis_of_empty_float32", Red::Sum, dtypes::float32, {0, 4}, std::vector<int64_t>{1}});
  // Shapes the CPU vectorizer takes (axes of 16 lanes and more, compiler/cpu/vectorize.h): vector accumulators over
  // the last axis with their lanes folded, wide column tiles over the first.
  const Shape s16{6, 32, 48};
  for (const auto& [on, op] : std::vector<std::pair<std::string, Red>>{{"sum", Red::Sum}, {"max", Red::Max}, {"mean", Red::Mean}})
    for (const auto& [an, ax] : every_axis) out.push_back({on + "_" + an + "_6x32x48_float32", op, dtypes::float32, s16, ax});
  for (const auto& [an, ax] : {every_axis[0], every_axis[2]}) out.push_back({"sum_" + an + "_6x32x48_int32", Red::Sum, dtypes::int32, s16, ax});
  // 2^20 elements into one: partial results per core (scheduler/split_reduce.h), each in vector lanes.
  out.push_back({"sum_1048576_float32", Red::Sum, dtypes::float32, {1 << 20}, std::nullopt});
  out.push_back({"max_1048576_float32", Red::Max, dtypes::float32, {1 << 20}, std::nullopt});
  // 2^20 elements over axis 0: parts of rows, whole rows of accumulators (scheduler/layout.h, the CPU's options).
  out.push_back({"sum_axis0_2048x512_float32", Red::Sum, dtypes::float32, {2048, 512}, std::vector<int64_t>{0}});
  out.push_back({"max_axis0_2048x512_float32", Red::Max, dtypes::float32, {2048, 512}, std::vector<int64_t>{0}});
  out.push_back({"mean_axis0_1024x32x32_float32", Red::Mean, dtypes::float32, {1024, 32, 32}, std::vector<int64_t>{0}});
  return out;
}

std::vector<int64_t> resolved_axes(const ReduceCase& c) {
  if (c.axes) return *c.axes;
  std::vector<int64_t> all;
  for (size_t i = 0; i < c.shape.size(); i++) all.push_back(static_cast<int64_t>(i));
  return all;
}

Tensor run_reduce(const ReduceCase& c, const Tensor& x) {
  Axes ax = c.axes ? Axes(IntTuple(*c.axes)) : Axes();
  int64_t one = c.axes ? c.axes->front() : 0;
  switch (c.op) {
    case Red::Sum: return x.sum(ax, c.keepdim);
    case Red::Max: return x.max(ax, c.keepdim);
    case Red::Min: return x.min(ax, c.keepdim);
    case Red::Mean: return x.mean(ax, c.keepdim);
    case Red::Prod: return x.prod(ax, c.keepdim);
    case Red::Any: return x.any(ax, c.keepdim);
    case Red::All: return x.all(ax, c.keepdim);
    case Red::Var: return x.var(ax, c.keepdim);
    case Red::Std: return x.std(ax, c.keepdim);
    case Red::LogSumExp: return x.logsumexp(one, c.keepdim);
    case Red::ArgMax: return x.argmax(one, c.keepdim);
    case Red::ArgMin: return x.argmin(one, c.keepdim);
    case Red::CumSum: return x.cumsum(one);
    case Red::CumProd: return x.cumprod(one);
    case Red::CumMax: return x.cummax(one).first;
    case Red::CumMaxIndex: return x.cummax(one).second;
    case Red::SumAsFloat64: return x.sum(ax, c.keepdim, dtypes::float64);
  }
  return {};
}

class Reduce : public ::testing::TestWithParam<ReduceCase> {};

TEST_P(Reduce, MatchesReference) {
  const ReduceCase& c = GetParam();
  std::mt19937_64 g = rng_for(c.name);
  DType dt = c.dt, out_dt = reduce_dtype(c.op, dt);
  std::vector<int64_t> axes = resolved_axes(c);
  int64_t n = 1;
  for (int64_t a : axes) n *= c.shape[a];

  if (!dt.is_float()) {  // exact: integer sums wrap in the accumulator dtype
    I64 x = uniform_int(c.shape, min_of(dt), max_of(dt), g);
    if (c.op == Red::CumSum) x = uniform_int(c.shape, dt == dtypes::int8 ? min_of(dt) : -1000, dt == dtypes::int8 ? max_of(dt) : 1000, g);
    if (c.op == Red::CumMax || c.op == Red::CumMaxIndex) x = uniform_int(c.shape, -50, 50, g);  // ties and rises
    if (c.op == Red::Any || c.op == Red::All)  // mostly false for any, mostly true for all, so both results occur
      for (int64_t& v : x.data) v = (g() % 8 == 0) == (c.op == Red::Any);
    Tensor r = run_reduce(c, to_tensor(x, dt));
    if (c.op == Red::Mean) {
      // The sum wraps in the accumulator dtype first, then divides as float32.
      DType acc = sum_acc_dtype(dt);
      I64 s = reduce(x, axes, c.keepdim, int64_t{0}, [&](int64_t a, int64_t v) { return wrapped_add(acc, a, v); });
      F64 want = map(s, [n](int64_t v) { return static_cast<double>(v) / static_cast<double>(n); });
      expect_close(r, want, out_dt, {8 * epsilon(dtypes::float32), 0, 0});
      return;
    }
    I64 want;
    switch (c.op) {
      case Red::Sum:
        want = reduce(x, axes, c.keepdim, int64_t{0}, [&](int64_t s, int64_t v) { return wrapped_add(out_dt, s, v); });
        break;
      case Red::Max: case Red::Any:
        want = reduce(x, axes, c.keepdim, min_of(dt == dtypes::bool_ ? dtypes::bool_ : dt), [](int64_t s, int64_t v) { return std::max(s, v); });
        break;
      case Red::Min: case Red::All:
        want = reduce(x, axes, c.keepdim, max_of(dt), [](int64_t s, int64_t v) { return std::min(s, v); });
        break;
      case Red::CumSum: {
        F64 cs = cumsum(to_f64(x), axes[0]);
        want = map(cs, [&](double v) { return wrap_to(out_dt, static_cast<int64_t>(v)); });
        break;
      }
      case Red::CumMax: case Red::CumMaxIndex: {
        std::vector<int64_t> first;
        F64 cm = scan(to_f64(x), axes[0], [](double s, double v) { return std::max(s, v); }, &first);
        want = c.op == Red::CumMax ? map(cm, [](double v) { return static_cast<int64_t>(v); }) : I64{x.shape, first};
        break;
      }
      default: FAIL() << "no integer reference for this case";
    }
    expect_exact(r, want, out_dt);
    return;
  }

  double lo = -10, hi = 10;
  if (c.op == Red::Prod || c.op == Red::CumProd) lo = 0.5, hi = 1.5;
  if (c.op == Red::CumProd && c.shape[axes[0]] > 100) lo = 0.99, hi = 1.01;  // a long product stays near 1
  F64 x = uniform(c.shape, lo, hi, dt, g);
  if (c.op == Red::ArgMax || c.op == Red::ArgMin || c.op == Red::CumMaxIndex)  // small integers: ties, where the first position wins
    for (double& v : x.data) v = std::round(v / 3);
  Tensor r = run_reduce(c, to_tensor(x, dt));
  F64 ax = map(x, [](double v) { return std::fabs(v); });
  // Rounding of a float sum: a few units of the result, plus, against cancellation, the accumulator's precision
  // (float32 for every float dtype) times sqrt(n) times the sum of |terms|.
  const double acc_eps = epsilon(dtypes::float32), sq = std::sqrt(static_cast<double>(std::max<int64_t>(n, 1)));
  auto sum_of = [&](const F64& a, bool keep) { return reduce(a, axes, keep, 0.0, std::plus<>()); };
  switch (c.op) {
    case Red::Sum: {
      F64 mag = sum_of(ax, c.keepdim);
      expect_close(r, sum_of(x, c.keepdim), out_dt, {epsilon(out_dt), 0, 2 * sq * acc_eps}, &mag);
      return;
    }
    case Red::Mean: {
      auto scale = [n](double v) { return v / static_cast<double>(n); };
      F64 mag = map(sum_of(ax, c.keepdim), scale);
      expect_close(r, map(sum_of(x, c.keepdim), scale), out_dt, {2 * epsilon(out_dt), 0, 2 * sq * acc_eps}, &mag);
      return;
    }
    case Red::Max:
      expect_close(r, reduce(x, axes, c.keepdim, -kInf, [](double s, double v) { return std::max(s, v); }), out_dt, {});
      return;
    case Red::Min:
      expect_close(r, reduce(x, axes, c.keepdim, kInf, [](double s, double v) { return std::min(s, v); }), out_dt, {});
      return;
    case Red::Prod:
      expect_close(r, reduce(x, axes, c.keepdim, 1.0, std::multiplies<>()), out_dt, ulps(out_dt, 2 * static_cast<double>(n)));
      return;
    case Red::Var: case Red::Std: {
      F64 mean = map(sum_of(x, true), [n](double v) { return v / static_cast<double>(n); });
      std::vector<int64_t> im = broadcast_index(mean.shape, x.shape);
      F64 sq_dev = x;
      for (size_t k = 0; k < x.data.size(); k++) sq_dev.data[k] = (x.data[k] - mean.data[im[k]]) * (x.data[k] - mean.data[im[k]]);
      F64 var = map(sum_of(sq_dev, c.keepdim), [n](double v) { return v / static_cast<double>(n - 1); });
      if (c.op == Red::Var) expect_close(r, var, out_dt, ulps(out_dt, 8 * sq, 10));
      else expect_close(r, map(var, [](double v) { return std::sqrt(v); }), out_dt, ulps(out_dt, 8 * sq, 4));
      return;
    }
    case Red::LogSumExp: {
      F64 mx = reduce(x, axes, true, -kInf, [](double s, double v) { return std::max(s, v); });
      std::vector<int64_t> im = broadcast_index(mx.shape, x.shape);
      F64 e = x;
      for (size_t k = 0; k < x.data.size(); k++) e.data[k] = std::exp(x.data[k] - mx.data[im[k]]);
      F64 want = sum_of(e, c.keepdim);
      for (size_t k = 0; k < want.data.size(); k++) want.data[k] = std::log(want.data[k]) + mx.data[k];
      expect_close(r, want, out_dt, ulps(out_dt, 8, 10));
      return;
    }
    case Red::ArgMax: case Red::ArgMin: {
      int64_t a = axes[0];
      F64 best = reduce(x, axes, true, c.op == Red::ArgMax ? -kInf : kInf, [&](double s, double v) {
        return c.op == Red::ArgMax ? std::max(s, v) : std::min(s, v);
      });
      std::vector<int64_t> im = broadcast_index(best.shape, x.shape);
      I64 want{best.shape, std::vector<int64_t>(best.data.size(), -1)};
      for (size_t k = 0; k < x.data.size(); k++)  // the first position of the extremum
        if (x.data[k] == best.data[im[k]] && want.data[im[k]] < 0) want.data[im[k]] = unravel(static_cast<int64_t>(k), x.shape)[a];
      if (!c.keepdim) want.shape.erase(want.shape.begin() + a);
      expect_exact(r, want, out_dt);
      return;
    }
    case Red::SumAsFloat64: {
      F64 mag = sum_of(ax, c.keepdim);
      expect_close(r, sum_of(x, c.keepdim), out_dt, {epsilon(out_dt), 0, 2 * sq * epsilon(dtypes::float64)}, &mag);
      return;
    }
    case Red::CumProd: {
      int64_t len = c.shape[axes[0]];
      expect_close(r, scan(x, axes[0], std::multiplies<>()), out_dt, ulps(out_dt, 2 * static_cast<double>(len)));
      return;
    }
    case Red::CumMax:
      expect_close(r, scan(x, axes[0], [](double s, double v) { return std::max(s, v); }), out_dt, {});
      return;
    case Red::CumMaxIndex: {
      std::vector<int64_t> first;
      scan(x, axes[0], [](double s, double v) { return std::max(s, v); }, &first);
      expect_exact(r, I64{x.shape, first}, out_dt);
      return;
    }
    case Red::CumSum: {
      F64 mag = cumsum(ax, axes[0]);
      expect_close(r, cumsum(x, axes[0]), out_dt, {epsilon(out_dt), 0, 2 * std::sqrt(static_cast<double>(c.shape[axes[0]])) * acc_eps}, &mag);
      return;
    }
    default: FAIL() << "no float reference for this case";
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, Reduce, ::testing::ValuesIn(reduce_cases()), name_of<ReduceCase>);

// Reductions read through views: a flipped, permuted input and a padded one (the pad value takes part in the max).
TEST(ReduceOfViews, SumOfFlippedPermutedAndMaxOfPadded) {
  std::mt19937_64 g = rng_for(current_case_name());
  F64 x = uniform({5, 7, 9}, -10, 10, dtypes::float32, g);
  F64 v = gather(flipped(x, {1}), permuted(x.shape, {2, 0, 1}), permute_map(x.shape, {2, 0, 1}));
  Tensor t = to_tensor(x, dtypes::float32);
  F64 mag = reduce(map(v, [](double d) { return std::fabs(d); }), {2}, false, 0.0, std::plus<>());
  expect_close(t.flip(1).permute({2, 0, 1}).sum(2), reduce(v, {2}, false, 0.0, std::plus<>()), dtypes::float32,
               {epsilon(dtypes::float32), 0, 2 * std::sqrt(7.0) * epsilon(dtypes::float32)}, &mag);
  const std::vector<std::pair<int64_t, int64_t>> pad = {{0, 0}, {2, 1}, {0, 0}};
  F64 p = gather(x, padded(x.shape, pad), pad_map(x.shape, pad), 9.5);
  expect_close(t.pad(pad, 9.5).max(1), reduce(p, {1}, false, -kInf, [](double s, double d) { return std::max(s, d); }),
               dtypes::float32, {});
}

// ==== matmul ========================================================================================================

struct MatmulCase {
  std::string name;
  Shape a, b;
  DType dt;
};

std::vector<MatmulCase> matmul_cases() {
  const std::vector<std::pair<std::string, std::pair<Shape, Shape>>> shapes = {
      {"1x1_1x1", {{1, 1}, {1, 1}}},
      {"3x5_5x7", {{3, 5}, {5, 7}}},
      {"17x33_33x9", {{17, 33}, {33, 9}}},
      {"64x64_64x64", {{64, 64}, {64, 64}}},
      // the CPU's register tiles: 4 rows x 2 vectors; 8 rows x 1 vector (80 columns: 5 vectors); and w's rows 4 KiB
      // apart, packed into panels first (scheduler/layout.h)
      {"40x48_48x80", {{40, 48}, {48, 80}}},
      {"32x128_128x1024", {{32, 128}, {128, 1024}}},
      {"batched_2x3x4_2x4x5", {{2, 3, 4}, {2, 4, 5}}},
      {"broadcast_batch_2x1x3x4_5x4x6", {{2, 1, 3, 4}, {5, 4, 6}}},
      {"vector_matrix_5_5x7", {{5}, {5, 7}}},
      {"matrix_vector_3x5_5", {{3, 5}, {5}}},
      {"vector_vector_33_33", {{33}, {33}}},
  };
  std::vector<MatmulCase> out;
  for (const auto& [n, ab] : shapes)
    for (DType dt : {dtypes::float32, dtypes::float16}) out.push_back({n + "_" + dt.name(), ab.first, ab.second, dt});
  out.push_back({"17x33_33x9_bfloat16", {17, 33}, {33, 9}, dtypes::bfloat16});
  out.push_back({"3x5_5x7_int32", {3, 5}, {5, 7}, dtypes::int32});
  out.push_back({"17x33_33x9_int8", {17, 33}, {33, 9}, dtypes::int8});
  return out;
}

class Matmul : public ::testing::TestWithParam<MatmulCase> {};

TEST_P(Matmul, MatchesReference) {
  const MatmulCase& c = GetParam();
  std::mt19937_64 g = rng_for(c.name);
  if (!c.dt.is_float()) {  // exact, wrapping in the dtype (the products and the sum both wrap)
    I64 a = uniform_int(c.a, min_of(c.dt), max_of(c.dt), g), b = uniform_int(c.b, min_of(c.dt), max_of(c.dt), g);
    // x.matmul(w) is (x * w).sum(-1).cast(dtype): the products wrap in the dtype, the sum in sum_acc_dtype
    // (int32 for both), and the cast wraps to the dtype again.
    int64_t k = c.a.back(), n = c.b.back(), m = c.a.front();
    I64 want{{m, n}, {}};
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        int64_t sum = 0;
        for (int64_t q = 0; q < k; q++) sum = wrapped_add(dtypes::int32, sum, wrapped_mul(c.dt, a.data[i * k + q], b.data[q * n + j]));
        want.data.push_back(wrap_to(c.dt, sum));
      }
    expect_exact(to_tensor(a, c.dt).matmul(to_tensor(b, c.dt)), want, c.dt);
    return;
  }
  F64 a = uniform(c.a, -1, 1, c.dt, g), b = uniform(c.b, -1, 1, c.dt, g);
  F64 mag = matmul(a, b, true);
  double k = static_cast<double>(c.a.back());
  // The products round in the input dtype (half a unit each), the sum accumulates in float32, the result rounds to
  // the output dtype once.
  Tol tol{epsilon(c.dt), 0, epsilon(c.dt) + 2 * std::sqrt(k) * epsilon(dtypes::float32)};
  expect_close(to_tensor(a, c.dt).matmul(to_tensor(b, c.dt)), matmul(a, b), c.dt, tol, &mag);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Matmul, ::testing::ValuesIn(matmul_cases()), name_of<MatmulCase>);

// matmul of a transposed (non-contiguous) view: a.T @ b with a of shape (33, 17).
TEST(MatmulOfViews, TransposedLhs) {
  std::mt19937_64 g = rng_for(current_case_name());
  F64 a = uniform({33, 17}, -1, 1, dtypes::float32, g), b = uniform({33, 9}, -1, 1, dtypes::float32, g);
  F64 at = gather(a, {17, 33}, permute_map(a.shape, {1, 0}));
  F64 mag = matmul(at, b, true);
  expect_close(to_tensor(a, dtypes::float32).transpose().matmul(to_tensor(b, dtypes::float32)), matmul(at, b), dtypes::float32,
               {epsilon(dtypes::float32), 0, 2 * std::sqrt(33.0) * epsilon(dtypes::float32)}, &mag);
}

// ==== softmax and log_softmax =======================================================================================

struct SoftmaxCase {
  std::string name;
  bool log;
  int64_t axis;
  double lo, hi;  // large-magnitude inputs stay within a factor of 2 of their max, so x - max is exact
  DType dt;
};

std::vector<SoftmaxCase> softmax_cases() {
  std::vector<SoftmaxCase> out;
  for (bool log : {false, true})
    for (int64_t axis : {0, 1}) {
      std::string name = std::string(log ? "log_softmax" : "softmax") + "_axis" + std::to_string(axis);
      out.push_back({name + "_normal_float32", log, axis, -5, 5, dtypes::float32});
      // Large magnitudes, where a softmax without the max subtraction overflows or underflows: one sign per axis.
      if (log == (axis == 0)) out.push_back({name + "_large_negative_float32", log, axis, -1010, -1000, dtypes::float32});
      else out.push_back({name + "_large_positive_float32", log, axis, 990, 1000, dtypes::float32});
    }
  out.push_back({"softmax_axis1_normal_float16", false, 1, -5, 5, dtypes::float16});
  out.push_back({"softmax_axis0_large_positive_float16", false, 0, 990, 1000, dtypes::float16});
  out.push_back({"log_softmax_axis1_normal_bfloat16", true, 1, -5, 5, dtypes::bfloat16});
  out.push_back({"softmax_axis_minus1_normal_float32", false, -1, -5, 5, dtypes::float32});
  return out;
}

class Softmax : public ::testing::TestWithParam<SoftmaxCase> {};

TEST_P(Softmax, MatchesReference) {
  const SoftmaxCase& c = GetParam();
  std::mt19937_64 g = rng_for(c.name);
  F64 x = uniform({4, 37}, c.lo, c.hi, c.dt, g);
  Tensor t = to_tensor(x, c.dt);
  Tensor r = c.log ? t.log_softmax(c.axis) : t.softmax(c.axis);
  int64_t axis = c.axis < 0 ? c.axis + 2 : c.axis;
  // exp(x - max) is exp2((x - max) * log2(e)): the product rounds in the dtype, ~|x - max| units of error.
  expect_close(r, softmax(x, axis, c.log), c.dt, ulps(c.dt, 24, c.log ? 10 : 0.01));
}

INSTANTIATE_TEST_SUITE_P(Axes, Softmax, ::testing::ValuesIn(softmax_cases()), name_of<SoftmaxCase>);

}  // namespace
}  // namespace doorbell::e2e
