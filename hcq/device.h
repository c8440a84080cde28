// Device: what every HCQ device shares: a name, the signals it owns, its timeline, its target (compiler/target.h:
// how kernels are lowered, rendered and compiled for it) and its loader (load: a PROGRAM to what its queues launch).
// All work submitted so far is done once timeline_signal() >= timeline_value() - 1; the submission idiom is
//   q.wait(tl, dev.timeline_value() - 1) ... .signal(tl, dev.next_timeline()).submit(dev).
// Devices are made by their backend's registration (hcq/backend.h) and found by name (hcq/devices.h).
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/target.h"
#include "hcq/loaded_program.h"
#include "hcq/signal.h"
#include "ir/uop.h"

namespace doorbell {

class HWQueue;
struct BoundQueue;

// What outlives a device: its name, and whether it still exists. Work bound to a device (a bound HWQueue) holds
// this rather than the device, so that using it after the device is gone is an error that names the device instead
// of a read of freed memory.
struct DeviceLife {
  explicit DeviceLife(std::string device_name) : name(std::move(device_name)) {}
  const std::string name;
  std::atomic<bool> alive{true};
};

class Device {
 public:
  // host_signals: signals live in host memory (the CPU device) and the timeline is made here; otherwise the derived
  // device places them (place_signal) and calls create_timeline_signal() once its memory is ready.
  explicit Device(std::string name, bool host_signals = true);
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  virtual ~Device();

  const std::string& name() const { return name_; }

  // What kernels are compiled for to run here. Throws std::logic_error for a device that has none, with the reason
  // the device gave (set_no_target_reason).
  const Target& target() const;
  // The PROGRAM's binary made launchable here (e.g. code copied into GPU memory), loaded once and kept while it is
  // among the device's program_cache_limit() (compiler/program.h) most recently used. The reference stays valid
  // while the caller holds the PROGRAM UOp and until the work it submitted with it is done: an evicted program is
  // freed only once nothing holds its PROGRAM but the device and the timeline has passed every submission made
  // before then (queues carry a bare pointer). Throws naming the program and the reason when it cannot be loaded
  // (compiled for another target, resources the device does not set up).
  const LoadedProgram& program(const UOp& program);
  size_t loaded_programs();   // kept in the cache
  size_t retired_programs();  // evicted, waiting until nothing can still use them
  // Whether the device works on host memory (CPU, REF): its kernels take host pointers, so they can run on the
  // buffers of any other host device.
  virtual bool host_memory() const { return false; }
  // Whether copies need a queue of their own (NV: the copy engine's channel) instead of going in line with kernels.
  virtual bool separate_copy_queue() const { return false; }
  // Enqueues a copy of the queue's commands on the device's ring and returns without waiting for them.
  virtual void submit(const HWQueue& queue) = 0;
  // Copies a queue's commands into memory this device executes from (HWQueue::bind).
  virtual std::shared_ptr<BoundQueue> bind(const HWQueue& queue) = 0;
  // Enqueues a bound queue by reference: nothing is copied.
  virtual void submit_bound(std::shared_ptr<const BoundQueue> queue) = 0;

  // Storage for `bytes` bytes of buffer data, zero-filled: `host` is where the host reads and writes it, `address`
  // what the device's queues use (the same pointer on the CPU device). Address 0: the device has no memory of its
  // own (the default; the CPU device: host_buffers uses its caching allocator directly). Nullptr host with a nonzero
  // address: device memory the host cannot map, reached only through copy_in/copy_out (VK staging).
  struct Storage {
    void* host = nullptr;
    uint64_t address = 0;
    uint64_t handle = 0;  // the device's own name for it, for release_storage
  };
  virtual Storage allocate_storage(size_t bytes) { (void)bytes; return {}; }
  virtual void release_storage(const Storage& storage) { (void)storage; }
  // Host <-> storage transfers of `bytes` bytes at byte `offset` of `storage` (host_buffers' write_buffer and
  // read_buffer). The default copies through the host mapping; a GPU may use its copy engine (NV: large transfers
  // through a pinned staging ring). They return once the bytes arrived; ordering them after the device's work on
  // the buffer is the caller's (the frontend reads a tensor after run_linear synchronized).
  virtual void copy_in(const Storage& storage, uint64_t offset, const void* src, size_t bytes);
  virtual void copy_out(void* dst, const Storage& storage, uint64_t offset, size_t bytes);

  // A signal owned by the device; it lives as long as the device.
  Signal& new_signal(std::string name, uint64_t initial = 0);
  Signal& timeline_signal() { return *timeline_signal_; }
  // The value the next submission will signal; work up to timeline_value() - 1 has been submitted.
  uint64_t timeline_value() const { return timeline_value_.load(std::memory_order_acquire); }
  // Returns timeline_value() and advances it.
  uint64_t next_timeline() { return timeline_value_.fetch_add(1, std::memory_order_acq_rel); }
  // Appends q.signal(timeline, next_timeline()) and submits q, as one step: threads that submit at once take
  // timeline values in the order their work reaches the device, so the timeline only grows (Signal::set refuses a
  // smaller value; two threads taking 7 and 8 and submitting 8 first made the 7 fail).
  void submit_on_timeline(HWQueue& q);
  // Waits until all submitted work signalled the timeline. Throws std::runtime_error on timeout, naming the device,
  // the timeline and what its queue is blocked on (blockage()); and after the wait, when a queue failed since the
  // last synchronize (report_queue_error), with that queue's message.
  void synchronize(std::chrono::milliseconds timeout = kDefaultWaitTimeout);

  // A submitted queue that failed on the device (a kernel that threw, a signal set below its value) leaves its
  // message here, and the next synchronize() throws it. Once: the device stays usable.
  void report_queue_error(std::string message);
  // What the device's oldest unfinished work waits for ("its queue waits for signal 'gate' to reach 1 (value 0)"),
  // or "" when it cannot tell; for timeout errors.
  virtual std::string blockage() { return ""; }
  // A time this device's queues stamped (Signal::timestamp after its signal or timestamp command) on the host's
  // clock, monotonic_ns. The default is for devices that stamp with the host's clock (CPU, REF); a GPU stamps with
  // its own timer and converts by a calibration against the host's (NV: NvDevice::clock_calibration). Differences of
  // two stamps of one device need no conversion.
  virtual int64_t host_time_ns(uint64_t device_ns) { return static_cast<int64_t>(device_ns); }
  // Shared with whoever must outlive the device (see DeviceLife).
  std::shared_ptr<const DeviceLife> life() const { return life_; }
  // The same life without a reference: for comparisons on the submit path (a copy of life() is two atomic updates).
  const DeviceLife* life_id() const noexcept { return life_.get(); }

 protected:
  // Where a new signal's memory goes; the default is inside the Signal object.
  virtual SignalPlacement place_signal() { return {}; }
  void create_timeline_signal();
  // Set once by the derived device when it knows what it compiles for (a GPU: after it read its architecture).
  void set_target(std::unique_ptr<Target> target) {
    owned_target_ = std::move(target);
    target_ = owned_target_.get();
  }
  void set_target(const Target& target) { target_ = &target; }  // a target that outlives the device
  // A device that can run queues but cannot compile here (AMD in a build without LLVM) says why: target() throws it.
  void set_no_target_reason(std::string reason) { no_target_reason_ = std::move(reason); }
  // Makes a PROGRAM's binary launchable on this device (uncached: program() caches).
  virtual std::shared_ptr<const LoadedProgram> load(const UOp& program);

 private:
  std::string name_;
  std::mutex signals_mutex_;
  std::deque<std::unique_ptr<Signal>> signals_;
  Signal* timeline_signal_ = nullptr;
  std::atomic<uint64_t> timeline_value_{1};
  std::mutex timeline_submit_mu_;  // submit_on_timeline: value taken and queue submitted together
  std::mutex errors_mutex_;
  std::string first_error_;  // of the queues that failed since the last synchronize
  size_t error_count_ = 0;
  std::shared_ptr<DeviceLife> life_;
  const Target* target_ = nullptr;
  std::unique_ptr<Target> owned_target_;
  std::string no_target_reason_;
  std::mutex programs_mutex_;
  struct Loaded {
    UOp program;  // keeps the key's node alive
    std::shared_ptr<const LoadedProgram> loaded;
    std::list<const UOpNode*>::iterator lru;
  };
  std::unordered_map<const UOpNode*, Loaded> programs_;
  std::list<const UOpNode*> programs_lru_;  // most recently used first
  struct Retired {
    UOp program;
    std::shared_ptr<const LoadedProgram> loaded;
    std::optional<uint64_t> done_at;  // the timeline value past every submission, once only the device held it
  };
  std::vector<Retired> retired_;
  // With programs_mutex_ held: moves programs past the limit to retired_, and hands back the retired ones nothing
  // can use any more (destroyed by the caller after unlocking).
  std::vector<Retired> collect_programs_locked();
};

}  // namespace doorbell
