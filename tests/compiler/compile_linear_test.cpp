// compile_linear + run_linear: the compiled path computes what the reference interpreter computes.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "compiler/program.h"
#include "frontend/tensor.h"
#include "hcq/compile_linear.h"
#include "hcq/run_linear.h"
#include "ir/debug.h"

namespace doorbell {
namespace {

TEST(CompileLinear, EveryKernelBecomesAProgramWithSourceAndBinary) {
  Tensor x = Tensor::rand({8, 16});
  UOp linear = x.softmax(-1).schedule_linear();
  UOp compiled = compile_linear(linear);
  ASSERT_EQ(compiled.src().size(), linear.src().size());
  for (size_t i = 0; i < compiled.src().size(); i++) {
    const UOp& body = compiled.src(i).src(0);
    ASSERT_EQ(body.op(), Ops::PROGRAM);
    std::vector<Ops> parts;
    for (const UOp& s : body.src()) parts.push_back(s.op());
    EXPECT_EQ(parts, (std::vector<Ops>{Ops::SINK, Ops::LINEAR, Ops::SOURCE, Ops::BINARY}));
    EXPECT_EQ(body.src(0), linear.src(i).src(0)) << "the PROGRAM keeps the kernel it compiled";
    for (size_t a = 1; a < linear.src(i).src().size(); a++) EXPECT_EQ(compiled.src(i).src(a), linear.src(i).src(a));
  }
  EXPECT_EQ(compile_linear(compiled), compiled) << "compiling twice changes nothing";
}

TEST(CompileLinear, CompiledSchedulesComputeTheSameValuesAsTheInterpreter) {
  Tensor::manual_seed(3);
  auto programs = [] {
    Tensor a = Tensor::randn({16, 12}), b = Tensor::randn({12, 8});
    return std::vector<Tensor>{(a.matmul(b) + 1).relu(), a.softmax(-1), a.pad({{1, 2}, {0, 3}}).flip(0).sum(1), a.cumsum(1)};
  };
  std::vector<Tensor> ref = programs();
  Tensor::manual_seed(3);
  std::vector<Tensor> out = programs();
  run_linear(Tensor::schedule_linear(ref), on_device("REF"));
  run_linear(compile_linear(Tensor::schedule_linear(out)));
  for (size_t i = 0; i < ref.size(); i++) {
    std::vector<float> want = ref[i].tolist<float>(), got = out[i].tolist<float>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); k++) EXPECT_NEAR(got[k], want[k], 1e-5f * (1 + std::abs(want[k]))) << "program " << i << " element " << k;
  }
}

TEST(CompileLinear, Debug4PrintsTheGeneratedSourceOfEachKernel) {
  Tensor x = Tensor({1.f, 2.f});
  UOp linear = (x * 5 + 2).schedule_linear();
  int before = debug_level();
  set_debug_level(4);
  ::testing::internal::CaptureStderr();
  compile_linear(linear);
  std::string out = ::testing::internal::GetCapturedStderr();
  set_debug_level(before);
  // The default CPU target's source: C (a function) or x86 (a listing; tests/x86/x86_target_test.cpp checks it).
  const bool listing = out.find(".intel_syntax") != std::string::npos;
  EXPECT_NE(out.find(listing ? "\nE_2:\n" : "void E_2("), std::string::npos) << "the kernel's readable name is its function's: " << out;
  EXPECT_NE(out.find(listing ? "\n  ret" : "core_count"), std::string::npos) << out;
}

// E or r, then one or more _<size> (compiler/kernel_name.h).
bool readable_name(const std::string& name) {
  if (name.size() < 3 || (name[0] != 'E' && name[0] != 'r')) return false;
  for (size_t i = 1; i < name.size();) {
    if (name[i] != '_' || i + 1 == name.size() || !std::isdigit(static_cast<unsigned char>(name[i + 1]))) return false;
    for (i++; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]));) i++;
  }
  return true;
}

TEST(CompileLinear, Debug2PrintsOneLinePerKernelWithItsKernelOnlyTime) {
  Tensor x = Tensor::rand({64});
  UOp compiled = compile_linear((x.softmax(-1) + 1).schedule_linear());
  int before = debug_level();
  set_debug_level(2);
  ::testing::internal::CaptureStderr();
  run_linear(compiled);
  std::string out = ::testing::internal::GetCapturedStderr();
  set_debug_level(before);
  // One line per kernel: device, running kernel count, name, launch [cores x outermost iterations], buffers, memory
  // in use, time, GFLOP/s, GB/s.
  size_t lines = 0;
  unsigned long long last_count = 0;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    char dev[16], name[64];
    int cores = 0, bufs = 0;
    unsigned long long count = 0;
    long long global = 0;
    double mem = -1, us = -1, gflops = -1, gbs = -1;
    int n = std::sscanf(line.c_str(), "*** %15s %llu %63s [%d x %lld] %d bufs mem %lf MB tm %lf us %lf GFLOP/s %lf GB/s", dev,
                        &count, name, &cores, &global, &bufs, &mem, &us, &gflops, &gbs);
    if (n != 10) continue;
    lines++;
    EXPECT_STREQ(dev, "CPU") << line;
    EXPECT_GT(count, last_count) << "the running kernel count grows: " << line;
    last_count = count;
    EXPECT_TRUE(readable_name(name)) << "a readable name (kind, then sizes): " << line;
    EXPECT_GT(mem, 0) << "the buffers in use: " << line;
    EXPECT_GE(cores, 1) << line;
    EXPECT_GE(bufs, 1) << line;
    EXPECT_GE(us, 0) << line;
    EXPECT_GE(gflops, 0) << line;
    EXPECT_GE(gbs, 0) << line;
  }
  EXPECT_EQ(lines, compiled.src().size()) << out;
}

TEST(CompileLinear, Debug2ReportsTheCompileLatencyOfEachKernelCompiledButNotOfCacheHits) {
  Tensor x = Tensor::rand({16});
  UOp linear = (x * 1234.25f - 7).schedule_linear();  // a constant no other test uses: a new kernel
  int before = debug_level();
  set_debug_level(2);
  ::testing::internal::CaptureStderr();
  compile_linear(linear);
  std::string first = ::testing::internal::GetCapturedStderr();
  ::testing::internal::CaptureStderr();
  compile_linear(linear);
  std::string second = ::testing::internal::GetCapturedStderr();
  set_debug_level(before);
  char name[64];
  double ms = -1;
  char dev[16];
  ASSERT_EQ(std::sscanf(first.c_str(), "compile: %15s %63s %lf ms", dev, name, &ms), 3) << first;  // maybe "(disk cache)" after
  EXPECT_STREQ(dev, "CPU") << first;
  EXPECT_STREQ(name, "E_16") << first;
  EXPECT_GE(ms, 0) << first;
  EXPECT_EQ(second.find("compile:"), std::string::npos) << second;
}

TEST(CompileLinear, RejectsWhatIsNotALinear) {
  EXPECT_THROW(compile_linear(UOp::sink({})), std::invalid_argument);
}

}  // namespace
}  // namespace doorbell
