#include "hcq/clock_calibration.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace doorbell {

namespace {

// The offsets a try allows, [stamp - after, stamp - before], in unsigned arithmetic: a GPU's stamp (ns since 1970) and
// the host's clock are too far apart for a double's 53 bits to keep nanoseconds.
struct Interval {
  int64_t lo, hi;
};
Interval offsets_allowed(const ClockSample& s, int64_t tick_ns) {
  return {static_cast<int64_t>(s.device_ns - static_cast<uint64_t>(s.host_after_ns)),
          static_cast<int64_t>(s.device_ns - static_cast<uint64_t>(s.host_before_ns)) + (tick_ns - 1)};
}

}  // namespace

ClockCalibration calibrate_from(std::span<const ClockSample> samples, int64_t tick_ns) {
  if (samples.empty()) throw std::invalid_argument("clock calibration: no samples; expected at least one bracket");
  if (tick_ns < 1) throw std::invalid_argument("clock calibration: a timer tick of " + std::to_string(tick_ns) + " ns; expected at least 1");
  Interval overlap = offsets_allowed(samples.front(), tick_ns), narrowest = overlap;
  for (const ClockSample& s : samples) {
    if (s.host_after_ns < s.host_before_ns)
      throw std::invalid_argument("clock calibration: a bracket from " + std::to_string(s.host_before_ns) + " to " +
                                  std::to_string(s.host_after_ns) + " ns goes backwards; expected host reads in order");
    const Interval i = offsets_allowed(s, tick_ns);
    overlap = {std::max(overlap.lo, i.lo), std::min(overlap.hi, i.hi)};
    if (i.hi - i.lo < narrowest.hi - narrowest.lo) narrowest = i;
  }
  const Interval best = overlap.lo <= overlap.hi ? overlap : narrowest;
  const int64_t width = best.hi - best.lo;
  ClockCalibration c;
  c.offset_ns = best.lo + width / 2;
  c.uncertainty_ns = width - width / 2;  // covers both ends when the width is odd
  c.samples = static_cast<int>(samples.size());
  return c;
}

}  // namespace doorbell
