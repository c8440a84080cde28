// The HCQ fuzzer (hcq_fuzz.h) with a third device: NV on the emulated driver and GPU (mockgpu/nv), whose streams
// copy on its copy engine and signal and wait with semaphores, on signals in its memory that the CPU devices' queues
// and the host also wait on and set. HCQ_FUZZ_NV_COUNT programs (200 by default) from HCQ_FUZZ_SEED (1); each opens
// a fresh emulated GPU.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "hcq/nv/nv_device.h"
#include "hcq_fuzz.h"
#include "mockgpu/nv/mock_nv_seam.h"

namespace doorbell::hcq_fuzz {
namespace {

uint64_t env_or(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::strtoull(v, nullptr, 10) : fallback;
}

RunOptions nv_options() {
  RunOptions options{.watchdog = std::chrono::milliseconds(env_or("HCQ_FUZZ_WATCHDOG_MS", 10'000))};
  options.open_gpu = [] { return std::unique_ptr<Device>(nv::NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>())); };
  return options;
}

TEST(HcqFuzzNv, RandomProgramsAcrossTwoCpuDevicesAndTheEmulatedGpuRunInOrderAndComplete) {
  const uint64_t count = env_or("HCQ_FUZZ_NV_COUNT", 200);
  const uint64_t seed = env_or("HCQ_FUZZ_SEED", 1);
  const RunOptions options = nv_options();
  size_t nv_submissions = 0;
  size_t nv_bound = 0;
  size_t cross_waits = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const Program program = generate(seed + i, "NV");
    const Plan plan = lower(program);
    for (const Submission& s : plan.submissions) {
      nv_submissions += program.stream_device[s.stream] == kGpuDevice;
      nv_bound += program.stream_device[s.stream] == kGpuDevice && s.bind;
    }
    cross_waits += plan.cross_waits;
    const std::string failure = run(program, options);
    if (failure.empty()) continue;
    int runs = 0;
    const Program small = shrink(program, options, &runs);
    ADD_FAILURE() << "NV program " << i << " (HCQ_FUZZ_SEED=" << seed + i << " HCQ_FUZZ_NV_COUNT=1): " << failure
                  << "\n"
                  << describe(program) << "shrunk in " << runs << " runs to: " << run(small, options) << "\n"
                  << describe(small);
    return;
  }
  std::printf("hcq fuzz with NV: %llu programs from seed %llu: %zu NV submissions (%zu bound), %zu waits across "
              "streams\n",
              static_cast<unsigned long long>(count), static_cast<unsigned long long>(seed), nv_submissions, nv_bound,
              cross_waits);
  EXPECT_GT(nv_submissions, count) << "the programs must put work on NV";
  EXPECT_GT(nv_bound, 0u) << "the programs must bind NV queues too";
}

TEST(HcqFuzzNv, ACopyOnTheGpuBetweenTwoCpuExecsIsOrderedBySignalsInGpuMemory) {
  Program p;
  p.gpu = "NV";
  p.stream_device = {0, kGpuDevice, 1};
  p.signal_stride = {1, uint64_t{1} << 32, 1};
  p.cells = 3;
  p.ops = {Op{.kind = OpKind::kExec, .stream = 0, .out = 0, .in1 = 1, .in2 = 2, .k = 7},
           Op{.kind = OpKind::kCopy, .stream = 1, .out = 1, .in1 = 0},
           Op{.kind = OpKind::kExec, .stream = 2, .out = 2, .in1 = 1, .in2 = 1, .k = -3},
           Op{.kind = OpKind::kHostRead, .in1 = 2}};
  EXPECT_EQ(lower(p).cross_waits, 2u);
  EXPECT_EQ(run(p, nv_options()), "") << describe(p);
}

// Found by this fuzzer: a copy queue bound on NV and submitted faulted the copy channel of the emulated GPU
// ("channel error notifier status 0xffff, error 13 (Xid)"), while the same queue unbound ran. The cause was ours: the
// bound queue is destroyed right after its submit, and NvBoundQueue's destructor freed its pushbuffer at once, so the
// channel fetched the GP entry's pushbuffer from unmapped memory. The device now retires such memory until both
// channels' progress passed the submissions made before the free (NvDevice::free).
TEST(HcqFuzzNv, ABoundCopyQueueOnNvRunsAsTheUnboundOneDoes) {
  Program p;
  p.gpu = "NV";
  p.stream_device = {kGpuDevice};
  p.signal_stride = {1};
  p.cells = 2;
  p.ops = {Op{.kind = OpKind::kCopy, .stream = 0, .out = 0, .in1 = 1}, Op{.kind = OpKind::kFlush, .stream = 0}};
  EXPECT_EQ(run(p, nv_options()), "") << describe(p);
  p.ops[1].bind = true;
  EXPECT_EQ(run(p, nv_options()), "") << describe(p);
}

}  // namespace
}  // namespace doorbell::hcq_fuzz
