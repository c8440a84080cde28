// run_linear: executes a LINEAR of CALLs (seed 000) with a handler per call kind:
//  - CALL(PROGRAM, buffers...): a kernel from compile_linear, run on the CPU HCQ device across its workers;
//  - CALL(COPY, dst, src): a copy of one buffer into another of the same byte size, through the device's queue;
//  - CALL(SINK, buffers...): a kernel not compiled, interpreted on the host one element at a time with the IR's own
//    exec_alu semantics: the reference the compiled path is checked against.
// Device work is recorded into one queue and submitted once; run_linear returns when everything finished.
// DEBUG=2 prints one line per compiled kernel with its kernel-only time from timestamps written by the queue.
#pragma once
#include <string>
#include <vector>

#include "compiler/kernel_estimates.h"
#include "ir/uop.h"

namespace doorbell {

void run_linear(const UOp& linear);

// One compiled kernel's run: its kernel-only time from the timestamps the queue wrote around its exec.
struct KernelTiming {
  std::string name;
  std::string launch;  // "[cores x iterations]" on the CPU, "[grid x block]" on a GPU
  double ns = 0;
  KernelEstimates estimates;
};

// run_linear with every compiled kernel bracketed by timestamps (as at DEBUG=2, without printing): the kernel-only
// times in call order. Benchmarks use it; reference-interpreted kernels and copies are not timed.
std::vector<KernelTiming> run_linear_timed(const UOp& linear);

}  // namespace doorbell
