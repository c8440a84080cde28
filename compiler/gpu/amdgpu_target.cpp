#include "compiler/gpu/amdgpu_target.h"

#include <stdexcept>

#include "compiler/gpu/gpu_target.h"
#include "compiler/gpu/llvmir_renderer.h"
#include "compiler/pipeline.h"

#if DOORBELL_HAVE_LLVM
#include "compiler/gpu/amd_code_object.h"
#include "compiler/gpu/llvm/amdgpu_compiler.h"
#include "compiler/object_cache.h"
#endif

namespace doorbell {
#if DOORBELL_HAVE_LLVM
namespace {

class AmdgpuTarget final : public Target {
 public:
  explicit AmdgpuTarget(const GpuTarget& gpu) : gpu_(gpu) {
    options_.renderer = "LLVM";
    options_.gpu = &gpu_;
    options_.late = amdgpu_lowering_options();
    linker_ = find_ld_lld();
    name_ = "LLVM " + gpu_.arch + " llvm-19" + (linker_.empty() ? " (not linked: no ld.lld)" : "");
    cache_key_ = "AMDGPU|" + gpu_.arch + "|llvm-19|" + linker_;
  }
  const std::string& name() const override { return name_; }
  const std::string& cache_key() const override { return cache_key_; }
  const LoweringOptions& options() const override { return options_; }

  LoweredKernel lower(const UOp& sink, bool optimize) const override {
    return gpu_pipeline(sink, gpu_, {.optimize = optimize, .dims = {}, .late_lowering = true, .late = &options_.late});
  }
  std::string render(const std::string& name, const LoweredKernel& kernel, const std::vector<Statement>&) const override {
    return render_llvm_ir(name, kernel, gpu_);
  }

  CompiledBinary compile(const std::string& source, const std::string& name) const override {
    CompiledBinary b;
    const std::string key = object_cache_key(source, linker_.empty() ? std::string("llvm-19") : linker_, "amdgpu|" + gpu_.arch);
    if (std::optional<std::string> cached = object_cache_load(key)) {
      b.bytes = std::move(*cached);
      b.from_disk_cache = true;
    } else {
      AmdgpuCompiled c = compile_amdgpu(source, gpu_.arch);
      b.bytes = std::move(c.object);
      b.ms = c.total_ms();
      object_cache_store(key, b.bytes);
    }
    // The code object's own word on the kernel (the metadata note; the descriptor as a fallback).
    const AmdCodeObject co = read_amd_code_object(b.bytes);
    if (const MsgPack* md = co.kernel_metadata(name)) {
      if (const MsgPack* v = md->find(".vgpr_count")) b.registers = v->as_int();
      if (const MsgPack* p = md->find(".private_segment_fixed_size")) b.stack_bytes = p->as_int();
    } else {
      const KernelDescriptor& kd = co.kernel(name).kd;
      b.registers = kd.max_vgprs(gpu_.arch);
      b.stack_bytes = kd.private_segment_fixed_size;
    }
    return b;
  }

 private:
  const GpuTarget& gpu_;
  LoweringOptions options_;
  std::string linker_, name_, cache_key_;
};

}  // namespace
#endif

std::unique_ptr<Target> make_amdgpu_target(const std::string& arch) {
  const GpuTarget& gpu = gpu_target(arch);
  if (gpu.vendor != GpuVendor::AMD) throw std::invalid_argument("AMDGPU target: " + arch + " is not an AMD GPU; expected gfx1100 or gfx942");
#if DOORBELL_HAVE_LLVM
  return std::make_unique<AmdgpuTarget>(gpu);
#else
  throw std::invalid_argument("AMDGPU target: built without LLVM (DOORBELL_WITH_LLVM=OFF); no compiler for " + arch);
#endif
}

}  // namespace doorbell
