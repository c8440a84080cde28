// The pass pipelines, one per target family, each listing its passes in order by name (tinygrad's
// full_rewrite_to_sink). What a scheduler kernel SINK (scheduler/schedule.h) goes through before linearize and render:
//
//   CPU (C renderer):  optimize_cpu -> expand -> late_lowering -> vectorize
//                      when vectorize refuses the kernel (a gather, integer division, ...; DEBUG=3 says why):
//                      optimize_scalar -> expand -> late_lowering
//                      then the cores the kernel's work is worth (ProgramInfo::global_size[0])
//   GPU (PTX, LLVM):   optimize_gpu (grouped reduces, or upcasts and unrolls) -> expand -> launch_dims -> late_lowering
//   NOOPT=1 leaves out the optimize passes (and with them expand and vectorize).
//
// late_lowering is compiler/late_lowering.h's lower_late with the target's LateLoweringOptions: floor division, 16-bit
// floats, bool memory and transcendentals in the ops the renderer has. Each pass is named: at DEBUG=5 every pass prints its name, the nodes before and after and its time (the
// PatternMatcher passes inside print their rules' hit counts too), and with DOORBELL_VERIFY=1 the kernel's form is
// checked after every pass (compiler/verify.h), so a pass that breaks an invariant is named at once.
#pragma once
#include <functional>
#include <string>

#include "compiler/gpu/gpu_dims.h"
#include "compiler/target.h"
#include "ir/uop.h"

namespace doorbell {

// The stage a pass leaves the kernel in: what DOORBELL_VERIFY=1 checks after it (compiler/verify.h).
enum class KernelStage : uint8_t {
  SCHEDULED,  // the scheduler's form: END(STORE(INDEX(PARAM..)), RANGE...) outputs, REDUCE over RANGEs
  OPTIMIZED,  // ranges split and typed (UPCAST, UNROLL, VECTOR, GROUP_REDUCE): still the scheduler's structure
  EXPANDED,   // no UPCAST or UNROLL range is left
  LAUNCHED,   // GPU: output loops became SPECIAL thread indices; no LOOP range closes an output
  LOWERED,    // what the renderer takes: only ops the target renders natively
};

// Runs passes by name for one kernel: DEBUG=5 output, DOORBELL_VERIFY=1 checks, and the list of passes that ran.
class PassRunner {
 public:
  // `late`: what the target renders natively, checked at the LOWERED stage.
  PassRunner(std::string kernel, const LateLoweringOptions& late) : kernel_(std::move(kernel)), late_(late) {}
  UOp run(const char* pass, KernelStage after, const UOp& in, const std::function<UOp(const UOp&)>& f);
  const std::vector<std::string>& passes() const { return passes_; }

 private:
  std::string kernel_;
  const LateLoweringOptions& late_;
  std::vector<std::string> passes_;
};

// The CPU pipeline: `options` gives the vector lanes and what the C renderer has natively. `optimize` is false with
// NOOPT=1.
LoweredKernel cpu_pipeline(const UOp& sink, const LoweringOptions& options, bool optimize);

struct GpuPipelineOptions {
  bool optimize = true;        // false with NOOPT=1: launch dims only
  GpuDimsOptions dims;         // threads per block the launch aims for
  bool late_lowering = true;   // false: stop after the launch dims (compiler/gpu/gpu_optimizer.h optimize_for_gpu)
  // What the renderer has natively; null: the preset of the target's vendor (PTX, AMDGPU or SPIR-V, compiler/late_lowering.h).
  const LateLoweringOptions* late = nullptr;
};

// The GPU pipeline for a PTX or LLVM IR target. Throws std::invalid_argument (from the launch dims) when the kernel
// cannot be launched within the target's limits.
LoweredKernel gpu_pipeline(const UOp& sink, const GpuTarget& target, const GpuPipelineOptions& options = {});

// The passes the last pipeline run on this thread went through, in order (for tests and tools).
const std::vector<std::string>& last_pipeline_passes();

// DOORBELL_VERIFY=1 in the environment (read once); set_verify_passes overrides it.
bool verify_passes();
void set_verify_passes(bool on);

}  // namespace doorbell
