// Values of computed tensors, executed through schedule_linear and run_linear, compared against a float64
// reference computed here on random, initialized inputs.
#include <algorithm>
#include <cmath>
#include <functional>
#include <numbers>

#include "frontend_test_util.h"
#include "hcq/run_linear.h"

namespace doorbell {
namespace {

using Ref = std::vector<double>;

void expect_close(const Ref& got, const Ref& want, double rtol = 1e-5, double atol = 1e-6, const std::string& what = "") {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); i++) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " [" << i << "]";
      continue;
    }
    EXPECT_NEAR(got[i], want[i], atol + rtol * std::fabs(want[i])) << what << " [" << i << "]";
  }
}

// Uniform values in [lo, hi) as a float32 tensor of `shape`, and the same values as doubles.
struct Input {
  Tensor t;
  Ref v;
};
Input uniform(IntTuple shape, double lo, double hi, uint64_t seed) {
  Tensor::manual_seed(seed);
  Tensor t = (Tensor::rand(shape, dtypes::float64) * (hi - lo) + lo).cast(dtypes::float32).realize();
  return {t, t.tolist<double>()};
}

Ref map(const Ref& x, const std::function<double(double)>& f) {
  Ref out(x.size());
  std::transform(x.begin(), x.end(), out.begin(), f);
  return out;
}

TEST(Values, SeedExamples) {
  Tensor x = Tensor({1.f, 2.f, 3.f}).realize();
  Tensor y = (x + 1) * 2;
  UOp linear = y.schedule_linear();
  run_linear(linear);
  EXPECT_EQ(y.tolist<float>(), (std::vector<float>{4, 6, 8}));

  Tensor a = Tensor({1.f, 2.f, 3.f, 4.f}).realize(), b = Tensor({10.f, 20.f, 30.f, 40.f}).realize();
  Tensor c = a + b;
  EXPECT_EQ(c.uop().op(), Ops::ADD);
  EXPECT_EQ(c.tolist<float>(), (std::vector<float>{11, 22, 33, 44}));

  Tensor p = Tensor({2.f, 4.f, 6.f}).realize();
  EXPECT_EQ((p + 3).realize().tolist<float>(), (std::vector<float>{5, 7, 9}));
  Tensor q = Tensor({1.f, 2.f, 3.f}).realize() * 3 + 1;
  run_linear(q.schedule_linear());
  EXPECT_EQ(q.tolist<float>(), (std::vector<float>{4, 7, 10}));
}

TEST(Values, UnaryMath) {
  Input x = uniform({3, 7}, -3, 3, 1);
  Input p = uniform({3, 7}, 0.1, 5, 2);
  struct Case {
    const char* name;
    const Input& in;
    std::function<Tensor(const Tensor&)> op;
    std::function<double(double)> ref;
  };
  const Case cases[] = {
      {"neg", x, [](const Tensor& t) { return -t; }, [](double v) { return -v; }},
      {"exp", x, [](const Tensor& t) { return t.exp(); }, [](double v) { return std::exp(v); }},
      {"exp2", x, [](const Tensor& t) { return t.exp2(); }, [](double v) { return std::exp2(v); }},
      {"log", p, [](const Tensor& t) { return t.log(); }, [](double v) { return std::log(v); }},
      {"log2", p, [](const Tensor& t) { return t.log2(); }, [](double v) { return std::log2(v); }},
      {"sqrt", p, [](const Tensor& t) { return t.sqrt(); }, [](double v) { return std::sqrt(v); }},
      {"rsqrt", p, [](const Tensor& t) { return t.rsqrt(); }, [](double v) { return 1 / std::sqrt(v); }},
      {"reciprocal", p, [](const Tensor& t) { return t.reciprocal(); }, [](double v) { return 1 / v; }},
      {"sin", x, [](const Tensor& t) { return t.sin(); }, [](double v) { return std::sin(v); }},
      {"cos", x, [](const Tensor& t) { return t.cos(); }, [](double v) { return std::cos(v); }},
      {"tan", x, [](const Tensor& t) { return t.tan(); }, [](double v) { return std::tan(v); }},
      {"sigmoid", x, [](const Tensor& t) { return t.sigmoid(); }, [](double v) { return 1 / (1 + std::exp(-v)); }},
      {"tanh", x, [](const Tensor& t) { return t.tanh(); }, [](double v) { return std::tanh(v); }},
      {"silu", x, [](const Tensor& t) { return t.silu(); }, [](double v) { return v / (1 + std::exp(-v)); }},
      {"gelu", x, [](const Tensor& t) { return t.gelu(); },
       [](double v) { return 0.5 * v * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (v + 0.044715 * v * v * v))); }},
      {"relu", x, [](const Tensor& t) { return t.relu(); }, [](double v) { return std::max(v, 0.0); }},
      {"leaky_relu", x, [](const Tensor& t) { return t.leaky_relu(0.1); }, [](double v) { return v < 0 ? 0.1 * v : v; }},
      {"abs", x, [](const Tensor& t) { return t.abs(); }, [](double v) { return std::fabs(v); }},
      {"sign", x, [](const Tensor& t) { return t.sign(); }, [](double v) { return double((v > 0) - (v < 0)); }},
      {"square", x, [](const Tensor& t) { return t.square(); }, [](double v) { return v * v; }},
      {"trunc", x, [](const Tensor& t) { return t.trunc(); }, [](double v) { return std::trunc(v); }},
      {"floor", x, [](const Tensor& t) { return t.floor(); }, [](double v) { return std::floor(v); }},
      {"ceil", x, [](const Tensor& t) { return t.ceil(); }, [](double v) { return std::ceil(v); }},
      {"clip", x, [](const Tensor& t) { return t.clip(-1, 0.5); }, [](double v) { return std::clamp(v, -1.0, 0.5); }},
      {"pow2", x, [](const Tensor& t) { return t.pow(2); }, [](double v) { return v * v; }},
      {"pow-3", p, [](const Tensor& t) { return t.pow(-3); }, [](double v) { return std::pow(v, -3); }},
      {"pow1.5", p, [](const Tensor& t) { return t.pow(1.5); }, [](double v) { return std::pow(v, 1.5); }},
      {"2**x", x, [](const Tensor& t) { return pow(2, t); }, [](double v) { return std::exp2(v); }},
  };
  for (const Case& c : cases) expect_close(c.op(c.in.t).tolist<double>(), map(c.in.v, c.ref), 2e-5, 2e-6, c.name);
}

TEST(Values, BinaryWithBroadcasting) {
  Input a = uniform({4, 3}, -2, 2, 3), b = uniform({3}, 0.5, 2, 4);
  auto ref = [&](const std::function<double(double, double)>& f) {
    Ref out;
    for (size_t i = 0; i < a.v.size(); i++) out.push_back(f(a.v[i], b.v[i % 3]));
    return out;
  };
  expect_close((a.t + b.t).tolist<double>(), ref([](double x, double y) { return x + y; }), 1e-6, 1e-6, "add");
  expect_close((a.t - b.t).tolist<double>(), ref([](double x, double y) { return x - y; }), 1e-6, 1e-6, "sub");
  expect_close((a.t * b.t).tolist<double>(), ref([](double x, double y) { return x * y; }), 1e-6, 1e-6, "mul");
  expect_close((a.t / b.t).tolist<double>(), ref([](double x, double y) { return x / y; }), 1e-6, 1e-6, "div");
  expect_close((b.t - a.t).tolist<double>(), ref([](double x, double y) { return y - x; }), 1e-6, 1e-6, "rsub");
  expect_close(a.t.maximum(b.t - 1).tolist<double>(), ref([](double x, double y) { return std::max(x, y - 1); }), 0, 0, "maximum");
  expect_close(a.t.minimum(b.t - 1).tolist<double>(), ref([](double x, double y) { return std::min(x, y - 1); }), 0, 0, "minimum");
  expect_close(a.t.floordiv(b.t).tolist<double>(), ref([](double x, double y) { return std::floor(x / y); }), 1e-6, 1e-6, "floordiv");
  expect_close((a.t % b.t).tolist<double>(), ref([](double x, double y) { return x - std::floor(x / y) * y; }), 1e-5, 1e-5, "mod");
  expect_close(b.t.pow(a.t).tolist<double>(), ref([](double x, double y) { return std::pow(y, x); }), 1e-5, 1e-6, "pow");
  expect_close((a.t < b.t - 1).tolist<double>(), ref([](double x, double y) { return x < y - 1; }), 0, 0, "lt");
  expect_close((a.t >= b.t - 1).tolist<double>(), ref([](double x, double y) { return x >= y - 1; }), 0, 0, "ge");
  expect_close((a.t < 0).where(a.t, b.t).tolist<double>(), ref([](double x, double y) { return x < 0 ? x : y; }), 0, 0, "where");
}

// Python's // and % on ints: the quotient rounds toward -inf and the remainder takes the divisor's sign.
int64_t py_floordiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
int64_t py_mod(int64_t a, int64_t b) { return a - py_floordiv(a, b) * b; }

TEST(Values, IntegerDivisionHasPythonSemantics) {
  std::vector<int> av{7, -7, 7, -7, 0, 9, -9, 1}, bv{2, 2, -2, -2, 3, 4, 4, -5};
  Tensor a(av, {8}), b(bv, {8});
  std::vector<int> q = a.floordiv(b).tolist<int>(), r = (a % b).tolist<int>();
  for (size_t i = 0; i < av.size(); i++) {
    EXPECT_EQ(q[i], py_floordiv(av[i], bv[i])) << av[i] << " // " << bv[i];
    EXPECT_EQ(r[i], py_mod(av[i], bv[i])) << av[i] << " % " << bv[i];
  }
  EXPECT_EQ((a / b).tolist<float>()[1], -3.5f);
  EXPECT_EQ(Tensor({-7}).floordiv(2).tolist<int>(), (std::vector<int>{-4}));
  EXPECT_EQ((Tensor({-7}) % 3).tolist<int>(), (std::vector<int>{2}));
}

TEST(Values, IntegerWraparoundAndBitwise) {
  EXPECT_EQ((Tensor({1, 2, 250}, dtypes::uint8) + 300).tolist<int>(), (std::vector<int>{45, 46, 38}));
  EXPECT_EQ((Tensor({1, -1}, dtypes::int8) * 200).tolist<int>(), (std::vector<int>{-56, 56}));
  EXPECT_EQ((Tensor({0}, dtypes::uint8) - 1).tolist<int>(), (std::vector<int>{255}));
  Tensor i({12, -5, 7});
  EXPECT_EQ((i & 6).tolist<int>(), (std::vector<int>{4, 2, 6}));
  EXPECT_EQ((i | 1).tolist<int>(), (std::vector<int>{13, -5, 7}));
  EXPECT_EQ((i ^ 3).tolist<int>(), (std::vector<int>{15, -8, 4}));
  EXPECT_EQ((~i).tolist<int>(), (std::vector<int>{-13, 4, -8}));
  EXPECT_EQ((i << 2).tolist<int>(), (std::vector<int>{48, -20, 28}));
  EXPECT_EQ((i >> 1).tolist<int>(), (std::vector<int>{6, -3, 3}));
  EXPECT_EQ(i.minimum(0).tolist<int>(), (std::vector<int>{0, -5, 0}));
  EXPECT_EQ(Tensor({INT32_MIN, 5}).minimum(Tensor({0, 0})).tolist<int>(), (std::vector<int>{INT32_MIN, 0}));
  EXPECT_EQ(i.abs().tolist<int>(), (std::vector<int>{12, 5, 7}));
  EXPECT_EQ(i.pow(3).tolist<int>(), (std::vector<int>{1728, -125, 343}));
  EXPECT_EQ(Tensor({true, false}).logical_not().tolist<bool>(), (std::vector<bool>{false, true}));
  EXPECT_EQ((Tensor({true, false}) + Tensor({true, true})).tolist<bool>(), (std::vector<bool>{true, true}));
  EXPECT_EQ((Tensor({true, false}) * Tensor({true, true})).tolist<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ((Tensor({true, false}) + 1).tolist<int>(), (std::vector<int>{2, 1}));
  EXPECT_EQ((Tensor({3, 4}) * 2.5).tolist<float>(), (std::vector<float>{7.5f, 10.f}));
}

TEST(Values, Casts) {
  Tensor f({1.7f, -1.7f, 300.5f});
  EXPECT_EQ(f.cast(dtypes::int32).tolist<int>(), (std::vector<int>{1, -1, 300}));
  EXPECT_EQ(f.cast(dtypes::bool_).tolist<bool>(), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(Tensor({1.f}).bitcast(dtypes::int32).tolist<int>(), (std::vector<int>{0x3f800000}));
  EXPECT_EQ(Tensor({1.5f, 2.f}).cast(dtypes::float16).mul(2).tolist<float>(), (std::vector<float>{3.f, 4.f}));
}

TEST(Values, Reductions) {
  Input x = uniform({3, 4, 5}, -2, 2, 5);
  auto at = [&](size_t i, size_t j, size_t k) { return x.v[i * 20 + j * 5 + k]; };
  Ref sum1, max02, prod2;
  for (size_t i = 0; i < 3; i++)
    for (size_t k = 0; k < 5; k++) {
      double s = 0;
      for (size_t j = 0; j < 4; j++) s += at(i, j, k);
      sum1.push_back(s);
    }
  for (size_t j = 0; j < 4; j++) {
    double m = -INFINITY;
    for (size_t i = 0; i < 3; i++)
      for (size_t k = 0; k < 5; k++) m = std::max(m, at(i, j, k));
    max02.push_back(m);
  }
  for (size_t i = 0; i < 3; i++)
    for (size_t j = 0; j < 4; j++) {
      double p = 1;
      for (size_t k = 0; k < 5; k++) p *= at(i, j, k);
      prod2.push_back(p);
    }
  double total = 0, mx = -INFINITY, mn = INFINITY;
  for (double v : x.v) total += v, mx = std::max(mx, v), mn = std::min(mn, v);
  double mean = total / x.v.size(), ss = 0;
  for (double v : x.v) ss += (v - mean) * (v - mean);
  expect_close(x.t.sum(1).tolist<double>(), sum1, 1e-5, 1e-5, "sum(1)");
  expect_close(x.t.sum(1, true).tolist<double>(), sum1, 1e-5, 1e-5, "sum(1, keepdim)");
  expect_close(x.t.max({0, 2}).tolist<double>(), max02, 0, 0, "max(0, 2)");
  expect_close(x.t.prod(2).tolist<double>(), prod2, 1e-5, 1e-6, "prod(2)");
  expect_close(x.t.sum().tolist<double>(), {total}, 1e-5, 1e-5, "sum");
  expect_close(x.t.max().tolist<double>(), {mx}, 0, 0, "max");
  expect_close(x.t.min().tolist<double>(), {mn}, 0, 0, "min");
  expect_close(x.t.mean().tolist<double>(), {mean}, 1e-5, 1e-5, "mean");
  expect_close(x.t.var().tolist<double>(), {ss / (x.v.size() - 1)}, 1e-5, 1e-5, "var");
  expect_close(x.t.std({}, false, 0).tolist<double>(), {std::sqrt(ss / x.v.size())}, 1e-5, 1e-5, "std(correction=0)");
}

TEST(Values, IntegerAndBoolReductions) {
  Tensor i(std::vector<int8_t>{100, 100, 100, -1}, {2, 2});
  EXPECT_EQ(i.sum().tolist<int>(), (std::vector<int>{299}));  // accumulated in int32: no int8 wrap
  EXPECT_EQ(i.sum(0).tolist<int>(), (std::vector<int>{200, 99}));
  EXPECT_EQ(i.max(1).tolist<int>(), (std::vector<int>{100, 100}));
  EXPECT_EQ(i.min(1).tolist<int>(), (std::vector<int>{100, -1}));
  EXPECT_EQ(Tensor({3, 1, 2}, dtypes::uint8).min().tolist<int>(), (std::vector<int>{1}));
  EXPECT_EQ(Tensor({2, 3, 4}).prod().tolist<int>(), (std::vector<int>{24}));
  EXPECT_EQ(Tensor({1, 2, 3, 4}).mean().tolist<float>(), (std::vector<float>{2.5f}));
  Tensor b({{true, false, false}, {true, true, true}});
  EXPECT_EQ(b.any(1).tolist<bool>(), (std::vector<bool>{true, true}));
  EXPECT_EQ(b.all(1).tolist<bool>(), (std::vector<bool>{false, true}));
  EXPECT_EQ(b.all().tolist<bool>(), (std::vector<bool>{false}));
  EXPECT_EQ(b.sum().tolist<int>(), (std::vector<int>{4}));
  EXPECT_EQ(Tensor({1.f, 2.f, 3.f}, dtypes::float16).sum().tolist<float>(), (std::vector<float>{6.f}));
}

TEST(Values, ArgmaxTakesTheFirstMaximum) {
  Tensor x({{1.f, 5.f, 5.f, 2.f}, {7.f, 0.f, 7.f, -1.f}});
  EXPECT_EQ(x.argmax(1).tolist<int>(), (std::vector<int>{1, 0}));
  EXPECT_EQ(x.argmax(0).tolist<int>(), (std::vector<int>{1, 0, 1, 0}));
  EXPECT_EQ(x.argmax().tolist<int>(), (std::vector<int>{4}));
  EXPECT_EQ(x.argmin(1).tolist<int>(), (std::vector<int>{0, 3}));
  EXPECT_EQ(x.argmin().tolist<int>(), (std::vector<int>{7}));
  EXPECT_EQ(x.argmax(1, true).shape(), (IntTuple{2, 1}));
  EXPECT_EQ(Tensor({3, 9, 9}, dtypes::uint8).argmax().item<int>(), 1);
}

TEST(Values, Matmul) {
  Input a = uniform({2, 3, 4}, -1, 1, 6), b = uniform({4, 5}, -1, 1, 7);
  Ref want;
  for (size_t n = 0; n < 2; n++)
    for (size_t i = 0; i < 3; i++)
      for (size_t j = 0; j < 5; j++) {
        double s = 0;
        for (size_t k = 0; k < 4; k++) s += a.v[n * 12 + i * 4 + k] * b.v[k * 5 + j];
        want.push_back(s);
      }
  expect_close(a.t.matmul(b.t).tolist<double>(), want, 1e-5, 1e-5, "batched @ matrix");
  Input v = uniform({4}, -1, 1, 8);
  Ref vb;
  for (size_t j = 0; j < 5; j++) {
    double s = 0;
    for (size_t k = 0; k < 4; k++) s += v.v[k] * b.v[k * 5 + j];
    vb.push_back(s);
  }
  expect_close(v.t.dot(b.t).tolist<double>(), vb, 1e-5, 1e-5, "vector @ matrix");
  double vv = 0;
  for (double e : v.v) vv += e * e;
  expect_close(v.t.dot(v.t).tolist<double>(), {vv}, 1e-5, 1e-5, "vector . vector");
  EXPECT_EQ(Tensor({{1, 2}, {3, 4}}).matmul(Tensor({{5, 6}, {7, 8}})).tolist<int>(), (std::vector<int>{19, 22, 43, 50}));
}

TEST(Values, SoftmaxLogSoftmaxLogsumexp) {
  Input x = uniform({3, 6}, -4, 4, 9);
  Ref sm, lsm, lse;
  for (size_t r = 0; r < 3; r++) {
    double m = -INFINITY, s = 0;
    for (size_t c = 0; c < 6; c++) m = std::max(m, x.v[r * 6 + c]);
    for (size_t c = 0; c < 6; c++) s += std::exp(x.v[r * 6 + c] - m);
    for (size_t c = 0; c < 6; c++) sm.push_back(std::exp(x.v[r * 6 + c] - m) / s);
    for (size_t c = 0; c < 6; c++) lsm.push_back(x.v[r * 6 + c] - m - std::log(s));
    lse.push_back(m + std::log(s));
  }
  expect_close(x.t.softmax().tolist<double>(), sm, 1e-5, 1e-6, "softmax");
  expect_close(x.t.log_softmax().tolist<double>(), lsm, 1e-5, 1e-5, "log_softmax");
  expect_close(x.t.logsumexp(1).tolist<double>(), lse, 1e-5, 1e-5, "logsumexp");
  Ref ones(3, 1.0);
  expect_close(x.t.softmax(1).sum(1).tolist<double>(), ones, 1e-5, 1e-6, "rows sum to 1");
}

TEST(Values, Cumsum) {
  Tensor x({{1, 2, 3, 4}, {5, 6, 7, 8}});
  EXPECT_EQ(x.cumsum(1).tolist<int>(), (std::vector<int>{1, 3, 6, 10, 5, 11, 18, 26}));
  EXPECT_EQ(x.cumsum(0).tolist<int>(), (std::vector<int>{1, 2, 3, 4, 6, 8, 10, 12}));
  EXPECT_EQ(Tensor({2.5f}).cumsum().tolist<float>(), (std::vector<float>{2.5f}));
  Input r = uniform({17}, -1, 1, 10);
  Ref want;
  double s = 0;
  for (double v : r.v) want.push_back(s += v);
  expect_close(r.t.cumsum().tolist<double>(), want, 1e-5, 1e-5, "cumsum 17");
}

TEST(Values, MovementViews) {
  Tensor x(std::vector<int>{0, 1, 2, 3, 4, 5}, {2, 3});
  EXPECT_EQ(x.transpose().tolist<int>(), (std::vector<int>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(x.flip(1).tolist<int>(), (std::vector<int>{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(x.flip({}).tolist<int>(), (std::vector<int>{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(x.shrink({{1, 2}, {1, 3}}).tolist<int>(), (std::vector<int>{4, 5}));
  EXPECT_EQ(x.pad({{0, 1}, {1, 0}}).tolist<int>(), (std::vector<int>{0, 0, 1, 2, 0, 3, 4, 5, 0, 0, 0, 0}));
  EXPECT_EQ(x.pad({{0, 0}, {1, 1}}, -7).tolist<int>(), (std::vector<int>{-7, 0, 1, 2, -7, -7, 3, 4, 5, -7}));
  EXPECT_EQ(x.pad({{0, 0}, {-1, 1}}).tolist<int>(), (std::vector<int>{1, 2, 0, 4, 5, 0}));
  EXPECT_EQ(x.reshape({3, 1, 2}).expand({3, 2, 2}).tolist<int>(), (std::vector<int>{0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 4, 5}));
  EXPECT_EQ(Tensor({1, 2}).repeat({2, 3}).tolist<int>(), (std::vector<int>{1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(Tensor::cat({x, x * 10}, 1).tolist<int>(), (std::vector<int>{0, 1, 2, 0, 10, 20, 3, 4, 5, 30, 40, 50}));
  EXPECT_EQ(Tensor::cat({Tensor({1, 2}), Tensor({3})}).tolist<int>(), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(Tensor::stack({Tensor({1, 2}), Tensor({3, 4})}, 1).tolist<int>(), (std::vector<int>{1, 3, 2, 4}));
  EXPECT_EQ(Tensor({1, 2, 3, 4, 5}).pool({3}).tolist<int>(), (std::vector<int>{1, 2, 3, 2, 3, 4, 3, 4, 5}));
  EXPECT_EQ(Tensor({1, 2, 3, 4, 5}).pool({2}, {2}).tolist<int>(), (std::vector<int>{1, 2, 3, 4}));
}

TEST(Values, SlicingWithStepsAndNegativeIndices) {
  std::vector<int> v(10);
  for (int i = 0; i < 10; i++) v[i] = i;
  Tensor t(v, {10});
  EXPECT_EQ((t[{slice(std::nullopt, std::nullopt, -1)}]).tolist<int>(), (std::vector<int>{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_EQ((t[{slice(1, 8, 3)}]).tolist<int>(), (std::vector<int>{1, 4, 7}));
  EXPECT_EQ((t[{slice(std::nullopt, std::nullopt, -3)}]).tolist<int>(), (std::vector<int>{9, 6, 3, 0}));
  EXPECT_EQ((t[{slice(8, 2, -2)}]).tolist<int>(), (std::vector<int>{8, 6, 4}));
  EXPECT_EQ((t[{slice(-3)}]).tolist<int>(), (std::vector<int>{7, 8, 9}));
  EXPECT_EQ((t[{slice(-1, -4, -1)}]).tolist<int>(), (std::vector<int>{9, 8, 7}));
  EXPECT_EQ(t[-2].item<int>(), 8);
  Tensor m = t.reshape({2, 5});
  EXPECT_EQ((m[{slice(), slice(std::nullopt, std::nullopt, 2)}]).tolist<int>(), (std::vector<int>{0, 2, 4, 5, 7, 9}));
  EXPECT_EQ((m[{-1, slice(1, std::nullopt, -1)}]).tolist<int>(), (std::vector<int>{6, 5}));
  EXPECT_EQ((m[{ellipsis, 3}]).tolist<int>(), (std::vector<int>{3, 8}));
  EXPECT_EQ((m[{slice(std::nullopt, std::nullopt, -1), slice(std::nullopt, std::nullopt, -2)}]).tolist<int>(),
            (std::vector<int>{9, 7, 5, 4, 2, 0}));
}

TEST(Values, AssignInPlace) {
  Tensor acc = Tensor({0.f, 0.f}).realize();
  for (int i = 0; i < 3; i++) acc.assign(acc + 1).realize();
  EXPECT_EQ(acc.tolist<float>(), (std::vector<float>{3, 3}));
  Tensor a = Tensor({1.f, 2.f, 3.f}).realize();
  Tensor b = a + 1;
  a.assign(a * 2);
  EXPECT_EQ(b.tolist<float>(), (std::vector<float>{2, 3, 4}));  // b read a's old value
  EXPECT_EQ(a.tolist<float>(), (std::vector<float>{2, 4, 6}));
  Tensor z = Tensor::zeros({3}).contiguous().realize();
  z.assign(z + Tensor({1.f, 2.f, 3.f}));
  EXPECT_EQ(z.tolist<float>(), (std::vector<float>{1, 2, 3}));
}

TEST(Values, MomentsOfRandomData) {
  // 32x32: std runs the mean inside its reduce (one kernel), which the reference interpreter does per element.
  Tensor::manual_seed(11);
  Tensor r = Tensor::rand({32, 32});
  EXPECT_NEAR(r.mean().item<float>(), 0.5, 0.03);
  EXPECT_NEAR(Tensor::randn({32, 32}).std().item<float>(), 1.0, 0.1);
}

}  // namespace
}  // namespace doorbell
