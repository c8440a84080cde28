// The CPU's x86 target (compiler/target.h): the CPU pipeline (compiler/pipeline.h) with x86_lowering_options, then
// instruction selection (compiler/x86/isel.h), register allocation (compiler/x86/regalloc.h) and the encoder
// (compiler/x86/x86_encoder.h), in this process: no compiler subprocess. render() gives the kernel's assembly listing
// (the PROGRAM's SOURCE; DEBUG=4 prints it), compile() assembles that listing into a relocatable ELF object that the
// CPU device loads like clang's (compiler/cpu/elf_loader.h), with the same kernel ABI (compiler/cpu_kernel_abi.h).
#pragma once
#include <cstdint>
#include <memory>

#include "compiler/late_lowering.h"
#include "compiler/target.h"

namespace doorbell {

// As c_lowering_options: float64 transcendentals and POW stay for libm calls, float32 ones are decomposed.
LateLoweringOptions x86_lowering_options();

// The process's x86 target for this CPU (renderer "X86"); vector lanes as the C target's. A kernel it cannot express
// is an error naming the node.
const Target& cpu_x86_target();

// The x86 target for every kernel it expresses and the C target (clang) for the rest, decided per kernel at render:
// the listing or the C source is the PROGRAM's SOURCE, and compile() assembles or runs clang by which it is. Kernels
// the x86 target refused are counted (x86_fallback_count) and named at DEBUG>=2.
const Target& cpu_x86_with_clang_fallback_target();
// The same arrangement for any two targets that lower alike (tests): `first` for every kernel it renders,
// `second` for those it refuses with std::invalid_argument; compile() picks by the source's first line (a listing
// starts with ".intel_syntax").
std::unique_ptr<Target> make_fallback_target(const Target& first, const Target& second);
uint64_t x86_fallback_count();
// DOORBELL_X86_FALLBACK (read once): "0" makes CPU:X86 the x86 target alone, so a kernel it cannot express is an
// error (what the x86.* ctest runs set); unset or "1": with the clang fallback.
bool x86_fallback_enabled();

}  // namespace doorbell
