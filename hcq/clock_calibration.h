// The offset between a GPU's timer and the host's clock (monotonic_ns), from brackets: the host reads its clock, a
// queue writes a timestamp (NV: a semaphore release stamps the GPU's PTIMER, firmware-notes/nvidia-hopper.md §18; AMD:
// RELEASE_MEM stamps the GPU clock counter, converted to ns), the host
// sees it and reads its clock again. The stamp was taken between the two reads, so the offset lies within
// [stamp - after, stamp - before] for every try; where the tries' intervals overlap, the overlap is the tightest
// bracket (a try whose GPU took the release at once bounds one side, a try whose host saw it at once the other), its
// middle the estimate and half its width the bound on the error. Intervals that do not overlap (a timer that ticks
// coarser than the brackets, or clocks that drifted) fall back to the narrowest single try. tinygrad takes the median
// of the midpoints of 40 tries per queue instead, which bounds nothing (tinygrad runtime/support/hcq.py:465-477).
#pragma once
#include <cstdint>
#include <span>

namespace doorbell {

// One try: host clock before the submission, the device's stamp, host clock once the stamp was seen.
struct ClockSample {
  int64_t host_before_ns = 0;
  uint64_t device_ns = 0;
  int64_t host_after_ns = 0;
};

struct ClockCalibration {
  int64_t offset_ns = 0;       // device clock - host clock
  int64_t uncertainty_ns = 0;  // the true offset is within offset_ns +- this: half the tightest bracket's width
  int samples = 0;             // tries it was chosen from
  int64_t host_ns(uint64_t device_ns) const { return static_cast<int64_t>(device_ns - static_cast<uint64_t>(offset_ns)); }
};

// The calibration from `samples` of a timer that counts in steps of `tick_ns` (each try's interval widened by
// tick_ns - 1 on its upper side): their intervals' overlap, else the narrowest. Throws std::invalid_argument for no
// samples, a tick below 1, or a sample whose host reads go backwards.
ClockCalibration calibrate_from(std::span<const ClockSample> samples, int64_t tick_ns = 1);

}  // namespace doorbell
