// The emulated GPU's timer (PTIMER): the nanoseconds a semaphore release with a timestamp writes. As on hardware it is
// the GPU's own clock, unrelated to the host's CLOCK_MONOTONIC: RM sets a Hopper GPU's timer to the wall-clock time
// (ns since 1970) when it starts the GPU, and it counts on from there (firmware-notes/nvidia-hopper.md §18). So by
// default the emulated timer is CLOCK_MONOTONIC plus CLOCK_REALTIME's lead over it, taken once when the GPU is made;
// a test sets the offset (MockGpuConfig::ptimer_offset_ns) to know what a calibration against the host must find.
// It counts in steps of kPtimerTickNs, as the GH100 timer's nanoseconds field is bits 31:5 of TIME_0 (§18).
#pragma once
#include <cstdint>
#include <optional>

namespace doorbell::mockgpu::nv {

inline constexpr uint64_t kPtimerTickNs = 32;

class PTimer {
 public:
  // `offset_ns`: PTIMER - CLOCK_MONOTONIC; unset: the wall-clock epoch, as RM sets it.
  explicit PTimer(std::optional<int64_t> offset_ns = std::nullopt);
  // The timer now, in nanoseconds, a multiple of kPtimerTickNs (rounded down).
  uint64_t now_ns() const;
  // What it reads ahead of CLOCK_MONOTONIC (for tests of the emulator and of a calibration).
  int64_t offset_ns() const { return offset_ns_; }

 private:
  int64_t offset_ns_;
};

}  // namespace doorbell::mockgpu::nv
