// Kernels compiled for the NV device's own target (compiler/gpu/ptx_target.h), on the emulated GPU (DEV=NV,
// MOCKGPU=1): a realize on NV runs no C compiler; the PROGRAM holds the PTX that the emulated SM runs and the cubin
// ptxas made, with a ProgramInfo that agrees with `ptxas -v`; a second process reads the cubin from the disk cache
// instead of running ptxas again; run_linear compiles an uncompiled LINEAR instead of interpreting it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "compiler/cpu/clang_compiler.h"
#include "compiler/gpu/ptxas.h"
#include "compiler/program.h"
#include "compiler/subprocess.h"
#include "frontend/tensor.h"
#include "hcq/backend.h"
#include "hcq/devices.h"
#include "hcq/ref/ref_interpreter.h"
#include "hcq/run_linear.h"
#include "ir/environment.h"
#include "tests/common/temp_tree.h"

namespace doorbell {
namespace {

// DEV=NV on the emulated GPU for this process (the device is opened on first use, after this). MOCKGPU is set on
// every call: a test of another file unsets it (NvDevice.OpenUnderMockgpuRunsOnTheInstalledEmulator), and under
// --gtest_repeat a later NV:1 open here would otherwise look for the kernel's driver.
Device& nv() {
  setenv("MOCKGPU", "1", 1);
  static Device& d = device("NV");
  return d;
}

// A tensor on NV: its data copied to the device when it is created.
Tensor on_nv(std::vector<float> values) {
  nv();
  const std::string saved = default_device_name();
  set_default_device_name("NV");
  Tensor t(std::move(values));
  t.realize();
  set_default_device_name(saved);
  return t;
}

uint64_t c_compiler_runs() {
  std::optional<std::string> cc = find_c_compiler();
  return cc ? process_runs(*cc) : 0;
}

TEST(NvProgram, ARealizeOnNvRunsNoCCompiler) {
  Tensor x = on_nv({1, 2, 3, 4});
  const uint64_t clang_before = c_compiler_runs(), interpreted_before = interpreted_kernels();
  Tensor y = (x * 7.25f - 3).exp2();  // a kernel no other test compiles
  EXPECT_EQ(y.device(), "NV");
  std::vector<float> got = y.tolist<float>();
  EXPECT_EQ(c_compiler_runs(), clang_before) << "the NV kernel was compiled by its own target only";
  EXPECT_EQ(interpreted_kernels(), interpreted_before) << "and run on the (emulated) GPU, not interpreted";
  ASSERT_EQ(got.size(), 4u);
  for (int i = 0; i < 4; i++) EXPECT_NEAR(got[i], std::exp2((i + 1) * 7.25f - 3), 1e-5 * std::exp2((i + 1) * 7.25f - 3));
}

TEST(NvProgram, TheProgramHoldsThePtxThatRunsAndTheCubinAndItsInfoAgreesWithPtxas) {
  Tensor x = on_nv(std::vector<float>(5000, 1.5f));
  UOp linear = x.sum().schedule_linear();  // a grouped reduce: shared memory and a barrier
  ASSERT_EQ(linear.src().size(), 1u);
  UOp program = compile_program(linear.src(0), nv().target()).program;
  const ProgramInfo& info = program_info(program);
  const std::string& ptx = program_source(program);
  EXPECT_NE(ptx.find(".visible .entry " + info.name + "("), std::string::npos) << "the SOURCE is the PTX, its entry the kernel's name";
  EXPECT_NE(ptx.find(".target sm_90"), std::string::npos) << ptx.substr(0, 200);
  EXPECT_EQ(info.target, nv().target().name());
  EXPECT_GT(info.local_size[0], 1) << "a block of lanes";
  EXPECT_GT(info.shared_bytes, 0);
  EXPECT_EQ(info.buffers, 2);
  if (!ptxas_available()) GTEST_SKIP() << "ptxas not found on PATH or in /usr/local/cuda/bin: the emulated GPU's PROGRAM has no cubin";
  const std::string& cubin = program_binary(program);
  ASSERT_GE(cubin.size(), 64u);
  EXPECT_EQ(cubin.compare(0, 4, "\x7f" "ELF"), 0) << "the BINARY is ptxas's cubin";
  PtxasReport report = assemble_ptx(ptx, "sm_90").report;
  ASSERT_TRUE(report.functions.count(info.name)) << report.text;
  const PtxasFunctionReport& f = report.functions.at(info.name);
  EXPECT_EQ(info.registers, f.registers) << report.text;
  EXPECT_EQ(info.shared_bytes, f.shared_bytes) << report.text;
  EXPECT_EQ(info.stack_bytes, f.stack_frame_bytes) << report.text;
  std::vector<float> got = Tensor(x.sum()).tolist<float>();
  EXPECT_EQ(got, std::vector<float>{7500.f});
}

TEST(NvProgram, RunLinearCompilesAnUncompiledLinearForTheDeviceOfItsBuffers) {
  Tensor x = on_nv({1, 2, 3});
  Tensor y = x * 3 + 0.5f;
  UOp linear = y.schedule_linear();
  const uint64_t interpreted = interpreted_kernels();
  const ProgramCacheStats before = program_cache_stats();
  run_linear(linear);
  const ProgramCacheStats after = program_cache_stats();
  EXPECT_EQ(interpreted_kernels(), interpreted) << "compiled, not interpreted";
  EXPECT_EQ(after.hits + after.misses, before.hits + before.misses + linear.src().size()) << "one compile request per kernel";
  EXPECT_EQ(y.tolist<float>(), (std::vector<float>{3.5f, 6.5f, 9.5f}));
  // The same LINEAR on the reference device: interpreted, same values.
  run_linear(linear, on_device("REF"));
  EXPECT_EQ(interpreted_kernels(), interpreted + linear.src().size());
  EXPECT_EQ(y.tolist<float>(), (std::vector<float>{3.5f, 6.5f, 9.5f}));
}

TEST(NvProgram, RunningCpuBuffersOnNvIsAnErrorNamingBothDevices) {
  nv();
  Tensor x = Tensor({1.f, 2.f}).realize();  // on the CPU
  UOp linear = (x + 1).schedule_linear();
  try {
    run_linear(linear, on_device("NV"));
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("NV cannot run a call whose buffers are on CPU"), std::string::npos) << e.what();
  }
}

TEST(NvProgram, TheSecondGpuIsNv1AndAMissingOneIsAnErrorCountingTheGpus) {
  nv();  // MOCKGPU=1: the emulated driver reports one GPU
  EXPECT_EQ(parse_device_name("nv:1").canonical(), "NV:1");
  try {
    device("NV:1");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("NV:1: the driver reports 1 GPU (NV_ESC_CARD_INFO)"), std::string::npos) << e.what();
  }
  EXPECT_EQ(device("NV:0").name(), "NV") << "NV:0 is the first GPU, NV";
}

std::string run_child(const std::filesystem::path& cache) {
  std::string cmd = "DOORBELL_CACHE_DIR='" + cache.string() + "' '" DOORBELL_NV_COMPILE_CHILD "' 2>&1";  // tests/hcq_nv/nv_compile_child.cpp
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return "popen failed";
  char buf[512];
  while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  pclose(p);
  return out;
}

TEST(NvProgram, ASecondProcessReadsTheCubinFromTheDiskCache) {
  if (!ptxas_available()) GTEST_SKIP() << "ptxas not found on PATH or in /usr/local/cuda/bin: nothing is assembled";
  testing::TempTree cache;
  auto runs = [](const std::string& out) {
    unsigned long long n = 999;
    size_t at = out.find("ptxas runs: ");
    if (at != std::string::npos) n = std::strtoull(out.c_str() + at + 12, nullptr, 10);
    return n;
  };
  std::string first = run_child(cache.root()), second = run_child(cache.root());
  EXPECT_EQ(runs(first), 1u) << "the first process assembles the kernel: " << first;
  EXPECT_EQ(runs(second), 0u) << "the second reads its cubin from the disk cache: " << second;
}

}  // namespace
}  // namespace doorbell
