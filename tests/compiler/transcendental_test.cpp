// compiler/transcendental.h: EXP2, LOG2 and SIN decomposed into float32 arithmetic. The decomposed graphs are
// evaluated node by node with exec_alu (float32 rounding at every op, as the generated code computes) against
// double-precision libm rounded to float32, in ULPs; one test compiles and runs real kernels.
// TRANSCENDENTAL_SWEEP=N multiplies the random sweeps' input counts by N for a longer run by hand.
#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <limits>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "compiler/cpu/clang_compiler.h"
#include "compiler/late_lowering.h"
#include "compiler/program.h"
#include "compiler/transcendental.h"
#include "frontend/tensor.h"
#include "hcq/host_buffers.h"
#include "ir/exec_alu.h"

namespace doorbell {
namespace {

constexpr int64_t kInputTag = 0x7a11;  // marks the input leaf: no CONST the decomposition makes carries a tag

UOp input_leaf(DType dt) { return UOp::const_(dt, 0.0).with_tag(kInputTag); }

// compiler/late_lowering.h with the GPU targets' options: float32, float16 and bfloat16 EXP2, LOG2, SIN and POW
// decomposed, float64 left alone.
UOp lower_transcendentals(const UOp& root) { return lower_late(root, ptx_lowering_options()); }

// A decomposed graph flattened for fast repeated evaluation.
class Evaluator {
 public:
  explicit Evaluator(const UOp& root) {
    std::unordered_map<const UOpNode*, int> index;
    for (const UOp& u : root.toposort()) {
      Node n;
      n.op = u.op();
      n.dtype = u.dtype();
      if (u.op() == Ops::CONST) {
        if (u.tag() == kInputTag) input_ = static_cast<int>(nodes_.size());
        else n.value = u.const_value();
      } else if (!group::Elementwise.contains(u.op())) {
        throw std::invalid_argument("Evaluator: " + std::string(op_name(u.op())) + " is not elementwise");
      }
      for (const UOp& s : u.src()) n.src.push_back(index.at(s.get())), n.in.push_back(s.dtype());
      index.emplace(u.get(), static_cast<int>(nodes_.size()));
      nodes_.push_back(std::move(n));
    }
    if (input_ < 0) throw std::invalid_argument("Evaluator: the graph has no input leaf");
    values_.resize(nodes_.size());
  }

  // The root's value for input x; fails the test (and returns NaN) where an op's result is undefined.
  double operator()(double x) {
    for (size_t i = 0; i < nodes_.size(); i++) {
      const Node& n = nodes_[i];
      if (n.op == Ops::CONST) {
        values_[i] = static_cast<int>(i) == input_ ? ConstValue(x) : n.value;
        continue;
      }
      ConstValue args[3];
      for (size_t k = 0; k < n.src.size(); k++) args[k] = values_[n.src[k]];
      std::optional<ConstValue> v = exec_alu(n.op, n.dtype, std::span<const ConstValue>(args, n.src.size()), n.in);
      if (!v) {
        ADD_FAILURE() << op_name(n.op) << " is undefined for input " << x;
        return NAN;
      }
      values_[i] = *v;
    }
    return std::get<double>(values_.back());
  }

  size_t size() const { return nodes_.size(); }

 private:
  struct Node {
    Ops op;
    DType dtype;
    std::vector<int> src;
    std::vector<DType> in;
    ConstValue value;
  };
  std::vector<Node> nodes_;
  std::vector<ConstValue> values_;
  int input_ = -1;
};

UOp decomposed(Ops op, DType dt = dtypes::float32) {
  UOp out = lower_transcendentals(UOp::sink({input_leaf(dt).alu(op)})).src(0);
  for (const UOp& u : out.toposort())
    if (u.op() == Ops::EXP2 || u.op() == Ops::LOG2 || u.op() == Ops::SIN) ADD_FAILURE() << op_name(op) << " is left in the graph";
  return out;
}

// Floats mapped to integers in order, so that the difference of two is their distance in ULPs.
int64_t ordered(float f) {
  int32_t b = std::bit_cast<int32_t>(f);
  return b < 0 ? -static_cast<int64_t>(b & 0x7fffffff) : b;
}

int64_t ulp_distance(float got, float want) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want) ? 0 : INT64_MAX;
  return std::llabs(ordered(got) - ordered(want));
}

int sweep_factor() {
  const char* s = std::getenv("TRANSCENDENTAL_SWEEP");
  return s && std::atoi(s) > 0 ? std::atoi(s) : 1;
}

float random_finite_float(std::mt19937& g) {  // uniform over bit patterns: log-uniform magnitudes, both signs
  for (;;) {
    float f = std::bit_cast<float>(static_cast<uint32_t>(g()));
    if (std::isfinite(f)) return f;
  }
}

struct SweepResult {
  int64_t max_ulp = 0;
  float worst_input = 0;
  size_t count = 0;
};

SweepResult sweep(Ops op, double (*reference)(double), const std::vector<float>& inputs) {
  Evaluator eval(decomposed(op));
  SweepResult r;
  for (float x : inputs) {
    float got = static_cast<float>(eval(x));
    float want = static_cast<float>(reference(x));
    int64_t d = ulp_distance(got, want);
    if (d > r.max_ulp) r.max_ulp = d, r.worst_input = x;
    r.count++;
  }
  return r;
}

void expect_within(const SweepResult& r, int64_t max_ulp, const char* what) {
  EXPECT_LE(r.max_ulp, max_ulp) << what << ": worst input " << std::hexfloat << r.worst_input;
  std::printf("[ %s ] %zu inputs, max error %lld ULP (at %a)\n", what, r.count, static_cast<long long>(r.max_ulp),
              static_cast<double>(r.worst_input));
}

double ref_exp2(double x) { return std::exp2(x); }
double ref_log2(double x) { return std::log2(x); }
double ref_sin(double x) { return std::sin(x); }

// Ranges the sweeps cover (besides fully random bit patterns).
std::vector<float> uniform(std::mt19937& g, size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(g);
  return v;
}

void append(std::vector<float>& a, const std::vector<float>& b) { a.insert(a.end(), b.begin(), b.end()); }

TEST(TranscendentalAccuracy, Exp2WithinTwoUlpOverTheWholeDomain) {
  std::mt19937 g(1);
  size_t n = 20000 * sweep_factor();
  std::vector<float> in = uniform(g, n, -155, 130);  // denormal results, overflow and everything between
  append(in, uniform(g, n / 2, -1, 1));
  std::vector<float> small, near_int, randbits;
  for (size_t i = 0; i < n / 4; i++) {
    small.push_back(std::ldexp(1.0f, -static_cast<int>(g() % 40)) * (g() % 2 ? -1.f : 1.f) * (1 + (g() % 1000) / 1000.f));
    float k = static_cast<float>(static_cast<int>(g() % 280) - 152);
    int steps = static_cast<int>(g() % 64) - 32;
    float x = k;
    for (int s = 0; s < std::abs(steps); s++) x = std::nextafter(x, steps < 0 ? -INFINITY : INFINITY);
    near_int.push_back(x);
    near_int.push_back(k + (g() % 2 ? 0.5f : -0.5f));
    randbits.push_back(random_finite_float(g));
  }
  append(in, small);
  append(in, near_int);
  append(in, randbits);
  expect_within(sweep(Ops::EXP2, ref_exp2, in), 2, "exp2 float32");
}

TEST(TranscendentalAccuracy, Log2WithinTwoUlpOverTheWholeDomain) {
  std::mt19937 g(2);
  size_t n = 20000 * sweep_factor();
  std::vector<float> in;
  for (size_t i = 0; i < n; i++) in.push_back(std::fabs(random_finite_float(g)));  // denormals to the largest float
  append(in, uniform(g, n / 2, 0.5f, 2.f));
  for (size_t i = 0; i < n / 2; i++) {
    // near 1 and near powers of two, a few ulps either side
    float p = std::ldexp(1.0f, static_cast<int>(g() % 276) - 149), x = p;
    int steps = static_cast<int>(g() % 16) + 1;
    for (int s = 0; s < steps; s++) x = std::nextafter(x, g() % 2 ? 0.f : INFINITY);
    in.push_back(x);
    in.push_back(1.0f + std::ldexp(static_cast<float>(static_cast<int>(g() % 2001) - 1000), -static_cast<int>(g() % 24) - 10));
  }
  expect_within(sweep(Ops::LOG2, ref_log2, in), 2, "log2 float32");
}

TEST(TranscendentalAccuracy, SinWithinTwoUlpOverTheWholeDomain) {
  std::mt19937 g(3);
  size_t n = 20000 * sweep_factor();
  std::vector<float> in;
  for (size_t i = 0; i < n; i++) in.push_back(random_finite_float(g));  // up to 3.4e38, denormals, both signs
  append(in, uniform(g, n / 2, -10, 10));
  append(in, uniform(g, n / 4, -1e5f, 1e5f));
  for (size_t i = 0; i < n / 4; i++) {
    // the floats nearest multiples of pi/2 (where the reduction cancels most) and their neighbours
    double k = static_cast<double>(g() % (i % 2 ? 100u : 10000000u));
    float x = static_cast<float>(k * M_PI_2) * (g() % 2 ? 1.f : -1.f);
    in.push_back(x);
    in.push_back(std::nextafter(x, INFINITY));
    in.push_back(std::nextafter(x, -INFINITY));
  }
  // A float32 close to a multiple of pi/2 (the reduced argument is ~2^-29 of it) and other classic hard cases.
  for (float x : {0x1.921fb6p+0f, 0x1.921fb6p+1f, 0x1.2d97c8p+3f, 0x1.5fdbbep+12f, 0x1.b7b37ap+25f, 1e30f, -1e30f,
                  0x1.fffffep+127f, 16367173.f, 1e5f, 102940.4f, 1.5707964f})
    in.push_back(x);
  expect_within(sweep(Ops::SIN, ref_sin, in), 2, "sin float32");
}

// Special values: exact.
TEST(TranscendentalSpecialValues, Exp2) {
  Evaluator e(decomposed(Ops::EXP2));
  EXPECT_EQ(e(-INFINITY), 0.0);
  EXPECT_FALSE(std::signbit(e(-INFINITY)));
  EXPECT_EQ(e(INFINITY), INFINITY);
  EXPECT_TRUE(std::isnan(e(NAN)));
  EXPECT_EQ(e(0.0), 1.0);
  EXPECT_EQ(e(-0.0), 1.0);
  for (int k = -149; k <= 127; k++) EXPECT_EQ(e(k), std::ldexp(1.0, k)) << "exp2(" << k << ")";
  EXPECT_EQ(e(128), INFINITY);
  EXPECT_EQ(e(1000), INFINITY);
  EXPECT_EQ(e(3e38), INFINITY);
  EXPECT_EQ(e(-150), 0.0) << "2^-150 is a tie between 0 and the smallest subnormal: even is 0";
  EXPECT_EQ(e(-149.5), std::ldexp(1.0, -149)) << "2^-149.5 rounds up to the smallest subnormal";
  EXPECT_EQ(e(-1000), 0.0);
  EXPECT_EQ(e(-3e38), 0.0);
  EXPECT_EQ(e(0x1.fffffep+6), static_cast<float>(std::exp2(0x1.fffffep+6))) << "just below 128 stays finite";
  EXPECT_EQ(e(0x1p-149), 1.0) << "a subnormal input";
}

TEST(TranscendentalSpecialValues, Log2) {
  Evaluator e(decomposed(Ops::LOG2));
  EXPECT_EQ(e(0.0), -INFINITY);
  EXPECT_EQ(e(-0.0), -INFINITY);
  EXPECT_TRUE(std::isnan(e(-1.0)));
  EXPECT_TRUE(std::isnan(e(-0x1p-149)));
  EXPECT_TRUE(std::isnan(e(-INFINITY)));
  EXPECT_TRUE(std::isnan(e(NAN)));
  EXPECT_EQ(e(INFINITY), INFINITY);
  EXPECT_EQ(e(1.0), 0.0);
  EXPECT_FALSE(std::signbit(e(1.0))) << "log2(1) is +0";
  for (int k = -149; k <= 127; k++) EXPECT_EQ(e(std::ldexp(1.0, k)), k) << "log2(2^" << k << ")";
  EXPECT_EQ(e(0x1.fffffep+127), 128.0);
  EXPECT_EQ(e(3.0), static_cast<float>(std::log2(3.0)));
}

TEST(TranscendentalSpecialValues, Sin) {
  Evaluator e(decomposed(Ops::SIN));
  EXPECT_EQ(e(0.0), 0.0);
  EXPECT_FALSE(std::signbit(e(0.0)));
  EXPECT_EQ(e(-0.0), 0.0);
  EXPECT_TRUE(std::signbit(e(-0.0))) << "sin(-0) is -0";
  EXPECT_TRUE(std::isnan(e(INFINITY)));
  EXPECT_TRUE(std::isnan(e(-INFINITY)));
  EXPECT_TRUE(std::isnan(e(NAN)));
  EXPECT_EQ(e(0x1p-149), 0x1p-149);
  EXPECT_EQ(e(-0x1p-149), -0x1p-149);
  EXPECT_EQ(e(0x1p-20), 0x1p-20) << "sin(x) rounds to x for tiny x";
  EXPECT_LE(ulp_distance(static_cast<float>(e(1e30)), static_cast<float>(std::sin(1e30f))), 2);
  EXPECT_LE(ulp_distance(static_cast<float>(e(-1e30)), static_cast<float>(std::sin(-1e30f))), 2);
}

// float16 and bfloat16 compute in float32 and round once; every finite half input is checked against double
// libm rounded to the half type, within one half-type ulp (two roundings, float32 then half, may differ by one).
int64_t half_ulp_distance(DType dt, double got, double want) {
  auto bits = [&](double v) -> int64_t {
    uint16_t b = dt == dtypes::float16 ? float_to_half_bits(static_cast<float>(v)) : float_to_bfloat16_bits(static_cast<float>(v));
    return b & 0x8000 ? -static_cast<int64_t>(b & 0x7fff) : b;
  };
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want) ? 0 : INT64_MAX;
  return std::llabs(bits(got) - bits(want));
}

void check_half_type(DType dt) {
  for (Ops op : {Ops::EXP2, Ops::LOG2, Ops::SIN}) {
    UOp y = decomposed(op, dt);
    EXPECT_EQ(y.dtype(), dt);
    ASSERT_EQ(y.op(), Ops::CAST) << "the float32 result is cast back to " << dt.name();
    Evaluator e(y);
    int64_t worst = 0;
    for (uint32_t b = 0; b < 0x10000; b += 3) {
      double x = dt == dtypes::float16 ? half_bits_to_float(static_cast<uint16_t>(b)) : bfloat16_bits_to_float(static_cast<uint16_t>(b));
      double got = e(x);
      if (!std::isnan(got)) {
        EXPECT_EQ(got, round_to_float_dtype(dt, got)) << "a " << dt.name() << " value";
      }
      double want = round_to_float_dtype(dt, op == Ops::EXP2 ? std::exp2(x) : op == Ops::LOG2 ? std::log2(x) : std::sin(x));
      worst = std::max(worst, half_ulp_distance(dt, got, want));
    }
    EXPECT_LE(worst, 1) << op_name(op) << " " << dt.name();
  }
  EXPECT_EQ(Evaluator(decomposed(Ops::EXP2, dt))(3.0), 8.0);
  EXPECT_EQ(Evaluator(decomposed(Ops::EXP2, dt))(-1.0), 0.5);
  EXPECT_EQ(Evaluator(decomposed(Ops::LOG2, dt))(0.5), -1.0);
  EXPECT_EQ(Evaluator(decomposed(Ops::LOG2, dt))(0.0), -INFINITY);
  EXPECT_TRUE(std::signbit(Evaluator(decomposed(Ops::SIN, dt))(-0.0)));
}

TEST(TranscendentalHalfTypes, Float16GoesThroughFloat32) { check_half_type(dtypes::float16); }
TEST(TranscendentalHalfTypes, BFloat16GoesThroughFloat32) { check_half_type(dtypes::bfloat16); }

TEST(TranscendentalGraph, Float64NodesAreLeftUnchanged) {
  UOp x = input_leaf(dtypes::float64);
  UOp sink = UOp::sink({x.alu(Ops::EXP2), x.alu(Ops::LOG2), x.alu(Ops::SIN)});
  EXPECT_EQ(lower_transcendentals(sink), sink);
}

TEST(TranscendentalGraph, GraphsWithoutTranscendentalsAreReturnedAsTheyAre) {
  UOp x = input_leaf(dtypes::float32);
  UOp sink = UOp::sink({x * x + 1.0, x.alu(Ops::SQRT)});
  EXPECT_EQ(lower_transcendentals(sink), sink);
}

TEST(TranscendentalGraph, UsesOnlyOpsTheCRendererHasAndSharesTheInput) {
  const OpSet allowed{Ops::ADD, Ops::SUB, Ops::MUL, Ops::NEG, Ops::FDIV, Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ,
                      Ops::WHERE, Ops::CAST, Ops::BITCAST, Ops::AND, Ops::OR, Ops::XOR, Ops::SHL, Ops::SHR,
                      Ops::CONST, Ops::SINK};
  UOp x = input_leaf(dtypes::float32);
  UOp sink = lower_transcendentals(UOp::sink({x.alu(Ops::EXP2), x.alu(Ops::LOG2), x.alu(Ops::SIN)}));
  for (const UOp& u : sink.toposort()) {
    EXPECT_TRUE(allowed.contains(u.op())) << op_name(u.op());
    if (u.op() != Ops::SINK && !u.dtype().is_bool()) {
      EXPECT_TRUE(u.dtype() == dtypes::float32 || u.dtype() == dtypes::int32 || u.dtype() == dtypes::int64 || u.dtype() == dtypes::uint64)
          << u.dtype().name();
    }
  }
  EXPECT_EQ(sink.src(0).op(), Ops::WHERE);
  EXPECT_LT(sink.toposort().size(), 400u) << "the three decompositions stay small";
}

TEST(TranscendentalGraph, NullRootThrows) { EXPECT_THROW(lower_transcendentals(UOp()), std::invalid_argument); }

// End to end: a scheduled kernel compiled by the C compiler computes the decomposed functions, and its source no
// longer calls libm for float32.
// POW decomposed (the GPU targets' POW): C's signs and special values, and within 4 + |y * log2 x| ULP.
TEST(TranscendentalPow, MatchesCPowSignsAndSpecialValuesAndIsAccurateForModerateResults) {
  const float kNan = std::numeric_limits<float>::quiet_NaN(), kInfF = std::numeric_limits<float>::infinity();
  const float ys[] = {0.f, 1.f, 2.f, 3.f, -1.f, -2.f, 0.5f, 2.5f, -3.5f, 10.f, kNan};
  const float xs[] = {-2.f, -0.5f, 0.f, 1.f, 2.f, 3.7f, 1e-3f, 100.f, kInfF, kNan, 0.75f, -3.f};
  for (float y : ys) {
    UOp x = input_leaf(dtypes::float32);
    UOp out = lower_transcendentals(UOp::sink({x.alu(Ops::POW, UOp::const_(dtypes::float32, y))})).src(0);
    for (const UOp& u : out.toposort())
      ASSERT_FALSE(u.op() == Ops::POW || u.op() == Ops::EXP2 || u.op() == Ops::LOG2) << "left in the graph";
    Evaluator eval(out);
    for (float xv : xs) {
      float got = static_cast<float>(eval(xv));
      float want = static_cast<float>(std::pow(static_cast<double>(xv), static_cast<double>(y)));
      if (std::isnan(want) || std::isinf(want) || want == 0) {
        EXPECT_TRUE(std::isnan(want) ? std::isnan(got) : got == want) << "pow(" << xv << ", " << y << ") = " << got << ", C gives " << want;
        continue;
      }
      // log2's rounding, scaled by y, moves the exponent: about |y * log2 x| * ln 2 ULPs of the result
      const double e = std::fabs(y * std::log2(std::fabs(xv)));
      const int64_t tolerance = 4 + (std::isfinite(e) ? static_cast<int64_t>(std::ceil(e)) : 0);
      EXPECT_LE(ulp_distance(got, want), tolerance) << "pow(" << xv << ", " << y << ") = " << got << ", C gives " << want;
    }
  }
  // float16 goes through float32 and rounds once at the end
  UOp h = input_leaf(dtypes::float16);
  Evaluator eval(lower_transcendentals(UOp::sink({h.alu(Ops::POW, UOp::const_(dtypes::float16, 3.0))})).src(0));
  EXPECT_EQ(eval(1.5), 3.375);
  EXPECT_EQ(eval(-2.0), -8.0);
}

TEST(TranscendentalCompiled, Float32KernelsMatchLibmWithinTwoUlpAndCallNoLibm) {
  if (!find_c_compiler()) GTEST_SKIP() << "no C compiler on PATH";
  std::mt19937 g(4);
  std::vector<float> xs;
  for (int i = 0; i < 3000; i++) xs.push_back(random_finite_float(g));
  for (float x : uniform(g, 3000, -20, 20)) xs.push_back(x);
  for (float x : {0.f, -0.f, 1.f, 0x1p-149f, -0x1p-149f, INFINITY, -INFINITY, NAN, 128.f, -150.f, 1e30f}) xs.push_back(x);
  Tensor a(xs);
  struct Case {
    Tensor out;
    double (*ref)(double);
    const char* name;
  };
  std::vector<Case> cases = {{a.exp2(), ref_exp2, "exp2"}, {a.log2(), ref_log2, "log2"}, {a.sin(), ref_sin, "sin"}};
  for (Case& c : cases) {
    UOp linear = c.out.schedule_linear();
    ASSERT_EQ(linear.src().size(), 1u) << c.name;
    const UOp& call = linear.src(0);
    CompiledKernel k = compile_kernel(call);
    std::string source = k.program.src(2).arg_as<std::string>();
    for (const char* fn : {"__builtin_exp2", "__builtin_log2", "__builtin_sin"})
      EXPECT_EQ(source.find(fn), std::string::npos) << c.name << " still calls " << fn;
    std::vector<void*> bufs;
    for (size_t i = 1; i < call.src().size(); i++) bufs.push_back(buffer_bytes(call.src(i)).data());
    for (int core = 0; core < 2; core++) k.fn(bufs.data(), nullptr, core, 2);
    std::span<std::byte> out = buffer_bytes(call.src(1));
    ASSERT_EQ(out.size(), xs.size() * sizeof(float));
    int64_t worst = 0;
    for (size_t i = 0; i < xs.size(); i++) {
      float got;
      std::memcpy(&got, out.data() + i * sizeof(float), sizeof got);
      int64_t d = ulp_distance(got, static_cast<float>(c.ref(xs[i])));
      EXPECT_LE(d, 2) << c.name << "(" << std::hexfloat << xs[i] << ") = " << got;
      worst = std::max(worst, d);
    }
    std::printf("[ %s compiled ] %zu inputs, max error %lld ULP\n", c.name, xs.size(), static_cast<long long>(worst));
  }
}

// Consecutive float32 inputs of each function through a compiled kernel. CI sweeps 2^20 consecutive bit patterns
// per function around its hardest region (exp2 near 1, log2 near 1, sin near pi); every input takes minutes, so
// only by hand (TRANSCENDENTAL_EXHAUSTIVE=1, or =exp2, =log2, =sin for one function). Negative inputs of sin mirror
// positive ones bit for bit (the sign is applied last), and log2 of a negative input is NaN, so both sweep the
// positive floats; exp2 sweeps both signs up to |x| = 160.
TEST(TranscendentalCompiled, ConsecutiveFloat32SweepExhaustiveWhenAskedByEnv) {
  if (!find_c_compiler()) GTEST_SKIP() << "no C compiler on PATH";
  const bool exhaustive = std::getenv("TRANSCENDENTAL_EXHAUSTIVE") != nullptr;
  const size_t kChunk = exhaustive ? size_t{1} << 22 : size_t{1} << 20;
  Tensor a(std::vector<float>(kChunk, 0.f));
  struct Case {
    Tensor out;
    double (*ref)(double);
    const char* name;
    std::vector<std::pair<uint32_t, uint32_t>> ranges;  // [first, last] bit patterns
  };
  std::vector<Case> cases = {{a.exp2(), ref_exp2, "exp2", {{0x00000000u, 0x43200000u}, {0x80000000u, 0xc3200000u}}},
                             {a.log2(), ref_log2, "log2", {{0x00000000u, 0x7f800000u}}},
                             {a.sin(), ref_sin, "sin", {{0x00000000u, 0x7f800000u}}}};
  std::string only = exhaustive ? std::getenv("TRANSCENDENTAL_EXHAUSTIVE") : "1";
  if (!exhaustive) {  // one chunk each, centred on 1.0, 1.0 and pi
    cases[0].ranges = {{0x3f800000u - (1u << 19), 0x3f800000u + (1u << 19) - 1}};
    cases[1].ranges = {{0x3f800000u - (1u << 19), 0x3f800000u + (1u << 19) - 1}};
    cases[2].ranges = {{0x40490fdbu - (1u << 19), 0x40490fdbu + (1u << 19) - 1}};
  }
  for (Case& c : cases) {
    if (only != "1" && only != c.name) continue;
    UOp linear = c.out.schedule_linear();
    const UOp& call = linear.src(0);
    CompiledKernel k = compile_kernel(call);
    std::vector<void*> bufs;
    for (size_t i = 1; i < call.src().size(); i++) bufs.push_back(buffer_bytes(call.src(i)).data());
    auto* in = reinterpret_cast<uint32_t*>(buffer_bytes(call.src(2)).data());
    auto* out = reinterpret_cast<float*>(buffer_bytes(call.src(1)).data());
    int64_t worst = 0;
    uint32_t worst_bits = 0;
    size_t count = 0;
    for (auto [first, last] : c.ranges) {
      for (uint64_t base = first; base <= last; base += kChunk) {
        size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, uint64_t{last} - base + 1));
        for (size_t i = 0; i < kChunk; i++) in[i] = static_cast<uint32_t>(base + std::min(i, n - 1));
        std::thread t([&] { k.fn(bufs.data(), nullptr, 1, 2); });
        k.fn(bufs.data(), nullptr, 0, 2);
        t.join();
        for (size_t i = 0; i < n; i++) {
          float x = std::bit_cast<float>(in[i]);
          int64_t d = ulp_distance(out[i], static_cast<float>(c.ref(x)));
          if (d > worst) worst = d, worst_bits = in[i];
        }
        count += n;
      }
    }
    std::printf("[ %s %s ] %zu inputs, max error %lld ULP (at %a)\n", c.name, exhaustive ? "exhaustive" : "consecutive",
                count, static_cast<long long>(worst),
                static_cast<double>(std::bit_cast<float>(worst_bits)));
    EXPECT_LE(worst, 2) << c.name;
  }
}

}  // namespace
}  // namespace doorbell
