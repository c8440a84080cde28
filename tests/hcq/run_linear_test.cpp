// run_linear's call handlers (kernels compiled for their device, copies, the REF device's interpreter), kernel
// estimates for the DEBUG=2 line, and buffer storage from the CPU device's caching allocator.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "compiler/kernel_estimates.h"
#include "compiler/program.h"
#include "frontend/tensor.h"
#include "hcq/compile_linear.h"
#include "hcq/cpu/cpu_allocator.h"
#include "hcq/devices.h"
#include "hcq/host_buffers.h"
#include "hcq/ref/ref_interpreter.h"
#include "hcq/run_linear.h"
#include "ir/debug.h"
#include "scheduler/schedule.h"

namespace doorbell {
namespace {

UOp copy_call(const UOp& dst, const UOp& src) {
  return UOp::make(Ops::CALL, dtypes::void_, {UOp::make(Ops::COPY, dtypes::void_, {}), dst, src});
}

TEST(RunLinear, CopyCallCopiesBytesThroughTheDeviceQueueInOrder) {
  UOp a = new_buffer(dtypes::int32, 5), b = new_buffer(dtypes::int32, 5), c = new_buffer(dtypes::int32, 5);
  const int32_t values[5] = {3, -1, 4, -1, 5};
  std::memcpy(buffer_bytes(a).data(), values, sizeof values);
  // b <- a, then c <- b: the second copy sees the first one's result only if the queue runs them in order.
  run_linear(UOp::make(Ops::LINEAR, dtypes::void_, {copy_call(b, a), copy_call(c, b)}));
  EXPECT_EQ(std::memcmp(buffer_bytes(c).data(), values, sizeof values), 0);
}

TEST(RunLinear, Debug2PrintsACopyWithItsBytesAndTimeAndTheRunningKernelCount) {
  UOp a = new_buffer(dtypes::int32, 5), b = new_buffer(dtypes::int32, 5);
  std::memset(buffer_bytes(a).data(), 7, 20);
  const int before = debug_level();
  set_debug_level(2);
  ::testing::internal::CaptureStderr();
  run_linear(UOp::make(Ops::LINEAR, dtypes::void_, {copy_call(b, a)}));
  const std::string out = ::testing::internal::GetCapturedStderr();
  set_debug_level(before);
  unsigned long long count = 0;
  char device[16];
  double mem = -1, us = -1;
  ASSERT_EQ(std::sscanf(out.c_str(), "*** %15s %llu copy 20 bytes %*d bufs mem %lf MB tm %lf us", device, &count, &mem, &us), 4) << out;
  EXPECT_STREQ(device, "CPU");
  EXPECT_EQ(count, kernels_launched()) << "the count of kernels launched so far";
  EXPECT_GE(us, 0);
  EXPECT_EQ(std::memcmp(buffer_bytes(b).data(), buffer_bytes(a).data(), 20), 0);
}

TEST(RunLinear, CopyBetweenBuffersOfDifferentSizesIsAnErrorNamingTheSizes) {
  UOp a = new_buffer(dtypes::int32, 5), b = new_buffer(dtypes::int32, 4);
  try {
    run_linear(UOp::make(Ops::LINEAR, dtypes::void_, {copy_call(b, a)}));
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("COPY of 20 bytes into a buffer of 16 bytes"), std::string::npos) << e.what();
  }
}

TEST(RunLinear, CallOfAnUnknownKindIsAnError) {
  UOp a = new_buffer(dtypes::int32, 1);
  UOp call = UOp::make(Ops::CALL, dtypes::void_, {UOp::make(Ops::NOOP, dtypes::void_, {}), a});
  EXPECT_THROW(run_linear(UOp::make(Ops::LINEAR, dtypes::void_, {call})), std::invalid_argument);
}

TEST(RunLinear, CompiledAndInterpretedKernelsAgreeOnReductionsOverAnEmptyAxis) {
  for (bool compiled : {false, true}) {
    Tensor x = Tensor::zeros({0, 3});
    Tensor s = x.sum(0), m = x.max(0), p = Tensor::ones({0, 2}, dtypes::int32).prod(0);
    UOp linear = Tensor::schedule_linear({s, m, p});
    run_linear(compiled ? compile_linear(linear) : linear, on_device(compiled ? "" : "REF"));
    EXPECT_EQ(s.tolist<float>(), (std::vector<float>{0, 0, 0})) << compiled;
    EXPECT_EQ(m.tolist<float>(), std::vector<float>(3, -std::numeric_limits<float>::infinity())) << compiled;
    EXPECT_EQ(p.tolist<int32_t>(), (std::vector<int32_t>{1, 1})) << compiled;
  }
}

TEST(RunLinear, AnUncompiledLinearIsCompiledForItsDeviceNotInterpreted) {
  Tensor x = Tensor({1.f, 2.f, 3.f}).realize();
  Tensor y = (x + 0.25f) * 4;
  UOp linear = y.schedule_linear();
  const uint64_t interpreted = interpreted_kernels();
  const ProgramCacheStats before = program_cache_stats();
  run_linear(linear);
  EXPECT_EQ(interpreted_kernels(), interpreted);
  EXPECT_EQ(program_cache_stats().hits + program_cache_stats().misses, before.hits + before.misses + linear.src().size());
  EXPECT_EQ(y.tolist<float>(), (std::vector<float>{5, 9, 13}));
}

TEST(RefDevice, DevRefRealizesEveryKernelThroughTheInterpreter) {
  const std::string saved = default_device_name();
  set_default_device_name("REF");
  Tensor x = Tensor({1.f, -2.f, 3.f});
  Tensor y = (x * x).sum() + x.max();
  set_default_device_name(saved);
  EXPECT_EQ(y.device(), "REF");
  const uint64_t interpreted = interpreted_kernels();
  EXPECT_EQ(y.tolist<float>(), (std::vector<float>{17}));
  EXPECT_GT(interpreted_kernels(), interpreted);
  EXPECT_EQ(device("REF").target().name(), "REF interpreter");
}

TEST(RefDevice, AKernelErrorComesBackFromRunLinearAndTheDeviceStaysUsable) {
  // A kernel that writes 8 elements into a buffer of 4: the interpreter names the index and the buffer.
  UOp buf = new_buffer(dtypes::float32, 4);
  UOp param = UOp::make(Ops::PARAM, dtypes::float32, {}, ParamArg{0, AddrSpace::GLOBAL, "", 0, 3});
  UOp r = UOp::range(8, 0);
  UOp store = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, dtypes::float32, {param, r}), r.cast(dtypes::float32)});
  UOp call = UOp::make(Ops::CALL, dtypes::void_, {UOp::sink({UOp::make(Ops::END, dtypes::void_, {store, r})}), buf});
  try {
    run_linear(UOp::make(Ops::LINEAR, dtypes::void_, {call}), on_device("REF"));
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("kernel index 4 is outside buffer slot 0 of 4 elements"), std::string::npos) << e.what();
  }
  Tensor x = Tensor({1.f, 2.f}).realize();
  Tensor y = x + 1;
  run_linear(y.schedule_linear(), on_device("REF"));
  EXPECT_EQ(y.tolist<float>(), (std::vector<float>{2, 3}));
}

// The kernel of a one-kernel program.
UOp only_kernel(const Tensor& t) {
  UOp linear = t.schedule_linear();
  EXPECT_EQ(linear.src().size(), 1u);
  return linear.src(0);
}

TEST(KernelEstimates, ElementwiseAddCountsOneOpAndThreeWordsPerElement) {
  Tensor a = Tensor::rand({1000}).realize(), b = Tensor::rand({1000}).realize();
  KernelEstimates e = estimate_kernel(only_kernel(a + b));
  EXPECT_EQ(e.ops, 1000);
  EXPECT_EQ(e.bytes_read, 8000);
  EXPECT_EQ(e.bytes_written, 4000);
  EXPECT_EQ(e.global_size, 1000);
}

TEST(KernelEstimates, MatmulCountsTwoOpsPerMultiplyAddAndEachInputOnce) {
  Tensor a = Tensor::rand({6, 5}).realize(), b = Tensor::rand({5, 7}).realize();
  KernelEstimates e = estimate_kernel(only_kernel(a.matmul(b)));
  EXPECT_EQ(e.ops, 2 * 6 * 7 * 5);
  EXPECT_EQ(e.bytes_read, (6 * 5 + 5 * 7) * 4);  // loaded 6*7*5 times each, but only so many distinct elements
  EXPECT_EQ(e.bytes_written, 6 * 7 * 4);
  EXPECT_EQ(e.global_size, 6 * 7);
}

TEST(CpuBuffers, StorageComesFromTheDeviceAllocatorAndFreedBlocksAreReused) {
  CpuAllocator& alloc = cpu_device_allocator();
  Tensor x = Tensor({1.f, 2.f, 3.f}).realize();
  size_t live = alloc.live_blocks();
  {
    Tensor y = (x + 1).realize();
    EXPECT_EQ(y.tolist<float>(), (std::vector<float>{2, 3, 4}));
    EXPECT_EQ(alloc.live_blocks(), live + 1);
  }
  EXPECT_EQ(alloc.live_blocks(), live);  // the last reference to y's buffer went: its block is cached
  size_t cached = alloc.cached_blocks();
  ASSERT_GE(cached, 1u);
  Tensor z = (x * 2).realize();  // the same size: the cached block comes back, zero-filled and overwritten
  EXPECT_EQ(z.tolist<float>(), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(alloc.cached_blocks(), cached - 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer_bytes(base_buffer(z.uop())).data()) % CpuAllocator::kAlignment, 0u);
}

}  // namespace
}  // namespace doorbell

namespace doorbell {
namespace {

// DEV picks the device new buffers are made on; a device that does not exist yet is a clear error at run time.
TEST(Environment, DevNamesTheDeviceOfNewBuffersAndAnUnknownDeviceIsAnErrorNamingIt) {
  std::string saved = default_device_name();
  set_default_device_name("XPU");
  Tensor x = Tensor::empty({2});  // no storage yet: data would be written to the device at creation
  EXPECT_EQ(x.device(), "XPU");
  Tensor y = x + 1;
  set_default_device_name(saved);
  try {
    y.realize();
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("device 'XPU': no backend named XPU"), std::string::npos) << e.what();
  }
  EXPECT_EQ(Tensor({1.f}).device(), saved);
}

}  // namespace
}  // namespace doorbell
