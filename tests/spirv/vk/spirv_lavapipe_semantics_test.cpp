// The SPIR-V renderer's semantics, run: every kernel of the fusion corpus and of the GPU dtype corpus (tests/gpucodegen/amdgpu_corpus.h: every
// dtype's arithmetic, comparisons, reductions, casts between every pair, bitcasts, integer division, matmuls) is
// rendered for lavapipe_caps(), run on lavapipe through a minimal Vulkan compute launch written here for the test
// (the ABI of compiler/spirv/spirv_kernel_abi.h: buffer addresses and the argument block's address in a push
// constant), and its output buffers are compared bit for bit with the reference interpreter (hcq/ref/
// ref_interpreter.h, the IR's own semantics) on the same inputs: edge values (0, -0, inf, NaN, ties for the 16-bit
// roundings, integer extremes) and random ones. NaN results compare equal to any NaN. Skipped when no lavapipe device
// is there. This is not the Vulkan device (hcq/vk/): only enough Vulkan to run one kernel.
#include <gtest/gtest.h>

#include <unordered_set>

#include "../../gpucodegen/amdgpu_corpus.h"
#include "../../scheduler/fusion_corpus_cases.h"
#include "lavapipe_runner.h"

namespace doorbell {
namespace {

using spirv_test::Lavapipe;

void expect_all_match(const spirv_test::Comparison& c) {
  EXPECT_EQ(c.matched, c.ran);
  for (const std::string& f : c.failures) ADD_FAILURE() << f;
}

TEST(SpirvLavapipe, EveryDtypeCorpusKernelMatchesTheReferenceInterpreter) {
  Lavapipe* vk = Lavapipe::get();
  if (!vk) GTEST_SKIP() << "no lavapipe Vulkan device (install mesa-vulkan-drivers)";
  std::vector<UOp> kernels;
  std::unordered_set<std::string> seen;
  for (const amdgpu_test::Program& p : amdgpu_test::corpus_programs())
    for (const UOp& k : amdgpu_test::kernels_of(p.outputs))
      if (seen.insert(k.key().hex()).second) kernels.push_back(k);
  std::printf("validation layer: %s\n", vk->validation() ? "on" : "not installed");
  spirv_test::Comparison c = spirv_test::run_and_compare(vk, kernels, "dtype corpus");
  expect_all_match(c);
  EXPECT_GE(c.ran, 200);
}

// The fusion corpus: fused chains, gated stores of partial blocks, grouped reductions (Workgroup arrays, barriers).
TEST(SpirvLavapipe, EveryFusionCorpusKernelMatchesTheReferenceInterpreter) {
  Lavapipe* vk = Lavapipe::get();
  if (!vk) GTEST_SKIP() << "no lavapipe Vulkan device (install mesa-vulkan-drivers)";
  std::vector<UOp> kernels;
  std::unordered_set<std::string> seen;
  Tensor::manual_seed(1234);
  for (const fusion_corpus::Case& c : fusion_corpus::corpus()) {
    UOp linear = Tensor::schedule_linear(c.build());
    for (const UOp& call : linear.src())
      if (call.op() == Ops::CALL && call.src(0).op() == Ops::SINK && seen.insert(call.src(0).key().hex()).second)
        kernels.push_back(call.src(0));
  }
  spirv_test::Comparison c = spirv_test::run_and_compare(vk, kernels, "fusion corpus");
  expect_all_match(c);
  EXPECT_GE(c.ran, 30);
}

}  // namespace
}  // namespace doorbell
