// GPU launch dims: the lowered kernel keeps within each target's limits and computes what the scheduler's kernel
// computes for every thread of its grid. The check runs the grid on the CPU: each SPECIAL becomes a loop of its
// bound, and the reference interpreter runs the result on the same buffers.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "compiler/expander.h"
#include "compiler/gpu/gpu_dims.h"
#include "compiler/optimizer.h"
#include "frontend/tensor.h"
#include "hcq/host_buffers.h"
#include "hcq/run_linear.h"
#include "ir/graph_rewrite.h"

namespace doorbell {
namespace {

// The GPU kernel as a CPU kernel: every SPECIAL a LOOP range of the same bound around every output.
UOp grid_as_loops(const UOp& sink) {
  std::unordered_map<const UOpNode*, UOp> loops;
  std::vector<UOp> ranges;
  int64_t axis = 1000;
  for (const UOp& u : sink.toposort())
    if (u.op() == Ops::SPECIAL) {
      ranges.push_back(UOp::range(u.src(0), axis++, AxisType::LOOP));
      loops[u.get()] = ranges.back();
    }
  UOp body = substitute(sink, loops);
  std::vector<UOp> outs;
  for (const UOp& o : body.src()) {
    std::vector<UOp> src{o};
    src.insert(src.end(), ranges.begin(), ranges.end());
    outs.push_back(ranges.empty() ? src[0] : UOp::make(Ops::END, dtypes::void_, src));
  }
  return UOp::sink(outs);
}

// Runs every kernel of `t`'s schedule twice, as scheduled and as lowered for `arch` (after the optimizer's upcasts
// and unrolls when `optimized`), and compares the bytes.
void expect_lowering_preserves(const Tensor& t, const std::string& arch, const GpuDimsOptions& options = {},
                               bool optimized = false) {
  UOp linear = t.schedule_linear();
  for (const UOp& call : linear.src()) {
    UOp kernel = optimized ? expand_kernel(apply_optimizations(call.src(0))) : call.src(0);
    GpuKernel k = lower_for_gpu(kernel, gpu_target(arch), options);
    const GpuTarget& target = gpu_target(arch);
    int64_t threads = 1;
    for (int d = 0; d < 3; d++) {
      EXPECT_GE(k.local_size[d], 1);
      EXPECT_LE(k.local_size[d], target.max_local[d]);
      EXPECT_GE(k.global_size[d], 1);
      EXPECT_LE(k.global_size[d], target.max_global[d]);
      threads *= k.local_size[d];
    }
    EXPECT_LE(threads, std::min(options.max_threads, target.max_threads_per_block));
    for (const UOp& u : k.sink.toposort()) {
      EXPECT_NE(u.op(), Ops::END) << "an output loop is left";
    }
    // Reference: the kernel before lowering (optimized sums reassociate, so not the scheduled one). Then the
    // lowered grid, after clearing the output.
    std::vector<UOp> ref_src = call.src();
    ref_src[0] = kernel;
    run_linear(UOp::make(Ops::LINEAR, dtypes::void_, {call.replace_src(std::move(ref_src))}), on_device("REF"));
    std::span<std::byte> out = buffer_bytes(call.src(1));
    std::vector<std::byte> want(out.begin(), out.end());
    std::memset(out.data(), 0xAB, out.size());
    std::vector<UOp> src = call.src();
    src[0] = grid_as_loops(k.sink);
    run_linear(UOp::make(Ops::LINEAR, dtypes::void_, {call.replace_src(std::move(src))}), on_device("REF"));
    EXPECT_EQ(std::memcmp(out.data(), want.data(), want.size()), 0) << arch << ": lowered kernel differs";
  }
}

TEST(GpuDims, ElementwiseOfAnOddSizeGatesTheThreadsPastTheEnd) {
  Tensor a = Tensor::rand({1000}).realize(), b = Tensor::rand({1000}).realize();
  Tensor y = a * b + 1;
  GpuKernel k = lower_for_gpu(y.schedule_linear().src(0).src(0), gpu_target("sm_90"));
  EXPECT_EQ(k.local_size, (std::array<int64_t, 3>{256, 1, 1}));
  EXPECT_EQ(k.global_size, (std::array<int64_t, 3>{4, 1, 1}));  // 1024 threads for 1000 elements: 24 gated off
  for (const char* arch : {"sm_80", "sm_90", "gfx1100", "gfx942"}) expect_lowering_preserves(a * b + 1, arch);
}

TEST(GpuDims, TwoAndThreeDimensionalOutputsMapTheInnermostLoopToX) {
  Tensor a = Tensor::rand({6, 37}).realize();
  UOp kernel = (a * 2).permute({1, 0}).contiguous().schedule_linear().src(0).src(0);
  GpuKernel k = lower_for_gpu(kernel, gpu_target("sm_90"));
  EXPECT_EQ(k.local_size[0], 6);  // the permuted output's inner dimension has 6 elements
  EXPECT_EQ(k.global_size[1] * k.local_size[1], 37);
  expect_lowering_preserves((a * 2).permute({1, 0}).contiguous(), "sm_90");
  Tensor c = Tensor::rand({3, 5, 7}).realize();
  expect_lowering_preserves(c.flip(1) + 1, "gfx942");
}

TEST(GpuDims, MoreThanThreeLoopsShareTheZDimension) {
  Tensor a = Tensor::rand({2, 3, 4, 5, 6}).realize();
  expect_lowering_preserves(a.permute({4, 3, 2, 1, 0}).contiguous() * 3, "sm_90");
  expect_lowering_preserves(a.permute({4, 3, 2, 1, 0}).contiguous() * 3, "gfx1100", GpuDimsOptions{.max_threads = 8});
}

TEST(GpuDims, ReductionsStayLoopsInsideEachThread) {
  Tensor a = Tensor::rand({33, 17}).realize(), b = Tensor::rand({17, 9}).realize();
  expect_lowering_preserves(a.sum(1), "sm_90");
  expect_lowering_preserves(a.matmul(b), "gfx942", GpuDimsOptions{.max_threads = 64});
  expect_lowering_preserves(a.softmax(1), "sm_90");
  expect_lowering_preserves(a.max(), "sm_80");  // no output loop: one thread
}

TEST(GpuDims, PaddingAndIntegerMathKeepTheirValues) {
  Tensor i = Tensor(std::vector<int32_t>{-7, 7, -8, 9, 10, -11, 12}).realize();
  expect_lowering_preserves(i.pad({{2, 3}}) .floordiv(Tensor(std::vector<int32_t>(12, -3))), "sm_90");
}

TEST(GpuDims, OptimizedKernelsWithUpcastStoresAndUnrolledReducesLowerToo) {
  // The optimizer's UPCAST leaves several stores per thread and its UNROLL a shorter reduce loop; the outer ranges
  // it leaves are what become thread indices.
  Tensor a = Tensor::rand({64, 48}).realize(), b = Tensor::rand({48, 20}).realize();
  expect_lowering_preserves(a.matmul(b), "sm_90", {}, true);
  expect_lowering_preserves(a * 2 + 1, "gfx1100", {}, true);
  expect_lowering_preserves(a.sum(0), "gfx942", {}, true);
  Tensor i = Tensor(std::vector<int32_t>{-7, 7, -8, 9, 10, -11, 12, 5}).realize();
  expect_lowering_preserves(i.floordiv(Tensor(std::vector<int32_t>(8, -3))) + i.cumsum(0), "sm_80", {}, true);
}

TEST(GpuDims, AGridBeyondTheTargetsLimitsIsAnErrorNamingTheDimension) {
  // 2 x 65536 x 1 output on one thread per block: y needs 65536 blocks, sm_90 allows 65535.
  Tensor a = Tensor::empty({70000, 65536, 2}, dtypes::uint8);
  UOp kernel = (a + 1).schedule_linear().src(0).src(0);
  try {
    lower_for_gpu(kernel, gpu_target("sm_90"), GpuDimsOptions{.max_threads = 1});
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("dimension 1 needs 65536 blocks"), std::string::npos) << e.what();
  }
}

TEST(GpuDims, UnknownTargetIsAnErrorListingTheKnownOnes) {
  try {
    gpu_target("sm_75");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("sm_80, sm_90, gfx1100, gfx942"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace doorbell
