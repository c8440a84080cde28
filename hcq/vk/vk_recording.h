// Turning an HWQueue into what Vulkan submits: batches (semaphore waits, one command buffer, semaphore signals; a
// wait starts a new batch, a signal ends one), each recorded with the barriers of HCQ order, dispatches with their
// argument blocks, vkCmdCopyBuffer copies and timestamp queries in the slots assigned to signal and timestamp
// commands, whose results each command buffer copies to host-visible memory (vk_recording.cpp;
// firmware-notes/vulkan-device.md §5, §8). VkSubmission is what a submission leaves in flight until the device's
// progress semaphore passes it.
#pragma once
#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "hcq/signal.h"

namespace doorbell::vk {

struct VkSignalState;

// One timestamp query's result as vkCmdCopyQueryPoolResults writes it with VK_QUERY_RESULT_64_BIT |
// VK_QUERY_RESULT_WITH_AVAILABILITY_BIT: the 64-bit value, then a 64-bit availability word.
inline constexpr uint64_t kStampBytes = 16;

// A run of commands that Vulkan submits as one VkSubmitInfo: semaphore waits, one command buffer, semaphore signals.
struct VkBatch {
  std::vector<size_t> waits;     // wait commands (their values are read at submit time: patch_value)
  std::vector<size_t> signals;   // signal commands
  size_t first = 0, end = 0;     // the commands recorded into `cb` (waits and signals included: they record nothing or a query)
  VkCommandBuffer cb = VK_NULL_HANDLE;
  std::vector<std::pair<size_t, uint32_t>> queries;  // (signal or timestamp command, its query slot)
};

// What a submission leaves in flight until the progress semaphore reaches `count`.
struct VkSubmission {
  uint64_t count = 0;
  struct Stamp {
    VkSignalState* state;
    const uint8_t* host;  // the query's copied result: {ticks, availability} (kStampBytes)
  };
  std::vector<Stamp> stamps;
  std::vector<VkCommandBuffer> command_buffers;  // recycled once done (unbound submissions)
  std::vector<std::pair<Signal*, uint64_t>> waits;  // for blockage()
};

// A query result that vkCmdCopyQueryPoolResults wrote (64-bit value, then availability): the ticks once available.
void read_stamp(const VkSubmission::Stamp& st, uint64_t mask);

}  // namespace doorbell::vk
