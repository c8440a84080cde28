// The op conformance suite (tests/e2e/op_conformance_test.cpp) as a GPU codegen corpus: this file is linked with that
// suite and registers a kernel observer (compiler/program.h), so every kernel the suite compiles for the CPU is
// recorded once per content key. After the suite has run, main renders each recorded kernel as PTX for sm_90 and
// sm_80 and assembles it with ptxas, and (with LLVM) renders it as LLVM IR and compiles it for gfx1100 and gfx942.
// Exit status: the suite's, else 1 when a kernel fails, 77 (skipped) when neither ptxas nor LLVM is there.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <mutex>

#include "compiler/gpu/gpu_optimizer.h"
#include "compiler/program.h"
#include "ptx_corpus_util.h"
#if DOORBELL_HAVE_LLVM
#include "compiler/gpu/amd_code_object.h"
#include "compiler/gpu/gpu_optimizer.h"
#include "compiler/gpu/llvm/amdgpu_compiler.h"
#include "compiler/gpu/llvmir_renderer.h"
#endif

namespace doorbell {
namespace {

std::mutex g_mutex;
ptx_corpus::KernelSet& recorded() {
  static ptx_corpus::KernelSet set;
  return set;
}
void record(const UOp& sink) {
  std::lock_guard<std::mutex> lock(g_mutex);
  recorded().add(sink);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool assemble_ptx_for(const std::vector<UOp>& kernels) {
  if (!ptxas_available()) {
    std::printf("SKIPPED PTX: ptxas not found on PATH or in /usr/local/cuda/bin; %zu kernels not assembled\n", kernels.size());
    return true;
  }
  bool ok = true;
  for (const char* arch : {"sm_90", "sm_80"}) {
    auto t0 = std::chrono::steady_clock::now();
    ptx_corpus::Outcome o = ptx_corpus::assemble_all(kernels, arch);
    std::printf("op conformance, %s: %d of %zu kernels assembled (%.1f s)\n", arch, o.assembled, kernels.size(), seconds_since(t0));
    for (const std::string& f : o.failures) std::printf("FAILED %s: %s\n", arch, f.c_str());
    ok &= o.failures.empty() && o.assembled == static_cast<int>(kernels.size());
  }
  return ok;
}

bool compile_amdgpu_for(const std::vector<UOp>& kernels) {
#if DOORBELL_HAVE_LLVM
  bool ok = true;
  for (const char* arch : {"gfx1100", "gfx942"}) {
    auto t0 = std::chrono::steady_clock::now();
    const GpuTarget& t = gpu_target(arch);
    int compiled = 0;
    for (const UOp& sink : kernels) {
      std::string name = c_kernel_name(sink);
      try {
        // Relocatable objects: linking each with ld.lld would quadruple the time; the corpus tests link theirs.
        AmdgpuCompiled c = compile_amdgpu(render_llvm_ir(name, optimize_for_gpu(sink, t), t), arch, {.link = false});
        if (!read_amd_code_object(c.object).kernel(name).entry_in_text) throw std::runtime_error("entry not in .text");
        compiled++;
      } catch (const std::exception& e) {
        std::printf("FAILED %s: %s: %s\n", arch, name.c_str(), std::string(e.what()).substr(0, 1500).c_str());
        ok = false;
      }
    }
    std::printf("op conformance, %s: %d of %zu kernels compiled (%.1f s)\n", arch, compiled, kernels.size(), seconds_since(t0));
  }
  return ok;
#else
  std::printf("SKIPPED AMDGPU: built without LLVM; %zu kernels not compiled\n", kernels.size());
  return true;
#endif
}

}  // namespace
}  // namespace doorbell

int main(int argc, char** argv) {
  using namespace doorbell;
  ::testing::InitGoogleTest(&argc, argv);
  set_kernel_observer(record);
  int rc = RUN_ALL_TESTS();
  set_kernel_observer(nullptr);
  const std::vector<UOp>& kernels = recorded().kernels();
  if (rc != 0) return rc;
  if (kernels.empty()) {
    std::printf("FAILED: the suite compiled no kernels\n");
    return 1;
  }
#if !DOORBELL_HAVE_LLVM
  if (!ptxas_available()) return 77;
#endif
  int grouped = 0;
  for (const UOp& k : kernels) grouped += group_lanes_for(k, gpu_target("sm_90")) > 0;
  std::printf("op conformance: %zu kernels, %d with grouped reduces (local memory and a barrier)\n", kernels.size(), grouped);
  bool ok = assemble_ptx_for(kernels);
  ok &= compile_amdgpu_for(kernels);
  return ok ? 0 : 1;
}
