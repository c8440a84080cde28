// A VulkanDevice's submissions: an HWQueue checked, split into batches and recorded (vk_recording.h), submitted in one
// vkQueueSubmit whose last batch signals the progress semaphore with the submission's count; collect() reads the
// timestamps of completed submissions (from the host-visible memory their batches copied them to) and frees what they
// and retired memory held. firmware-notes/vulkan-device.md §5, §8.
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "compiler/spirv/spirv_kernel_abi.h"
#include "hcq/vk/vk_check.h"
#include "hcq/vk/vk_device.h"
#include "hcq/vk/vk_recording.h"
#include "hcq/vk/vk_semaphore_signals.h"
#include "hcq/wait_primitives.h"

namespace doorbell::vk {

void VulkanDevice::submit(const HWQueue& queue) { submit_counted(queue); }

uint64_t VulkanDevice::submit_counted(const HWQueue& queue) {
  std::span<const Command> commands = queue.commands();
  check_commands(commands, queue.buffers());
  std::lock_guard lock(submit_mutex_);
  collect_locked();
  auto wait = [this](uint64_t count) {
    wait_progress(count, "a ring's reuse");
    collect_locked();
  };
  std::vector<VkBatch> batches = split(commands);
  const uint32_t queries = count_queries(commands);
  if (queries > kQuerySlots)
    throw std::invalid_argument(name() + ": a queue with " + std::to_string(queries) + " signal and timestamp commands; at most " +
                                std::to_string(kQuerySlots) + " fit one submission");
  const uint32_t first_slot = queries ? static_cast<uint32_t>(query_ring_->take(queries, 1, wait).va) : 0;
  assign_queries(batches, commands, first_slot);
  // No result of an earlier user of the slots reads as this submission's (the ring passed them: nothing writes them).
  std::memset(stamp_memory_.host + uint64_t{first_slot} * kStampBytes, 0, uint64_t{queries} * kStampBytes);
  auto submission = std::make_unique<VkSubmission>();
  try {
    for (VkBatch& b : batches) {
      record_batch(b, commands, queue.buffers(), queue.scalars(), query_pool_, StampTarget{stamp_memory_.buffer, 0}, [&](size_t, uint64_t bytes) {
        UploadRing::Piece piece = args_->take(bytes, kSpirvArgumentBlockAlign, wait);
        return ArgBlock{piece.cpu, piece.va};
      });
      submission->command_buffers.push_back(b.cb);
    }
  } catch (...) {
    for (VkBatch& b : batches)
      if (b.cb) free_command_buffers_.push_back(b.cb);
    args_->close(submissions_.load());
    query_ring_->close(submissions_.load());
    throw;
  }
  const uint64_t count = submit_batches(batches, commands, stamp_memory_.host, std::move(submission));
  args_->close(count);
  query_ring_->close(count);
  return count;
}

uint64_t VulkanDevice::submit_batches(std::vector<VkBatch>& batches, std::span<const Command> commands, uint8_t* stamps_host,
                                      std::unique_ptr<VkSubmission> s) {
  const uint64_t count = submissions_.load() + 1;
  struct Arrays {
    std::vector<VkSemaphore> wait_sems, signal_sems;
    std::vector<uint64_t> wait_values, signal_values;
    std::vector<VkPipelineStageFlags> stages;
    VkTimelineSemaphoreSubmitInfo timeline = vk_struct<VkTimelineSemaphoreSubmitInfo>(VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO);
  };
  std::vector<Arrays> arrays(batches.size());
  std::vector<VkSubmitInfo> infos(batches.size());
  std::vector<BridgeJob> jobs;
  struct Scheduled {
    VkSignalState* state;
    uint64_t value;
  };
  std::vector<Scheduled> scheduled;
  uint64_t bridge_in = bridge_in_next_, bridge_out = bridge_out_next_;
  std::unordered_map<VkSignalState*, uint64_t> batch_max;  // this submission's own signals so far, per semaphore
  std::unordered_set<size_t> skipped;                        // signal commands not submitted
  for (size_t k = 0; k < batches.size(); k++) {
    VkBatch& b = batches[k];
    Arrays& a = arrays[k];
    for (size_t i : b.waits) {
      const Command& c = commands[i];
      s->waits.push_back({c.signal, c.value});
      if (VkSignalState* st = state_of(*c.signal)) {
        a.wait_sems.push_back(st->semaphore);
        a.wait_values.push_back(c.value);
        std::lock_guard slock(st->mu);
        // Values a queue's signals passed no longer matter (pruned now and then: a read of the counter).
        if (st->waited.size() >= 64) st->waited.erase(st->waited.begin(), st->waited.upper_bound(read_semaphore(*st)));
        st->waited.insert(c.value);
      } else {
        jobs.push_back(BridgeJob{c.signal, c.value, true, ++bridge_in});
        a.wait_sems.push_back(bridge_in_);
        a.wait_values.push_back(bridge_in);
      }
      a.stages.push_back(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
    }
    for (size_t i : b.signals) {
      const Command& c = commands[i];
      VkSignalState* st = state_of(*c.signal);
      if (st == nullptr) {
        a.signal_sems.push_back(bridge_out_);
        a.signal_values.push_back(++bridge_out);
        jobs.push_back(BridgeJob{c.signal, c.value, false, bridge_out});
        continue;
      }
      uint64_t already;
      {
        std::lock_guard slock(st->mu);
        already = st->scheduled;
      }
      if (auto it = batch_max.find(st); it != batch_max.end()) already = std::max(already, it->second);
      if (c.value <= already) {
        // VUID-VkSubmitInfo-pSignalSemaphores-03242: a timeline signal must raise the value.
        if (c.value < already)
          report_queue_error(name() + ": a queue signal of '" + c.signal->name() + "' to " + std::to_string(c.value) +
                             " was skipped: the signal was already signalled or scheduled to " + std::to_string(already) +
                             " and a Vulkan timeline semaphore's value must grow (VUID-VkSubmitInfo-pSignalSemaphores-03242)");
        skipped.insert(i);
        continue;
      }
      batch_max[st] = c.value;
      a.signal_sems.push_back(st->semaphore);
      a.signal_values.push_back(c.value);
      scheduled.push_back({st, c.value});
    }
    if (k + 1 == batches.size()) {
      a.signal_sems.push_back(state_of(*progress_)->semaphore);
      a.signal_values.push_back(count);
    }
    for (const auto& [cmd, slot] : b.queries) {
      VkSignalState* st = state_of(*commands[cmd].signal);
      if (skipped.count(cmd) == 0) s->stamps.push_back({st, stamps_host + uint64_t{slot} * kStampBytes});
    }
    a.timeline.waitSemaphoreValueCount = static_cast<uint32_t>(a.wait_values.size());
    a.timeline.pWaitSemaphoreValues = a.wait_values.data();
    a.timeline.signalSemaphoreValueCount = static_cast<uint32_t>(a.signal_values.size());
    a.timeline.pSignalSemaphoreValues = a.signal_values.data();
    VkSubmitInfo& info = infos[k];
    info = vk_struct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
    info.pNext = &a.timeline;
    info.waitSemaphoreCount = static_cast<uint32_t>(a.wait_sems.size());
    info.pWaitSemaphores = a.wait_sems.data();
    info.pWaitDstStageMask = a.stages.data();
    info.commandBufferCount = b.cb != VK_NULL_HANDLE ? 1 : 0;
    info.pCommandBuffers = &b.cb;
    info.signalSemaphoreCount = static_cast<uint32_t>(a.signal_sems.size());
    info.pSignalSemaphores = a.signal_sems.data();
  }
  // Pending before the submit, so that a host set() racing it sees them (VUID-VkSemaphoreSignalInfo-value-03259).
  for (const Scheduled& sc : scheduled) {
    std::lock_guard slock(sc.state->mu);
    sc.state->pending.insert(sc.value);
    sc.state->scheduled = std::max(sc.state->scheduled, sc.value);
  }
  const VkResult r = vkQueueSubmit(queue_, static_cast<uint32_t>(infos.size()), infos.data(), VK_NULL_HANDLE);
  note_result(r, "vkQueueSubmit");
  if (r != VK_SUCCESS) {
    for (const Scheduled& sc : scheduled) {
      std::lock_guard slock(sc.state->mu);
      sc.state->pending.erase(sc.state->pending.find(sc.value));
    }
    for (const VkCommandBuffer cb : s->command_buffers) free_command_buffers_.push_back(cb);
    vk_check(r, name(), "vkQueueSubmit", std::to_string(batches.size()) + " batches");
  }
  bridge_in_next_ = bridge_in;
  bridge_out_next_ = bridge_out;
  s->count = count;
  submissions_.store(count, std::memory_order_release);
  in_flight_.push_back(std::move(s));
  for (BridgeJob& j : jobs) push_bridge(j);
  return count;
}

void VulkanDevice::collect() {
  std::lock_guard lock(submit_mutex_);
  collect_locked();
}

void VulkanDevice::collect_locked() {
  const uint64_t reached = read_semaphore(*state_of(*progress_));
  while (!in_flight_.empty() && in_flight_.front()->count <= reached) {
    VkSubmission& s = *in_flight_.front();
    for (const VkSubmission::Stamp& st : s.stamps) read_stamp(st, timestamp_mask_);
    for (VkCommandBuffer cb : s.command_buffers) free_command_buffers_.push_back(cb);
    in_flight_.pop_front();
  }
  for (size_t i = 0; i < retired_.size();) {
    if (retired_[i].after <= reached) {
      retired_[i].free();
      retired_.erase(retired_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      i++;
    }
  }
}

void VulkanDevice::wait_progress(uint64_t count, const char* what) {
  uint64_t last = 0;
  if (progress_->wait_for(count, kDefaultWaitTimeout, &last)) return;
  throw std::runtime_error(name() + ": " + what + " waited for submission " + std::to_string(count) + ", which did not complete: " +
                           progress_->timeout_message(count, kDefaultWaitTimeout, last) + "; " + blockage());
}

std::string VulkanDevice::blockage() {
  std::lock_guard lock(submit_mutex_);
  collect_locked();
  if (in_flight_.empty()) return "";
  const VkSubmission& s = *in_flight_.front();
  for (const auto& [signal, value] : s.waits) {
    const uint64_t v = signal->value();
    if (v < value)
      return "its queue (submission " + std::to_string(s.count) + ") waits for signal '" + signal->name() + "' of " + signal->device() +
             " to reach " + std::to_string(value) + " (value " + std::to_string(v) + ")";
  }
  return "its queue runs submission " + std::to_string(s.count);
}

}  // namespace doorbell::vk
