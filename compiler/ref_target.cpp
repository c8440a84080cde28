#include "compiler/ref_target.h"

#include "ir/printer.h"

namespace doorbell {
namespace {

class RefTarget final : public Target {
 public:
  RefTarget() { options_.renderer = "REF"; }
  const std::string& name() const override { return name_; }
  const std::string& cache_key() const override { return cache_key_; }
  const LoweringOptions& options() const override { return options_; }
  LoweredKernel lower(const UOp& sink, bool optimize) const override {
    (void)optimize;  // the reference runs the scheduler's kernel as it is
    return LoweredKernel{sink};
  }
  std::string render(const std::string& name, const LoweredKernel& kernel, const std::vector<Statement>& statements) const override {
    (void)statements;
    return "// " + name + ": interpreted by the REF device\n" + print_graph(kernel.sink);
  }
  CompiledBinary compile(const std::string& source, const std::string& name) const override {
    (void)source;
    (void)name;
    return {};
  }

 private:
  LoweringOptions options_;
  std::string cache_key_ = "REF", name_ = "REF interpreter";
};

}  // namespace

const Target& ref_target() {
  static const RefTarget* t = new RefTarget();  // never destroyed, like every target
  return *t;
}

}  // namespace doorbell
