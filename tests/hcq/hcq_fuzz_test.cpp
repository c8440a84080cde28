// The HCQ fuzzer (hcq_fuzz.h) in CI: HCQ_FUZZ_COUNT programs (500 by default, under a second) from HCQ_FUZZ_SEED (1);
// program i is generate(seed + i), so HCQ_FUZZ_SEED=<seed + i> HCQ_FUZZ_COUNT=1 reruns one. A long run by hand:
//   HCQ_FUZZ_COUNT=20000 build/dev/tests/hcq/test_hcq_fuzz --gtest_filter='HcqFuzz.Random*'
// A failure prints the program, then the program shrunk to the ops it still fails with.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "hcq_fuzz.h"

namespace doorbell::hcq_fuzz {
namespace {

using namespace std::chrono_literals;

uint64_t env_or(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::strtoull(v, nullptr, 10) : fallback;
}

TEST(HcqFuzz, RandomSignalWaitExecCopyProgramsOnTwoDevicesRunInOrderAndComplete) {
  const uint64_t count = env_or("HCQ_FUZZ_COUNT", 500);
  const uint64_t seed = env_or("HCQ_FUZZ_SEED", 1);
  const RunOptions options{.watchdog = std::chrono::milliseconds(env_or("HCQ_FUZZ_WATCHDOG_MS", 10'000))};
  size_t ops = 0;
  size_t submissions = 0;
  size_t cross_waits = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const Program program = generate(seed + i);
    const Plan plan = lower(program);
    ops += program.ops.size();
    submissions += plan.submissions.size();
    cross_waits += plan.cross_waits;
    const std::string failure = run(program, options);
    if (failure.empty()) continue;
    int runs = 0;
    const Program small = shrink(program, options, &runs);
    ADD_FAILURE() << "program " << i << " (HCQ_FUZZ_SEED=" << seed + i << " HCQ_FUZZ_COUNT=1): " << failure << "\n"
                  << describe(program) << "shrunk in " << runs << " runs to: " << run(small, options) << "\n"
                  << describe(small);
    return;
  }
  std::printf("hcq fuzz: %llu programs from seed %llu: %zu ops, %zu submissions, %zu waits across streams\n",
              static_cast<unsigned long long>(count), static_cast<unsigned long long>(seed), ops, submissions,
              cross_waits);
  EXPECT_GT(cross_waits, count) << "the programs must make streams wait for each other";
}

TEST(HcqFuzz, LoweringAddsAWaitWhereAStreamReadsAnotherStreamsWrite) {
  Program p;
  p.stream_device = {0, 1};
  p.signal_stride = {1, 1};
  p.cells = 2;
  p.ops = {Op{.kind = OpKind::kExec, .stream = 0, .out = 0, .in1 = 1, .in2 = 1, .k = 7},
           Op{.kind = OpKind::kCopy, .stream = 1, .out = 1, .in1 = 0}};
  EXPECT_EQ(describe(p),
            "program (seed 0), 2 ops; CPU: 1 workers, spin 0 ns; CPU:1: 1 workers, spin 0 ns; cells c0..c1 (c0 = "
            "[1000003, 1000010, 1000017, 1000024], ...); s0 on CPU, s1 on CPU:1\n"
            "  submit s0 to CPU: exec c0 = mix(c1, c1, k=7) on all cores [op 0]; signal s0 = 1\n"
            "  submit s1 to CPU:1: wait s0 >= 1; copy c1 = c0 [op 1]; signal s1 = 1\n"
            "  end: synchronize both devices; expect s0 = 1 s1 = 1 gate = 0\n");
  EXPECT_EQ(run(p, RunOptions{}), "");
}

TEST(HcqFuzz, AnExecThatComputesAnotherValueIsReportedAndShrunkToItself) {
  const RunOptions options{.sabotage = Sabotage::kWrongConstant};
  Program p = generate(7);
  ASSERT_GT(std::count_if(p.ops.begin(), p.ops.end(), [](const Op& op) { return op.kind == OpKind::kExec; }), 0);
  const std::string failure = run(p, options);
  EXPECT_NE(failure.find("order: "), std::string::npos) << failure;  // a host read or the trace sees it
  const Program small = shrink(p, options);
  ASSERT_EQ(small.ops.size(), 1u) << describe(small, options.sabotage);
  EXPECT_EQ(small.ops[0].kind, OpKind::kExec);
}

TEST(HcqFuzz, AWaitThatNeverPassesIsADeadlockReportNamingTheWaitNotAHang) {
  const RunOptions options{.watchdog = 300ms, .sabotage = Sabotage::kWaitTooFar};
  Program p = generate(1);
  for (uint64_t seed = 2; lower(p).cross_waits == 0; ++seed) p = generate(seed);
  const std::string failure = run(p, options);
  // Whether the host's read or the final synchronize meets it first, the report names the wait that cannot pass.
  EXPECT_NE(failure.find("waits for signal"), std::string::npos) << failure;
  EXPECT_NE(failure.find("to reach 18446744073709551615"), std::string::npos) << failure;
}

}  // namespace
}  // namespace doorbell::hcq_fuzz
