// compile_linear: the schedule with every kernel body compiled (seed 003). Each CALL(SINK, buffers...) becomes
// CALL(PROGRAM(SINK, LINEAR, SOURCE, BINARY), buffers...); calls whose body is already a PROGRAM are kept.
// Kernels compile once per process through the program cache (compiler/program.h).
#pragma once
#include "ir/uop.h"

namespace doorbell {

UOp compile_linear(const UOp& linear);

}  // namespace doorbell
