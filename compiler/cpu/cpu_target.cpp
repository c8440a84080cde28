#include "compiler/cpu/cpu_target.h"

#include "compiler/c_renderer.h"
#include "compiler/cpu/clang_compiler.h"
#include "compiler/cpu/cpu_optimizer.h"
#include "compiler/pipeline.h"

namespace doorbell {
namespace {

class CpuCTarget final : public Target {
 public:
  CpuCTarget() {
    options_.renderer = "CLANG";
    options_.vector_lanes = cpu_vector_lanes();
    options_.threads = true;
    options_.late = c_lowering_options();
    options_.split_leading_reduce = true;
    options_.pack_matmul_panels = true;
    compiler_ = find_c_compiler().value_or("");
    cache_key_ = "C|" + compiler_ + "|" + c_compile_flags() + "|lanes" + std::to_string(options_.vector_lanes);
    name_ = "C " + (compiler_.empty() ? std::string("no C compiler") : compiler_.substr(compiler_.find_last_of('/') + 1)) + " x86-64";
  }

  const std::string& name() const override { return name_; }
  const std::string& cache_key() const override { return cache_key_; }
  const LoweringOptions& options() const override { return options_; }

  LoweredKernel lower(const UOp& sink, bool optimize) const override { return cpu_pipeline(sink, options_, optimize); }

  std::string render(const std::string& name, const LoweredKernel& kernel, const std::vector<Statement>& statements) const override {
    return render_c(name, kernel.sink, statements);
  }

  CompiledBinary compile(const std::string& source, const std::string& name) const override {
    (void)name;
    CompiledObject obj = compile_c(source);
    CompiledBinary b;
    b.bytes = std::move(obj.object);
    b.ms = obj.compile_ms;
    b.from_disk_cache = obj.from_disk_cache;
    return b;
  }

 private:
  LoweringOptions options_;
  std::string compiler_, cache_key_, name_;
};

}  // namespace

const Target& cpu_c_target() {
  static const CpuCTarget* t = new CpuCTarget();  // never destroyed: programs name it until the process exits
  return *t;
}

}  // namespace doorbell
