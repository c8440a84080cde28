// Every kernel of the AMDGPU test corpus (tests/gpucodegen/amdgpu_corpus.h: elementwise ops over every dtype, all
// casts, movement ops, reductions, matmuls, softmax), compiled for gfx1100 by LLVM 19, runs to completion on the
// emulated shader core (mockgpu/amd/shader_core.h) over zero-filled buffers: no instruction LLVM emits for our
// kernels is missing from the executor. Values are checked by the kernel tests (shader_core_kernel_test.cpp).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/mockgpu_amd/shader_core_fixture.h"
#if DOORBELL_HAVE_LLVM
#include "compiler/c_renderer.h"
#include "compiler/gpu/amd_code_object.h"
#include "compiler/gpu/gpu_dims.h"
#include "compiler/gpu/gpu_target.h"
#include "compiler/gpu/amdgpu_target.h"
#include "compiler/gpu/llvmir_renderer.h"
#include "tests/gpucodegen/amdgpu_corpus.h"
#endif

namespace doorbell::mockgpu::amd {
namespace {

#if DOORBELL_HAVE_LLVM
TEST(ShaderCoreCorpus, EveryCorpusKernelRunsToCompletion) {
  const GpuTarget& t = gpu_target("gfx1100");
  // The AMD target's compiler goes through the disk object cache, so a second run skips LLVM.
  const std::unique_ptr<Target> amd = make_amdgpu_target("gfx1100");
  int ran = 0;
  std::vector<std::string> failures;
  for (const auto& p : amdgpu_test::corpus_programs()) {
    for (const UOp& sink : amdgpu_test::kernels_of(p.outputs)) {
      ShaderCoreFixture f;
      const std::string name = c_kernel_name(sink);
      try {
        GpuKernel k = lower_for_gpu(sink, t);
        CompiledBinary c = amd->compile(render_llvm_ir(name, k, t), name);
        AmdCodeObject co = read_amd_code_object(c.bytes);
        const AmdKernel& kern = co.kernel(name);
        const ElfSection* text = co.section(".text");
        std::vector<uint32_t> words((c.bytes.size() + 3) / 4 + 4, 0);
        std::memcpy(words.data(), c.bytes.data(), c.bytes.size());
        uint64_t base = f.map_words(words);
        DispatchState st;
        st.code_va = base + text->offset + (kern.entry_address - text->addr);
        st.rsrc1 = kern.kd.compute_pgm_rsrc1;
        st.rsrc2 = kern.kd.compute_pgm_rsrc2;
        st.rsrc3 = kern.kd.compute_pgm_rsrc3;
        st.lds_bytes = kern.kd.group_segment_fixed_size;
        for (int d = 0; d < 3; ++d) {
          st.workgroup_size[d] = static_cast<uint32_t>(k.local_size[d]);
          st.grid_workgroups[d] = static_cast<uint32_t>(k.global_size[d]);
        }
        int64_t slots = 0;
        for (const UOp& u : sink.toposort())
          if (u.op() == Ops::PARAM) slots = std::max<int64_t>(slots, u.arg_as<ParamArg>().slot + 1);
        std::vector<uint32_t> kernarg;
        for (int64_t i = 0; i < slots; ++i) {
          uint64_t va = f.map_bytes(256 << 10);
          kernarg.push_back(static_cast<uint32_t>(va));
          kernarg.push_back(static_cast<uint32_t>(va >> 32));
        }
        uint64_t kva = f.map_words(kernarg);
        st.user_data[0] = static_cast<uint32_t>(kva);
        st.user_data[1] = static_cast<uint32_t>(kva >> 32);
        run_dispatch(st, f.memory, f.options);
        ++ran;
      } catch (const std::exception& e) {
        failures.push_back(p.name + " / " + name + ": " + e.what());
      }
    }
  }
  std::printf("[ corpus ] %d kernels ran on the emulated gfx1100, %zu failed\n", ran, failures.size());
  for (const std::string& s : failures) ADD_FAILURE() << s;
}
#endif

}  // namespace
}  // namespace doorbell::mockgpu::amd
