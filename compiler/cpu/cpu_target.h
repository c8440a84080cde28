// The CPU's C target (compiler/target.h): the CPU pipeline (compiler/pipeline.h), the C renderer
// (compiler/c_renderer.h) and a C compiler found at run time (compiler/cpu/clang_compiler.h), whose ELF objects the
// CPU device loads with compiler/cpu/elf_loader.h. Kernels take the calling convention of compiler/cpu_kernel_abi.h.
#pragma once
#include "compiler/target.h"

namespace doorbell {

// The process's C target for this CPU (vector lanes from compiler/cpu/cpu_optimizer.h cpu_vector_lanes()).
const Target& cpu_c_target();

}  // namespace doorbell
