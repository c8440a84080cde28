// The signals of a VulkanDevice: each is a timeline VkSemaphore whose value the driver keeps (hcq/signal.h
// SignalPlacement::read_value/write_value), plus the value rules Vulkan adds: a queue signal must raise the value
// (VUID-VkSubmitInfo-pSignalSemaphores-03242) and a host signal must stay below every pending queue signal
// (VUID-VkSemaphoreSignalInfo-value-03259), so each signal keeps the queue signals still pending and the largest value
// scheduled. vk_semaphore_signals.cpp also holds the host bridge for foreign signals (a thread that waits for another
// device's signal and signals a bridge semaphore, or the reverse). firmware-notes/vulkan-device.md §4.
#pragma once
#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>

namespace doorbell::vk {

class VulkanDevice;

// A Signal of this device: its timeline semaphore and the timestamps read back for it.
struct VkSignalState {
  VulkanDevice* device = nullptr;
  VkSemaphore semaphore = VK_NULL_HANDLE;
  std::string device_name;
  std::atomic<uint64_t> timestamp_ticks{0};
  // Queue signals submitted and not yet reached, and the largest value signalled or scheduled by anyone: the
  // VUID-VkSubmitInfo-pSignalSemaphores-03242 / VUID-VkSemaphoreSignalInfo-value-03259 bookkeeping.
  std::mutex mu;
  std::multiset<uint64_t> pending;
  uint64_t scheduled = 0;
  // Values that submitted batches wait for (those above the counter matter): a host set() steps through them
  // (VulkanDevice::write_semaphore, firmware-notes/vulkan-device.md §3).
  std::set<uint64_t> waited;
};

// A signal's timestamp only moves forward (a stale slot or a late read must not move it back).
inline void store_later(VkSignalState& s, uint64_t ticks) {
  uint64_t old = s.timestamp_ticks.load(std::memory_order_relaxed);
  while (ticks > old && !s.timestamp_ticks.compare_exchange_weak(old, ticks, std::memory_order_acq_rel)) {
  }
}

}  // namespace doorbell::vk
