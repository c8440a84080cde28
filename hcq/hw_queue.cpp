#include "hcq/hw_queue.h"

#include <stdexcept>
#include <string>

#include "hcq/device.h"

namespace doorbell {

namespace {
// A bound queue on cache lines of its own. make_shared puts the reference counts right before the object, and every
// submit of a bound queue copies and releases a reference on the submitting thread: sharing a line with the
// queue's header (which the device's dispatcher reads on every run), each count change invalidated the
// dispatcher's copy and cost a line transfer on both sides of the doorbell. Measured with bench_hcq
// BM_BoundQueueDispatch/1/1 (medians of 5): submit -> kernel start 321 ns before, see cpu_device.cpp for after.
struct alignas(64) LineBoundQueue final : BoundQueue {};
}  // namespace

std::shared_ptr<BoundQueue> host_bound_copy(const HWQueue& queue) {
  std::shared_ptr<BoundQueue> b = std::make_shared<LineBoundQueue>();
  b->commands.assign(queue.commands().begin(), queue.commands().end());
  b->buffers.assign(queue.buffers().begin(), queue.buffers().end());
  b->scalars.assign(queue.scalars().begin(), queue.scalars().end());
  return b;
}

const char* command_kind_name(CommandKind kind) {
  switch (kind) {
    case CommandKind::kExec: return "exec";
    case CommandKind::kCopy: return "copy";
    case CommandKind::kSignal: return "signal";
    case CommandKind::kWait: return "wait";
    case CommandKind::kTimestamp: return "timestamp";
    case CommandKind::kMemoryBarrier: return "memory_barrier";
  }
  return "unknown";
}

void HWQueue::check_recordable(const char* what) const {
  if (bound_)
    throw std::logic_error(std::string("HWQueue::") + what + ": the queue is bound to " + bound_device_->name +
                           "; expected an unbound queue (record everything before bind)");
}

HWQueue& HWQueue::exec(const LoadedProgram& program, std::span<const uint64_t> args, std::span<const int64_t> vars,
                       std::array<uint32_t, 3> grid, std::array<uint32_t, 3> block) {
  check_recordable("exec");
  for (int d = 0; d < 3; d++)
    if (grid[d] == 0 || block[d] == 0)
      throw std::invalid_argument("HWQueue::exec: program '" + program.name() + "' has an empty grid or block in dimension " +
                                  std::to_string(d) + "; expected sizes >= 1");
  Command c;
  c.kind = CommandKind::kExec;
  c.program = &program;
  c.grid = grid;
  c.block = block;
  c.buffers_begin = static_cast<uint32_t>(buffers_.size());
  c.buffers_count = static_cast<uint32_t>(args.size());
  c.scalars_begin = static_cast<uint32_t>(scalars_.size());
  c.scalars_count = static_cast<uint32_t>(vars.size());
  for (uint64_t a : args) buffers_.push_back(reinterpret_cast<void*>(static_cast<uintptr_t>(a)));
  scalars_.insert(scalars_.end(), vars.begin(), vars.end());
  commands_.push_back(c);
  return *this;
}

HWQueue& HWQueue::exec(CpuKernelFn kernel, std::span<void* const> buffers, std::span<const int64_t> scalars,
                       int32_t core_count) {
  check_recordable("exec");
  if (kernel == nullptr) throw std::invalid_argument("HWQueue::exec: kernel is null; expected a function");
  if (core_count < 0) {
    throw std::invalid_argument("HWQueue::exec: core_count " + std::to_string(core_count) +
                                "; expected 0 (every worker) or more");
  }
  Command c;
  c.kind = CommandKind::kExec;
  c.kernel = kernel;
  c.core_count = core_count;
  c.buffers_begin = static_cast<uint32_t>(buffers_.size());
  c.buffers_count = static_cast<uint32_t>(buffers.size());
  c.scalars_begin = static_cast<uint32_t>(scalars_.size());
  c.scalars_count = static_cast<uint32_t>(scalars.size());
  buffers_.insert(buffers_.end(), buffers.begin(), buffers.end());
  scalars_.insert(scalars_.end(), scalars.begin(), scalars.end());
  commands_.push_back(c);
  return *this;
}

HWQueue& HWQueue::copy(void* dst, const void* src, uint64_t bytes) {
  check_recordable("copy");
  if (bytes != 0 && (dst == nullptr || src == nullptr)) {
    throw std::invalid_argument("HWQueue::copy: " + std::to_string(bytes) +
                                " bytes with a null source or destination; expected two addresses");
  }
  Command c;
  c.kind = CommandKind::kCopy;
  c.dst = dst;
  c.src = src;
  c.bytes = bytes;
  commands_.push_back(c);
  return *this;
}

HWQueue& HWQueue::record_signal_command(CommandKind kind, Signal& signal, uint64_t value) {
  check_recordable(command_kind_name(kind));
  Command c;
  c.kind = kind;
  c.signal = &signal;
  c.value = value;
  commands_.push_back(c);
  return *this;
}

HWQueue& HWQueue::signal(Signal& signal, uint64_t value) { return record_signal_command(CommandKind::kSignal, signal, value); }
HWQueue& HWQueue::wait(Signal& signal, uint64_t value) { return record_signal_command(CommandKind::kWait, signal, value); }
HWQueue& HWQueue::timestamp(Signal& signal) { return record_signal_command(CommandKind::kTimestamp, signal, 0); }

HWQueue& HWQueue::memory_barrier() {
  check_recordable("memory_barrier");
  Command c;
  c.kind = CommandKind::kMemoryBarrier;
  commands_.push_back(c);
  return *this;
}

HWQueue& HWQueue::submit(Device& device) {
  if (!bound_) {
    device.submit(*this);
    return *this;
  }
  if (!bound_device_->alive.load(std::memory_order_acquire))
    throw std::logic_error("HWQueue::submit: the queue was bound to " + bound_device_->name +
                           ", which has been destroyed (and its bound copy with it); expected a queue bound to a live "
                           "device: record it again and bind it to " + device.name());
  if (device.life_id() != bound_device_.get())
    throw std::invalid_argument("HWQueue::submit: the queue is bound to " + bound_device_->name +
                                " and cannot be submitted to another device (" + device.name() + ")");
  device.submit_bound(bound_);
  return *this;
}

HWQueue& HWQueue::bind(Device& device) {
  if (bound_) throw std::logic_error("HWQueue::bind: the queue is already bound to " + bound_device_->name);
  bound_ = device.bind(*this);
  bound_device_ = device.life();
  return *this;
}

Command& HWQueue::command_of(size_t index, std::initializer_list<CommandKind> kinds, const char* what) {
  if (index >= commands_.size()) {
    throw std::out_of_range(std::string("HWQueue::") + what + ": command " + std::to_string(index) +
                            " does not exist; the queue has " + std::to_string(commands_.size()));
  }
  Command& c = commands_[index];
  for (CommandKind k : kinds) {
    if (c.kind == k) return c;
  }
  std::string expected;
  for (CommandKind k : kinds) expected += std::string(expected.empty() ? "" : " or ") + command_kind_name(k);
  throw std::invalid_argument(std::string("HWQueue::") + what + ": command " + std::to_string(index) + " is " +
                              command_kind_name(c.kind) + "; expected " + expected);
}

size_t HWQueue::patch_value(size_t command, uint64_t value) {
  Command& c = command_of(command, {CommandKind::kSignal, CommandKind::kWait}, "patch_value");
  const size_t words = bound_ ? bound_->patch_value(command, value) : size_t{c.value != value};  // first: it may throw
  c.value = value;
  return words;
}

size_t HWQueue::patch_buffer(size_t command, size_t slot, void* buffer) {
  const Command& c = command_of(command, {CommandKind::kExec}, "patch_buffer");
  if (slot >= c.buffers_count) {
    throw std::out_of_range("HWQueue::patch_buffer: slot " + std::to_string(slot) + " of command " +
                            std::to_string(command) + ", which has " + std::to_string(c.buffers_count) + " buffers");
  }
  void*& at = buffers_[c.buffers_begin + slot];
  const size_t words = bound_ ? bound_->patch_buffer(command, slot, buffer) : size_t{at != buffer};
  at = buffer;
  return words;
}

size_t HWQueue::patch_scalar(size_t command, size_t slot, int64_t value) {
  const Command& c = command_of(command, {CommandKind::kExec}, "patch_scalar");
  if (slot >= c.scalars_count) {
    throw std::out_of_range("HWQueue::patch_scalar: slot " + std::to_string(slot) + " of command " +
                            std::to_string(command) + ", which has " + std::to_string(c.scalars_count) + " scalars");
  }
  int64_t& at = scalars_[c.scalars_begin + slot];
  const size_t words = bound_ ? bound_->patch_scalar(command, slot, value) : size_t{at != value};
  at = value;
  return words;
}

size_t HWQueue::patch_copy(size_t command, void* dst, const void* src) {
  Command& c = command_of(command, {CommandKind::kCopy}, "patch_copy");
  if (c.bytes != 0 && (dst == nullptr || src == nullptr))
    throw std::invalid_argument("HWQueue::patch_copy: command " + std::to_string(command) + " copies " + std::to_string(c.bytes) +
                                " bytes; expected two addresses, got a null source or destination");
  const size_t words = bound_ ? bound_->patch_copy(command, dst, src) : size_t{c.dst != dst} + size_t{c.src != src};
  c.dst = dst;
  c.src = src;
  return words;
}

}  // namespace doorbell
