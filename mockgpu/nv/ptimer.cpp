#include "mockgpu/nv/ptimer.h"

#include <time.h>

namespace doorbell::mockgpu::nv {
namespace {

int64_t clock_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

// RM's tmrSetCurrentTime_GH100 programs the timer from osGetSystemTime, which is ktime_get_real_ts64 (CLOCK_REALTIME)
// on Linux (ogkm timer_gh100.c:42-102, kernel-open/nvidia/os-interface.c:677-690).
PTimer::PTimer(std::optional<int64_t> offset_ns)
    : offset_ns_(offset_ns ? *offset_ns : clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC)) {}

uint64_t PTimer::now_ns() const { return static_cast<uint64_t>(clock_ns(CLOCK_MONOTONIC) + offset_ns_) / kPtimerTickNs * kPtimerTickNs; }

}  // namespace doorbell::mockgpu::nv
