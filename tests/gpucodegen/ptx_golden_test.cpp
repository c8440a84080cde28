// The PTX of a few fixed kernels, text for text against tests/gpucodegen/golden/*.ptx (UPDATE_GOLDEN=1 rewrites
// them), each golden assembled by ptxas when it is present; and the launch dimensions the rendered kernel reads
// match GpuKernel's: a %ctaid / %tid register appears exactly when that dimension has more than one block / thread.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/gpu/ptx_renderer.h"
#include "compiler/gpu/ptxas.h"
#include "compiler/optimizer.h"
#include "frontend/tensor.h"

namespace doorbell {
namespace {

const std::filesystem::path kGoldenDir = DOORBELL_GOLDEN_DIR;

UOp only_kernel(const Tensor& t) {
  UOp linear = t.schedule_linear();
  EXPECT_EQ(linear.src().size(), 1u);
  return linear.src(0).src(0);
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// noopt: the kernel as NOOPT=1 renders it (launch dims only), else as the GPU optimizer makes it.
void expect_golden(const std::string& name, const Tensor& t, bool noopt = false) {
  const GpuTarget& target = gpu_target("sm_90");
  set_noopt(noopt);
  std::string ptx = render_ptx(name, prepare_gpu_kernel(only_kernel(t), target), target);
  set_noopt(false);
  std::filesystem::path file = kGoldenDir / (name + ".ptx");
  if (const char* u = std::getenv("UPDATE_GOLDEN"); u && std::string(u) == "1") {
    std::ofstream(file, std::ios::binary) << ptx;
    std::printf("rewrote %s\n", file.c_str());
  }
  ASSERT_TRUE(std::filesystem::exists(file)) << file << " is missing; run with UPDATE_GOLDEN=1 to create it";
  EXPECT_EQ(ptx, read_text(file)) << name << " differs from " << file << "; run with UPDATE_GOLDEN=1 after checking the diff";
  if (ptxas_available()) {
    EXPECT_NO_THROW(assemble_ptx(ptx, "sm_90")) << name;
  }
}

TEST(PtxGolden, AddOfTwoFloat32Vectors) {
  expect_golden("add_f32", Tensor::empty({1024}) + Tensor::empty({1024}));
}

TEST(PtxGolden, GatedPadReadsZeroOutsideTheInput) {
  expect_golden("pad_gated", Tensor::empty({6}).pad({{2, 3}}) + 1);
}

TEST(PtxGolden, SumReductionIsALoopInsideEachThreadWithoutOptimizations) {
  expect_golden("sum_reduce", Tensor::empty({8, 100}).sum(1), /*noopt=*/true);
}

TEST(PtxGolden, GroupedSumSharesEachRowAmongLanesThroughSharedMemory) {
  expect_golden("grouped_sum", Tensor::empty({8, 100}).sum(1));
}

TEST(PtxGolden, Float16MultiplyRoundsInFloat32) {
  expect_golden("mul_f16", Tensor::empty({64}, dtypes::float16) * Tensor::empty({64}, dtypes::float16));
}

// Whether the PTX reads a special register (e.g. "%ctaid.y").
bool reads(const std::string& ptx, const std::string& sreg) { return ptx.find(sreg + ";") != std::string::npos; }

void expect_dims_match(const Tensor& t, const GpuDimsOptions& options = {}) {
  const GpuTarget& target = gpu_target("sm_90");
  UOp linear = t.schedule_linear();  // held: a range-for over a temporary's src() would dangle
  for (const UOp& call : linear.src()) {
    GpuKernel k = prepare_gpu_kernel(call.src(0), target, options);
    std::string ptx = render_ptx("k", k, target);
    for (int d = 0; d < 3; d++) {
      std::string axis(1, "xyz"[d]);
      EXPECT_EQ(reads(ptx, "%ctaid." + axis), k.global_size[d] > 1) << "global_size[" << d << "] = " << k.global_size[d] << "\n" << ptx;
      EXPECT_EQ(reads(ptx, "%tid." + axis), k.local_size[d] > 1) << "local_size[" << d << "] = " << k.local_size[d] << "\n" << ptx;
    }
    std::string maxntid = ".maxntid " + std::to_string(k.local_size[0]) + ", " + std::to_string(k.local_size[1]) + ", " +
                          std::to_string(k.local_size[2]);
    EXPECT_NE(ptx.find(maxntid), std::string::npos) << maxntid << "\n" << ptx;
  }
}

TEST(PtxLaunchDims, SpecialRegistersAppearExactlyForDimensionsLargerThanOne) {
  expect_dims_match(Tensor::empty({1000}) * 2);                                         // x only, gated
  expect_dims_match(Tensor::empty({6, 37}).permute({1, 0}).contiguous() * 2);          // x and y
  expect_dims_match(Tensor::empty({3, 5, 7}).flip(1) + 1, GpuDimsOptions{.max_threads = 8});  // x, y and z
  expect_dims_match(Tensor::empty({2, 3, 4, 5, 6}).permute({4, 3, 2, 1, 0}).contiguous() * 3);
  expect_dims_match(Tensor::empty({40000}).sum());                                      // one thread
  expect_dims_match(Tensor::empty({100000, 3}).sum(1), GpuDimsOptions{.max_threads = 1});  // blocks of one thread
}

TEST(PtxRender, AnAmdTargetIsRejectedNamingIt) {
  GpuKernel k = prepare_gpu_kernel(only_kernel(Tensor::empty({4}) + 1), gpu_target("gfx942"));
  try {
    render_ptx("k", k, gpu_target("gfx942"));
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("gfx942"), std::string::npos) << e.what();
  }
}

TEST(PtxRender, AKernelNameThatIsNotAPtxIdentifierIsRejected) {
  GpuKernel k = prepare_gpu_kernel(only_kernel(Tensor::empty({4}) + 1), gpu_target("sm_90"));
  try {
    render_ptx("9-lives", k, gpu_target("sm_90"));
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'9-lives' is not a PTX identifier"), std::string::npos) << e.what();
  }
}

TEST(PtxRender, Float64TranscendentalIsAnErrorNamingTheNode) {
  GpuKernel k = prepare_gpu_kernel(only_kernel(Tensor::empty({4}, dtypes::float64).exp2()), gpu_target("sm_90"));
  try {
    render_ptx("k", k, gpu_target("sm_90"));
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("EXP2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace doorbell
