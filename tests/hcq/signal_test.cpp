// Signal: the 16-byte layout, timeline wait semantics, and the timeout error.
#include <gtest/gtest.h>

#include <cstddef>
#include <stdexcept>
#include <atomic>
#include <thread>

#include "hcq/signal.h"
#include "hcq/wait_primitives.h"

namespace doorbell {
namespace {

using namespace std::chrono_literals;

TEST(Signal, LayoutIsValueAtZeroAndTimestampAtEight) {
  EXPECT_EQ(sizeof(SignalMemory), 16u);
  EXPECT_EQ(offsetof(SignalMemory, value), 0u);
  EXPECT_EQ(offsetof(SignalMemory, timestamp), 8u);
  EXPECT_EQ(alignof(SignalMemory), 16u);
}

TEST(Signal, SetStoresValueAndATimestamp) {
  Signal s("CPU", "s", 7);
  EXPECT_EQ(s.value(), 7u);
  EXPECT_EQ(s.timestamp(), 0u);
  s.set(9);
  EXPECT_EQ(s.value(), 9u);
  EXPECT_GT(s.timestamp(), 0u);
  s.write_timestamp(1234);
  EXPECT_EQ(s.timestamp(), 1234u);
  EXPECT_EQ(s.value(), 9u);
}

TEST(Signal, WaitPassesAtAndAboveTarget) {
  Signal s("CPU", "s", 5);
  EXPECT_NO_THROW(s.wait(5, 10ms));
  EXPECT_NO_THROW(s.wait(3, 10ms));
  EXPECT_NO_THROW(s.wait(0, 10ms));
  EXPECT_TRUE(s.wait_for(5, 0ns));
}

TEST(Signal, WaitUsesAll64Bits) {
  const uint64_t big = (uint64_t{1} << 40) + 3;
  Signal s("CPU", "s", big);
  EXPECT_NO_THROW(s.wait(big, 10ms));
  EXPECT_FALSE(s.wait_for(big + 1, 1ms));
  // 3 in the low half is below the target's low half, yet the 64-bit value is far above it.
  EXPECT_TRUE(s.wait_for(uint64_t{1} << 39, 0ns));
}

TEST(Signal, WaitTimesOutWithNamedError) {
  Signal s("CPU", "timeline", 3);
  try {
    s.wait(5, 50ms);
    FAIL() << "expected a timeout";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "CPU: signal 'timeline' did not reach 5 within 50 ms; last value 3");
  }
}

TEST(Signal, WaitForReportsLastValueSeen) {
  Signal s("CPU", "s", 4);
  uint64_t last = 0;
  EXPECT_FALSE(s.wait_for(10, 2ms, &last));
  EXPECT_EQ(last, 4u);
}

TEST(Signal, WaitWakesWhenAnotherThreadSets) {
  Signal s("CPU", "s", 0);
  // Sleep well past the spin phase so the waiter is asleep on the futex when the value arrives.
  std::thread setter([&] {
    std::this_thread::sleep_for(30ms);
    s.set(1);
    std::this_thread::sleep_for(5ms);
    s.set(2);
  });
  EXPECT_NO_THROW(s.wait(2, 5000ms));
  EXPECT_EQ(s.value(), 2u);
  setter.join();
}

TEST(Signal, ProgressRestartsTheTimeout) {
  Signal s("CPU", "s", 0);
  // Each step comes within the 200 ms timeout of the previous one, while the whole takes longer than 200 ms.
  std::thread setter([&] {
    for (uint64_t v = 1; v <= 6; ++v) {
      std::this_thread::sleep_for(50ms);
      s.set(v);
    }
  });
  EXPECT_NO_THROW(s.wait(6, 200ms));
  setter.join();
}

// What the sleep seam saw: the test sets the signal from inside it, as another thread could between the waiter's
// last check and its sleep, then records whether the futex word still holds what the sleep expects (if it did, the
// kernel would put the waiter to sleep after the only wake-up already went by).
struct RaceAtSleep {
  uint64_t set_to = 0;
  int calls = 0;
  bool word_moved = false;
};

void set_just_before_sleep(const Signal& signal, const std::atomic<uint32_t>& word, uint32_t expected, void* context) {
  auto* race = static_cast<RaceAtSleep*>(context);
  if (race->calls++ == 0) const_cast<Signal&>(signal).set(race->set_to);
  race->word_moved = word.load() != expected;
}

// Runs a wait for `target` on a signal at `from` that is set to `target` between its last check and its sleep.
RaceAtSleep wait_across_set_before_sleep(uint64_t from, uint64_t target) {
  Signal s("CPU", "s", from);
  RaceAtSleep race{.set_to = target};
  Signal::set_sleep_hook_for_testing(set_just_before_sleep, &race);
  // The timeout only bounds a regression (the waiter would sleep through the change); the checks are on the seam.
  const bool reached = s.wait_for(target, 2s);
  Signal::set_sleep_hook_for_testing(nullptr, nullptr);
  EXPECT_TRUE(reached);
  return race;
}

TEST(Signal, ChangeOfOnlyTheHighHalfJustBeforeTheWaiterSleepsStopsTheSleep) {
  // 5 -> 2^32 + 5: the low 32 bits stay 5. A futex on the low half let the waiter sleep through this change.
  const RaceAtSleep race = wait_across_set_before_sleep(5, (uint64_t{1} << 32) + 5);
  EXPECT_EQ(race.calls, 1);
  EXPECT_TRUE(race.word_moved);
}

TEST(Signal, CarryIntoTheHighHalfJustBeforeTheWaiterSleepsStopsTheSleep) {
  const RaceAtSleep race = wait_across_set_before_sleep(0xFFFF'FFFFu, uint64_t{1} << 32);
  EXPECT_EQ(race.calls, 1);
  EXPECT_TRUE(race.word_moved);
}

TEST(Signal, EveryChangeAboveTheLowHalfWakesAWaiterOnAnotherThread) {
  // Steps of 2^32 leave the low half unchanged; each one must wake the waiter, which waits for the next step. The
  // setter waits for the waiter to announce itself before each step, so every step meets a waiter at some point
  // of its spin or sleep.
  Signal s("CPU", "s", 0);
  Signal ack("CPU", "ack", 0);
  constexpr uint64_t kStep = uint64_t{1} << 32;
  constexpr uint64_t kSteps = 200;
  std::thread waiter([&] {
    for (uint64_t i = 1; i <= kSteps; ++i) {
      ack.set(i);
      s.wait(i * kStep, 10'000ms);
    }
  });
  for (uint64_t i = 1; i <= kSteps; ++i) {
    ack.wait(i, 10'000ms);
    s.set(i * kStep);
  }
  waiter.join();
  EXPECT_EQ(s.value(), kSteps * kStep);
}

TEST(Signal, SetBelowTheCurrentValueThrowsNamingTheSignalAndBothValues) {
  Signal s("CPU", "done", 7);
  try {
    s.set(6);
    FAIL() << "expected invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "CPU: signal 'done' cannot be set to 6: its value is 7 and values only grow");
  }
  EXPECT_EQ(s.value(), 7u);
  EXPECT_EQ(s.timestamp(), 0u);  // a refused set writes nothing
  EXPECT_NO_THROW(s.set(7));     // the same value again is not a step back
  EXPECT_NO_THROW(s.set(8));
  EXPECT_EQ(s.value(), 8u);
}

TEST(Signal, SetAbove32BitsThenBelowIsRefused) {
  Signal s("CPU", "s", 0);
  s.set(uint64_t{1} << 32);
  EXPECT_THROW(s.set(0xFFFF'FFFFu), std::invalid_argument);
  EXPECT_EQ(s.value(), uint64_t{1} << 32);
}

TEST(Signal, TickTimestampsReadAsNanosecondsAndHostStampsAreStoredInTicks) {
  // A 100 MHz counter (AMD): the device writes ticks at +8, timestamp() reports 10 ns per tick.
  SignalMemory memory;
  SignalPlacement p;
  p.memory = &memory;
  p.device_address = 0x1000;
  p.device_wakes_waiters = false;
  p.ns_per_tick_num = 10;
  p.ns_per_tick_den = 1;
  Signal s("AMD", "ticks", p);
  memory.timestamp.store(123'456'789'012ull);  // what RELEASE_MEM's GPU clock counter would leave
  EXPECT_EQ(s.timestamp(), 1'234'567'890'120ull);
  // Large counters do not overflow on the way: 2^62 ticks are 10 * 2^62 ns (beyond 64 bits only after the scale).
  memory.timestamp.store(uint64_t{1} << 59);
  EXPECT_EQ(s.timestamp(), (uint64_t{1} << 59) * 10);
  s.write_timestamp(5'000);  // a host-written stamp goes in as ticks and reads back as the same ns
  EXPECT_EQ(memory.timestamp.load(), 500u);
  EXPECT_EQ(s.timestamp(), 5'000u);
  const int64_t before = monotonic_ns();
  s.set(1);
  EXPECT_NEAR(static_cast<double>(s.timestamp()), static_cast<double>(before), 1e8);
  EXPECT_LT(memory.timestamp.load(), static_cast<uint64_t>(before));  // stored in ticks, a tenth of the ns
}

TEST(Signal, AZeroTickFractionIsRefusedNamingTheSignal) {
  SignalPlacement p;
  p.ns_per_tick_den = 0;
  try {
    Signal s("AMD", "bad", p);
    FAIL() << "a signal with a zero tick denominator was made";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("AMD: signal 'bad' with a timestamp tick of 1/0 ns"), std::string::npos) << e.what();
  }
}

TEST(Signal, APollingWaiterSleepsInTheDevicesInterruptWait) {
  SignalMemory memory;
  SignalPlacement p;
  p.memory = &memory;
  p.device_wakes_waiters = false;
  static std::atomic<int> calls{0};
  calls = 0;
  p.interrupt_wait = [](const void* context) {
    // The device's interrupt: here the "GPU" writes the value the waiter wants on the third sleep.
    if (++calls == 3) static_cast<SignalMemory*>(const_cast<void*>(context))->value.store(5);
  };
  p.interrupt_context = &memory;
  Signal s("AMD", "irq", p);
  EXPECT_TRUE(s.wait_for(5, 10s));
  EXPECT_GE(calls.load(), 3);
}

// A signal whose value its device keeps (a Vulkan timeline semaphore): here a fake "driver" with a value, a count of
// host signals and a timestamp in 10 ns ticks.
struct FakeSemaphore {
  std::atomic<uint64_t> value{0};
  std::atomic<int> host_signals{0};
  uint64_t stamp_ticks = 0;
};

SignalPlacement kept_by(FakeSemaphore& sem) {
  SignalPlacement p;
  p.device_wakes_waiters = false;
  p.read_value = [](const void* c) { return static_cast<const FakeSemaphore*>(c)->value.load(); };
  p.write_value = [](const void* c, uint64_t v) {
    auto* s = static_cast<FakeSemaphore*>(const_cast<void*>(c));
    s->value.store(v);
    ++s->host_signals;
  };
  p.read_timestamp = [](const void* c) { return static_cast<const FakeSemaphore*>(c)->stamp_ticks; };
  p.value_context = &sem;
  p.ns_per_tick_num = 10;
  p.interrupt_wait = [](const void* c) {  // the "GPU" signals 7 while the waiter sleeps
    static_cast<FakeSemaphore*>(const_cast<void*>(c))->value.store(7);
  };
  p.interrupt_context = &sem;
  return p;
}

TEST(Signal, ADeviceKeptValueIsReadSetAndWaitedThroughTheDevicesHooks) {
  FakeSemaphore sem;
  Signal s("VK", "semaphore", kept_by(sem));
  EXPECT_EQ(s.value(), 0u);
  s.set(3);
  EXPECT_EQ(sem.value.load(), 3u);
  EXPECT_EQ(s.value(), 3u);
  EXPECT_EQ(sem.host_signals.load(), 1);
  s.set(3);  // the same value again: allowed, and the device is not asked to signal it twice
  EXPECT_EQ(sem.host_signals.load(), 1);
  EXPECT_THROW(s.set(2), std::invalid_argument);
  EXPECT_TRUE(s.wait_for(7, 10s));  // reached through the device's value, polled between interrupt waits
  sem.stamp_ticks = 12;
  EXPECT_EQ(s.timestamp(), 120u);  // the device's stamp, scaled from its ticks; not the word at +8
}

TEST(Signal, ADeviceKeptValueWithoutBothHooksOrWithWakingWaitersIsRefused) {
  FakeSemaphore sem;
  SignalPlacement only_read = kept_by(sem);
  only_read.write_value = nullptr;
  EXPECT_THROW(Signal("VK", "half", only_read), std::invalid_argument);
  SignalPlacement waking = kept_by(sem);
  waking.device_wakes_waiters = true;
  EXPECT_THROW(Signal("VK", "waking", waking), std::invalid_argument);
}

}  // namespace
}  // namespace doorbell
