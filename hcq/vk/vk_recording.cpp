#include "hcq/vk/vk_recording.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <string>

#include "compiler/spirv/spirv_kernel_abi.h"
#include "hcq/vk/vk_check.h"
#include "hcq/vk/vk_device.h"
#include "hcq/vk/vk_semaphore_signals.h"

namespace doorbell::vk {

namespace {

std::string dims_text(const std::array<uint32_t, 3>& d) {
  return "[" + std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]) + "]";
}

void full_barrier(VkCommandBuffer cb, VkAccessFlags dst_access, VkPipelineStageFlags dst_stage) {
  VkMemoryBarrier b = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  b.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  b.dstAccessMask = dst_access;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, dst_stage, 0, 1, &b, 0, nullptr, 0, nullptr);
}

// HCQ order between work commands: earlier compute/transfer writes before later compute/transfer reads and writes.
void work_barrier(VkCommandBuffer cb) {
  VkMemoryBarrier b = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  vkCmdPipelineBarrier(cb, stages, stages, 0, 1, &b, 0, nullptr, 0, nullptr);
}

}  // namespace

void VulkanDevice::check_commands(std::span<const Command> commands, std::span<void* const> buffers) {
  for (const Command& c : commands) {
    switch (c.kind) {
      case CommandKind::kExec: {
        if (c.kernel != nullptr || c.program == nullptr)
          throw std::invalid_argument(name() + ": an exec of a host kernel; this device runs SPIR-V programs it loaded");
        const auto* p = dynamic_cast<const VulkanProgram*>(c.program);
        if (p == nullptr || p->device() != name())
          throw std::invalid_argument(name() + ": an exec of program " + c.program->name() + " loaded by " + c.program->device() + ", not by this device");
        if (c.buffers_count != p->buffers() || c.scalars_count != p->vars())
          throw std::invalid_argument(name() + ": exec of " + p->name() + " with " + std::to_string(c.buffers_count) + " buffers and " +
                                      std::to_string(c.scalars_count) + " variables; it takes " + std::to_string(p->buffers()) + " and " +
                                      std::to_string(p->vars()));
        if (c.block != p->local_size())
          throw std::invalid_argument(name() + ": exec of " + p->name() + " with block " + dims_text(c.block) + "; its module's LocalSize is " +
                                      dims_text(p->local_size()) + " (compiler/spirv/spirv_kernel_abi.h)");
        for (int i = 0; i < 3; i++)
          if (c.grid[i] > static_cast<uint64_t>(caps_.max_global[i]))
            throw std::invalid_argument(name() + ": exec of " + p->name() + " with grid " + dims_text(c.grid) + "; the device takes up to " +
                                        std::to_string(caps_.max_global[i]) + " workgroups in dimension " + std::to_string(i));
        for (uint32_t i = 0; i < c.buffers_count; i++)
          check_buffer_address(reinterpret_cast<uintptr_t>(buffers[c.buffers_begin + i]), "an exec's buffer");
        break;
      }
      case CommandKind::kCopy:
        if (c.bytes != 0) {
          locate(reinterpret_cast<uintptr_t>(c.dst), c.bytes, "a copy's destination");
          locate(reinterpret_cast<uintptr_t>(c.src), c.bytes, "a copy's source");
        }
        break;
      case CommandKind::kTimestamp:
        if (state_of(*c.signal) == nullptr)
          throw std::invalid_argument(name() + ": a timestamp command on signal '" + c.signal->name() + "' of " + c.signal->device() +
                                      ": Vulkan writes timestamps only into this device's query pools, for its own signals");
        break;
      default:
        break;
    }
  }
}

// Batches: [waits][commands and signals]; a wait after anything else, or a command after a signal, starts a new one.
std::vector<VkBatch> VulkanDevice::split(std::span<const Command> commands) {
  std::vector<VkBatch> batches(1);
  for (size_t i = 0; i < commands.size(); i++) {
    const Command& c = commands[i];
    VkBatch* b = &batches.back();
    const bool has_body = b->end - b->first > b->waits.size();
    const bool fresh = (c.kind == CommandKind::kWait && has_body) ||
                       (c.kind != CommandKind::kWait && c.kind != CommandKind::kSignal && !b->signals.empty());
    if (fresh) {
      batches.emplace_back();
      b = &batches.back();
      b->first = b->end = i;
    }
    if (c.kind == CommandKind::kWait) b->waits.push_back(i);
    if (c.kind == CommandKind::kSignal) b->signals.push_back(i);
    b->end = i + 1;
  }
  return batches;
}

VkCommandBuffer VulkanDevice::new_command_buffer() {
  if (!free_command_buffers_.empty()) {
    VkCommandBuffer cb = free_command_buffers_.back();
    free_command_buffers_.pop_back();
    return cb;
  }
  VkCommandBufferAllocateInfo info = vk_struct<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  info.commandPool = command_pool_;
  info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  info.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  vk_check(vkAllocateCommandBuffers(device_, &info, &cb), name(), "vkAllocateCommandBuffers", "a queue");
  messenger_->claim(cb);
  return cb;
}

void read_stamp(const VkSubmission::Stamp& st, uint64_t mask) {
  uint64_t words[2];
  std::memcpy(words, st.host, sizeof words);
  if (words[1] != 0) store_later(*st.state, words[0] & mask);
}

// Records one batch's commands into its command buffer (allocated here when it has none). `args_of(i, bytes)` gives
// command i's argument block; query slot k's result is copied to `stamps` + k * kStampBytes.
void VulkanDevice::record_batch(VkBatch& b, std::span<const Command> commands, std::span<void* const> buffers, std::span<const int64_t> scalars,
                                VkQueryPool pool, StampTarget stamps, const std::function<ArgBlock(size_t, uint64_t)>& args_of) {
  if (b.cb == VK_NULL_HANDLE) b.cb = new_command_buffer();
  VkCommandBufferBeginInfo begin = vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  vk_check(vkBeginCommandBuffer(b.cb, &begin), name(), "vkBeginCommandBuffer", "a queue");
  if (!b.queries.empty()) vkCmdResetQueryPool(b.cb, pool, b.queries.front().second, static_cast<uint32_t>(b.queries.size()));
  // Orders this command buffer after everything earlier in submission order (the earlier batches).
  full_barrier(b.cb, VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
  size_t query = 0;
  bool after_work = false;
  for (size_t i = b.first; i < b.end; i++) {
    const Command& c = commands[i];
    switch (c.kind) {
      case CommandKind::kExec: {
        const auto* p = static_cast<const VulkanProgram*>(c.program);
        const uint64_t bytes = std::max<uint64_t>(8, kSpirvArgumentWordBytes * (uint64_t{c.buffers_count} + c.scalars_count));
        ArgBlock a = args_of(i, bytes);
        for (uint32_t k = 0; k < c.buffers_count; k++) {
          const uint64_t address = reinterpret_cast<uintptr_t>(buffers[c.buffers_begin + k]);
          std::memcpy(a.host + 8 * k, &address, 8);
        }
        for (uint32_t k = 0; k < c.scalars_count; k++) std::memcpy(a.host + 8 * (c.buffers_count + k), &scalars[c.scalars_begin + k], 8);
        if (after_work) work_barrier(b.cb);
        vkCmdBindPipeline(b.cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipeline());
        vkCmdPushConstants(b.cb, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, kSpirvPushConstantBytes, &a.address);
        vkCmdDispatch(b.cb, c.grid[0], c.grid[1], c.grid[2]);
        after_work = true;
        break;
      }
      case CommandKind::kCopy: {
        if (c.bytes == 0) break;
        const Located dst = locate(reinterpret_cast<uintptr_t>(c.dst), c.bytes, "a copy's destination");
        const Located src = locate(reinterpret_cast<uintptr_t>(c.src), c.bytes, "a copy's source");
        if (after_work) work_barrier(b.cb);
        VkBufferCopy region{src.offset, dst.offset, c.bytes};
        vkCmdCopyBuffer(b.cb, src.buffer, dst.buffer, 1, &region);
        after_work = true;
        break;
      }
      case CommandKind::kMemoryBarrier:
        full_barrier(b.cb, VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
        after_work = false;
        break;
      case CommandKind::kSignal:
      case CommandKind::kTimestamp:
        if (query < b.queries.size() && b.queries[query].first == i) {
          vkCmdWriteTimestamp(b.cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, b.queries[query].second);
          query++;
        }
        break;
      case CommandKind::kWait:
        break;
    }
  }
  if (!b.queries.empty()) {
    // The batch's queries (consecutive slots) to host-visible memory, so that nothing reads a query pool from the
    // host (firmware-notes/vulkan-device.md §8): after every timestamp write (an execution dependency from all
    // commands to the copy's transfer stage; WAIT_BIT also makes the copy wait for availability), before the batch's
    // semaphore signals.
    vkCmdPipelineBarrier(b.cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr, 0, nullptr, 0, nullptr);
    const uint32_t first = b.queries.front().second;
    vkCmdCopyQueryPoolResults(b.cb, pool, first, static_cast<uint32_t>(b.queries.size()), stamps.buffer, stamps.offset + first * kStampBytes,
                              kStampBytes, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
  }
  // Device writes (the copied queries too) become visible to the host once the batch's signal is seen.
  full_barrier(b.cb, VK_ACCESS_HOST_READ_BIT, VK_PIPELINE_STAGE_HOST_BIT);
  vk_check(vkEndCommandBuffer(b.cb), name(), "vkEndCommandBuffer", "a queue");
}

// Assigns query slots (from `first_slot` on) to the signal and timestamp commands of this device's signals.
uint32_t VulkanDevice::assign_queries(std::vector<VkBatch>& batches, std::span<const Command> commands, uint32_t first_slot) {
  uint32_t slot = first_slot;
  for (VkBatch& b : batches) {
    b.queries.clear();
    for (size_t i = b.first; i < b.end; i++) {
      const Command& c = commands[i];
      if ((c.kind == CommandKind::kSignal || c.kind == CommandKind::kTimestamp) && state_of(*c.signal) != nullptr) b.queries.push_back({i, slot++});
    }
  }
  return slot - first_slot;
}

uint32_t VulkanDevice::count_queries(std::span<const Command> commands) {
  uint32_t n = 0;
  for (const Command& c : commands)
    if ((c.kind == CommandKind::kSignal || c.kind == CommandKind::kTimestamp) && state_of(*c.signal) != nullptr) n++;
  return n;
}

}  // namespace doorbell::vk
