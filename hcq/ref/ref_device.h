// REF: the reference interpreter as an HCQ device of its own (DEV=REF). Its target (compiler/ref_target.h) compiles
// nothing; its loader keeps the PROGRAM's kernel SINK, and its queue runs commands in order on the submitting thread
// when they are submitted: an exec interprets the kernel element by element (hcq/ref/ref_interpreter.h), copies are
// memmove, signals and timestamps are written by the host. So an error in a kernel (an index outside its buffer)
// comes back from submit, on the caller's thread. Buffers are host memory: run_linear(linear, {.device = "REF"})
// interprets the kernels of any host device's schedule on its own buffers (what tests compare compiled runs with).
#pragma once
#include <memory>
#include <mutex>
#include <string>

#include "hcq/device.h"
#include "hcq/hw_queue.h"

namespace doorbell {

class RefDevice final : public Device {
 public:
  explicit RefDevice(std::string name = "REF");

  void submit(const HWQueue& queue) override;
  std::shared_ptr<BoundQueue> bind(const HWQueue& queue) override;
  void submit_bound(std::shared_ptr<const BoundQueue> queue) override;
  bool host_memory() const override { return true; }

 protected:
  std::shared_ptr<const LoadedProgram> load(const UOp& program) override;

 private:
  void run(std::span<const Command> commands, std::span<void* const> buffers, std::span<const int64_t> scalars);
  std::mutex mu_;  // one submission at a time, in order
};

}  // namespace doorbell
