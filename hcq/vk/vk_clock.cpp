// A VulkanDevice's clock against the host's: by VK_EXT_calibrated_timestamps where the device has it, else by
// brackets around submitted timestamps (hcq/clock_calibration.h; firmware-notes/vulkan-device.md §8).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "hcq/vk/vk_device.h"
#include "hcq/wait_primitives.h"

namespace doorbell::vk {

ClockCalibration VulkanDevice::clock_calibration() {
  {
    std::lock_guard lock(clock_mutex_);
    if (clock_ && !calibrated_timestamps_) return *clock_;
  }
  if (calibrated_timestamps_) {
    // One call samples both clocks; maxDeviation bounds the error (VK_EXT_calibrated_timestamps).
    auto get = reinterpret_cast<PFN_vkGetCalibratedTimestampsEXT>(vkGetDeviceProcAddr(device_, "vkGetCalibratedTimestampsEXT"));
    VkCalibratedTimestampInfoEXT infos[2] = {{VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, nullptr, VK_TIME_DOMAIN_DEVICE_EXT},
                                             {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, nullptr, VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT}};
    uint64_t stamps[2] = {0, 0}, deviation = 0;
    if (get != nullptr && get(device_, 2, infos, stamps, &deviation) == VK_SUCCESS) {
      ClockCalibration c;
      const auto device_ns = static_cast<int64_t>(static_cast<double>(stamps[0] & timestamp_mask_) * props_.limits.timestampPeriod);
      c.offset_ns = device_ns - static_cast<int64_t>(stamps[1]);
      c.uncertainty_ns = static_cast<int64_t>(deviation);
      c.samples = 1;
      std::lock_guard lock(clock_mutex_);
      clock_ = c;
      return c;
    }
  }
  return calibrate_by_brackets();
}

// Brackets: host clock, a submitted timestamp (a signal's query), host clock once it is seen.
ClockCalibration VulkanDevice::calibrate_by_brackets(int tries) {
  if (tries < 1) throw std::invalid_argument(name() + ": clock calibration with " + std::to_string(tries) + " tries; expected at least 1");
  Signal* clock_signal;
  {
    std::lock_guard lock(clock_mutex_);
    if (clock_signal_ == nullptr) clock_signal_ = &new_signal("clock calibration");
    clock_signal = clock_signal_;
  }
  std::vector<ClockSample> samples;
  for (int i = 0; i < tries; i++) {
    const uint64_t target = clock_signal->value() + 1;
    ClockSample s;
    s.host_before_ns = monotonic_ns();
    HWQueue().signal(*clock_signal, target).submit(*this);
    clock_signal->wait(target);
    s.host_after_ns = monotonic_ns();
    s.device_ns = clock_signal->timestamp();
    samples.push_back(s);
  }
  const ClockCalibration c = calibrate_from(samples, std::max<int64_t>(1, std::llround(props_.limits.timestampPeriod)));
  std::lock_guard lock(clock_mutex_);
  clock_ = c;
  return c;
}

int64_t VulkanDevice::host_time_ns(uint64_t device_ns) { return clock_calibration().host_ns(device_ns); }

}  // namespace doorbell::vk
