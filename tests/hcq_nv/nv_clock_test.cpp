// The NV device's clock calibration (hcq/clock_calibration.h, NvDevice::clock_calibration): the GPU stamps with its
// own timer (the emulated one too: mockgpu/nv/ptimer.h), and the device finds that timer's offset from the host's
// monotonic_ns with a bound, from brackets of host clock reads around timestamped releases. Nothing here asserts on
// time: only that the known offset lies within the bound the calibration states, and orderings.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "hcq/clock_calibration.h"
#include "hcq/hw_queue.h"
#include "hcq/nv/nv_device.h"
#include "hcq/wait_primitives.h"
#include "mockgpu/nv/mock_nv_seam.h"

namespace doorbell::nv {
namespace {

// A GPU timer far from the host's clock and not a round number, so an offset off by a sign or a unit shows.
constexpr int64_t kPtimerOffset = 1'234'567'890'123'456'789;

std::unique_ptr<NvDevice> open_with_ptimer_offset(int64_t offset) {
  mockgpu::nv::MockGpuConfig config;
  config.ptimer_offset_ns = offset;
  return NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>(config));
}

TEST(NvClock, CalibrationFindsTheGpuTimersOffsetWithinItsStatedBound) {
  std::unique_ptr<NvDevice> d = open_with_ptimer_offset(kPtimerOffset);
  const int64_t t0 = monotonic_ns();
  const ClockCalibration c = d->calibrate_clock();
  const int64_t t1 = monotonic_ns();
  EXPECT_EQ(c.samples, 2 * NvDevice::kClockTries) << "tries on the compute and the copy channel";
  EXPECT_LE(c.offset_ns - c.uncertainty_ns, kPtimerOffset);
  EXPECT_GE(c.offset_ns + c.uncertainty_ns, kPtimerOffset);
  // Half the tightest bracket, and every bracket lay inside the call.
  EXPECT_GE(c.uncertainty_ns, 0);
  EXPECT_LE(c.uncertainty_ns, (t1 - t0) / 2 + 1);
  // Kept until calibrated again.
  EXPECT_EQ(d->clock_calibration().offset_ns, c.offset_ns);
}

TEST(NvClock, AStampOnTheHostClockLiesBetweenTheHostReadsAroundItsSubmission) {
  // The emulator's default timer: the wall-clock epoch RM gives a Hopper GPU, ns since 1970.
  std::unique_ptr<NvDevice> d = NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>());
  Signal& s = d->new_signal("stamped");
  const ClockCalibration c = d->clock_calibration();  // measured on first use
  EXPECT_GT(c.offset_ns, int64_t{1'000'000'000}) << "the GPU's timer reads far from the host's monotonic clock";
  for (uint64_t v = 1; v <= 3; v++) {
    const int64_t before = monotonic_ns();
    HWQueue().signal(s, v).submit(*d);
    s.wait(v);
    const int64_t after = monotonic_ns();
    const int64_t at = d->host_time_ns(s.timestamp());
    EXPECT_GE(at, before - c.uncertainty_ns) << v;
    EXPECT_LE(at, after + c.uncertainty_ns) << v;
  }
}

TEST(NvClock, CalibrationTakesTheOverlapOfTheTriesBrackets) {
  // The offset lies in [stamp - after, stamp - before] of each try: [910, 1010] and [990, 1090], so in [990, 1010],
  // tighter than either try alone.
  const std::vector<ClockSample> samples = {{0, 1'010, 100}, {200, 1'290, 300}};
  const ClockCalibration c = calibrate_from(samples);
  EXPECT_EQ(c.offset_ns, 1'000);
  EXPECT_EQ(c.uncertainty_ns, 10);
  EXPECT_EQ(c.samples, 2);
}

TEST(NvClock, CalibrationFallsBackToTheNarrowestTryWhenTheTriesDisagree) {
  // [800, 1000], [1020, 1060] and [-2000, 2000] have no offset in common (a coarse timer, drift): the narrowest try,
  // the second, decides.
  const std::vector<ClockSample> samples = {{100, 1'100, 300}, {1'000, 2'060, 1'040}, {5'000, 7'000, 9'000}};
  const ClockCalibration c = calibrate_from(samples);
  EXPECT_EQ(c.offset_ns, 1'040);  // 2060 - midpoint 1020
  EXPECT_EQ(c.uncertainty_ns, 20);
  EXPECT_EQ(c.samples, 3);
  EXPECT_EQ(c.host_ns(2'060), 1'020);
  // An odd width: the bound covers both ends of the bracket.
  const std::vector<ClockSample> odd = {{0, 10, 5}};
  const ClockCalibration o = calibrate_from(odd);
  EXPECT_LE(o.offset_ns - o.uncertainty_ns, 10 - 5);
  EXPECT_GE(o.offset_ns + o.uncertainty_ns, 10 - 0);
}

TEST(NvClock, CalibrationAllowsForTheTimersTick) {
  // A timer of 32 ns steps stamped 1024 for an event in (1024, 1056): the bracket [1000, 1040] allows offsets from
  // 1024 - 1040 = -16 up to 1024 + 31 - 1000 = 55.
  const std::vector<ClockSample> samples = {{1'000, 1'024, 1'040}};
  const ClockCalibration c = calibrate_from(samples, 32);
  EXPECT_LE(c.offset_ns - c.uncertainty_ns, -16);
  EXPECT_GE(c.offset_ns + c.uncertainty_ns, 55);
  EXPECT_EQ(c.uncertainty_ns, 36);  // half of 71, rounded up
  EXPECT_THROW(calibrate_from(samples, 0), std::invalid_argument);
}

TEST(NvClock, CalibrationKeepsTheNanosecondsOfATimerSince1970) {
  // Stamps near 1.7e18 ns: a double's 53 bits would round them to 256 ns.
  const uint64_t stamp = 1'764'634'027'123'456'789ull;
  const std::vector<ClockSample> samples = {{1'000'000'001, stamp, 1'000'000'003}};
  const ClockCalibration c = calibrate_from(samples);
  EXPECT_EQ(c.host_ns(stamp), 1'000'000'002);
  EXPECT_EQ(c.host_ns(stamp + 7), 1'000'000'009);
}

TEST(NvClock, CalibrationRefusesNoSamplesAndBracketsThatGoBackwards) {
  EXPECT_THROW(calibrate_from({}), std::invalid_argument);
  const std::vector<ClockSample> backwards = {{500, 1'000, 400}};
  try {
    calibrate_from(backwards);
    FAIL() << "a bracket whose end precedes its start was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("from 500 to 400 ns goes backwards"), std::string::npos) << e.what();
  }
  std::unique_ptr<NvDevice> d = open_with_ptimer_offset(kPtimerOffset);
  EXPECT_THROW(d->calibrate_clock(0), std::invalid_argument);
}

}  // namespace
}  // namespace doorbell::nv
