// run_linear: executes a LINEAR of kernel CALLs (seed 000). This version interprets each kernel body on host
// buffers, one element at a time, with the IR's own exec_alu semantics. It is the reference the compiled CPU
// path (the CPU end-to-end issue) is checked against.
#pragma once
#include "ir/uop.h"

namespace doorbell {

void run_linear(const UOp& linear);

}  // namespace doorbell
