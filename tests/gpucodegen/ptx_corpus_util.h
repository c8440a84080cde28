// Renders scheduler kernels to PTX and assembles them with ptxas, collecting failures instead of stopping at the
// first: shared by the corpus test (test_gpucodegen) and the conformance harvester (gpucodegen_conformance_ptx).
#pragma once
#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include "compiler/c_renderer.h"
#include "compiler/gpu/ptx_renderer.h"
#include "compiler/gpu/ptxas.h"
#include "ir/uop.h"

namespace doorbell::ptx_corpus {

// Kernel SINKs, each content key once, in first-seen order.
class KernelSet {
 public:
  void add(const UOp& sink) {
    if (sink && sink.op() == Ops::SINK && seen_.insert(sink.key().hex()).second) kernels_.push_back(sink);
  }
  void add_linear(const UOp& linear) {
    for (const UOp& call : linear.src())
      if (call.op() == Ops::CALL) add(call.src(0));
  }
  const std::vector<UOp>& kernels() const { return kernels_; }

 private:
  std::unordered_set<std::string> seen_;
  std::vector<UOp> kernels_;
};

struct Outcome {
  int assembled = 0;
  std::vector<std::string> failures;  // kernel name and what went wrong
  double ptxas_ms = 0;
};

// Every kernel rendered for `arch` and assembled with ptxas -arch=<arch>. ptxas's start-up is most of its time, so
// kernels are assembled kBatch entries to a module; a module that fails is retried kernel by kernel to name the one.
inline Outcome assemble_all(const std::vector<UOp>& kernels, const std::string& arch) {
  constexpr size_t kBatch = 32;
  Outcome o;
  const GpuTarget& t = gpu_target(arch);
  std::vector<std::pair<std::string, std::string>> rendered;  // name, PTX
  for (const UOp& sink : kernels) {
    std::string name = c_kernel_name(sink);
    try {
      rendered.emplace_back(name, render_ptx(name, prepare_gpu_kernel(sink, t), t));
    } catch (const std::exception& e) {
      o.failures.push_back(name + ": " + std::string(e.what()).substr(0, 1500));
    }
  }
  auto assemble_one = [&](const std::string& name, const std::string& ptx) {
    try {
      o.ptxas_ms += assemble_ptx(ptx, arch).ms;
      o.assembled++;
    } catch (const std::exception& e) {
      o.failures.push_back(name + ": " + std::string(e.what()).substr(0, 1500));
    }
  };
  for (size_t i = 0; i < rendered.size(); i += kBatch) {
    size_t end = std::min(rendered.size(), i + kBatch);
    // one module: the first kernel's header (.version/.target/.address_size), then every entry
    std::string module = rendered[i].second;
    for (size_t j = i + 1; j < end; j++) module += rendered[j].second.substr(rendered[j].second.find(".visible .entry"));
    try {
      o.ptxas_ms += assemble_ptx(module, arch).ms;
      o.assembled += static_cast<int>(end - i);
    } catch (const std::exception&) {
      for (size_t j = i; j < end; j++) assemble_one(rendered[j].first, rendered[j].second);
    }
  }
  return o;
}

}  // namespace doorbell::ptx_corpus
