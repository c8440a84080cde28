// SPIR-V renderer: a GPU kernel (compiler/gpu/gpu_dims.h, after gpu_pipeline with spirv_lowering_options()) as one
// SPIR-V 1.5 module (compiler/spirv/spirv_module.h) for a Vulkan compute pipeline, following the argument ABI of
// compiler/spirv/spirv_kernel_abi.h: PhysicalStorageBuffer64 addressing with the GLSL450 memory model, a push constant
// block holding the argument block's address, each buffer address and variable a word of that block.
// The kernel computes what the C renderer (compiler/c_renderer.h) and ir/exec_alu.h compute, as the PTX renderer does
// (compiler/gpu/ptx_renderer.h); the SPIR-V and Vulkan facts behind each choice are in firmware-notes/spirv-kernels.md
// (§2 addressing, §3 entry point, §4 control flow and barriers, §5 precision, §6 what is lowered first):
//  - values live in 32- and 64-bit integer, float32/float64 and bool SSA ids; int8/int16 (and unsigned) are kept
//    sign- or zero-extended in 32 bits and re-normalized after every op, so they wrap at their width; 8- and 16-bit
//    types exist only in memory (capabilities Int8/Int16 and StorageBuffer8/16BitAccess, only when used);
//  - float16/bfloat16 are their 16 bits in memory and float32 in registers; rounding to them (a CAST, a 16-bit
//    accumulator after each combine) is the C prelude's integer algorithm (db_f2h / db_f2bf), so no driver rounding
//    mode is relied on and the Float16 capability is never needed;
//  - float adds, subs and muls carry NoContraction (no fusing into fma); MULACC of float32 is computed in float64
//    and rounded once where the device has shaderFloat64 (as C); MAX of floats propagates NaN (db_maxf); != of
//    floats is OpFUnordNotEqual (true for NaN), the other comparisons are ordered; a float add with an operand that a
//    driver may fold to a constant 0 restores the IEEE sign of a zero sum (lavapipe folds x + 0.0 to x);
//  - what SPIR-V leaves undefined arrives lowered (division by 0 and INT_MIN / -1, shifts by >= width, float ->
//    int out of range, bool memory, 16-bit float arithmetic, float32 EXP2/LOG2/SIN/POW); float64 transcendentals
//    are refused naming the node;
//  - loops are structured (OpLoopMerge) with their counter and the accumulators in Function variables; a gated load
//    or store is an OpSelectionMerge'd branch (a gated load reads 0);
//  - SPECIAL gidx/lidx are the WorkgroupId / LocalInvocationId built-ins (PTX's %ctaid / %tid); LocalSize is the
//    launch's local size; local buffers are Workgroup arrays and a BARRIER is OpControlBarrier(Workgroup, Workgroup,
//    AcquireRelease | WorkgroupMemory);
//  - the SignedZeroInfNanPreserve execution mode is declared for each float width used when the device offers it.
#pragma once
#include <string>

#include "compiler/gpu/gpu_dims.h"
#include "compiler/spirv/spirv_module.h"
#include "compiler/spirv/spirv_target.h"

namespace doorbell {

// The module of one kernel whose entry point is named `name`. Throws std::invalid_argument naming the node for an op
// or dtype it cannot express, and naming the type and the Vulkan feature for a type the device lacks.
spirv::Module render_spirv(const std::string& name, const GpuKernel& k, const SpirvDeviceCaps& caps);

}  // namespace doorbell
