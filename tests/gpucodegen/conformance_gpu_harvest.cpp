// The op conformance suite (tests/e2e/op_conformance_test.cpp) as a GPU codegen corpus: this file is linked with that
// suite and registers a kernel observer (compiler/program.h), so every kernel the suite compiles for the CPU is
// recorded once per content key. After the suite has run, main renders each recorded kernel as PTX for sm_90 and
// sm_80 and assembles it with ptxas, and (with LLVM) renders it as LLVM IR and compiles it for gfx1100 and gfx942.
// Each gfx1100 code object is then decoded and disassembled by the emulated GPU's RDNA3 decoder (mockgpu/amd) and
// compared with llvm-objdump-19, instruction by instruction (tests/mockgpu_amd/amd_disasm_corpus.h); with
// DOORBELL_AMD_MNEMONICS=<file> the corpus's mnemonic histogram is written there.
// Exit status: the suite's, else 1 when a kernel fails, 77 (skipped) when neither ptxas nor LLVM is there.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>

#include "compiler/gpu/gpu_optimizer.h"
#include "compiler/program.h"
#include "ptx_corpus_util.h"
#if DOORBELL_HAVE_LLVM
#include "compiler/gpu/amd_code_object.h"
#include "compiler/gpu/gpu_optimizer.h"
#include "compiler/gpu/llvm/amdgpu_compiler.h"
#include "compiler/gpu/llvmir_renderer.h"
#include "tests/mockgpu_amd/amd_disasm_corpus.h"
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

#if DOORBELL_HAVE_LLVM
// Our RDNA3 disassembly of every gfx1100 object against llvm-objdump-19's.
bool disassemble_gfx1100(const std::vector<amd_disasm_corpus::CodeObject>& objects) {
  const std::optional<std::string> objdump = amd_disasm_corpus::find_objdump();
  if (!objdump) {
    std::printf("SKIPPED RDNA3 disassembly: llvm-objdump-19 not found\n");
    return true;
  }
  auto t0 = std::chrono::steady_clock::now();
  amd_disasm_corpus::Result r = amd_disasm_corpus::check(objects, *objdump);
  std::printf("op conformance, gfx1100 disassembly: %d kernels, %ld instructions, %zu distinct mnemonics, "
              "%zu differences from llvm-objdump (%.1f s)\n",
              r.kernels, r.instructions, r.mnemonics.size(), r.differences.size(), seconds_since(t0));
  for (size_t i = 0; i < r.differences.size() && i < 40; ++i) std::printf("FAILED disassembly: %s\n", r.differences[i].c_str());
  if (const char* path = std::getenv("DOORBELL_AMD_MNEMONICS"); path && *path)
    std::ofstream(path) << amd_disasm_corpus::histogram(r.mnemonics);
  return r.differences.empty() && r.objects == static_cast<int>(objects.size());
}
#endif

bool compile_amdgpu_for(const std::vector<UOp>& kernels) {
#if DOORBELL_HAVE_LLVM
  bool ok = true;
  std::vector<amd_disasm_corpus::CodeObject> gfx1100;
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
        if (std::string(arch) == "gfx1100") gfx1100.push_back({name, std::move(c.object)});
      } catch (const std::exception& e) {
        std::printf("FAILED %s: %s: %s\n", arch, name.c_str(), std::string(e.what()).substr(0, 1500).c_str());
        ok = false;
      }
    }
    std::printf("op conformance, %s: %d of %zu kernels compiled (%.1f s)\n", arch, compiled, kernels.size(), seconds_since(t0));
  }
  ok &= disassemble_gfx1100(gfx1100);
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
