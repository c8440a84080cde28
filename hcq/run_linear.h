// run_linear: executes a LINEAR of CALLs (seeds 000, 002) with a handler per call kind:
//  - CALL(SINK, buffers...), a kernel not compiled yet: compiled first for its device's target (compile_linear,
//    through the program cache), then run as below;
//  - CALL(PROGRAM, buffers...): the program loaded by its device (Device::program) and launched through the device's
//    queue with the buffers' addresses, the variables' values and the program's launch size (ProgramInfo);
//  - CALL(COPY, dst, src): a copy of one buffer into another of the same byte size, through the device's queue.
// A call runs on its buffers' device. Device work is recorded into one queue per device and submitted once (a copy
// that needs the copy engine's own queue flushes it first); run_linear returns when everything finished.
// DEBUG=2 prints one line per kernel and copy with its kernel-only time from timestamps written by the queue, a
// running count of kernels and the memory in use (tinygrad's DEBUG=2 line).
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/uop.h"

namespace doorbell {

// Values of kernel variables (PARAM with AddrSpace::ALU, UOp::variable) by name, bound for one run.
using VarVals = std::unordered_map<std::string, int64_t>;

struct RunOptions {
  // Run every kernel on this device instead of its buffers' device: a host device (REF, CPU) can run the kernels
  // of any schedule whose buffers are host memory (any other device only its own buffers' calls: an error names
  // both). on_device("REF") interprets them: the reference.
  std::string device;
  VarVals var_vals;  // every variable a kernel takes must have a value within its bounds
};

// RunOptions that run every kernel on `device`: run_linear(linear, on_device("REF")) is the reference run.
inline RunOptions on_device(std::string device) {
  RunOptions o;
  o.device = std::move(device);
  return o;
}

void run_linear(const UOp& linear, const RunOptions& options = {});

// One kernel's or copy's run: its time from the timestamps the queue wrote around it.
struct KernelTiming {
  std::string name;    // the kernel's (ProgramInfo::name), or "copy"
  std::string launch;  // ProgramInfo::launch_string(), or the bytes copied
  double ns = 0;
  int64_t ops = 0;     // estimated ALU operations (ProgramInfo::ops); 0 for a copy
  int64_t bytes = 0;   // estimated bytes moved
};

// run_linear with every kernel and copy bracketed by timestamps (as at DEBUG=2, without printing): the kernel-only
// times in call order. Benchmarks use it.
std::vector<KernelTiming> run_linear_timed(const UOp& linear, const RunOptions& options = {});

// How many kernels run_linear launched in this process (DEBUG=2's running count).
uint64_t kernels_launched();

}  // namespace doorbell
