// Instruction selection for the x86 backend: a linearized CPU kernel (compiler/linearize.h), lowered by the CPU
// pipeline with x86_lowering_options (compiler/x86/x86_target.h), as machine instructions on virtual registers
// (compiler/x86/x86_inst.h), computing exactly what the C renderer's code computes (compiler/c_renderer.h: ir/exec_alu.h
// semantics; vector sums fuse a product into an FMA where the C renderer does; float64 EXP2/LOG2/SIN and POW call libm
// in double; float16 through F16C, bfloat16 through integer rounding, both kept as float32 in registers).
//  - the kernel has the CPU kernel ABI (compiler/cpu_kernel_abi.h): the buffers, scalars, core_id and core_count
//    arrive in the ARG frame slots 0-3; the outermost LOOPs marked split run [c*len/n, (c+1)*len/n) on core c;
//  - scalar integers in GPRs (the value in the low bits of its width; a consumer that needs it extended extends it),
//    bool as 0/1; scalar floats in the low lane of a VEC register; vectors (DType lanes 4, 8 or 16 of 32-bit
//    elements) in one xmm, ymm or zmm register, bools as 0 / -1 lanes;
//  - loops are `cmp; jcc` at the bottom with the body entered once the count is known non-empty; gated loads and
//    stores branch around the access (the address may be outside the buffer when the gate is false);
//  - a compare consumed only by a gate or a WHERE is re-emitted as cmp + jcc / cmovcc at its consumer instead of
//    being kept as a 0/1 value (rematerialized compares);
//  - constants are immediates where the instruction takes one, else `remat` movs or pool loads.
#pragma once
#include <string>
#include <vector>

#include "compiler/linearize.h"
#include "compiler/target.h"
#include "compiler/x86/x86_features.h"
#include "compiler/x86/x86_inst.h"

namespace doorbell::x86 {

struct IselOptions {
  int vector_lanes = 8;             // float32 lanes of a vector value the CPU pipeline made (4, 8 or 16)
  X86Features features;             // what may be emitted; 16 lanes need avx512f/vl/dq
};

// Throws std::invalid_argument naming the node ("x86 isel: <what>: <node>") for a kernel the backend cannot express.
MachineFunction select_instructions(const std::string& name, const LoweredKernel& kernel,
                                    const std::vector<Statement>& statements, const IselOptions& options);

}  // namespace doorbell::x86
