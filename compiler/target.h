// Target: what a backend compiles kernels for (DESIGN.md "Backends"): its lowering options, its pass pipeline
// (compiler/pipeline.h), its renderer (lowered kernel -> source text) and its compiler (source -> binary, with the
// binary's own metadata). compile_program (compiler/program.h) drives every target the same way:
//   lower -> linearize -> name -> render -> compile -> PROGRAM(SINK, LINEAR, SOURCE, BINARY) with a ProgramInfo.
// A backend's loader (its Device, hcq/device.h) turns the BINARY into something its queues launch.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/late_lowering.h"
#include "compiler/linearize.h"
#include "ir/uop.h"

namespace doorbell {

struct GpuTarget;

// What the target's renderer supports and how its kernels are launched: the pipeline is parameterized by these.
struct LoweringOptions {
  std::string renderer;            // "C", "PTX", "REF", ...: the device-name suffix that selects it
  int vector_lanes = 1;            // 32-bit lanes of one vector value the renderer emits (CPU: 16 or 8); 1: scalar
  bool threads = false;            // the outermost loop is divided among CPU cores (compiler/cpu_kernel_abi.h)
  const GpuTarget* gpu = nullptr;  // a GPU target's launch limits (compiler/gpu/gpu_target.h); null on the CPU
  LateLoweringOptions late;        // the ops and dtypes the renderer has natively; the rest are lowered for it
  // Scheduler layout choices this target profits from (scheduler/schedule_options.h; the frontend passes them to
  // schedule()): a CPU splits a big sum over axis 0 into parts of rows and packs a float32 matmul's right operand
  // into column panels.
  bool split_leading_reduce = false;
  bool pack_matmul_panels = false;
};

// A kernel after the target's pipeline: the form its renderer takes, and how it is launched.
struct LoweredKernel {
  UOp sink;
  std::array<int64_t, 3> global_size{1, 1, 1};  // GPU blocks; CPU: global_size[0] cores the work is worth
  std::array<int64_t, 3> local_size{1, 1, 1};   // GPU threads per block
};

// What a compiler made of a source, and what the binary itself says about the kernel.
struct CompiledBinary {
  std::string bytes;         // the binary (an ELF object, a cubin, ...)
  int64_t registers = 0;     // per thread, from the binary's metadata; 0 where it has none
  int64_t stack_bytes = 0;   // per thread, likewise
  double ms = 0;             // wall time of the compiler, or of the disk cache read that found the binary
  bool from_disk_cache = false;
};

class Target {
 public:
  virtual ~Target() = default;

  // Shown in ProgramInfo and DEBUG output: "C clang-19 x86-64", "PTX sm_90 ptxas sm_90". Looked up on every launch,
  // so it must be cheap (computed once).
  virtual const std::string& name() const = 0;
  // Everything that changes the code beyond the kernel (renderer, architecture, compiler and its flags): part of the
  // program cache key. Looked up on every compile request, so it must be cheap (computed once).
  virtual const std::string& cache_key() const = 0;
  virtual const LoweringOptions& options() const = 0;

  // The target family's pipeline of named passes (compiler/pipeline.h). `optimize` is false with NOOPT=1.
  virtual LoweredKernel lower(const UOp& sink, bool optimize) const = 0;
  // The source of one kernel function named `name`. Throws std::invalid_argument naming a node it cannot express.
  virtual std::string render(const std::string& name, const LoweredKernel& kernel,
                             const std::vector<Statement>& statements) const = 0;
  // The binary of `source` (through the disk object cache where the target has a compiler process to save).
  virtual CompiledBinary compile(const std::string& source, const std::string& name) const = 0;
};

}  // namespace doorbell
