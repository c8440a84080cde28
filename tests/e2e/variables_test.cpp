// Kernel variables (UOp::variable(...).bind(v), tinygrad's Variable and var_vals): a scalar value and a window at a
// symbolic offset (Tensor::narrow) go into the kernel as a variable, passed per launch after the buffers, so one
// compiled kernel serves every value: on the CPU (a C scalar parameter) and on NV (a PTX .param, the emulated GPU
// with DEV=NV MOCKGPU=1 in the nv.* run of this suite).
#include <gtest/gtest.h>

#include <numeric>

#include "compiler/program.h"
#include "frontend/tensor.h"
#include "hcq/compile_linear.h"
#include "hcq/devices.h"
#include "hcq/run_linear.h"
#include "ir/environment.h"
#include "tests/common/error_of.h"

namespace doorbell {
namespace {

std::vector<float> iota(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.f);
  return v;
}

TEST(Variables, AWindowAtAVariableOffsetRunsAtThreeValuesWithOneCompile) {
  static int run = 0;  // a variable name of its own per run (--gtest_repeat): a kernel no earlier run compiled
  Tensor x = Tensor(iota(16)).realize();
  const UOp start = UOp::variable("start" + std::to_string(run++), 0, 12);
  const ProgramCacheStats before = program_cache_stats();
  for (int64_t v : {0, 5, 12}) {
    Tensor y = x.narrow(0, start.bind(v), 4) * 2 + Tensor(start.bind(v));  // the value itself too
    std::vector<float> want;
    for (int64_t i = 0; i < 4; i++) want.push_back(static_cast<float>(2 * (v + i) + v));
    EXPECT_EQ(y.tolist<float>(), want) << "start = " << v << " on " << x.device();
  }
  const ProgramCacheStats after = program_cache_stats();
  EXPECT_EQ(after.misses, before.misses + 1) << "one kernel compiled for all three values";
  EXPECT_EQ(after.hits, before.hits + 2);
}

TEST(Variables, TheKernelTakesTheVariableAndTheLinearCarriesItsValue) {
  Tensor x = Tensor(iota(10)).realize();
  const UOp i = UOp::variable("i", 0, 7);
  Tensor y = x.narrow(0, i.bind(7), 3);
  UOp linear = (y + 1).schedule_linear();
  ASSERT_EQ(linear.src().size(), 1u);
  const UOp& call = linear.src(0);
  UOp program = compile_call(call, call_device(call));
  const ProgramInfo& info = program_info(program);
  ASSERT_EQ(info.vars.size(), 1u);
  EXPECT_EQ(info.vars[0], (KernelVariable{"i", 0, 7}));
  EXPECT_TRUE(call.src().back().is_bound_variable()) << "the CALL's last argument binds i";
  run_linear(linear);
  Tensor out = Tensor(y + 1);
  EXPECT_EQ(out.tolist<float>(), (std::vector<float>{8, 9, 10}));
}

TEST(Variables, AScheduleOfAnotherValueReusesTheCachedScheduleAndItsKernel) {
  Tensor x = Tensor(iota(8)).realize();
  const UOp k = UOp::variable("k", 1, 100);
  UOp first = (x * Tensor(k.bind(3))).schedule_linear();
  UOp second = (x * Tensor(k.bind(40))).schedule_linear();
  ASSERT_EQ(first.src().size(), 1u);
  EXPECT_EQ(first.src(0).src(0), second.src(0).src(0)) << "the same kernel body: the value is not in it";
  EXPECT_FALSE(first.src(0).src().back() == second.src(0).src().back()) << "the bindings differ";
}

TEST(Variables, BindingOutsideTheBoundsOrTwoValuesInOneScheduleAreErrors) {
  const UOp v = UOp::variable("v", 0, 4);
  EXPECT_NE(testing::error_of([&] { v.bind(5); }).find("5 is outside the bounds [0, 4] of variable 'v'"), std::string::npos);
  Tensor x = Tensor(iota(8)).realize();
  EXPECT_NE(testing::error_of([&] { (x.narrow(0, v.bind(1), 2) + x.narrow(0, v.bind(2), 2)).realize(); })
                .find("variable 'v' is bound to 1 and to 2 in one schedule"),
            std::string::npos);
  EXPECT_NE(testing::error_of([&] { x.narrow(0, v.bind(1), 5); }).find("expected every start the variables allow"), std::string::npos)
      << "4 + 5 > 8: some value of v would leave the axis";
  // An unbound variable has no value to run with.
  EXPECT_NE(testing::error_of([&] { (x.narrow(0, v, 2) + 1).realize(); }).find("takes variable 'v', which has no value"), std::string::npos);
}

}  // namespace
}  // namespace doorbell
