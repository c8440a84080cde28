// Whole corpora on the interpreter against the CPU reference (ptx_reference_check.h): the fusion corpus's programs
// (tests/scheduler/fusion_corpus_cases.h, realized random inputs) and the GPU code generation corpus
// (tests/gpucodegen/amdgpu_corpus.h: every dtype's ops, casts between every pair, bitcasts, movement, reductions,
// matmuls, softmax; its Tensor::empty inputs filled with values that keep every op defined).
#include <gtest/gtest.h>

#include <cstdio>

#include "../gpucodegen/amdgpu_corpus.h"
#include "../scheduler/fusion_corpus_cases.h"
#include "ptx_reference_check.h"

namespace doorbell {
namespace {

TEST(PtxCorpusOnInterpreter, EveryFusionCorpusProgram) {
  Tensor::manual_seed(1234);
  int programs = 0, kernels = 0;
  for (const fusion_corpus::Case& c : fusion_corpus::corpus()) {
    SCOPED_TRACE(c.name);
    kernels += ptx_e2e::expect_same_as_reference(c.build());
    programs++;
  }
  std::printf("fusion corpus: %d programs, %d kernels compared\n", programs, kernels);
  EXPECT_GE(programs, 30);
}

TEST(PtxCorpusOnInterpreter, EveryDtypeCastAndMovementProgram) {
  int programs = 0, kernels = 0;
  for (const amdgpu_test::Program& p : amdgpu_test::corpus_programs()) {
    SCOPED_TRACE(p.name);
    kernels += ptx_e2e::expect_same_as_reference(p.outputs, true);
    programs++;
  }
  std::printf("dtype corpus: %d programs, %d kernels compared\n", programs, kernels);
  EXPECT_GE(programs, 200);
}

}  // namespace
}  // namespace doorbell
