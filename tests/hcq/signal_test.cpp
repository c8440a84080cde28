// Signal: the 16-byte layout, timeline wait semantics, and the timeout error.
#include <gtest/gtest.h>

#include <cstddef>
#include <stdexcept>
#include <thread>

#include "hcq/signal.h"

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

}  // namespace
}  // namespace doorbell
