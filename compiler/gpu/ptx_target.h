// NVIDIA's PTX target (compiler/target.h): the GPU pipeline (compiler/pipeline.h) for sm_80 or sm_90 launch limits,
// the PTX renderer (compiler/gpu/ptx_renderer.h) and ptxas (compiler/gpu/ptxas.h), whose cubin's own metadata gives
// the registers and stack (compiler/gpu/cubin_reader.h). Cubins are kept in the disk object cache, so a second
// process runs no ptxas for a kernel it has seen.
#pragma once
#include <memory>
#include <string>

#include "compiler/target.h"

namespace doorbell {

enum class PtxAssembly : uint8_t {
  kRequired,  // ptxas must exist: compiling without it throws PtxasError (a real GPU runs the cubin)
  kIfFound,   // a cubin when ptxas exists, else no binary: for the emulated GPU, which interprets the PTX itself
};

// A target for a GPU whose SM architecture is `sass_arch` ("sm_90", "sm_86", ...): PTX for sm_90 on Hopper and
// later, sm_80 before (ptxas assembles sm_80 PTX for any later sm_8x), assembled by ptxas for `sass_arch`.
std::unique_ptr<Target> make_ptx_target(const std::string& sass_arch, PtxAssembly assembly);

// The PTX ISA target the renderer writes for a GPU of `sass_arch`: "sm_90" from sm_90 on, else "sm_80".
std::string ptx_arch_for(const std::string& sass_arch);

}  // namespace doorbell
