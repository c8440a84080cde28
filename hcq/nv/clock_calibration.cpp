#include "hcq/nv/clock_calibration.h"

#include <stdexcept>
#include <string>

namespace doorbell::nv {

ClockCalibration calibrate_from(std::span<const ClockSample> samples) {
  if (samples.empty()) throw std::invalid_argument("NV clock calibration: no samples; expected at least one bracket");
  const ClockSample* best = nullptr;
  for (const ClockSample& s : samples) {
    if (s.host_after_ns < s.host_before_ns)
      throw std::invalid_argument("NV clock calibration: a bracket from " + std::to_string(s.host_before_ns) + " to " +
                                  std::to_string(s.host_after_ns) + " ns goes backwards; expected host reads in order");
    if (best == nullptr || s.host_after_ns - s.host_before_ns < best->host_after_ns - best->host_before_ns) best = &s;
  }
  const int64_t width = best->host_after_ns - best->host_before_ns;
  ClockCalibration c;
  // stamp - midpoint, in unsigned arithmetic: a GPU's stamp (ns since 1970) and the host's clock differ by more than
  // either fits beside the other in a double's 53 bits.
  const int64_t midpoint = best->host_before_ns + width / 2;
  c.offset_ns = static_cast<int64_t>(best->device_ns - static_cast<uint64_t>(midpoint));
  c.uncertainty_ns = width - width / 2;  // covers both ends when the width is odd
  c.samples = static_cast<int>(samples.size());
  return c;
}

}  // namespace doorbell::nv
