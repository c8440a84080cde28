// Grouped reductions (compiler/gpu/group_reduce.h) and the GPU optimizer's choice of them
// (compiler/gpu/gpu_optimizer.h): the graph they build, the launch they get, and the PTX ptxas accepts for them,
// with the shared memory and barrier that ptxas and our cubin reader report. Their values are checked on the CPU
// with barriers in tests/gpucodegen/amdgpu_cpu_semantics_test.cpp.
#include <gtest/gtest.h>

#include "compiler/gpu/cubin_reader.h"
#include "compiler/gpu/gpu_optimizer.h"
#include "compiler/gpu/group_reduce.h"
#include "compiler/gpu/ptx_renderer.h"
#include "compiler/gpu/ptxas.h"
#include "frontend/tensor.h"
#include "tests/common/error_of.h"

namespace doorbell {
namespace {

using testing::error_of;

UOp only_kernel(const Tensor& t) {
  UOp linear = t.schedule_linear();
  EXPECT_EQ(linear.src().size(), 1u);
  return linear.src(0).src(0);
}

int count(const UOp& sink, Ops op) {
  int n = 0;
  for (const UOp& u : sink.toposort()) n += u.op() == op;
  return n;
}

std::vector<UOp> locals(const UOp& sink) {
  std::vector<UOp> out;
  for (const UOp& u : sink.toposort())
    if (u.op() == Ops::PARAM && u.arg_as<ParamArg>().addrspace == AddrSpace::LOCAL) out.push_back(u);
  return out;
}

TEST(GroupReduce, FullSumGetsOneBlockOf256LanesAndOneLocalBufferAndBarrier) {
  UOp k = only_kernel(Tensor::empty({1000}).sum());
  EXPECT_EQ(group_lanes_for(k, gpu_target("sm_90")), 256);
  GpuKernel g = optimize_for_gpu(k, gpu_target("sm_90"));
  EXPECT_EQ(g.local_size, (std::array<int64_t, 3>{256, 1, 1}));
  EXPECT_EQ(g.global_size, (std::array<int64_t, 3>{1, 1, 1}));
  EXPECT_EQ(count(g.sink, Ops::BARRIER), 1);
  ASSERT_EQ(locals(g.sink).size(), 1u);
  EXPECT_EQ(locals(g.sink)[0].arg_as<ParamArg>().vmax, 255) << "256 partial sums";
  EXPECT_EQ(count(g.sink, Ops::REDUCE), 2) << "the lanes' partial sums, then the sum of the partials";
}

TEST(GroupReduce, TheGlobalStoreIsGatedToLaneZero) {
  GpuKernel g = optimize_for_gpu(only_kernel(Tensor::empty({1000}).sum()), gpu_target("sm_90"));
  int gated_global_stores = 0;
  for (const UOp& u : g.sink.toposort()) {
    if (u.op() != Ops::STORE || u.src(0).src(0).op() != Ops::PARAM) continue;
    if (u.src(0).src(0).arg_as<ParamArg>().addrspace != AddrSpace::GLOBAL) continue;
    ASSERT_EQ(u.src(0).src().size(), 3u) << "a global store without a gate";
    const UOp& gate = u.src(0).src(2);
    EXPECT_EQ(gate.op(), Ops::CMPEQ);
    EXPECT_EQ(gate.src(0).op(), Ops::SPECIAL);
    EXPECT_EQ(gate.src(0).arg_as<std::string>(), "lidx0");
    gated_global_stores++;
  }
  EXPECT_EQ(gated_global_stores, 1);
}

TEST(GroupReduce, RowsOfAMatrixGetOneBlockEachAndManyRowsFewerLanes) {
  GpuKernel few = optimize_for_gpu(only_kernel(Tensor::empty({13, 1000}).sum(1)), gpu_target("sm_90"));
  EXPECT_EQ(few.local_size[0], 256);
  EXPECT_EQ(few.global_size[0] * few.global_size[1] * few.global_size[2], 13);
  GpuKernel many = optimize_for_gpu(only_kernel(Tensor::empty({1000, 100}).max(1)), gpu_target("sm_90"));
  EXPECT_EQ(many.local_size[0], 64);
  EXPECT_EQ(many.global_size[0] * many.global_size[1] * many.global_size[2], 1000);
}

TEST(GroupReduce, ShortReducesManyOutputsAndNoOptStayUngrouped) {
  const GpuTarget& t = gpu_target("sm_90");
  EXPECT_EQ(group_lanes_for(only_kernel(Tensor::empty({100, 31}).sum(1)), t), 0) << "a reduce of 31";
  EXPECT_EQ(group_lanes_for(only_kernel(Tensor::empty({4096, 64}).sum(1)), t), 0) << "4096 outputs";
  EXPECT_EQ(group_lanes_for(only_kernel(Tensor::empty({100}) + 1), t), 0) << "no reduce";
  GpuKernel g = optimize_for_gpu(only_kernel(Tensor::empty({1000}).sum()), t, {.optimize = false, .dims = {}});
  EXPECT_EQ(count(g.sink, Ops::BARRIER), 0);
  EXPECT_EQ(g.local_size[0], 1) << "one thread does the whole sum";
}

TEST(GroupReduce, LanesNeverExceedTheReduceLengthRoundedDownToAPowerOfTwo) {
  EXPECT_EQ(group_lanes_for(only_kernel(Tensor::empty({40}).sum()), gpu_target("sm_90")), 32);
  EXPECT_EQ(group_lanes_for(only_kernel(Tensor::empty({100}).sum()), gpu_target("gfx1100")), 64);
}

TEST(GroupReduce, SoftmaxGroupsBothReducesWithTheirOwnLocalBuffers) {
  UOp linear = Tensor::empty({4, 500}).softmax(-1).schedule_linear();
  int grouped_kernels = 0;
  for (const UOp& call : linear.src()) {
    GpuKernel g = optimize_for_gpu(call.src(0), gpu_target("sm_90"));
    std::vector<UOp> l = locals(g.sink);
    for (size_t i = 0; i < l.size(); i++) EXPECT_EQ(l[i].arg_as<ParamArg>().slot, static_cast<int64_t>(i));
    EXPECT_EQ(count(g.sink, Ops::BARRIER), static_cast<int>(l.size()));
    grouped_kernels += !l.empty();
  }
  EXPECT_GE(grouped_kernels, 1);
}

TEST(GroupReduce, BadLaneCountsAndDoubleGroupingAreErrors) {
  UOp k = only_kernel(Tensor::empty({1000}).sum());
  EXPECT_NE(error_of([&] { group_reduces(k, 1); }).find("1 lanes, expected 2 or more"), std::string::npos);
  UOp g = group_reduces(k, 64);
  EXPECT_NE(error_of([&] { group_reduces(g, 64); }).find("grouped already"), std::string::npos);
  EXPECT_NE(error_of([&] { lower_for_gpu(group_reduces(k, 2048), gpu_target("sm_90")); }).find("2048 lanes"), std::string::npos);
}

TEST(GroupReduce, PtxHasASharedArrayAndABarrierAndPtxasReportsBoth) {
  const GpuTarget& t = gpu_target("sm_90");
  GpuKernel g = prepare_gpu_kernel(only_kernel(Tensor::empty({1000}).sum()), t);
  std::string ptx = render_ptx("grouped_sum", g, t);
  EXPECT_NE(ptx.find(".shared .align 16 .b8 db_local0[1024];"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("bar.sync 0;"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("st.shared.f32"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("ld.shared.f32"), std::string::npos) << ptx;
  if (!ptxas_available()) GTEST_SKIP() << "ptxas not found on PATH or in /usr/local/cuda/bin: PTX not assembled";
  for (const char* arch : {"sm_90", "sm_80"}) {
    const GpuTarget& a = gpu_target(arch);
    PtxasResult r = assemble_ptx(render_ptx("grouped_sum", prepare_gpu_kernel(only_kernel(Tensor::empty({1000}).sum()), a), a), arch);
    const PtxasFunctionReport& f = r.report.functions.at("grouped_sum");
    EXPECT_EQ(f.barriers, 1) << arch;
    EXPECT_EQ(f.shared_bytes, 1024) << arch;
    const Cubin cubin = read_cubin(r.cubin);  // held: kernel() returns a reference into it
    const CubinKernel& c = cubin.kernel("grouped_sum");
    EXPECT_EQ(c.num_barriers, 1) << arch;
    EXPECT_EQ(c.shared_bytes, std::string(arch) == "sm_90" ? 2048u : 1024u) << arch << ": sm_90 reserves 1 KiB more";
  }
}

TEST(GroupReduce, EveryDtypeAndReduceOpAssemblesGrouped) {
  if (!ptxas_available()) GTEST_SKIP() << "ptxas not found on PATH or in /usr/local/cuda/bin: PTX not assembled";
  const GpuTarget& t = gpu_target("sm_90");
  std::string module;
  int n = 0;
  for (DType d : {dtypes::float32, dtypes::float16, dtypes::bfloat16, dtypes::int8, dtypes::int32, dtypes::int64,
                  dtypes::uint8, dtypes::bool_, dtypes::float64}) {
    Tensor x = Tensor::empty({3, 777}, d);
    for (const Tensor& y : {x.sum(1), x.max(1), x.cast(dtypes::int64).prod(1)}) {
      UOp k = only_kernel(y);
      ASSERT_GT(group_lanes_for(k, t), 0) << d.name();
      std::string name = "k" + std::to_string(n++);
      std::string ptx = render_ptx(name, prepare_gpu_kernel(k, t), t);
      module += module.empty() ? ptx : ptx.substr(ptx.find(".visible .entry"));
    }
  }
  PtxasResult r = assemble_ptx(module, "sm_90");
  EXPECT_EQ(r.report.functions.size(), static_cast<size_t>(n));
  for (const auto& [name, f] : r.report.functions) EXPECT_EQ(f.barriers, 1) << name;
}

}  // namespace
}  // namespace doorbell
