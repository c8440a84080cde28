// Every kernel of the fusion corpus (tests/scheduler/fusion_corpus_cases.h) renders to PTX and assembles with
// ptxas for sm_90 and sm_80. The op conformance suite's kernels are checked by gpucodegen_conformance_ptx
// (conformance_ptx_harvest.cpp), which runs that suite and renders every kernel it compiles. The AMDGPU tests'
// program list (amdgpu_corpus.h: every dtype, casts between every pair, bitcasts) assembles for sm_90 too.
#include <gtest/gtest.h>

#include "../scheduler/fusion_corpus_cases.h"
#include "amdgpu_corpus.h"
#include "compiler/optimizer.h"
#include "ptx_corpus_util.h"

namespace doorbell {
namespace {

ptx_corpus::KernelSet fusion_corpus_kernels() {
  ptx_corpus::KernelSet set;
  Tensor::manual_seed(1234);
  for (const fusion_corpus::Case& c : fusion_corpus::corpus()) set.add_linear(Tensor::schedule_linear(c.build()));
  return set;
}

TEST(PtxCorpus, EveryFusionCorpusKernelAssemblesForSm90AndSm80) {
  if (!ptxas_available()) GTEST_SKIP() << "ptxas not found on PATH or in /usr/local/cuda/bin: PTX is not assembled";
  ptx_corpus::KernelSet set = fusion_corpus_kernels();
  ASSERT_GE(set.kernels().size(), 30u);
  // Optimized (grouped reduces, upcasts: what runs) and with NOOPT=1 (launch dims only).
  for (bool noopt : {false, true}) {
    set_noopt(noopt);
    for (const char* arch : {"sm_90", "sm_80"}) {
      ptx_corpus::Outcome o = ptx_corpus::assemble_all(set.kernels(), arch);
      std::printf("fusion corpus%s, %s: %d of %zu kernels assembled (ptxas %.0f ms)\n", noopt ? " (NOOPT)" : "", arch, o.assembled,
                  set.kernels().size(), o.ptxas_ms);
      EXPECT_EQ(o.assembled, static_cast<int>(set.kernels().size())) << arch;
      for (const std::string& f : o.failures) ADD_FAILURE() << arch << ": " << f;
    }
  }
  set_noopt(false);
}

TEST(PtxCorpus, EveryDtypeAndCastProgramAssemblesForSm90) {
  if (!ptxas_available()) GTEST_SKIP() << "ptxas not found on PATH or in /usr/local/cuda/bin: PTX is not assembled";
  ptx_corpus::KernelSet set;
  for (const amdgpu_test::Program& p : amdgpu_test::corpus_programs())
    for (const UOp& k : amdgpu_test::kernels_of(p.outputs)) set.add(k);
  ASSERT_GE(set.kernels().size(), 200u);
  ptx_corpus::Outcome o = ptx_corpus::assemble_all(set.kernels(), "sm_90");
  std::printf("dtype corpus, sm_90: %d of %zu kernels assembled (ptxas %.0f ms)\n", o.assembled, set.kernels().size(), o.ptxas_ms);
  EXPECT_EQ(o.assembled, static_cast<int>(set.kernels().size()));
  for (const std::string& f : o.failures) ADD_FAILURE() << "sm_90: " << f;
}

}  // namespace
}  // namespace doorbell
