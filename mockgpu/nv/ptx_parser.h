// PTX module text -> PtxProgram (mockgpu/nv/ptx_program.h). Accepts the subset of PTX that
// compiler/gpu/ptx_renderer.cpp emits (every integer, float, conversion, comparison, select and predicate form,
// ld/st of every type in the global, shared and param spaces incl. .v2/.v4, shared arrays, bar.sync, bra) plus
// close relatives (min/max, fma, mad, mul.hi/.wide, abs, testp, the .approx transcendentals); anything else is
// rejected with a message naming the instruction and its line. Generic addresses are global ones.
#pragma once
#include <string_view>

#include "mockgpu/nv/ptx_program.h"

namespace doorbell::mockgpu::nv {

// Throws std::invalid_argument "ptx line N: ..." naming the unknown instruction, operand or directive.
PtxProgram parse_ptx(std::string_view text);

}  // namespace doorbell::mockgpu::nv
