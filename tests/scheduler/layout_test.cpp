// The tensor-graph passes before rangeify (scheduler/layout.h, scheduler/split_reduce.h) and the options that choose
// them: the CPU target's options split a big sum over axis 0 into parts of rows and pack a float32 matmul's right
// operand into panels, the REF and PTX targets' options choose neither, and tinygrad's split_reduceop runs for every
// option set. Checked: kernel counts, the rewritten graph node for node against the same program written by hand
// with Tensor ops, values against float64 on the host, the schedule cache keeping option sets apart, the device
// Tensor::schedule_linear takes the options from, and DEBUG=5 naming the passes.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "compiler/gpu/ptx_target.h"
#include "compiler/ref_target.h"
#include "frontend/tensor.h"
#include "hcq/compile_linear.h"
#include "hcq/devices.h"
#include "hcq/run_linear.h"
#include "ir/debug.h"
#include "ir/environment.h"
#include "scheduler/layout.h"
#include "scheduler/schedule.h"
#include "scheduler/schedule_cache.h"

namespace doorbell {
namespace {

ScheduleOptions options_of(const Target& target) {
  return {.split_leading_reduce = target.options().split_leading_reduce, .pack_matmul_panels = target.options().pack_matmul_panels};
}
ScheduleOptions cpu_options() { return schedule_options_for("CPU"); }  // what schedule_linear takes on DEV=CPU
ScheduleOptions ref_options() { return schedule_options_for("REF"); }
ScheduleOptions ptx_options() {
  static const std::unique_ptr<Target> ptx = make_ptx_target("sm_90", PtxAssembly::kIfFound);
  return options_of(*ptx);
}

size_t kernels(const Tensor& out, const ScheduleOptions& options) { return schedule({out.uop()}, options).linear.src().size(); }

// The output's values after compiling and running its schedule on the CPU device.
std::vector<float> run(const Tensor& out, const ScheduleOptions& options) {
  ScheduleResult r = schedule({out.uop()}, options);
  run_linear(compile_linear(r.linear));
  return Tensor(r.becomes.at(0).second).tolist<float>();
}

void expect_near_all(const std::vector<float>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); i++)
    ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::abs(want[i]))) << what << " element " << i;
}

UOp rewritten(const Tensor& out, const ScheduleOptions& options) { return layout_passes(UOp::sink({out.uop()}), options).src(0); }

TEST(LayoutOptions, TheCpuTargetChoosesBothLayoutsTheRefAndPtxTargetsNone) {
  EXPECT_EQ(cpu_options(), (ScheduleOptions{.split_leading_reduce = true, .pack_matmul_panels = true}));
  EXPECT_EQ(cpu_options(), options_of(device("CPU").target()));
  EXPECT_EQ(ref_options(), ScheduleOptions{});
  EXPECT_EQ(ref_options(), options_of(ref_target()));
  EXPECT_EQ(ptx_options(), ScheduleOptions{});
}

// ---- split_leading_reduce --------------------------------------------------------------------------------------

TEST(SplitLeadingReduce, A2048x512SumOverAxis0IsTwoKernelsWithCpuOptionsAndOneWithoutBothEqualFloat64) {
  Tensor::manual_seed(11);
  Tensor x = Tensor::rand({2048, 512}).realize();
  std::vector<float> xs = x.tolist<float>();
  std::vector<double> want(512, 0.0);
  for (size_t r = 0; r < 2048; r++)
    for (size_t c = 0; c < 512; c++) want[c] += xs[r * 512 + c];
  Tensor s = x.sum(0);
  EXPECT_EQ(kernels(s, cpu_options()), 2u) << "parts of rows into rows of partial sums, then the parts";
  EXPECT_EQ(kernels(s, ref_options()), 1u);
  EXPECT_EQ(kernels(s, ptx_options()), 1u);
  expect_near_all(run(s, cpu_options()), want, "CPU options");
  expect_near_all(run(s, ref_options()), want, "REF options");
}

TEST(SplitLeadingReduce, RewritesToTheGraphOfParts32OfRowsWrittenWithTensorOps) {
  Tensor x = Tensor::empty({2048, 512});
  Tensor by_hand = x.reshape({32, 64, 512}).sum(1, true).contiguous().sum(0).reshape({512});
  EXPECT_EQ(rewritten(x.sum(0), cpu_options()), by_hand.uop());
  EXPECT_EQ(rewritten(x.sum(0), ref_options()), x.sum(0).uop()) << "no layout choices: the graph as written";
}

TEST(SplitLeadingReduce, LeavesSmallSumsRowsOver4096AndOtherAxesAlone) {
  for (IntTuple shape : {IntTuple{1024, 512}, IntTuple{256, 8192}, IntTuple{2048, 520}}) {
    Tensor s = Tensor::empty(shape).sum(0);
    EXPECT_EQ(rewritten(s, cpu_options()), s.uop()) << shape[0] << "x" << shape[1];
  }
  Tensor rows = Tensor::empty({512, 2048}).sum(1);
  EXPECT_EQ(rewritten(rows, cpu_options()), rows.uop()) << "a sum over axis 1";
}

// ---- pack_matmul_panels ----------------------------------------------------------------------------------------

TEST(PackMatmulPanels, A256x1024By1024x1024Float32MatmulPacksWFirstWithCpuOptionsAndNotWithoutBothEqualFloat64) {
  constexpr size_t m = 256, k = 1024, n = 1024;
  Tensor::manual_seed(12);
  Tensor x = Tensor::rand({m, k}).realize(), w = Tensor::rand({k, n}).realize();
  std::vector<float> xs = x.tolist<float>(), ws = w.tolist<float>();
  std::vector<double> want(m * n, 0.0);
  for (size_t i = 0; i < m; i++)
    for (size_t p = 0; p < k; p++)
      for (size_t j = 0; j < n; j++) want[i * n + j] += static_cast<double>(xs[i * k + p]) * ws[p * n + j];
  Tensor y = x.matmul(w);
  ScheduleResult packed = schedule({y.uop()}, cpu_options());
  ASSERT_EQ(packed.linear.src().size(), 2u) << "the pack kernel, then the matmul over the panels";
  EXPECT_EQ(packed.linear.src(0).src(1).arg_as<int64_t>(), static_cast<int64_t>(k * n)) << "the panels: all of w";
  EXPECT_EQ(kernels(y, ref_options()), 1u);
  EXPECT_EQ(kernels(y, ptx_options()), 1u);
  expect_near_all(run(y, cpu_options()), want, "CPU options");
  expect_near_all(run(y, ref_options()), want, "REF options");
}

TEST(PackMatmulPanels, RewritesToThePanelGraphWrittenWithTensorOps) {
  Tensor x = Tensor::empty({256, 1024}), w = Tensor::empty({1024, 1024});
  Tensor panels = w.reshape({1024, 32, 32}).permute({1, 0, 2}).contiguous();  // (N / 32, K, 32)
  Tensor by_hand = x.reshape({256, 1, 1, 1024}).mul(panels.permute({0, 2, 1}).reshape({1, 32, 32, 1024})).sum(-1).reshape({256, 1024});
  EXPECT_EQ(rewritten(x.matmul(w), cpu_options()), by_hand.uop());
  EXPECT_EQ(rewritten(x.matmul(w), ref_options()), x.matmul(w).uop()) << "no layout choices: the graph as written";
}

TEST(PackMatmulPanels, OnlyFloat32TwoDimensionalMatmulsWithRowsOfWAMultipleOf4KiBAndEnoughRowsAndDepth) {
  auto e = [](IntTuple shape, DType dt = dtypes::float32) { return Tensor::empty(std::move(shape), dt); };
  const std::vector<std::pair<std::string, Tensor>> unpacked = {
      {"N = 992: rows of w not 4 KiB apart", e({256, 1024}).matmul(e({1024, 992}))},
      {"K = 32 < 64", e({256, 32}).matmul(e({32, 1024}))},
      {"M = 8 < 16", e({8, 1024}).matmul(e({1024, 1024}))},
      {"float16", e({256, 1024}, dtypes::float16).matmul(e({1024, 1024}, dtypes::float16))},
      {"float16 x promoted to float32", e({256, 1024}, dtypes::float16).matmul(e({1024, 1024}))},
      {"float16 w promoted to float32", e({256, 1024}).matmul(e({1024, 1024}, dtypes::float16))},
      {"batched 3-D", e({2, 256, 1024}).matmul(e({2, 1024, 1024}))},
      {"vector @ matrix", e({1024}).matmul(e({1024, 1024}))},
  };
  for (const auto& [why, y] : unpacked) EXPECT_EQ(kernels(y, cpu_options()), 1u) << why;
  EXPECT_EQ(kernels(e({16, 64}).matmul(e({64, 1024})), cpu_options()), 2u) << "the smallest that packs";
}

// ---- split_reduceop, for every device ----------------------------------------------------------------------------

TEST(SplitReduceop, ASumOf2To20ElementsIsTwoKernelsWithEveryTargetsOptions) {
  Tensor s = Tensor::empty({int64_t{1} << 20}).sum();
  for (const ScheduleOptions& o : {cpu_options(), ref_options(), ptx_options()}) EXPECT_EQ(kernels(s, o), 2u);
}

TEST(SplitReduceop, RewritesTo256PartsWrittenWithTensorOps) {
  Tensor x = Tensor::empty({int64_t{1} << 20});
  Tensor by_hand = x.reshape({256, 4096}).permute({1, 0}).sum(0, true).contiguous().sum(1).reshape({});
  EXPECT_EQ(rewritten(x.sum(), ref_options()), by_hand.uop());
}

TEST(SplitReduceop, ASplitsOwnReductionsAreNotSplitAgain) {
  // 2^26 = 256 parts of 2^18: each part still reduces at least 32768 elements per output, and stays one kernel.
  EXPECT_EQ(kernels(Tensor::empty({int64_t{1} << 26}).sum(), ref_options()), 2u);
}

// ---- the schedule cache and the frontend -------------------------------------------------------------------------

TEST(LayoutScheduleCache, TheSameGraphWithCpuAndRefOptionsIsTwoEntriesWithTwoLinears) {
  bool was = schedule_cache_enabled();
  set_schedule_cache_enabled(true);
  clear_schedule_cache();
  Tensor s = Tensor::empty({2048, 512}).sum(0);
  ScheduleResult cpu = schedule({s.uop()}, cpu_options());
  ScheduleResult ref = schedule({s.uop()}, ref_options());
  EXPECT_FALSE(ref.cache_hit) << "another option set is another schedule";
  EXPECT_EQ(schedule_cache_size(), 2u);
  EXPECT_NE(cpu.linear, ref.linear);
  EXPECT_EQ(cpu.linear.src().size(), 2u);
  EXPECT_EQ(ref.linear.src().size(), 1u);
  ScheduleResult cpu_again = schedule({s.uop()}, cpu_options()), ref_again = schedule({s.uop()}, ref_options());
  EXPECT_TRUE(cpu_again.cache_hit);
  EXPECT_TRUE(ref_again.cache_hit);
  EXPECT_EQ(cpu_again.linear.src().size(), 2u);
  EXPECT_EQ(ref_again.linear.src().size(), 1u);
  set_schedule_cache_enabled(was);
}

TEST(LayoutScheduleLinear, TakesTheLayoutChoicesOfTheOutputsDevicesTarget) {
  const std::string saved = default_device_name();
  set_default_device_name("CPU");
  EXPECT_EQ(Tensor::empty({2048, 512}).sum(0).schedule_linear().src().size(), 2u) << "CPU: parts of rows";
  set_default_device_name("REF");
  Tensor on_ref = Tensor::empty({2048, 512});
  EXPECT_EQ(on_ref.device(), "REF");
  EXPECT_EQ(on_ref.sum(0).schedule_linear().src().size(), 1u) << "REF: no layout choices";
  set_default_device_name(saved);
}

TEST(LayoutDebug, Debug5NamesThePassesAndTheirRuleHits) {
  bool was = schedule_cache_enabled();
  set_schedule_cache_enabled(false);  // every schedule runs the passes
  Tensor x = Tensor::empty({256, 1024}), w = Tensor::empty({1024, 1024});
  int level = debug_level();
  set_debug_level(5);
  ::testing::internal::CaptureStderr();
  schedule({x.matmul(w).uop(), Tensor::empty({2048, 512}).sum(0).uop()}, cpu_options());
  std::string err = ::testing::internal::GetCapturedStderr();
  set_debug_level(level);
  set_schedule_cache_enabled(was);
  EXPECT_NE(err.find("graph_rewrite 'pack_matmul_panels'"), std::string::npos) << err.substr(0, 2000);
  EXPECT_NE(err.find("graph_rewrite 'split_reduceop'"), std::string::npos) << err.substr(0, 2000);
  EXPECT_NE(err.find("1  pack_matmul_panels\n"), std::string::npos) << "the rule's hit";
  EXPECT_NE(err.find("1  split_leading_reduce\n"), std::string::npos) << "the rule's hit";
}

}  // namespace
}  // namespace doorbell
