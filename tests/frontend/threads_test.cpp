// The thread model (README "Threads"): each tensor is used by one thread at a time, and everything shared behind
// the tensors (the live-tensor registry and its rewrite on realize, the schedule cache, the program cache, the
// UOp intern table, devices) is safe from any thread. These tests run realizes from several threads at once; the
// TSan build (tools/test.sh) runs them too, so a race that does not show in the values shows as a report.
#include <atomic>
#include <barrier>
#include <functional>
#include <random>
#include <thread>

#include "frontend_test_util.h"
#include "scheduler/schedule_cache.h"

namespace doorbell {
namespace {

constexpr int kThreads = 4;

// Runs body(i) on kThreads threads, started together; rethrows the first exception any of them threw, so a
// failure inside a thread fails the test with its message.
void on_threads(const std::function<void(int)>& body) {
  std::barrier start(kThreads);
  std::vector<std::exception_ptr> errors(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; i++)
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      try {
        body(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

// A value no other test or repeat (--gtest_repeat) uses, so graphs built with it miss every cache.
float fresh_value() {
  static std::atomic<int> n{0};
  return 1000.f + static_cast<float>(++n);
}

TEST(Threads, FourThreadsRealizingTheSameGraphOnFreshBuffersEachGetTheirOwnValues) {
  clear_schedule_cache();  // every thread schedules the graph while the others do: a miss raced by hits
  const float k = fresh_value();
  std::vector<std::vector<float>> got(kThreads);
  on_threads([&](int i) {
    for (int round = 0; round < 10; round++) {
      Tensor x = Tensor(std::vector<float>{float(i), float(round), 1.f, 2.f}).realize();
      got[i] = ((x + k) * 2.f).tolist<float>();
      std::vector<float> want{2 * (i + k), 2 * (round + k), 2 * (1 + k), 2 * (2 + k)};
      if (got[i] != want) throw std::runtime_error("thread " + std::to_string(i) + " round " + std::to_string(round) + ": wrong values");
    }
  });
  for (int i = 0; i < kThreads; i++) EXPECT_EQ(got[i], (std::vector<float>{2 * (i + k), 2 * (9 + k), 2 * (1 + k), 2 * (2 + k)}));
}

TEST(Threads, ClearingTheScheduleCacheWhileThreeThreadsHitItLeavesTheirSchedulesIntact) {
  const float k = fresh_value();
  std::atomic<int> finished{0};
  on_threads([&](int i) {
    if (i == 0) {  // clears until the others are done: a hit being resolved must outlive its entry
      for (int n = 0; finished < kThreads - 1 || n < 20; n++) {
        clear_schedule_cache();
        std::this_thread::yield();
      }
      return;
    }
    for (int round = 0; round < 30; round++) {
      Tensor x = Tensor(std::vector<float>{float(i), float(round)}).realize();
      if ((x - k).tolist<float>() != std::vector<float>{i - k, round - k})
        throw std::runtime_error("thread " + std::to_string(i) + " round " + std::to_string(round) + ": wrong values");
    }
    finished++;
  });
  EXPECT_EQ(finished.load(), kThreads - 1);
}

TEST(Threads, FourThreadsAssignIncrementingTheirOwnBuffer200TimesEndWithExactCounts) {
  std::vector<std::vector<int32_t>> got(kThreads);
  on_threads([&](int i) {
    Tensor counter = Tensor(std::vector<int32_t>{i, 10 * i, 0}).realize();
    for (int n = 0; n < 200; n++) counter.assign(counter + 1).realize();
    got[i] = counter.tolist<int32_t>();
  });
  for (int i = 0; i < kThreads; i++) EXPECT_EQ(got[i], (std::vector<int32_t>{i + 200, 10 * i + 200, 200})) << "thread " << i;
}

TEST(Threads, TensorsCreatedAndDestroyedOnTwoThreadsWhileTwoOthersRealizeKeepEveryValue) {
  std::atomic<bool> done{false};
  std::atomic<int> churned{0};
  std::vector<int> realized(kThreads, 0);
  on_threads([&](int i) {
    if (i < 2) {  // realizers: a chain of lazy ops per round, read back
      for (int round = 0; round < 40; round++) {
        Tensor x = Tensor(std::vector<float>{float(round), float(i)}).realize();
        Tensor y = (x * 3.f + 1.f) * 2.f;
        std::vector<float> v = y.tolist<float>();
        if (v != std::vector<float>{6.f * round + 2.f, 6.f * i + 2.f})
          throw std::runtime_error("realizer " + std::to_string(i) + " round " + std::to_string(round) + ": wrong values");
        realized[i]++;
      }
      done = true;
    } else {  // churners: lazy tensors made and dropped, registered and unregistered, until the realizers finish
      std::mt19937 rng(static_cast<unsigned>(i));
      for (int n = 0; !done || n < 50; n++) {
        std::vector<Tensor> held;
        for (int j = 0; j < 8; j++) held.push_back(Tensor(std::vector<float>{float(rng() % 100)}) + float(j));
        held.resize(rng() % held.size());  // some die now, the rest at the end of the round
        if (n % 10 == 0) held.push_back(Tensor(std::vector<float>{1.f}).realize());
        churned++;
      }
    }
  });
  EXPECT_EQ(realized[0], 40);
  EXPECT_EQ(realized[1], 40);
  EXPECT_GE(churned.load(), 100);
}

// Two threads build the same lazy value from one shared, realized tensor: hash-consing makes it one graph, so each
// thread's realize rewrites the other's tensor too. Each must still read its own value, and neither runs a store
// twice.
TEST(Threads, TwoThreadsRealizingTheSameLazyValueOfASharedTensorBothReadIt) {
  const float k = fresh_value();
  Tensor shared = Tensor(std::vector<float>{1.f, 2.f, 3.f}).realize();
  std::vector<std::vector<float>> got(kThreads);
  on_threads([&](int i) {
    for (int round = 0; round < 20; round++) {  // one graph every round: compiled once, rebuilt and realized again
      Tensor y = shared * k + 1.f;
      got[i] = y.tolist<float>();
      if (got[i] != std::vector<float>{k + 1, 2 * k + 1, 3 * k + 1})
        throw std::runtime_error("thread " + std::to_string(i) + " round " + std::to_string(round) + ": wrong values");
    }
  });
  EXPECT_EQ(shared.tolist<float>(), (std::vector<float>{1.f, 2.f, 3.f}));
}

}  // namespace
}  // namespace doorbell
