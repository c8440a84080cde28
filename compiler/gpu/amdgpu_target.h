// AMD's AMDGPU target (compiler/target.h): the GPU pipeline (compiler/pipeline.h) for gfx1100 or gfx942 launch limits
// and AMD's late-lowering options, the LLVM IR renderer (compiler/gpu/llvmir_renderer.h) and LLVM 19 in process
// (compiler/gpu/llvm/amdgpu_compiler.h) linked by ld.lld into a code object; the registers and the stack come from the
// code object's own metadata (compiler/gpu/amd_code_object.h: .vgpr_count, .private_segment_fixed_size). Code objects
// are kept in the disk object cache. Only with LLVM (DOORBELL_HAVE_LLVM); the AMD device arrives with its issue.
#pragma once
#include <memory>
#include <string>

#include "compiler/target.h"

namespace doorbell {

// Throws std::invalid_argument for an arch that is not an AMD target, and when built without LLVM.
std::unique_ptr<Target> make_amdgpu_target(const std::string& arch);

}  // namespace doorbell
