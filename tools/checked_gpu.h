// What `doorbell check` needs of a GPU beyond the Device contract (hcq/device.h): memory it can fill from the host and
// hand to a queue by address, a calibration of its timer against the host's clock, and its identity. One adapter per
// GPU backend (NV, AMD, VK), so the checks themselves are written once against this.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hcq/clock_calibration.h"
#include "hcq/device.h"

namespace doorbell {

// A check of `doorbell check` (tools/device_check.cpp, by its printed name) that this device cannot pass as NV does,
// and why (with the public source of the rule): the check still runs, and its failure is reported as this difference
// instead of a failure.
struct CheckDifference {
  std::string check;
  std::string reason;
};

// The name of the check that reads a queue's signal value from the signal's memory (tools/device_check.cpp).
inline constexpr const char* kSignalValueInMemory = "a queue's signal value is the word at +0 of the signal's memory";

struct CheckedMemory {
  uint8_t* cpu = nullptr;  // the host's mapping
  uint64_t va = 0;         // the address queues use
};

class CheckedGpu {
 public:
  virtual ~CheckedGpu() = default;
  virtual Device& device() = 0;
  // Device memory (`host_memory`: GPU-visible host memory instead) mapped for the host; free() lets it go.
  virtual CheckedMemory alloc(uint64_t bytes, bool host_memory = false) = 0;
  virtual void free(const CheckedMemory& memory) = 0;
  virtual ClockCalibration calibrate_clock() = 0;
  virtual bool emulated() const = 0;
  virtual std::string fault_report() const = 0;
  // "NV, NVIDIA H200, sm_90, hardware, driver 580.65.06": the check's first line after "device: ".
  virtual std::string describe() const = 0;
  // The report's "device" object's fields after "name" (", \"gpu\": ..., \"emulated\": false").
  virtual std::string identity_json() const = 0;
  virtual std::vector<CheckDifference> documented_differences() const { return {}; }
};

// The adapter for `device` (an NV, AMD or VK device; `index`: which GPU of its driver, for the model name), which must
// outlive it. Throws std::invalid_argument naming the device when its backend has no adapter (VK: in a build without
// Vulkan).
std::unique_ptr<CheckedGpu> checked_gpu(Device& device, int index = 0);

}  // namespace doorbell
