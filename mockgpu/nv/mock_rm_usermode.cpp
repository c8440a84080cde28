#include "mockgpu/nv/mock_rm_usermode.h"

#include <atomic>
#include <thread>

#include "kernel-interface/nvidia/rm_classes.h"

namespace doorbell::mockgpu::nv {

namespace ki = doorbell::kernel_interface::nvidia;

UsermodeRegion::UsermodeRegion() : backing_(ki::NVC361_NV_USERMODE__SIZE, "doorbell-usermode") {
  std::atomic_ref<std::uint32_t>(*doorbell_register()).store(kNoDoorbell);
}

std::uint32_t* UsermodeRegion::doorbell_register() const {
  return reinterpret_cast<std::uint32_t*>(backing_.data() + ki::NVC361_NOTIFY_CHANNEL_PENDING);
}

std::optional<std::uint32_t> UsermodeRegion::take_doorbell() {
  const std::uint32_t token = std::atomic_ref<std::uint32_t>(*doorbell_register()).exchange(kNoDoorbell);
  if (token == kNoDoorbell) return std::nullopt;
  return token;
}

std::optional<std::uint32_t> UsermodeRegion::wait_doorbell(std::chrono::nanoseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (int spins = 0;; ++spins) {
    if (auto token = take_doorbell()) return token;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    // Spin briefly for latency, then back off so an idle GPU thread does not burn a core.
    if (spins < 1000) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

}  // namespace doorbell::mockgpu::nv
