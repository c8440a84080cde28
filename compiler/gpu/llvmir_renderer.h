// LLVM IR renderer: a lowered GPU kernel (compiler/gpu/gpu_dims.h) as LLVM IR text (tinygrad renderer/llvmir.py).
// Text only: no LLVM headers, so the renderer builds without LLVM and its output can be checked
// in as golden text; compiler/gpu/llvm/amdgpu_compiler.h compiles it in process.
//
// The IR computes what the C renderer (compiler/c_renderer.h) computes. render_llvm_ir first lowers the kernel with
// lower_late and amdgpu_lowering_options() (compiler/late_lowering.h): floor division, the division edge cases,
// 16-bit float arithmetic, bool buffers, EXP2/LOG2/SIN and POW become plain ops. Then:
//  - integers wrap at their width; CDIV/CMOD are sdiv/srem (udiv/urem), whose divisor is never 0 (nor -1, signed);
//  - float16 and bfloat16 live in memory as i16 bits and in registers as float; a CAST to them rounds, and so does
//    a 16-bit accumulator after each sum or product, with the same round-to-nearest-even and NaN bits as the C
//    helpers;
//  - float32/float16/bfloat16 EXP2, LOG2, SIN and POW arrive as float32 arithmetic (compiler/transcendental.h):
//    POW within a few ULP of float32 for moderate results, relative error growing with |y * log2|x|| (the C target
//    computes pow in double and rounds once). float64 EXP2/LOG2/SIN/POW need AMD's device libraries and are
//    rejected;
//  - bool is i1 in registers; a gated load reads 0; MAX propagates NaN.
// Weak integers (index math) are i32 where the node's bounds fit, i64 otherwise, as the C renderer does.
// Loops are basic blocks with a phi per counter; accumulators are allocas that the optimizer's mem2reg/SROA turn
// into phis.
#pragma once
#include <string>

#include "compiler/gpu/gpu_dims.h"
#include "compiler/gpu/gpu_target.h"

namespace doorbell {

// What differs between LLVM targets that run the same kernel IR. amdgpu_llvm_target() fills it for AMD; a CPU
// variant (x86-64, a loop over the grid) would set its own triple, address spaces and thread-index source.
struct LlvmIrTarget {
  std::string triple;               // "amdgcn-amd-amdhsa"
  std::string datalayout;           // must match the TargetMachine's (the compiler checks)
  std::string calling_convention;   // "amdgpu_kernel"
  int global_addrspace = 0;         // address space of buffer pointers (AMDGPU: 1, global)
  int alloca_addrspace = 0;         // address space of allocas (AMDGPU: 5, private)
  int local_addrspace = 0;          // address space of a block's shared (local) buffers (AMDGPU: 3, LDS)
  bool local_internal = false;      // local buffers as internal globals (AMDGPU); external ones let a CPU harness
                                    // see them, so the optimizer cannot move their loads across its barrier call
  std::string barrier_function;     // called where every thread of a block waits ("llvm.amdgcn.s.barrier")
  bool barrier_fences = false;      // wrap the call in workgroup release/acquire fences (AMDGPU's __syncthreads)
  std::string group_id_intrinsic;   // with ".x"/".y"/".z" appended: the block (work-group) index
  std::string local_id_intrinsic;   // the thread (work-item) index in the block
  std::string extra_function_attributes;  // added to the kernel's attribute group
};

// The AMDGPU (amdhsa) form of `t`; throws std::invalid_argument unless t is an AMD target.
LlvmIrTarget amdgpu_llvm_target(const GpuTarget& t);

// The kernel, lowered by lower_late with amdgpu_lowering_options() (compiler/late_lowering.h), as an LLVM module
// with one kernel function named `name`, taking one pointer per buffer slot
// (data0, data1, ...); each local buffer (compiler/gpu/group_reduce.h) is a global @<name>_db_local<slot> in
// local_addrspace. Throws std::invalid_argument naming the node when an op or dtype cannot be rendered.
std::string render_llvm_ir(const std::string& name, const GpuKernel& k, const GpuTarget& t);
std::string render_llvm_ir(const std::string& name, const GpuKernel& k, const LlvmIrTarget& t);

}  // namespace doorbell
