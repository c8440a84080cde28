// A queue bound to a VulkanDevice (hcq/device.h bind): its batches recorded once into command buffers of their own,
// with their own argument blocks (host-visible memory), query pool and the host-visible block its command buffers copy
// the query results to, submitted as they are by submit_bound (vk_bound_queue.cpp). patch_value changes only the
// submit-time semaphore value; patch_buffer/patch_scalar rewrite one word of an argument block; patch_copy records the
// copy's batch again. A bound queue may outlive its device: the shared registry says whether the device is still there
// to take back what the queue holds.
#pragma once
#include <vulkan/vulkan.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <unordered_set>
#include <vector>

#include "hcq/gpu_bound_queue.h"
#include "hcq/vk/vk_device.h"
#include "hcq/vk/vk_recording.h"

namespace doorbell::vk {

struct BoundRegistry {
  std::mutex mu;
  VulkanDevice* device = nullptr;  // null once the device is gone
  std::unordered_set<VulkanBoundQueue*> live;
};

class VulkanBoundQueue final : public GpuBoundQueue {
 public:
  std::shared_ptr<BoundRegistry> registry;
  std::vector<VkBatch> batches;
  VkQueryPool pool = VK_NULL_HANDLE;
  uint32_t query_count = 0;
  uint64_t stamps_address = 0;            // a block of the host-visible heap: the queries' copied results (0: none)
  uint8_t* stamps_host = nullptr;
  uint64_t args_address = 0;              // a block of the device's host-visible heap (0: no execs)
  std::vector<uint8_t*> arg_host;         // per command: its argument block (execs)
  std::vector<uint64_t> arg_address;

  ~VulkanBoundQueue() override {
    std::lock_guard lock(registry->mu);
    if (registry->device == nullptr) return;  // the device freed what this queue owned when it went
    registry->live.erase(this);
    registry->device->retire_bound(*this);
  }

  size_t patch_value(size_t command, uint64_t value) override {
    // The value is the submit-time VkTimelineSemaphoreSubmitInfo value: nothing recorded changes.
    return BoundQueue::patch_value(command, value);
  }
  size_t patch_buffer(size_t command, size_t slot, void* buffer) override {
    wait_for_previous_run("patch_buffer");
    device()->check_buffer_address(reinterpret_cast<uintptr_t>(buffer), "patch_buffer");
    BoundQueue::patch_buffer(command, slot, buffer);
    return store_word(arg_host[command] + 8 * slot, reinterpret_cast<uintptr_t>(buffer));
  }
  size_t patch_scalar(size_t command, size_t slot, int64_t value) override {
    wait_for_previous_run("patch_scalar");
    BoundQueue::patch_scalar(command, slot, value);
    return store_word(arg_host[command] + 8 * (uint64_t{commands[command].buffers_count} + slot), static_cast<uint64_t>(value));
  }
  // The addresses are inside the recorded vkCmdCopyBuffer (buffer handles and offsets): the command buffer of the
  // copy's batch is recorded again. Returns the commands re-recorded: 1, or 0 when nothing changed.
  size_t patch_copy(size_t command, void* dst, const void* src) override {
    wait_for_previous_run("patch_copy");
    VulkanDevice* d = device();
    d->locate(reinterpret_cast<uintptr_t>(dst), commands[command].bytes, "patch_copy destination");
    d->locate(reinterpret_cast<uintptr_t>(src), commands[command].bytes, "patch_copy source");
    if (BoundQueue::patch_copy(command, dst, src) == 0) return 0;
    for (VkBatch& b : batches)
      if (command >= b.first && command < b.end) d->rerecord(*this, b);
    return 1;
  }

 private:
  VulkanDevice* device() const {
    if (registry->device == nullptr) throw std::logic_error("HWQueue: the queue was bound to " + device_life->name + ", which has been destroyed");
    return registry->device;
  }
  static size_t store_word(uint8_t* at, uint64_t value) {
    uint64_t old;
    std::memcpy(&old, at, 8);
    if (old == value) return 0;
    std::memcpy(at, &value, 8);
    return 1;
  }
};

}  // namespace doorbell::vk
