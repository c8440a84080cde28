// Vector loads in the PTX renderer: the expander's copies of an upcast load become one ld.global.v4 (or .v2) only
// where the address is provably aligned to the vector and no store of the kernel can be passed by reading early.
#include <gtest/gtest.h>

#include "compiler/gpu/ptx_renderer.h"
#include "compiler/gpu/ptxas.h"
#include "frontend/tensor.h"

namespace doorbell {
namespace {

int occurrences(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) n++;
  return n;
}

std::string ptx_of(const Tensor& t) {
  const GpuTarget& target = gpu_target("sm_90");
  UOp linear = t.schedule_linear();
  EXPECT_EQ(linear.src().size(), 1u);
  std::string ptx = render_ptx("k", prepare_gpu_kernel(linear.src(0).src(0), target), target);
  if (ptxas_available()) {
    EXPECT_NO_THROW(assemble_ptx(ptx, "sm_90")) << ptx;
  }
  return ptx;
}

TEST(PtxVectorLoads, UpcastFloat32InputsLoadFourLanesAtOnce) {
  std::string ptx = ptx_of(Tensor::empty({1024}) + Tensor::empty({1024}));
  EXPECT_EQ(occurrences(ptx, "ld.global.v4.f32"), 2) << ptx;
  EXPECT_EQ(occurrences(ptx, "ld.global.f32"), 0) << ptx;
}

TEST(PtxVectorLoads, HalfInputsLoadFourAndDoubleInputsTwoLanes) {
  EXPECT_EQ(occurrences(ptx_of(Tensor::empty({256}, dtypes::float16) * 2), "ld.global.v4.b16"), 1);
  std::string f64 = ptx_of(Tensor::empty({256}, dtypes::float64) * 2);
  EXPECT_EQ(occurrences(f64, "ld.global.v4"), 0) << "32 bytes would exceed a vector's 16\n" << f64;
  EXPECT_EQ(occurrences(f64, "ld.global.v2.f64"), 2) << f64;
}

TEST(PtxVectorLoads, AnInputShiftedByOneElementIsNotLoadedAsAnAlignedFour) {
  // y[i] = x[i + 1]: lanes read 4k+1 .. 4k+4; only 4k+2, 4k+3 form an aligned pair.
  std::string ptx = ptx_of(Tensor::empty({1025}).shrink({{1, 1025}}) * 2);
  EXPECT_EQ(occurrences(ptx, "ld.global.v4"), 0) << ptx;
  EXPECT_EQ(occurrences(ptx, "ld.global.v2.f32"), 1) << ptx;
  EXPECT_EQ(occurrences(ptx, "ld.global.f32"), 2) << ptx;
}

TEST(PtxVectorLoads, ABufferTheKernelAlsoStoresToIsLoadedLaneByLane) {
  Tensor a = Tensor::empty({1024});
  std::string ptx = ptx_of(a.assign(a * 2 + 1));
  EXPECT_EQ(occurrences(ptx, "ld.global.v"), 0) << ptx;
}

TEST(PtxVectorLoads, GatedLoadsStayScalar) {
  std::string ptx = ptx_of(Tensor::empty({1020}).pad({{2, 2}}) + 1);
  EXPECT_EQ(occurrences(ptx, "ld.global.v"), 0) << ptx;
}

}  // namespace
}  // namespace doorbell
