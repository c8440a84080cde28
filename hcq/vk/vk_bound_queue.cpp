#include "hcq/vk/vk_bound_queue.h"

#include <algorithm>
#include <cstring>

#include "hcq/vk/vk_memory.h"
#include "hcq/vk/vk_semaphore_signals.h"

namespace doorbell::vk {

std::shared_ptr<BoundQueue> VulkanDevice::bind(const HWQueue& queue) {
  std::span<const Command> commands = queue.commands();
  check_commands(commands, queue.buffers());
  auto b = std::make_shared<VulkanBoundQueue>();
  b->registry = bound_registry_;
  b->device_life = life();
  b->progress = progress_;
  b->commands.assign(commands.begin(), commands.end());
  b->buffers.assign(queue.buffers().begin(), queue.buffers().end());
  b->scalars.assign(queue.scalars().begin(), queue.scalars().end());
  b->batches = split(b->commands);
  b->query_count = count_queries(b->commands);
  b->arg_host.assign(commands.size(), nullptr);
  b->arg_address.assign(commands.size(), 0);
  uint64_t arg_bytes = 0;
  for (const Command& c : commands)
    if (c.kind == CommandKind::kExec) arg_bytes += (std::max<uint64_t>(8, 8 * (uint64_t{c.buffers_count} + c.scalars_count)) + 15) / 16 * 16;
  {
    // Registered first: the bound queue's destructor takes the registry's lock and then submit_mutex_.
    std::lock_guard rlock(bound_registry_->mu);
    bound_registry_->live.insert(b.get());
  }
  std::lock_guard lock(submit_mutex_);
  if (b->query_count) {
    b->pool = new_query_pool(b->query_count);
    const SubAllocator::Block block = alloc_host_block(uint64_t{b->query_count} * kStampBytes, "a bound queue's timestamp results");
    b->stamps_address = block.address;
    b->stamps_host = block.host;
  }
  assign_queries(b->batches, b->commands, 0);
  if (arg_bytes) {
    const SubAllocator::Block block = alloc_host_block(arg_bytes, "a bound queue's argument blocks");
    b->args_address = block.address;
    uint64_t used = 0;
    for (size_t i = 0; i < commands.size(); i++) {
      const Command& c = commands[i];
      if (c.kind != CommandKind::kExec) continue;
      b->arg_host[i] = block.host + used;
      b->arg_address[i] = block.address + used;
      used += (std::max<uint64_t>(8, 8 * (uint64_t{c.buffers_count} + c.scalars_count)) + 15) / 16 * 16;
    }
  }
  for (VkBatch& batch : b->batches) rerecord_locked(*b, batch);
  return b;
}

void VulkanDevice::rerecord_locked(VulkanBoundQueue& b, VkBatch& batch) {
  StampTarget stamps{};
  if (b.stamps_address != 0) {
    const Located at = locate(b.stamps_address, uint64_t{b.query_count} * kStampBytes, "a bound queue's timestamp results");
    stamps = StampTarget{at.buffer, at.offset};
  }
  record_batch(batch, b.commands, b.buffers, b.scalars, b.pool, stamps,
               [&](size_t i, uint64_t) { return ArgBlock{b.arg_host[i], b.arg_address[i]}; });
}

void VulkanDevice::rerecord(VulkanBoundQueue& b, VkBatch& batch) {
  std::lock_guard lock(submit_mutex_);
  rerecord_locked(b, batch);
}

void VulkanDevice::submit_bound(std::shared_ptr<const BoundQueue> queue) {
  auto* b = const_cast<VulkanBoundQueue*>(dynamic_cast<const VulkanBoundQueue*>(queue.get()));
  if (b == nullptr || b->registry != bound_registry_)
    throw std::invalid_argument(name() + ": submit_bound of a queue bound to another device");
  std::lock_guard lock(submit_mutex_);
  collect_locked();
  // The recorded query slots are reset when the command buffer runs again: the previous run's timestamps are read
  // first.
  const uint64_t last = b->last_submission.load(std::memory_order_acquire);
  if (b->query_count != 0 && last > read_semaphore(*state_of(*progress_))) {
    wait_progress(last, "submit_bound (reading the previous run's timestamps)");
    collect_locked();
  }
  // The previous run's results were read (collect): this run's start from "not available".
  if (b->stamps_host != nullptr) std::memset(b->stamps_host, 0, uint64_t{b->query_count} * kStampBytes);
  auto s = std::make_unique<VkSubmission>();
  const uint64_t count = submit_batches(b->batches, b->commands, b->stamps_host, std::move(s));
  b->last_submission.store(count, std::memory_order_release);
}

void VulkanDevice::retire_bound(VulkanBoundQueue& b) {
  std::lock_guard lock(submit_mutex_);
  const uint64_t after = b.last_submission.load();
  std::vector<VkCommandBuffer> cbs;
  for (VkBatch& batch : b.batches)
    if (batch.cb != VK_NULL_HANDLE) cbs.push_back(batch.cb);
  VkQueryPool pool = b.pool;
  const uint64_t args = b.args_address, stamps = b.stamps_address;
  retired_.push_back(Retired{after, [this, cbs, pool, args, stamps] {
                               for (VkCommandBuffer cb : cbs) free_command_buffers_.push_back(cb);
                               if (pool) vkDestroyQueryPool(device_, pool, nullptr);
                               messenger_->disclaim(pool);
                               std::lock_guard mlock(memory_mutex_);
                               if (args) heap_locked(true).free(args);
                               if (stamps) heap_locked(true).free(stamps);
                             }});
  collect_locked();
}

}  // namespace doorbell::vk
