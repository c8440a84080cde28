// Jit: capture a tensor function once, then replay it as bound device queues (tinygrad's TinyJit, engine/jit.py).
//
//   Jit step([](std::span<const Tensor> in) { return std::vector<Tensor>{(in[0] + 1) * 2}; });
//   for (...) Tensor y = step({x})[0];
//
// Call 1 runs the function as written. Call 2 runs it again and captures every kernel its realizes run, then plans
// them together: one memory plan for the whole captured program (every intermediate, also those of separate
// realizes, in one arena per device), each device's calls recorded into HWQueues that are bound to the device once.
// Later calls run nothing of the function: they check the inputs, patch the bound queues where a value changed (an
// input's buffer address, a variable's value, the completion signal's and the waits' values) and ring each queue's
// doorbell once. A queue waits on the device for the queue before it (another device or channel) wherever that
// device can wait for a signal the other writes, so the host submits all queues back to back and waits at the end
// (and before a copy only the host can make, between two GPUs). A copy with a host device (CPU, REF) on one side
// runs on that device's queue.
//
// What replay keeps from the capture (the tracing-JIT rules, tinygrad test_jit_footguns.py):
//  - outputs are the same tensors every call, backed by the same buffers: a call overwrites the outputs of the
//    previous one (TinyJit does the same; copy what must survive, e.g. (y + 0).realize());
//  - constants, branches and tensors the function reads without taking them as inputs are those of the capture;
//    such a tensor may change in place (a realized assign), and a replay refuses it when it now holds another value
//    (a pending assign, a new buffer);
//  - variables (UOp::variable) take the values given in VarVals at each call; the function gets them too.
// Errors that would otherwise give wrong answers are JitError (std::invalid_argument) naming the input and the
// expectation: a different number of inputs, a changed shape, dtype or device, a constant input, one tensor passed
// twice, an input that is also an output, tolist()/item() during capture, nested capture, a function that computed
// nothing. A Jit is used by one thread at a time.
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

#include "frontend/tensor.h"
#include "hcq/run_linear.h"

namespace doorbell {

class JitError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class Jit {
 public:
  using Function = std::function<std::vector<Tensor>(std::span<const Tensor> inputs, const VarVals& vars)>;
  using PlainFunction = std::function<std::vector<Tensor>(std::span<const Tensor> inputs)>;

  explicit Jit(Function fn);
  explicit Jit(PlainFunction fn);
  Jit(const Jit&) = delete;
  Jit& operator=(const Jit&) = delete;
  ~Jit();

  // Runs (calls 1 and 2) or replays (later calls) the function on `inputs`; returns its outputs, realized.
  std::vector<Tensor> operator()(std::span<const Tensor> inputs, const VarVals& vars = {});
  std::vector<Tensor> operator()(std::initializer_list<Tensor> inputs, const VarVals& vars = {}) {
    return (*this)(std::span<const Tensor>(inputs.begin(), inputs.size()), vars);
  }

  // Forgets the capture: the next call runs the function as call 1 did.
  void reset();

  // What the capture holds and what the last replay did (for tests and tools; zero before capture).
  struct Stats {
    size_t calls = 0;             // calls so far
    size_t kernels = 0;           // kernel launches in one replay
    size_t queues = 0;            // bound queues, i.e. doorbell rings per replay
    size_t patch_points = 0;      // input addresses, variables, completion signals and waits a replay may rewrite
    size_t last_patches = 0;      // patch points the last replay rewrote (only those whose value changed)
    size_t last_words = 0;        // words the last replay rewrote in the bound queues (HWQueue::patch_*: NV's are 32-bit)
    size_t queue_waits = 0;       // queues that wait on the device for the queue before them
    size_t host_waits = 0;        // times the last replay's host waited for a queue (the end included)
    int64_t arena_bytes = 0;      // of the one memory plan over every captured call
    int64_t unplanned_bytes = 0;  // what the planned intermediates would take without sharing
  };
  Stats stats() const;

 private:
  struct Captured;
  std::vector<Tensor> capture(std::span<const Tensor> inputs, const VarVals& vars);
  Function fn_;
  size_t calls_ = 0;
  std::unique_ptr<Captured> captured_;
};

}  // namespace doorbell
