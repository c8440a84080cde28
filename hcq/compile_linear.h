// compile_linear: the schedule with every kernel compiled for its device's target (seed 003). Each
// CALL(SINK, buffers...) becomes CALL(PROGRAM(SINK, LINEAR, SOURCE, BINARY), buffers...) (compiler/program.h), where
// the target is the one of the device its buffers live on (Device::target: C on the CPU, PTX + cubin on NV, ...);
// calls whose body is already a PROGRAM for that target, and copies, are kept. Kernels compile once per process per
// target through the program cache. DEBUG=2 prints each compile's latency, DEBUG=4 the source of each kernel compiled.
#pragma once
#include <string>

#include "ir/uop.h"

namespace doorbell {

class Device;

// `device`: compile every kernel for this device instead of its buffers' device ("" for theirs).
UOp compile_linear(const UOp& linear, const std::string& device = "");

// One kernel CALL's body compiled for `d` (or kept when it is a PROGRAM of d's target): what run_linear launches.
UOp compile_call(const UOp& call, Device& d);

// The device a CALL runs on: the device its buffers name (through arena views); CPU when it names none. Throws
// std::invalid_argument when its buffers are on different devices.
Device& call_device(const UOp& call);

}  // namespace doorbell
