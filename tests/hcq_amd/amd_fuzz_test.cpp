// The HCQ fuzzer (tests/hcq/hcq_fuzz.h) with AMD on the emulated machine as its third device (the fuzzer's "GPU"
// slot): its streams copy on the SDMA queue and signal and wait on signals in its memory that the CPU devices'
// queues and the host also wait on and set. HCQ_FUZZ_AMD_COUNT programs (100 by default) from HCQ_FUZZ_SEED (1);
// each opens a fresh emulated machine.
#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/hcq/hcq_fuzz.h"
#include "tests/hcq_amd/amd_test_machine.h"

namespace doorbell::hcq_fuzz {
namespace {

uint64_t env_or(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::strtoull(v, nullptr, 10) : fallback;
}

TEST(HcqFuzzAmd, RandomProgramsAcrossTwoCpuDevicesAndTheEmulatedAmdGpuRunInOrderAndComplete) {
  RunOptions options{.watchdog = std::chrono::milliseconds(env_or("HCQ_FUZZ_WATCHDOG_MS", 10'000))};
  options.open_gpu = [] { return std::unique_ptr<Device>(amd::open_amd_test_device()); };
  const uint64_t count = env_or("HCQ_FUZZ_AMD_COUNT", 100), seed = env_or("HCQ_FUZZ_SEED", 1);
  size_t gpu_submissions = 0, bound = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const Program program = generate(seed + i, "AMD");
    for (const Submission& s : lower(program).submissions) {
      gpu_submissions += program.stream_device[s.stream] == kGpuDevice;
      bound += program.stream_device[s.stream] == kGpuDevice && s.bind;
    }
    const std::string failure = run(program, options);
    if (failure.empty()) continue;
    int runs = 0;
    const Program small = shrink(program, options, &runs);
    ADD_FAILURE() << "AMD program " << i << " (HCQ_FUZZ_SEED=" << seed + i << " HCQ_FUZZ_AMD_COUNT=1): " << failure << "\n"
                  << describe(program) << "shrunk in " << runs << " runs to: " << run(small, options) << "\n"
                  << describe(small);
    return;
  }
  EXPECT_GT(gpu_submissions, count) << "the programs must put work on AMD";
  EXPECT_GT(bound, 0u) << "the programs must bind AMD queues too";
}

}  // namespace
}  // namespace doorbell::hcq_fuzz
