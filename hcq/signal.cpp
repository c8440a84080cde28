#include "hcq/signal.h"

#include <algorithm>
#include <bit>
#include <thread>
#include <stdexcept>

#include "hcq/wait_primitives.h"

namespace doorbell {
namespace {

// A waiter spins this long before sleeping: long enough to catch a kernel that finishes within a few handoffs.
constexpr int64_t kSpinNs = 20'000;

// The futex watches the low 32 bits of the value (at +0 on a little-endian machine); set() wakes sleepers on
// every change, so a change confined to the high half still wakes them.
static_assert(std::endian::native == std::endian::little, "the signal futex watches the low half of the value");
const void* low_word(const SignalMemory& memory) { return &memory.value; }

}  // namespace

Signal::Signal(std::string device, std::string name, uint64_t initial)
    : Signal(std::move(device), std::move(name), SignalPlacement{}, initial) {}

Signal::Signal(std::string device, std::string name, SignalPlacement placement, uint64_t initial)
    : device_address_(placement.device_address),
      device_wakes_waiters_(placement.device_wakes_waiters),
      second_timestamp_(placement.second_timestamp),
      fault_report_(placement.fault_report),
      fault_context_(placement.fault_context),
      device_(std::move(device)),
      name_(std::move(name)) {
  if (placement.memory != nullptr) memory_ = placement.memory;
  memory_->value.store(initial, std::memory_order_relaxed);
  memory_->timestamp.store(0, std::memory_order_relaxed);
}

uint64_t Signal::timestamp() const {
  uint64_t t = memory_->timestamp.load(std::memory_order_acquire);
  if (second_timestamp_ != nullptr) t = std::max(t, second_timestamp_->load(std::memory_order_acquire));
  return t;
}

void Signal::set(uint64_t value) {
  memory_->timestamp.store(static_cast<uint64_t>(monotonic_ns()), std::memory_order_relaxed);
  // seq_cst (a release and more): pairs with the waiter's seq_cst sleeper announcement, see wait_for.
  memory_->value.store(value, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) != 0) futex_wake_all(low_word(*memory_));
}

void Signal::write_timestamp(uint64_t ns) { memory_->timestamp.store(ns, std::memory_order_release); }

bool Signal::wait_for(uint64_t target, std::chrono::nanoseconds timeout, uint64_t* last_seen) const {
  uint64_t seen = value();
  if (seen >= target) return true;
  const int64_t timeout_ns = timeout.count();
  const int64_t start = monotonic_ns();
  int64_t last_progress = start;
  auto timed_out = [&](uint64_t v, int64_t now) {
    if (v != seen) {
      seen = v;
      last_progress = now;
    }
    if (now - last_progress < timeout_ns) return false;
    if (last_seen != nullptr) *last_seen = seen;
    return true;
  };
  // Spin phase: the clock is read once per 32 polls.
  while (true) {
    uint64_t v = 0;
    for (int i = 0; i < 32; ++i) {
      cpu_relax();
      v = value();
      if (v >= target) return true;
    }
    const int64_t now = monotonic_ns();
    if (timed_out(v, now)) return false;
    if (now - start >= kSpinNs) break;
    spin_pause(now - start);
  }
  // Sleep phase. Announcing the sleeper before the last check (both seq_cst) closes the race with set(): either
  // set() sees the announcement and wakes us, or we see its value and do not sleep.
  while (true) {
    if (!device_wakes_waiters_) {  // a GPU's write wakes nobody: poll, sleeping briefly between looks
      const uint64_t v = value();
      if (v >= target) return true;
      if (fault_report_ != nullptr) {
        const std::string fault = fault_report_(fault_context_);
        if (!fault.empty())
          throw std::runtime_error(device_ + ": signal '" + name_ + "' cannot reach " + std::to_string(target) + " (last value " +
                                   std::to_string(v) + "): the device faulted: " + fault);
      }
      if (timed_out(v, monotonic_ns())) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(20));
      continue;
    }
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    uint64_t v = memory_->value.load(std::memory_order_seq_cst);
    if (v < target) {
      const int64_t left = timeout_ns - (monotonic_ns() - last_progress);
      futex_wait(low_word(*memory_), static_cast<uint32_t>(v), left);
    }
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
    v = value();
    if (v >= target) return true;
    if (timed_out(v, monotonic_ns())) return false;
  }
}

void Signal::wait(uint64_t target, std::chrono::milliseconds timeout) const {
  uint64_t last = 0;
  if (wait_for(target, timeout, &last)) return;
  throw std::runtime_error(device_ + ": signal '" + name_ + "' did not reach " + std::to_string(target) + " within " +
                           std::to_string(timeout.count()) + " ms; last value " + std::to_string(last));
}

}  // namespace doorbell
