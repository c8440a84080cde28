// Activations, special functions and float predicates (frontend/activations.cpp, special_math.cpp,
// float_predicates.cpp): values on a grid against the C library in float64, all ops stacked into one kernel.
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>

#include "frontend_test_util.h"

namespace doorbell {
namespace {

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double softplus(double x) { return std::log1p(std::exp(x)); }

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  std::function<double(double)> ref;
  double lo, hi;
  double tol;  // absolute + relative
};

TEST(Activations, MatchFloat64ReferencesOnAGrid) {
  const UnaryCase cases[] = {
      {"gelu_erf", [](const Tensor& t) { return t.gelu(GeluApproximation::none); },
       [](double x) { return 0.5 * x * (1 + std::erf(x / std::numbers::sqrt2)); }, -4, 4, 1e-6},
      {"gelu_tanh", [](const Tensor& t) { return t.gelu(GeluApproximation::tanh); },
       [](double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x))); }, -4, 4, 1e-6},
      {"erf", [](const Tensor& t) { return t.erf(); }, [](double x) { return std::erf(x); }, -3, 3, 5e-7},
      {"quick_gelu", [](const Tensor& t) { return t.quick_gelu(); }, [](double x) { return x * sigmoid(1.702 * x); }, -5, 5, 1e-6},
      {"swish", [](const Tensor& t) { return t.swish(); }, [](double x) { return x * sigmoid(x); }, -5, 5, 1e-6},
      {"relu6", [](const Tensor& t) { return t.relu6(); }, [](double x) { return std::min(std::max(x, 0.0), 6.0); }, -3, 9, 1e-6},
      {"hardswish", [](const Tensor& t) { return t.hardswish(); }, [](double x) { return x * std::min(std::max(x + 3, 0.0), 6.0) / 6; }, -5, 5, 1e-6},
      {"hardsigmoid", [](const Tensor& t) { return t.hardsigmoid(); }, [](double x) { return std::min(std::max(x / 6 + 0.5, 0.0), 1.0); }, -5, 5, 1e-6},
      {"hardtanh", [](const Tensor& t) { return t.hardtanh(-0.5, 2); }, [](double x) { return std::min(std::max(x, -0.5), 2.0); }, -3, 3, 0},
      {"elu", [](const Tensor& t) { return t.elu(0.7); }, [](double x) { return x > 0 ? x : 0.7 * (std::exp(x) - 1); }, -5, 5, 1e-6},
      {"celu", [](const Tensor& t) { return t.celu(1.5); }, [](double x) { return std::max(x, 0.0) + std::min(0.0, 1.5 * (std::exp(x / 1.5) - 1)); }, -5, 5, 1e-6},
      {"selu", [](const Tensor& t) { return t.selu(); }, [](double x) { return 1.0507 * (x >= 0 ? x : 1.67326 * (std::exp(x) - 1)); }, -5, 5, 1e-6},
      {"softplus", [](const Tensor& t) { return t.softplus(); }, softplus, -10, 10, 1e-6},
      {"softplus_beta", [](const Tensor& t) { return t.softplus(2); }, [](double x) { return softplus(2 * x) / 2; }, -10, 10, 1e-6},
      {"mish", [](const Tensor& t) { return t.mish(); }, [](double x) { return x * std::tanh(softplus(x)); }, -5, 5, 2e-6},
      {"logsigmoid", [](const Tensor& t) { return t.logsigmoid(); }, [](double x) { return -softplus(-x); }, -10, 10, 1e-6},
      {"softsign", [](const Tensor& t) { return t.softsign(); }, [](double x) { return x / (1 + std::fabs(x)); }, -5, 5, 1e-6},
      {"log10", [](const Tensor& t) { return t.log10(); }, [](double x) { return std::log10(x); }, 0.01, 1000, 1e-6},
      {"sinh", [](const Tensor& t) { return t.sinh(); }, [](double x) { return std::sinh(x); }, -5, 5, 2e-6},
      {"cosh", [](const Tensor& t) { return t.cosh(); }, [](double x) { return std::cosh(x); }, -5, 5, 2e-6},
      {"asin", [](const Tensor& t) { return t.asin(); }, [](double x) { return std::asin(x); }, -1, 1, 1e-6},
      {"acos", [](const Tensor& t) { return t.acos(); }, [](double x) { return std::acos(x); }, -1, 1, 1e-6},
      {"atan", [](const Tensor& t) { return t.atan(); }, [](double x) { return std::atan(x); }, -20, 20, 1e-6},
      {"asinh", [](const Tensor& t) { return t.asinh(); }, [](double x) { return std::asinh(x); }, -20, 20, 2e-6},
      {"acosh", [](const Tensor& t) { return t.acosh(); }, [](double x) { return std::acosh(x); }, 1.01, 20, 2e-6},
      {"atanh", [](const Tensor& t) { return t.atanh(); }, [](double x) { return std::atanh(x); }, -0.95, 0.95, 2e-6},
  };
  const int n = 41;
  std::vector<Tensor> results;
  std::vector<std::vector<double>> inputs;
  for (const UnaryCase& c : cases) {
    std::vector<float> x(n);
    for (int i = 0; i < n; i++) x[i] = static_cast<float>(c.lo + (c.hi - c.lo) * i / (n - 1));
    inputs.emplace_back(x.begin(), x.end());
    results.push_back(c.op(Tensor(x)));
  }
  std::vector<double> got = Tensor::stack(results).tolist<double>();
  for (size_t k = 0; k < std::size(cases); k++)
    for (int i = 0; i < n; i++) {
      double x = inputs[k][i], want = cases[k].ref(x);
      EXPECT_NEAR(got[k * n + i], want, cases[k].tol * (1 + std::fabs(want))) << cases[k].name << "(" << x << ")";
    }
}

TEST(Activations, AtanAsinhAcoshStayRightForHugeInputs) {
  // a^2 overflows float32 above ~1.8e19: atan takes the reciprocal, asinh and acosh log(2a) there.
  Tensor x({1e30f, -1e30f, 1e20f, 9000.f});
  std::vector<float> at = x.atan().tolist<float>(), as = x.asinh().tolist<float>(), ac = x.acosh().tolist<float>();
  const double big[] = {1e30, -1e30, 1e20, 9000};
  for (int i = 0; i < 4; i++) {
    EXPECT_NEAR(at[i], std::atan(big[i]), 1e-6) << big[i];
    EXPECT_NEAR(as[i], std::asinh(big[i]), 1e-6 * std::fabs(std::asinh(big[i]))) << big[i];
    if (big[i] > 0) {
      EXPECT_NEAR(ac[i], std::acosh(big[i]), 1e-6 * std::acosh(big[i])) << big[i];
    }
  }
  Tensor h({100.0, 1000.0}, dtypes::float16);  // 1000^2 is inf in float16
  std::vector<float> hs = h.asinh().tolist<float>();
  EXPECT_NEAR(hs[0], std::asinh(100.0), 2e-3 * std::asinh(100.0));
  EXPECT_NEAR(hs[1], std::asinh(1000.0), 2e-3 * std::asinh(1000.0));
}

TEST(Activations, IntegerInputsComputeInFloat32) {
  EXPECT_EQ(Tensor({1, 2}).erf().dtype(), dtypes::float32);
  EXPECT_EQ(Tensor({1, 2}).gelu(GeluApproximation::none).dtype(), dtypes::float32);
  EXPECT_EQ(Tensor({1, 2}).softplus().dtype(), dtypes::float32);
  EXPECT_EQ(Tensor({1.0, 2.0}, dtypes::float16).erf().dtype(), dtypes::float16);
}

TEST(FloatPredicates, NanInfFiniteClose) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  Tensor x({1.f, -inf, inf, nan, 0.f});
  EXPECT_EQ(x.isnan().tolist<bool>(), (std::vector<bool>{false, false, false, true, false}));
  EXPECT_EQ(x.isinf().tolist<bool>(), (std::vector<bool>{false, true, true, false, false}));
  EXPECT_EQ(x.isinf(true, false).tolist<bool>(), (std::vector<bool>{false, false, true, false, false}));
  EXPECT_EQ(x.isinf(false, true).tolist<bool>(), (std::vector<bool>{false, true, false, false, false}));
  EXPECT_EQ(x.isfinite().tolist<bool>(), (std::vector<bool>{true, false, false, false, true}));
  EXPECT_EQ(x.isnan().dtype(), dtypes::bool_);
  EXPECT_EQ(Tensor({1, 2}).isnan().tolist<bool>(), (std::vector<bool>{false, false}));
  Tensor y({1.000001f, -inf, -inf, nan, 1e-9f});
  EXPECT_EQ(x.isclose(y).tolist<bool>(), (std::vector<bool>{true, true, false, false, true}));
  EXPECT_EQ(x.isclose(y, 1e-5, 1e-8, true).tolist<bool>(), (std::vector<bool>{true, true, false, true, true}));
  EXPECT_EQ(Tensor({1.f}).isclose(Tensor({1.1f})).item<bool>(), false);
}

TEST(FloatPredicates, CopysignLogaddexpLerpMaskedFill) {
  Tensor a({1.f, -2.f, 3.f, 4.f});
  EXPECT_EQ(a.copysign(Tensor({-1.f, 1.f, -0.f, 0.f})).tolist<float>(), (std::vector<float>{-1, 2, -3, 4}));
  EXPECT_EQ(a.copysign(-1).tolist<float>(), (std::vector<float>{-1, -2, -3, -4}));
  std::vector<float> l = Tensor({0.f, 1000.f, -1000.f}).logaddexp(Tensor({0.f, 1000.f, 5.f})).tolist<float>();
  EXPECT_NEAR(l[0], std::log(2.0), 1e-6);
  EXPECT_NEAR(l[1], 1000 + std::log(2.0), 1e-3);  // no overflow: the max is taken out first
  EXPECT_NEAR(l[2], 5, 1e-6);
  EXPECT_EQ(Tensor({0.f, 10.f}).lerp(Tensor({10.f, 20.f}), 0.25).tolist<float>(), (std::vector<float>{2.5f, 12.5f}));
  EXPECT_EQ(Tensor({0.f, 10.f}).lerp(Tensor({10.f, 20.f}), Tensor({0.f, 1.f})).tolist<float>(), (std::vector<float>{0, 20}));
  Tensor mask({true, false, true, false});
  EXPECT_EQ(a.masked_fill(mask, 0).tolist<float>(), (std::vector<float>{0, -2, 0, 4}));
  EXPECT_EQ(a.masked_fill(mask, Tensor({9.f})).tolist<float>(), (std::vector<float>{9, -2, 9, 4}));
}

}  // namespace
}  // namespace doorbell
