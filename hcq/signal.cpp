#include "hcq/signal.h"

#include <algorithm>
#include <thread>
#include <stdexcept>

#include "hcq/wait_primitives.h"

namespace doorbell {
namespace {

// A waiter spins this long before sleeping: long enough to catch a kernel that finishes within a few handoffs.
constexpr int64_t kSpinNs = 20'000;

thread_local Signal::SleepHook t_sleep_hook = nullptr;
thread_local void* t_sleep_hook_context = nullptr;

}  // namespace

void Signal::set_sleep_hook_for_testing(SleepHook hook, void* context) {
  t_sleep_hook = hook;
  t_sleep_hook_context = context;
}

Signal::Signal(std::string device, std::string name, uint64_t initial)
    : Signal(std::move(device), std::move(name), SignalPlacement{}, initial) {}

Signal::Signal(std::string device, std::string name, SignalPlacement placement, uint64_t initial)
    : device_address_(placement.device_address),
      device_wakes_waiters_(placement.device_wakes_waiters),
      second_timestamp_(placement.second_timestamp),
      fault_report_(placement.fault_report),
      fault_context_(placement.fault_context),
      help_waiter_(placement.help_waiter),
      help_context_(placement.help_context),
      interrupt_wait_(placement.interrupt_wait),
      interrupt_context_(placement.interrupt_context),
      ns_per_tick_num_(placement.ns_per_tick_num),
      ns_per_tick_den_(placement.ns_per_tick_den),
      read_value_(placement.read_value),
      write_value_(placement.write_value),
      read_timestamp_(placement.read_timestamp),
      value_context_(placement.value_context),
      device_(std::move(device)),
      name_(std::move(name)) {
  if (ns_per_tick_num_ == 0 || ns_per_tick_den_ == 0)
    throw std::invalid_argument(device_ + ": signal '" + name_ + "' with a timestamp tick of " + std::to_string(ns_per_tick_num_) + "/" +
                                std::to_string(ns_per_tick_den_) + " ns; expected a nonzero fraction");
  if ((read_value_ != nullptr) != (write_value_ != nullptr) || (read_value_ != nullptr && device_wakes_waiters_))
    throw std::invalid_argument(device_ + ": signal '" + name_ + "' kept by its device needs both read_value and write_value and "
                                "device_wakes_waiters false (its waiters poll)");
  if (placement.memory != nullptr) memory_ = placement.memory;
  memory_->value.store(initial, std::memory_order_relaxed);
  memory_->timestamp.store(0, std::memory_order_relaxed);
  // A value the device keeps starts where the device put it (a new timeline semaphore: 0); raise it to `initial`.
  if (read_value_ != nullptr && initial > read_value_(value_context_)) write_value_(value_context_, initial);
}

void Signal::set_help_waiter(void (*help)(const void* context), const void* context) {
  help_waiter_ = help;
  help_context_ = context;
}

// 128-bit products: a 100 MHz counter's ticks times 10 fit 64 bits, but a general fraction's numerator may not.
uint64_t Signal::ticks_to_ns(uint64_t ticks) const {
  if (ns_per_tick_num_ == ns_per_tick_den_) return ticks;
  return static_cast<uint64_t>(static_cast<unsigned __int128>(ticks) * ns_per_tick_num_ / ns_per_tick_den_);
}
uint64_t Signal::ns_to_ticks(uint64_t ns) const {
  if (ns_per_tick_num_ == ns_per_tick_den_) return ns;
  return static_cast<uint64_t>(static_cast<unsigned __int128>(ns) * ns_per_tick_den_ / ns_per_tick_num_);
}

uint64_t Signal::timestamp() const {
  if (read_timestamp_ != nullptr) return ticks_to_ns(read_timestamp_(value_context_));
  uint64_t t = memory_->timestamp.load(std::memory_order_acquire);
  if (second_timestamp_ != nullptr) t = std::max(t, second_timestamp_->load(std::memory_order_acquire));
  return ticks_to_ns(t);
}

void Signal::set(uint64_t value) {
  uint64_t current = memory_->value.load(std::memory_order_relaxed);
  auto check_grows = [&] {
    if (value < current)
      throw std::invalid_argument(device_ + ": signal '" + name_ + "' cannot be set to " + std::to_string(value) +
                                  ": its value is " + std::to_string(current) + " and values only grow");
  };
  check_grows();
  memory_->timestamp.store(ns_to_ticks(static_cast<uint64_t>(monotonic_ns())), std::memory_order_relaxed);
  if (write_value_ != nullptr) {  // the device keeps the value (SignalPlacement::read_value); nobody sleeps on memory
    current = read_value_(value_context_);
    check_grows();
    if (value != current) write_value_(value_context_, value);
    changes_.fetch_add(1, std::memory_order_seq_cst);
    return;
  }
  // seq_cst (a release and more): pairs with the waiter's seq_cst sleeper announcement, see wait_for.
  if (device_wakes_waiters_) {
    // Host memory: a compare-exchange, so that two host threads setting at once cannot move the value backwards.
    while (!memory_->value.compare_exchange_weak(current, value, std::memory_order_seq_cst, std::memory_order_relaxed))
      check_grows();
  } else {
    // A device's memory (GPU-mapped) takes plain stores only; the device may write it at any time anyway.
    memory_->value.store(value, std::memory_order_seq_cst);
  }
  changes_.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) != 0) futex_wake_all(&changes_);
}

void Signal::write_timestamp(uint64_t ns) { memory_->timestamp.store(ns_to_ticks(ns), std::memory_order_release); }

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
    if (help_waiter_ != nullptr) {
      help_waiter_(help_context_);
      if (value() >= target) return true;
    }
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
  int64_t help_slice_ns = 1'000'000;
  // Sleep phase, on the `changes` word. Announcing the sleeper, then reading `changes` before the last check of the
  // value (all seq_cst) closes the race with set(), which stores the value, then bumps `changes`, then reads the
  // announcement: either we see its value and do not sleep, or its bump comes after our read of `changes`, so the
  // kernel's compare refuses the sleep or set() sees the announcement and wakes us.
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
      if (interrupt_wait_ != nullptr) interrupt_wait_(interrupt_context_);
      else std::this_thread::sleep_for(std::chrono::microseconds(20));
      continue;
    }
    if (help_waiter_ != nullptr) {
      help_waiter_(help_context_);
      if (value() >= target) return true;
    }
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    const uint32_t changes = changes_.load(std::memory_order_seq_cst);
    uint64_t v = memory_->value.load(std::memory_order_seq_cst);
    if (v < target) {
      int64_t left = timeout_ns - (monotonic_ns() - last_progress);
      // A helping waiter wakes now and then to help again: work that only it could run (every device thread busy)
      // may have appeared while it slept. Slices double from 1 ms to 64 ms, so a long idle wait costs ~16 wakes/s.
      if (help_waiter_ != nullptr) {
        left = std::min(left, help_slice_ns);
        help_slice_ns = std::min<int64_t>(help_slice_ns * 2, 64'000'000);
      }
      if (t_sleep_hook != nullptr) t_sleep_hook(*this, changes_, changes, t_sleep_hook_context);
      futex_wait(&changes_, changes, left);
    }
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
    v = value();
    if (v >= target) return true;
    if (timed_out(v, monotonic_ns())) return false;
  }
}

std::string Signal::timeout_message(uint64_t target, std::chrono::milliseconds timeout, uint64_t last_seen) const {
  return device_ + ": signal '" + name_ + "' did not reach " + std::to_string(target) + " within " +
         std::to_string(timeout.count()) + " ms; last value " + std::to_string(last_seen);
}

void Signal::wait(uint64_t target, std::chrono::milliseconds timeout) const {
  uint64_t last = 0;
  if (wait_for(target, timeout, &last)) return;
  throw std::runtime_error(timeout_message(target, timeout, last));
}

}  // namespace doorbell
