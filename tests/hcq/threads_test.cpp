// The program cache and the devices from several threads at once (README "Threads"); the TSan build
// (tools/test.sh) runs these too. One device opened by many threads at once: backend_registry_test.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <thread>

#include "compiler/program.h"
#include "frontend/tensor.h"
#include "hcq/compile_linear.h"
#include "hcq/devices.h"
#include "hcq/run_linear.h"

namespace doorbell {
namespace {

TEST(HcqThreads, FourThreadsCompilingOneFreshKernelGetTheSameCodeAndOneCacheEntry) {
  // A constant no other test or repeat uses: the kernel is in no cache yet, so the four requests race to build it.
  static std::atomic<int> n{0};
  const float k = 2000.f + static_cast<float>(++n);
  Tensor x = Tensor(std::vector<float>{1.f, 2.f, 3.f}).realize();
  Tensor y = x * k;
  UOp linear = y.schedule_linear();
  ASSERT_EQ(linear.src().size(), 1u);
  const UOp call = linear.src(0);
  const Target& target = device("CPU").target();
  const size_t entries = program_cache_stats().entries;

  constexpr int kThreads = 4;
  std::vector<UOp> programs(kThreads);
  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; i++)
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      programs[i] = compile_program(call, target).program;
    });
  for (std::thread& t : threads) t.join();

  EXPECT_EQ(program_cache_stats().entries, entries + 1);
  for (int i = 1; i < kThreads; i++) {
    EXPECT_EQ(program_source(programs[i]), program_source(programs[0])) << "thread " << i;
    EXPECT_EQ(program_binary(programs[i]), program_binary(programs[0])) << "thread " << i;
  }
  // Any thread's program runs the schedule: run_linear takes it from the program cache.
  run_linear(compile_linear(linear));
  EXPECT_EQ(y.tolist<float>(), (std::vector<float>{k, 2 * k, 3 * k}));
}

}  // namespace
}  // namespace doorbell
