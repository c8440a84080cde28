// The reference interpreter: one scheduler kernel SINK (scheduler/schedule.h) executed element by element on the host
// with the IR's own semantics (ir/exec_alu.h). RANGE values live in an environment; values computed for the current
// range values are memoized until a range changes. It is what the REF device runs (hcq/ref/ref_device.h) and what
// every compiled target is tested against.
#pragma once
#include <cstdint>
#include <span>

#include "ir/program_info.h"
#include "ir/uop.h"

namespace doorbell {

// `buffers[i]`: the host address of buffer slot i, whose element count is its PARAM's bound (vmax + 1); `vars`: the
// values of `variables` (ProgramInfo::vars), in that order. Throws std::runtime_error naming the node for an index
// outside its buffer, an undefined operation (division by zero) or an op it cannot execute.
void interpret_kernel(const UOp& sink, void* const* buffers, std::span<const KernelVariable> variables, const int64_t* vars);

// How many kernels this process interpreted (tests check that compiled paths interpret none).
uint64_t interpreted_kernels();

}  // namespace doorbell
