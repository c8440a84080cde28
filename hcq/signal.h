// An HCQ signal: 16 bytes of device-visible memory, a 64-bit value at +0 and a 64-bit timestamp (ns) at +8, with
// timeline semantics: values only grow, and a wait for `target` passes once value >= target (no resets).
// Queues write it (signal, timestamp commands) and wait on it; the host reads, sets and waits on it too.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace doorbell {

// How long a wait may go without the value moving before it is an error (tinygrad's HCQDEV_WAIT_TIMEOUT_MS).
inline constexpr std::chrono::milliseconds kDefaultWaitTimeout{30'000};

struct alignas(16) SignalMemory {
  std::atomic<uint64_t> value{0};
  std::atomic<uint64_t> timestamp{0};
};
static_assert(sizeof(SignalMemory) == 16, "a signal is 16 bytes: value at +0, timestamp at +8");
static_assert(std::atomic<uint64_t>::is_always_lock_free, "signals are lock-free words that devices write");

// Where a device keeps a signal's 16 bytes: its own memory (null: inside the Signal object), the address the device's
// queues use for it, and whether the device can wake a sleeping host waiter when it writes the value. A GPU writes
// through PCIe and wakes nobody, so its waiters poll; a second timestamp word at +24 is where a GPU's timestamp
// command writes (a semaphore release always writes a payload before its timestamp, so it cannot write +8 alone).
struct SignalPlacement {
  SignalMemory* memory = nullptr;
  uint64_t device_address = 0;
  bool device_wakes_waiters = true;
  const std::atomic<uint64_t>* second_timestamp = nullptr;
  // A device that can fault (a GPU) reports it here: a non-empty message ends every wait on its signals at once
  // with an error carrying it, instead of a timeout.
  std::string (*fault_report)(const void* context) = nullptr;
  const void* fault_context = nullptr;
  // A device whose queues run on host threads (the CPU device) offers a thread that waits on its signal the device's
  // work: wait_for calls it between polls, and it runs what it can without blocking and returns. A waiter then
  // does the work on its own core instead of spinning beside the device threads that need that core.
  void (*help_waiter)(const void* context) = nullptr;
  const void* help_context = nullptr;
  // A GPU that raises an interrupt when its queue writes a signal (AMD: RELEASE_MEM's interrupt to a KFD event)
  // offers a sleep that the interrupt ends: a polling waiter sleeps in it (at most about a millisecond) instead of
  // sleeping a fixed 20 us between looks.
  void (*interrupt_wait)(const void* context) = nullptr;
  const void* interrupt_context = nullptr;
  // A GPU whose queues stamp ticks rather than nanoseconds (AMD: a 100 MHz counter) stores them raw at +8;
  // timestamp() reports raw * ns_per_tick_num / ns_per_tick_den, and set() stores the host's time in the same ticks.
  uint64_t ns_per_tick_num = 1, ns_per_tick_den = 1;
  // A device whose signal values are not words in memory that anyone may read (Vulkan: a timeline semaphore, whose
  // value only the driver knows) supplies them: value() calls read_value, set() calls write_value after its checks
  // (the host's signal: vkSignalSemaphore; not called when the value does not change), and timestamp() returns
  // read_timestamp (in ticks, scaled as above; 0 when nothing stamped it yet) instead of the word at +8. Such a
  // signal's memory holds nothing the device reads, so device_wakes_waiters must be false: waiters poll value(),
  // sleeping in interrupt_wait between looks (the constructor refuses the combination otherwise). The constructor
  // calls write_value(initial) when `initial` is above what read_value returns.
  uint64_t (*read_value)(const void* context) = nullptr;
  void (*write_value)(const void* context, uint64_t value) = nullptr;
  uint64_t (*read_timestamp)(const void* context) = nullptr;
  const void* value_context = nullptr;
};

class Signal {
 public:
  // `device` and `name` appear in errors ("CPU: signal 'timeline' ...").
  Signal(std::string device, std::string name, uint64_t initial = 0);
  Signal(std::string device, std::string name, SignalPlacement placement, uint64_t initial = 0);
  Signal(const Signal&) = delete;
  Signal& operator=(const Signal&) = delete;

  const std::string& device() const { return device_; }
  const std::string& name() const { return name_; }
  uint64_t value() const {
    return read_value_ != nullptr ? read_value_(value_context_) : memory_->value.load(std::memory_order_acquire);
  }
  // Nanoseconds written by the last set() or timestamp command, on the writer's clock: monotonic_ns() for set() and
  // the CPU device's queues, a GPU's own timer for its queues (Device::host_time_ns converts those; a timer that
  // counts ticks is scaled to nanoseconds here, SignalPlacement::ns_per_tick_num).
  uint64_t timestamp() const;
  const SignalMemory& memory() const { return *memory_; }
  // The address a device's queues write and wait on (0 for the CPU device, whose queues hold the Signal itself).
  uint64_t device_address() const { return device_address_; }

  // Stores the time, then releases the value: whoever sees the value also sees its timestamp and every write made
  // before set(). Wakes sleeping waiters. Values only grow: a value below the current one throws
  // std::invalid_argument naming the signal, its value and the one asked for (setting the current value again is
  // allowed).
  void set(uint64_t value);
  // A timestamp command: stores the time at +8 and leaves the value alone.
  void write_timestamp(uint64_t ns);

  // Waits until value >= target. The timeout counts from the last change of the value seen (progress restarts
  // it). Returns false on timeout and stores the last value seen in *last_seen when given. Throws
  // std::runtime_error naming the device's fault when its device reports one (SignalPlacement::fault_report).
  bool wait_for(uint64_t target, std::chrono::nanoseconds timeout, uint64_t* last_seen = nullptr) const;
  // As wait_for, but a timeout throws std::runtime_error naming the device, the signal, the target and the last
  // value seen.
  void wait(uint64_t target, std::chrono::milliseconds timeout = kDefaultWaitTimeout) const;
  // The message of wait()'s timeout: "CPU: signal 'timeline' did not reach 5 within 50 ms; last value 3".
  std::string timeout_message(uint64_t target, std::chrono::milliseconds timeout, uint64_t last_seen) const;

  // Sets the help_waiter of SignalPlacement after construction (a device's timeline signal is made before the
  // device can place it); call before any thread waits on the signal.
  void set_help_waiter(void (*help)(const void* context), const void* context);

  // Test seam: while set on a thread, wait_for calls it on that thread right before it sleeps in the kernel, with
  // the futex word it sleeps on and the value that word must still hold for the sleep to begin. A test changes the
  // signal from here (as another thread may at that moment) and checks that the word moved, i.e. that the sleep
  // cannot begin and miss the change. Null clears it.
  using SleepHook = void (*)(const Signal& signal, const std::atomic<uint32_t>& futex_word, uint32_t expected,
                             void* context);
  static void set_sleep_hook_for_testing(SleepHook hook, void* context);

 private:
  SignalMemory own_memory_;
  SignalMemory* memory_ = &own_memory_;
  uint64_t device_address_ = 0;
  bool device_wakes_waiters_ = true;
  const std::atomic<uint64_t>* second_timestamp_ = nullptr;
  std::string (*fault_report_)(const void*) = nullptr;
  const void* fault_context_ = nullptr;
  void (*help_waiter_)(const void*) = nullptr;
  const void* help_context_ = nullptr;
  void (*interrupt_wait_)(const void*) = nullptr;
  const void* interrupt_context_ = nullptr;
  uint64_t ns_per_tick_num_ = 1, ns_per_tick_den_ = 1;
  uint64_t (*read_value_)(const void*) = nullptr;
  void (*write_value_)(const void*, uint64_t) = nullptr;
  uint64_t (*read_timestamp_)(const void*) = nullptr;
  const void* value_context_ = nullptr;
  uint64_t ticks_to_ns(uint64_t ticks) const;
  uint64_t ns_to_ticks(uint64_t ns) const;
  // Host-side bookkeeping, not part of the 16 bytes. `changes` is the futex word sleepers wait on: set() bumps it
  // on every change of the value, so a change of any of the 64 bits (the high half alone included) moves the word
  // the kernel compares; a futex on the low half of the value missed changes confined to the high half. `sleepers`
  // counts the waiters that may sleep on it, so set() skips the wake syscall (~1 us) when nobody sleeps.
  std::atomic<uint32_t> changes_{0};
  mutable std::atomic<uint32_t> sleepers_{0};
  std::string device_;
  std::string name_;
};

}  // namespace doorbell
