// LLVM IR renderer (no LLVM needed): the IR for one fixed kernel matches the checked-in golden text, every kernel of
// the corpus renders for gfx1100 and gfx942, and what cannot be rendered is rejected naming the node.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/gpu/llvmir_renderer.h"
#include "compiler/c_renderer.h"
#include "compiler/late_lowering.h"
#include "tests/gpucodegen/amdgpu_corpus.h"

namespace doorbell {
namespace {

using amdgpu_test::E;

std::filesystem::path golden_dir() { return DOORBELL_GOLDEN_DIR; }

std::string read_text(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The golden kernel: a float32 row sum of 300 rows (a REDUCE loop, 2 blocks of 256 threads, the last block's
// extra threads gated off) followed by a float16 rounding, so loops, the store gate and the half helpers show.
GpuKernel golden_kernel(const std::string& arch) {
  Tensor x = E({300, 4});
  Tensor y = (x.sum(1) * 0.5).cast(dtypes::float16);
  std::vector<UOp> ks = amdgpu_test::kernels_of({y});
  EXPECT_EQ(ks.size(), 1u);
  return lower_for_gpu(ks.at(0), gpu_target(arch));
}

TEST(AmdgpuLlvmIr, FixedKernelMatchesGoldenText) {
  std::string ir = render_llvm_ir("golden_row_sum", golden_kernel("gfx1100"), gpu_target("gfx1100"));
  std::filesystem::path path = golden_dir() / "amdgpu_row_sum_gfx1100.ll";
  if (std::getenv("UPDATE_GOLDEN")) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << ir;
    GTEST_SKIP() << "UPDATE_GOLDEN: rewrote " << path;
  }
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " is missing; run with UPDATE_GOLDEN=1 to write it";
  EXPECT_EQ(ir, read_text(path)) << "the IR differs from " << path << "; if the change is intended, rerun with UPDATE_GOLDEN=1";
}

TEST(AmdgpuLlvmIr, KernelHasOnePointerPerSlotTheThreadIntrinsicsAndTheWorkGroupSize) {
  GpuKernel k = golden_kernel("gfx942");
  std::string ir = render_llvm_ir("k", k, gpu_target("gfx942"));
  EXPECT_NE(ir.find("target triple = \"amdgcn-amd-amdhsa\""), std::string::npos);
  EXPECT_NE(ir.find("define amdgpu_kernel void @k(ptr addrspace(1) noalias %data0, ptr addrspace(1) noalias %data1)"), std::string::npos) << ir;
  EXPECT_NE(ir.find("@llvm.amdgcn.workgroup.id.x()"), std::string::npos);
  EXPECT_NE(ir.find("@llvm.amdgcn.workitem.id.x()"), std::string::npos);
  int64_t threads = k.local_size[0] * k.local_size[1] * k.local_size[2];
  EXPECT_NE(ir.find("\"amdgpu-flat-work-group-size\"=\"1," + std::to_string(threads) + "\""), std::string::npos);
  EXPECT_NE(ir.find("alloca float, align 4, addrspace(5)"), std::string::npos) << "the accumulator";
  EXPECT_NE(ir.find("phi i32"), std::string::npos) << "the loop counter";
  EXPECT_NE(ir.find("call i16 @db_f2h"), std::string::npos) << "the float16 store";
}

TEST(AmdgpuLlvmIr, EveryCorpusKernelRendersForBothTargets) {
  int rendered = 0, rejected = 0;
  std::string failures;
  for (const auto& prog : amdgpu_test::corpus_programs()) {
    for (const UOp& sink : amdgpu_test::kernels_of(prog.outputs)) {
      for (const char* arch : {"gfx1100", "gfx942"}) {
        try {
          GpuKernel k = lower_for_gpu(sink, gpu_target(arch));
          std::string ir = render_llvm_ir(c_kernel_name(sink), k, gpu_target(arch));
          EXPECT_NE(ir.find("define amdgpu_kernel"), std::string::npos);
          rendered++;
        } catch (const std::invalid_argument& e) {
          rejected++;
          failures += prog.name + " (" + arch + "): " + e.what() + "\n";
        }
      }
    }
  }
  std::printf("[ rendered ] %d kernels for gfx1100 + gfx942, %d rejected\n", rendered, rejected);
  EXPECT_EQ(rejected, 0) << failures;
  EXPECT_GT(rendered, 200);
}

TEST(AmdgpuLlvmIr, Float64TranscendentalIsRejectedNamingTheNode) {
  std::vector<UOp> ks = amdgpu_test::kernels_of({E({8}, dtypes::float64).exp2()});
  ASSERT_EQ(ks.size(), 1u);
  GpuKernel k = lower_for_gpu(ks[0], gpu_target("gfx1100"));
  try {
    render_llvm_ir("k", k, gpu_target("gfx1100"));
    FAIL() << "float64 EXP2 rendered";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("EXP2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("device libraries"), std::string::npos) << e.what();
  }
}

TEST(AmdgpuLlvmIr, NvidiaTargetIsRejected) {
  GpuKernel k = golden_kernel("gfx1100");
  EXPECT_THROW(render_llvm_ir("k", k, gpu_target("sm_90")), std::invalid_argument);
}

TEST(AmdgpuLlvmIr, PowIsLoweredWithoutTranscendentalOpsLeft) {
  std::vector<UOp> ks = amdgpu_test::kernels_of({E({8}).pow(E({8}))});
  ASSERT_EQ(ks.size(), 1u);
  UOp lowered = lower_late(ks[0], amdgpu_lowering_options());
  for (const UOp& u : lowered.toposort()) {
    EXPECT_NE(u.op(), Ops::POW);
    EXPECT_NE(u.op(), Ops::EXP2);
    EXPECT_NE(u.op(), Ops::LOG2);
  }
}

}  // namespace
}  // namespace doorbell
