#include "hcq/vk/vk_semaphore_signals.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>
#include <vector>

#include "hcq/vk/vk_check.h"
#include "hcq/vk/vk_device.h"
#include "hcq/vk/vk_recording.h"
#include "hcq/wait_primitives.h"

namespace doorbell::vk {

namespace {

// A waiter on a signal sleeps in vkWaitSemaphores for at most this long before it looks again.
constexpr uint64_t kSemaphoreSleepNs = 1'000'000;

}  // namespace

VkSemaphore VulkanDevice::new_timeline_semaphore(const std::string& what) {
  VkSemaphoreTypeCreateInfo type = vk_struct<VkSemaphoreTypeCreateInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO);
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  type.initialValue = 0;
  VkSemaphoreCreateInfo info = vk_struct<VkSemaphoreCreateInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO);
  info.pNext = &type;
  VkSemaphore s = VK_NULL_HANDLE;
  vk_check(vkCreateSemaphore(device_, &info, nullptr, &s), name(), "vkCreateSemaphore", what);
  messenger_->claim(s);
  return s;
}

SignalPlacement VulkanDevice::place_signal() {
  auto state = std::make_unique<VkSignalState>();
  state->device = this;
  state->device_name = name();
  state->semaphore = new_timeline_semaphore("a signal");
  SignalPlacement p;
  p.device_address = reinterpret_cast<uint64_t>(state->semaphore);
  p.device_wakes_waiters = false;
  p.read_value = [](const void* c) {
    auto* s = static_cast<const VkSignalState*>(c);
    return s->device->read_semaphore(*s);
  };
  p.write_value = [](const void* c, uint64_t v) {
    auto* s = const_cast<VkSignalState*>(static_cast<const VkSignalState*>(c));
    s->device->write_semaphore(*s, v);
  };
  p.read_timestamp = [](const void* c) {
    auto* s = static_cast<const VkSignalState*>(c);
    return s->device->read_signal_timestamp(*s);
  };
  p.interrupt_wait = [](const void* c) {
    auto* s = static_cast<const VkSignalState*>(c);
    s->device->sleep_on_semaphore(*s);
  };
  p.fault_report = [](const void* c) { return static_cast<const VkSignalState*>(c)->device->fault(); };
  p.value_context = p.interrupt_context = p.fault_context = state.get();
  // Ticks of timestampPeriod ns (1 on lavapipe), as a fraction in thousandths of a nanosecond.
  const double period = props_.limits.timestampPeriod;
  if (period != 1.0) {
    p.ns_per_tick_num = static_cast<uint64_t>(std::llround(period * 1000.0));
    p.ns_per_tick_den = 1000;
  }
  std::lock_guard lock(signals_mutex_);
  by_semaphore_[p.device_address] = state.get();
  signal_states_.push_back(std::move(state));
  return p;
}

VkSignalState* VulkanDevice::state_of(const Signal& signal) {
  if (signal.device() != name()) return nullptr;
  std::lock_guard lock(signals_mutex_);
  auto it = by_semaphore_.find(signal.device_address());
  return it == by_semaphore_.end() ? nullptr : it->second;
}

VkSemaphore VulkanDevice::semaphore_of(const Signal& signal) {
  VkSignalState* s = state_of(signal);
  return s ? s->semaphore : VK_NULL_HANDLE;
}

uint64_t VulkanDevice::read_semaphore(const VkSignalState& s) {
  uint64_t v = 0;
  const VkResult r = vkGetSemaphoreCounterValue(device_, s.semaphore, &v);
  note_result(r, "vkGetSemaphoreCounterValue");
  return r == VK_SUCCESS ? v : 0;
}

void VulkanDevice::write_semaphore(VkSignalState& s, uint64_t value) {
  {
    std::lock_guard lock(s.mu);
    const uint64_t current = read_semaphore(s);
    s.pending.erase(s.pending.begin(), s.pending.upper_bound(current));
    if (!s.pending.empty() && value >= *s.pending.begin())
      throw std::invalid_argument(name() + ": a signal cannot be set to " + std::to_string(value) + " from the host while a queue's signal to " +
                                  std::to_string(*s.pending.begin()) + " is pending (a Vulkan host signal must stay below pending "
                                  "signal operations: VUID-VkSemaphoreSignalInfo-value-03259)");
    // Through every value a submitted batch waits for between the counter and `value`, in order: the same payloads
    // for every waiter (a timeline only grows), and the 1.3.239 validation layer, which loses track of a host signal
    // that passes a pending wait's value, reports no false VUID-VkSemaphoreSignalInfo-value-03259 at the next one
    // (firmware-notes/vulkan-device.md §3).
    s.waited.erase(s.waited.begin(), s.waited.upper_bound(current));
    std::vector<uint64_t> steps(s.waited.begin(), s.waited.lower_bound(value));
    steps.push_back(value);
    for (const uint64_t step : steps) {
      VkSemaphoreSignalInfo info = vk_struct<VkSemaphoreSignalInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO);
      info.semaphore = s.semaphore;
      info.value = step;
      const VkResult r = vkSignalSemaphore(device_, &info);
      note_result(r, "vkSignalSemaphore");
      vk_check(r, name(), "vkSignalSemaphore", "a host set() to " + std::to_string(value));
    }
    s.waited.erase(s.waited.begin(), s.waited.upper_bound(value));
    s.scheduled = std::max(s.scheduled, value);
  }
  // set()'s time, on the device's clock, in its ticks.
  const ClockCalibration c = clock_calibration();
  const double ns = static_cast<double>(monotonic_ns() + c.offset_ns);
  s.timestamp_ticks.store(static_cast<uint64_t>(ns / props_.limits.timestampPeriod), std::memory_order_release);
}

// The latest query of the signal that completed: from finished submissions (collect) and, since a batch copies its
// queries' results to memory before it signals, from submissions still running whose batch has done so. Only memory
// is read: vkGetQueryPoolResults may wait for the whole device on lavapipe (firmware-notes/vulkan-device.md §8).
uint64_t VulkanDevice::read_signal_timestamp(const VkSignalState& s) {
  std::lock_guard lock(submit_mutex_);
  collect_locked();
  for (const auto& submission : in_flight_)
    for (const VkSubmission::Stamp& st : submission->stamps)
      if (st.state == &s) read_stamp(st, timestamp_mask_);
  return s.timestamp_ticks.load(std::memory_order_acquire);
}

// Sleeps until the semaphore reaches the next value a queue will signal it to (at most kSemaphoreSleepNs). Only
// that exact value is waited for: the 1.3.239 validation layer times out and reports a false
// UNASSIGNED-VkSemaphore-state-timeout when a host wait's value lies between two signal operations' values
// (firmware-notes/vulkan-device.md §3). With no queue signal pending only the host can raise it: a short sleep between looks.
void VulkanDevice::sleep_on_semaphore(const VkSignalState& s) {
  uint64_t next = 0;
  {
    auto& state = const_cast<VkSignalState&>(s);
    std::lock_guard lock(state.mu);
    const uint64_t current = read_semaphore(s);
    state.pending.erase(state.pending.begin(), state.pending.upper_bound(current));
    if (!state.pending.empty()) next = *state.pending.begin();
  }
  if (next == 0) {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    return;
  }
  VkSemaphoreWaitInfo info = vk_struct<VkSemaphoreWaitInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO);
  info.semaphoreCount = 1;
  info.pSemaphores = &s.semaphore;
  info.pValues = &next;
  note_result(vkWaitSemaphores(device_, &info, kSemaphoreSleepNs), "vkWaitSemaphores");
}

void VulkanDevice::push_bridge(BridgeJob job) {
  {
    std::lock_guard lock(bridge_mutex_);
    bridge_jobs_.push_back(job);
  }
  bridge_cv_.notify_all();
}

void VulkanDevice::bridge_loop() {
  constexpr auto kSlice = std::chrono::milliseconds(5);
  while (true) {
    BridgeJob job;
    {
      std::unique_lock lock(bridge_mutex_);
      bridge_cv_.wait(lock, [&] { return bridge_stop_ || !bridge_jobs_.empty(); });
      if (bridge_stop_) return;
      job = bridge_jobs_.front();
    }
    auto stopping = [&] {
      std::lock_guard lock(bridge_mutex_);
      return bridge_stop_;
    };
    if (job.is_wait) {
      try {
        while (!job.foreign->wait_for(job.value, kSlice))
          if (stopping()) return;
      } catch (const std::exception& e) {
        report_queue_error(name() + ": a queue's wait for signal '" + job.foreign->name() + "' of " + job.foreign->device() + " failed: " + e.what());
      }
      VkSemaphoreSignalInfo info = vk_struct<VkSemaphoreSignalInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO);
      info.semaphore = bridge_in_;
      info.value = job.bridge_value;
      note_result(vkSignalSemaphore(device_, &info), "vkSignalSemaphore");
    } else {
      VkSemaphoreWaitInfo info = vk_struct<VkSemaphoreWaitInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO);
      info.semaphoreCount = 1;
      info.pSemaphores = &bridge_out_;
      info.pValues = &job.bridge_value;
      while (true) {
        const VkResult r = vkWaitSemaphores(device_, &info, 5'000'000);
        if (r == VK_SUCCESS) break;
        note_result(r, "vkWaitSemaphores");
        if (r != VK_TIMEOUT || stopping()) return;
      }
      try {
        job.foreign->set(job.value);
      } catch (const std::exception& e) {
        report_queue_error(name() + ": a queue's signal of '" + job.foreign->name() + "' of " + job.foreign->device() + " failed: " + e.what());
      }
    }
    std::lock_guard lock(bridge_mutex_);
    bridge_jobs_.pop_front();
  }
}

void VulkanDevice::stop_bridge() {
  {
    std::lock_guard lock(bridge_mutex_);
    bridge_stop_ = true;
  }
  bridge_cv_.notify_all();
  if (bridge_thread_.joinable()) bridge_thread_.join();
}

}  // namespace doorbell::vk
