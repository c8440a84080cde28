// The pass pipelines (compiler/pipeline.h): which named passes each target family runs, in order; DEBUG=5 naming
// them; DOORBELL_VERIFY's checks of each stage's form (compiler/verify.h) catching a broken kernel and naming the pass;
// readable kernel names (compiler/kernel_name.h); and ProgramInfo (ir/program_info.h) derived from the kernel.
#include <gtest/gtest.h>

#include <string>

#include "compiler/cpu/cpu_target.h"
#include "compiler/gpu/gpu_target.h"
#include "compiler/kernel_name.h"
#include "compiler/pipeline.h"
#include "compiler/program.h"
#include "compiler/verify.h"
#include "ir/debug.h"
#include "tests/common/error_of.h"
#include "tests/compiler/compiled_kernel_util.h"

namespace doorbell {
namespace {

using namespace test;  // NOLINT: the helpers shared by the compiler tests

std::vector<std::string> cpu_passes(const UOp& sink, bool optimize) {
  cpu_c_target().lower(sink, optimize);
  return last_pipeline_passes();
}

using Passes = std::vector<std::string>;

TEST(Pipeline, TheCpuPipelineRunsItsNamedPassesInOrder) {
  Tensor a = Tensor::rand({64, 64}), b = Tensor::rand({64, 64});
  UOp elementwise = kernel_sinks({a + b}).back();
  EXPECT_EQ(cpu_passes(elementwise, true), (Passes{"optimize_cpu", "expand", "late_lowering", "vectorize"}));
  // A transposed read has no stride-1 loop to make vectors of: the scalar optimizer's upcasts instead.
  UOp gather = kernel_sinks({a.transpose() * 2}).back();
  EXPECT_EQ(cpu_passes(gather, true), (Passes{"optimize_cpu", "optimize_scalar", "expand", "late_lowering"}));
  // Integer division has no vector form: the vectorizer refuses the kernel after the fact, the scalar path runs.
  UOp division = kernel_sinks({Tensor::randint({64, 64}, -50, 50).floordiv(3)}).back();
  EXPECT_EQ(cpu_passes(division, true),
            (Passes{"optimize_cpu", "expand", "late_lowering", "vectorize", "optimize_scalar", "expand", "late_lowering"}));
  EXPECT_EQ(cpu_passes(elementwise, false), (Passes{"late_lowering"})) << "NOOPT=1 leaves out the optimize passes";
}

TEST(Pipeline, TheGpuPipelineRunsItsNamedPassesInOrder) {
  const GpuTarget& sm90 = gpu_target("sm_90");
  gpu_pipeline(kernel_sinks({Tensor::rand({1000}).sum()}).back(), sm90);
  EXPECT_EQ(last_pipeline_passes(), (Passes{"optimize_gpu", "launch_dims", "late_lowering"})) << "a grouped reduce";
  gpu_pipeline(kernel_sinks({Tensor::rand({4096}) * 3}).back(), sm90);
  EXPECT_EQ(last_pipeline_passes(), (Passes{"optimize_gpu", "expand", "launch_dims", "late_lowering"}));
  gpu_pipeline(kernel_sinks({Tensor::rand({4096}) * 3}).back(), sm90, {.optimize = false, .dims = {}, .late_lowering = true});
  EXPECT_EQ(last_pipeline_passes(), (Passes{"launch_dims", "late_lowering"}));
}

TEST(Pipeline, Debug5PrintsEachPassByNameWithItsNodeCounts) {
  Tensor a = Tensor::rand({256});
  UOp sink = kernel_sinks({(a * 2).exp()}).back();
  int before = debug_level();
  set_debug_level(5);
  ::testing::internal::CaptureStderr();
  cpu_c_target().lower(sink, true);
  std::string out = ::testing::internal::GetCapturedStderr();
  set_debug_level(before);
  for (const char* pass : {"optimize_cpu", "expand", "late_lowering", "vectorize"})
    EXPECT_NE(out.find(std::string("pass ") + pass + " ("), std::string::npos) << pass << " in:\n" << out;
  EXPECT_NE(out.find(" nodes"), std::string::npos) << out;
  EXPECT_LT(out.find("pass optimize_cpu"), out.find("pass vectorize")) << "in pipeline order";
}

TEST(Verify, EveryStageOfTheConformanceStyleKernelsPassesItsChecks) {
  set_verify_passes(true);
  Tensor a = Tensor::rand({16, 32}), b = Tensor::rand({32, 8});
  std::vector<Tensor> programs{a.matmul(b), a.softmax(-1), a.sum(0), a.transpose() + 1, (a.pad({{1, 1}, {0, 0}}) * 2).max(1)};
  for (const Tensor& t : programs)
    for (const UOp& sink : kernel_sinks({t})) {
      EXPECT_NO_THROW(cpu_c_target().lower(sink, true));
      EXPECT_NO_THROW(cpu_c_target().lower(sink, false));
      EXPECT_NO_THROW(gpu_pipeline(sink, gpu_target("sm_90")));
    }
  set_verify_passes(false);
}

// A kernel whose store uses a range that no END around it closes: what a broken pass could leave behind.
UOp kernel_with_an_unclosed_range() {
  UOp buf = UOp::make(Ops::PARAM, dtypes::float32, {}, ParamArg{0, AddrSpace::GLOBAL, "", 0, 15});
  UOp r0 = UOp::range(16, 0), r1 = UOp::range(16, 1);
  UOp store = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, dtypes::float32, {buf, r0}), r1.cast(dtypes::float32)});
  return UOp::sink({UOp::make(Ops::END, dtypes::void_, {store, r0})});
}

TEST(Verify, AValueUsingARangeOutsideItsLoopIsReportedNamingThePassAndTheRange) {
  std::string e = testing::error_of<VerifyError>([] { verify_kernel(kernel_with_an_unclosed_range(), KernelStage::SCHEDULED, "a_pass"); });
  EXPECT_NE(e.find("after pass a_pass"), std::string::npos) << e;
  EXPECT_NE(e.find("every range a value uses is closed"), std::string::npos) << e;
  EXPECT_NE(e.find("RANGE"), std::string::npos) << e;
}

TEST(Verify, EachStagesFormIsChecked) {
  UOp buf = UOp::make(Ops::PARAM, dtypes::float32, {}, ParamArg{0, AddrSpace::GLOBAL, "", 0, 15});
  UOp up = UOp::range(4, 0, AxisType::UPCAST);
  UOp upcast = UOp::sink({UOp::make(Ops::END, dtypes::void_,
                                    {UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, dtypes::float32, {buf, up}), buf.const_like(1.0)}), up})});
  EXPECT_NO_THROW(verify_kernel(upcast, KernelStage::OPTIMIZED, "optimize"));
  EXPECT_NE(testing::error_of<VerifyError>([&] { verify_kernel(upcast, KernelStage::EXPANDED, "expand"); }).find("no UPCAST or UNROLL range after expand"),
            std::string::npos);
  EXPECT_NE(testing::error_of<VerifyError>([&] { verify_kernel(upcast, KernelStage::SCHEDULED, "scheduler"); }).find("only LOOP and REDUCE ranges"),
            std::string::npos);
  UOp loop = UOp::range(16, 1);
  UOp looped = UOp::sink({UOp::make(Ops::END, dtypes::void_,
                                    {UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, dtypes::float32, {buf, loop}), buf.const_like(1.0)}), loop})});
  EXPECT_NE(testing::error_of<VerifyError>([&] { verify_kernel(looped, KernelStage::LAUNCHED, "launch_dims"); }).find("no LOOP range after the launch dims"),
            std::string::npos);
  UOp value = UOp::variable("x", 0, 3).cast(dtypes::float32);
  UOp exp = UOp::sink({UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, dtypes::float32, {buf, UOp::const_(dtypes::weakint, 0)}), value.alu(Ops::EXP2)})});
  EXPECT_NE(testing::error_of<VerifyError>([&] { verify_kernel(exp, KernelStage::LOWERED, "late_lowering"); }).find("transcendentals decomposed"),
            std::string::npos);
  UOp not_an_output = UOp::sink({buf.const_like(1.0)});
  EXPECT_NE(testing::error_of<VerifyError>([&] { verify_kernel(not_an_output, KernelStage::SCHEDULED, "x"); }).find("a kernel output"),
            std::string::npos);
}

TEST(KernelName, NamesSayTheKindAndTheShape) {
  Tensor a = Tensor::rand({4, 16}), v = Tensor::rand({256, 32});
  EXPECT_EQ(program_info(compile_kernel(kernel_sinks({a + 1}).back()).program).name, "E_4_16");
  EXPECT_EQ(program_info(compile_kernel(kernel_sinks({v.sum(1)}).back()).program).name, "r_256_32");
  // On a GPU: the launch (blocks, then threads of a block), then the reduce.
  LoweredKernel launched = gpu_pipeline(kernel_sinks({v.sum(1)}).back(), gpu_target("sm_90"));
  std::string name = kernel_name(kernel_sinks({v.sum(1)}).back(), launched, true);
  EXPECT_EQ(name.rfind("r_", 0), 0u) << name;
  EXPECT_NE(name.find("_" + std::to_string(launched.local_size[0])), std::string::npos) << name;
}

TEST(ProgramInfo, DescribesTheKernelsBuffersOutputsAndLaunch) {
  Tensor a = Tensor::rand({1000}), b = Tensor::rand({1000});
  CompiledKernel k = compile_kernel(kernel_sinks({a * b + a}).back());
  const ProgramInfo& info = program_info(k.program);
  EXPECT_EQ(info.buffers, 3);
  EXPECT_EQ(info.outs, (std::vector<int64_t>{0}));
  EXPECT_EQ(info.ins, (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(info.vars.empty());
  EXPECT_EQ(info.target, cpu_c_target().name());
  EXPECT_EQ(info.iterations, 1000);
  EXPECT_EQ(info.ops, 2000);
  EXPECT_EQ(info.bytes, 12000);
  EXPECT_EQ(info.local_size, (std::array<int64_t, 3>{1, 1, 1}));
  EXPECT_EQ(info.global_size[0], 1) << "2000 operations are not worth a second core";
  EXPECT_NE(program_source(k.program).find("void " + info.name + "("), std::string::npos) << "the name is the function's";
  EXPECT_EQ(program_binary(k.program).compare(0, 4, "\x7f" "ELF"), 0) << "the binary is the ELF object that runs";
  Tensor big = Tensor::rand({1 << 20});
  EXPECT_GT(program_info(compile_kernel(kernel_sinks({big * 2}).back()).program).global_size[0], 1) << "a big kernel is worth every core";
}

}  // namespace
}  // namespace doorbell
