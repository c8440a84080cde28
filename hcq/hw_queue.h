// HWQueue: commands recorded as data, submitted to a device's ring, and re-submittable. A command is a POD struct;
// exec's buffer addresses and scalars live in two side arrays that the command indexes. The patch points are the
// command index (signal/wait value) and (command index, slot) (buffer address, scalar), so a recorded queue is
// replayed with only the changed words rewritten, as a GPU queue bound into device memory would be.
#pragma once
#include <array>
#include <string>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "compiler/cpu_kernel_abi.h"
#include "hcq/loaded_program.h"

namespace doorbell {

class Device;
struct DeviceLife;
class Signal;

enum class CommandKind : uint8_t { kExec, kCopy, kSignal, kWait, kTimestamp, kMemoryBarrier };

const char* command_kind_name(CommandKind kind);

struct Command {
  CommandKind kind = CommandKind::kMemoryBarrier;
  // exec: the kernel split over core_count cores (0: one per worker of the device).
  int32_t core_count = 0;
  CpuKernelFn kernel = nullptr;
  // exec of a loaded program (hcq/loaded_program.h): its grid (blocks) and block (threads per block) on a GPU, or
  // grid[0] cores on a host device; buffers are the addresses the device uses, scalars the kernel's variables.
  const LoadedProgram* program = nullptr;
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  uint32_t buffers_begin = 0;  // index into HWQueue::buffers()
  uint32_t buffers_count = 0;
  uint32_t scalars_begin = 0;  // index into HWQueue::scalars()
  uint32_t scalars_count = 0;
  // copy
  void* dst = nullptr;
  const void* src = nullptr;
  uint64_t bytes = 0;
  // signal, wait, timestamp
  Signal* signal = nullptr;
  uint64_t value = 0;
};
static_assert(std::is_trivially_copyable_v<Command>, "commands are plain data a device can copy into its ring");

// A queue's commands in memory the device executes from (tinygrad's bind: on a GPU the packets are copied into
// device memory once, and a submit only rings the doorbell). Patching a bound queue writes this memory, so it must
// not happen while the device may be running the queue.
struct BoundQueue {
  virtual ~BoundQueue() = default;  // a GPU device's bound queue also owns device memory
  std::vector<Command> commands;
  std::vector<void*> buffers;
  std::vector<int64_t> scalars;

  // The patch points, called by HWQueue after it checked the command and slot. These update the plain copy above
  // (all a host device needs); a GPU device's bound queue also rewrites exactly the patched words in its device
  // memory, once the previous run of the queue has passed, and never encodes the queue again. Each returns the words
  // of what the device runs from that it rewrote (the words whose value changed): here a 64-bit slot of the plain
  // copy is one word; a GPU counts its own (NV: two 32-bit words per 64-bit value).
  virtual size_t patch_value(size_t command, uint64_t value) { return store(commands[command].value, value); }
  virtual size_t patch_buffer(size_t command, size_t slot, void* buffer) { return store(buffers[commands[command].buffers_begin + slot], buffer); }
  virtual size_t patch_scalar(size_t command, size_t slot, int64_t value) { return store(scalars[commands[command].scalars_begin + slot], value); }
  virtual size_t patch_copy(size_t command, void* dst, const void* src) {
    return store(commands[command].dst, dst) + store(commands[command].src, src);
  }

 protected:
  template <class T>
  static size_t store(T& at, T value) {
    if (at == value) return 0;
    at = value;
    return 1;
  }
};

class HWQueue;
// A host device's bound queue: a plain copy of the recorded commands and their side arrays (host memory is the
// device's memory, so nothing more is bound).
std::shared_ptr<BoundQueue> host_bound_copy(const HWQueue& queue);

class HWQueue {
 public:
  // Runs `kernel` as core_count parallel calls (core_id 0..core_count-1); 0 means one per device worker.
  HWQueue& exec(CpuKernelFn kernel, std::span<void* const> buffers, std::span<const int64_t> scalars = {},
                int32_t core_count = 0);
  HWQueue& exec(CpuKernelFn kernel, std::initializer_list<void*> buffers, int32_t core_count = 0) {
    return exec(kernel, std::span<void* const>(buffers.begin(), buffers.size()), {}, core_count);
  }
  // Launches `program` over grid x block threads (grid[0] cores on a host device) with the addresses `buffers` and
  // then the variable values `vars` as its parameters.
  HWQueue& exec(const LoadedProgram& program, std::span<const uint64_t> buffers, std::span<const int64_t> vars,
                std::array<uint32_t, 3> grid, std::array<uint32_t, 3> block);
  HWQueue& exec(const LoadedProgram& program, std::span<const uint64_t> buffers, std::array<uint32_t, 3> grid,
                std::array<uint32_t, 3> block) {
    return exec(program, buffers, {}, grid, block);
  }
  HWQueue& copy(void* dst, const void* src, uint64_t bytes);
  // After all earlier commands finished: store `value` in the signal (and the time at +8).
  HWQueue& signal(Signal& signal, uint64_t value);
  // Nothing after this starts before signal >= value.
  HWQueue& wait(Signal& signal, uint64_t value);
  // After all earlier commands finished: store the time at +8 of the signal.
  HWQueue& timestamp(Signal& signal);
  // Makes earlier writes visible to later commands and to the host.
  HWQueue& memory_barrier();
  // Hands a copy of the recorded commands to the device's ring; the queue stays recorded for replay. A bound
  // queue hands over only a reference to its device copy, and only to the device it is bound to: another device is
  // std::invalid_argument, and a device that was destroyed since (with the memory of the bound copy) is
  // std::logic_error naming it.
  HWQueue& submit(Device& device);
  // Copies the commands into the device's memory once; afterwards submit() copies nothing, patches write the
  // device copy too, and recording more commands throws std::logic_error.
  HWQueue& bind(Device& device);
  bool bound() const { return bound_ != nullptr; }
  // The device's copy of a bound queue (null while unbound): for tests and tools that inspect what the device runs.
  const BoundQueue* bound_queue() const { return bound_.get(); }

  // Patch points. Each throws std::out_of_range for a bad index and std::invalid_argument for a command of
  // another kind. On a bound queue the device's copy is patched in place (BoundQueue::patch_*): a GPU device first
  // waits until the previous run of the queue completed (a timeout throws naming it) and rewrites only the patched
  // words. Each returns the words it rewrote in what the device runs from (BoundQueue::patch_*; 0 when the value was
  // already there), or for an unbound queue the recorded slots it changed (0 or 1).
  size_t patch_value(size_t command, uint64_t value);                // signal or wait
  size_t patch_buffer(size_t command, size_t slot, void* buffer);    // exec
  size_t patch_scalar(size_t command, size_t slot, int64_t value);   // exec
  size_t patch_copy(size_t command, void* dst, const void* src);    // copy: both addresses (same byte count)

  size_t size() const { return commands_.size(); }
  std::span<const Command> commands() const { return commands_; }
  std::span<void* const> buffers() const { return buffers_; }
  std::span<const int64_t> scalars() const { return scalars_; }

 private:
  HWQueue& record_signal_command(CommandKind kind, Signal& signal, uint64_t value);  // signal, wait, timestamp
  Command& command_of(size_t index, std::initializer_list<CommandKind> kinds, const char* what);
  void check_recordable(const char* what) const;

  std::vector<Command> commands_;
  std::vector<void*> buffers_;
  std::vector<int64_t> scalars_;
  std::shared_ptr<BoundQueue> bound_;
  std::shared_ptr<const DeviceLife> bound_device_;  // not the Device: the queue may outlive it
};

}  // namespace doorbell
