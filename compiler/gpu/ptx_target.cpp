#include "compiler/gpu/ptx_target.h"

#include <algorithm>
#include <stdexcept>

#include "compiler/gpu/cubin_reader.h"
#include "compiler/gpu/gpu_target.h"
#include "compiler/gpu/ptx_renderer.h"
#include "compiler/gpu/ptxas.h"
#include "compiler/object_cache.h"
#include "compiler/pipeline.h"

namespace doorbell {
namespace {

class PtxTarget final : public Target {
 public:
  PtxTarget(std::string sass_arch, PtxAssembly assembly)
      : sass_arch_(std::move(sass_arch)), gpu_(gpu_target(ptx_arch_for(sass_arch_))), assembly_(assembly) {
    options_.renderer = "PTX";
    options_.gpu = &gpu_;
    options_.late = ptx_lowering_options();
    ptxas_ = find_ptxas().value_or("");
    cache_key_ = "PTX|" + gpu_.arch + "|" + sass_arch_ + "|" + (ptxas_.empty() ? std::string("no ptxas") : ptxas_);
    name_ = "PTX " + gpu_.arch + (ptxas_.empty() ? " (not assembled: no ptxas)" : " ptxas " + sass_arch_);
  }

  const std::string& name() const override { return name_; }
  const std::string& cache_key() const override { return cache_key_; }
  const LoweringOptions& options() const override { return options_; }

  LoweredKernel lower(const UOp& sink, bool optimize) const override {
    return gpu_pipeline(sink, gpu_, {.optimize = optimize, .dims = {}, .late_lowering = true, .late = &options_.late});
  }

  std::string render(const std::string& name, const LoweredKernel& kernel, const std::vector<Statement>& statements) const override {
    (void)statements;
    return render_ptx(name, kernel, gpu_);
  }

  CompiledBinary compile(const std::string& source, const std::string& name) const override {
    CompiledBinary b;
    if (ptxas_.empty()) {
      if (assembly_ == PtxAssembly::kRequired)
        throw PtxasError("PTX target: no ptxas found on PATH or in /usr/local/cuda/bin to assemble kernel '" + name +
                         "' for " + sass_arch_ + "; install the CUDA toolkit's ptxas");
      return b;  // the emulated GPU runs the PTX (SOURCE)
    }
    const std::string key = object_cache_key(source, ptxas_, "-arch=" + sass_arch_);
    if (std::optional<std::string> cached = object_cache_load(key)) {
      b.bytes = std::move(*cached);
      b.from_disk_cache = true;
    } else {
      PtxasResult r = assemble_ptx(source, sass_arch_);
      b.bytes = std::move(r.cubin);
      b.ms = r.ms;
      object_cache_store(key, b.bytes);
    }
    // The binary's own word on the resources the kernel needs (the same numbers ptxas -v prints).
    const Cubin cubin = read_cubin(b.bytes);  // kept: the kernel's entry lives in it
    const CubinKernel& k = cubin.kernel(name);
    b.registers = std::max(k.registers, 0);
    b.stack_bytes = std::max<int64_t>({k.frame_size, k.min_stack_size, 0});
    return b;
  }

 private:
  std::string sass_arch_;
  const GpuTarget& gpu_;
  PtxAssembly assembly_;
  LoweringOptions options_;
  std::string ptxas_, cache_key_, name_;
};

}  // namespace

std::string ptx_arch_for(const std::string& sass_arch) {
  if (sass_arch.rfind("sm_", 0) != 0 || sass_arch.size() < 5)
    throw std::invalid_argument("PTX target: architecture '" + sass_arch + "'; expected sm_XY (sm_80, sm_86, sm_90, ...)");
  const int major = std::stoi(sass_arch.substr(3, sass_arch.size() - 4));
  if (major < 8) throw std::invalid_argument("PTX target: architecture " + sass_arch + " is older than sm_80, which is the oldest supported");
  return major >= 9 ? "sm_90" : "sm_80";
}

std::unique_ptr<Target> make_ptx_target(const std::string& sass_arch, PtxAssembly assembly) {
  return std::make_unique<PtxTarget>(sass_arch, assembly);
}

}  // namespace doorbell
