#include "hcq/ref/ref_device.h"

#include <atomic>
#include <cstring>
#include <stdexcept>

#include "compiler/program.h"
#include "compiler/ref_target.h"
#include "hcq/ref/ref_interpreter.h"
#include "hcq/signal.h"
#include "hcq/wait_primitives.h"

namespace doorbell {
namespace {

class RefProgram final : public HostProgram {
 public:
  RefProgram(std::string name, std::string device, UOp sink, std::vector<KernelVariable> vars)
      : HostProgram(std::move(name), std::move(device)), sink_(std::move(sink)), vars_(std::move(vars)) {}
  void run(void* const* buffers, const int64_t* vars, int32_t core_id, int32_t core_count) const override {
    (void)core_count;
    if (core_id == 0) interpret_kernel(sink_, buffers, vars_, vars);  // one share: the interpreter is sequential
  }

 private:
  UOp sink_;
  std::vector<KernelVariable> vars_;
};

}  // namespace

RefDevice::RefDevice(std::string name) : Device(std::move(name)) { set_target(ref_target()); }

std::shared_ptr<const LoadedProgram> RefDevice::load(const UOp& program) {
  const ProgramInfo& info = program_info(program);
  return std::make_shared<RefProgram>(info.name, name(), program.src(0), info.vars);
}

void RefDevice::run(std::span<const Command> commands, std::span<void* const> buffers, std::span<const int64_t> scalars) {
  for (const Command& c : commands) {
    switch (c.kind) {
      case CommandKind::kExec: {
        void* const* b = buffers.data() + c.buffers_begin;
        const int64_t* v = scalars.data() + c.scalars_begin;
        if (c.program != nullptr) {
          if (c.program->device() != name())
            throw std::invalid_argument(name() + ": exec of program '" + c.program->name() + "' loaded on " + c.program->device());
          static_cast<const HostProgram*>(c.program)->run(b, v, 0, 1);
        } else {
          const int32_t cores = c.core_count == 0 ? 1 : c.core_count;
          for (int32_t core = 0; core < cores; core++) c.kernel(b, v, core, cores);
        }
        break;
      }
      case CommandKind::kCopy:
        if (c.bytes != 0) std::memmove(c.dst, c.src, c.bytes);
        break;
      case CommandKind::kSignal: c.signal->set(c.value); break;
      case CommandKind::kWait: c.signal->wait(c.value); break;  // throws, naming the signal, after the timeout
      case CommandKind::kTimestamp: c.signal->write_timestamp(static_cast<uint64_t>(monotonic_ns())); break;
      case CommandKind::kMemoryBarrier: std::atomic_thread_fence(std::memory_order_seq_cst); break;
    }
  }
}

void RefDevice::submit(const HWQueue& queue) {
  std::lock_guard lock(mu_);
  run(queue.commands(), queue.buffers(), queue.scalars());
}

std::shared_ptr<BoundQueue> RefDevice::bind(const HWQueue& queue) { return host_bound_copy(queue); }

void RefDevice::submit_bound(std::shared_ptr<const BoundQueue> queue) {
  std::lock_guard lock(mu_);
  run(queue->commands, queue->buffers, queue->scalars);
}

}  // namespace doorbell
