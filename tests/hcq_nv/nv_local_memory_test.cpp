// Shader local memory on the NV device (emulated GPU): a kernel whose cubin has a stack (a .local array indexed at
// run time) loads, the device programs SET_SHADER_LOCAL_MEMORY sized per TPC from it (tinygrad ops_nv.py:696-708),
// the QMD asks for the kernel's bytes per thread, and the emulated SM keeps the array in that store; a kernel with a
// larger stack grows the store. Needs ptxas (the stack size comes from the cubin); skipped without it.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "compiler/gpu/ptxas.h"
#include "compiler/program.h"
#include "frontend/tensor.h"
#include "hcq/nv/cubin_image.h"
#include "hcq/nv/nv_device.h"
#include "hcq/nv/nv_program.h"
#include "ir/program_info.h"
#include "mockgpu/nv/mock_nv_seam.h"

namespace doorbell::nv {
namespace {

// out[t] = arr[in[N + t] % N] with arr[i] = in[i] + t, arr a .local array of N u32 (N a power of two).
std::string local_gather_ptx(const std::string& name, int n) {
  const std::string N = std::to_string(n), mask = std::to_string(n - 1), bytes = std::to_string(4 * n);
  return R"(.version 8.0
.target sm_90
.address_size 64

.visible .entry )" + name + R"((
	.param .u64 out,
	.param .u64 in
)
{
	.local .align 4 .b8 arr[)" + bytes + R"(];
	.reg .pred %p<2>;
	.reg .b32 %r<12>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [out];
	ld.param.u64 %rd2, [in];
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, 0;
	mov.u32 %r3, arr;
LOOP:
	mul.wide.u32 %rd3, %r2, 4;
	add.s64 %rd4, %rd2, %rd3;
	ld.global.u32 %r4, [%rd4];
	add.s32 %r4, %r4, %r1;
	shl.b32 %r5, %r2, 2;
	add.s32 %r6, %r3, %r5;
	st.local.u32 [%r6], %r4;
	add.s32 %r2, %r2, 1;
	setp.lt.u32 %p1, %r2, )" + N + R"(;
	@%p1 bra LOOP;
	add.s32 %r7, %r1, )" + N + R"(;
	mul.wide.u32 %rd5, %r7, 4;
	add.s64 %rd6, %rd2, %rd5;
	ld.global.u32 %r8, [%rd6];
	and.b32 %r8, %r8, )" + mask + R"(;
	shl.b32 %r8, %r8, 2;
	add.s32 %r9, %r3, %r8;
	ld.local.u32 %r10, [%r9];
	mul.wide.u32 %rd7, %r1, 4;
	add.s64 %rd7, %rd1, %rd7;
	st.global.u32 [%rd7], %r10;
	ret;
}
)";
}

// A PROGRAM of the device's target holding this PTX and ptxas's cubin of it, with two buffer parameters.
UOp program_of(NvDevice& d, const std::string& name, const std::string& ptx) {
  Tensor a = Tensor({1.f, 2.f}).realize(), b = Tensor({3.f, 4.f}).realize();
  UOp base = compile_program((a + b).schedule_linear().src(0), d.target()).program;  // a SINK and LINEAR to hold
  ProgramInfo info = program_info(base);
  PtxasResult r = assemble_ptx(ptx, "sm_90");
  info.name = name;
  info.buffers = 2;
  info.vars.clear();
  info.shared_bytes = 0;
  info.registers = r.report.functions.at(name).registers;
  info.stack_bytes = r.report.functions.at(name).stack_frame_bytes;
  return UOp::make(Ops::PROGRAM, dtypes::void_,
                   {base.src(0), base.src(1), UOp::make(Ops::SOURCE, dtypes::void_, {}, ptx),
                    UOp::make(Ops::BINARY, dtypes::uint8, {}, std::move(r.cubin))},
                   ProgramInfoArg{std::make_shared<const ProgramInfo>(info)});
}

class NvLocalMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ptxas_available()) GTEST_SKIP() << "ptxas not found on PATH or in /usr/local/cuda/bin: no cubin gives a stack size";
    device_ = NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>());
  }
  // Runs the gather of n elements on 64 threads and checks every thread's result.
  void run_and_check(const LoadedProgram& program, uint32_t n) {
    NvMemory in = device_->alloc((n + 64) * 4), out = device_->alloc(64 * 4);
    auto* src = reinterpret_cast<uint32_t*>(in.cpu);
    for (uint32_t i = 0; i < n; ++i) src[i] = 1000 + 3 * i;
    for (uint32_t t = 0; t < 64; ++t) src[n + t] = 37 * t + 5;
    std::memset(out.cpu, 0, 64 * 4);
    Signal& done = device_->new_signal("local gather done");
    const std::vector<uint64_t> buffers{out.va, in.va};
    HWQueue().exec(program, buffers, std::array<uint32_t, 3>{1, 1, 1}, std::array<uint32_t, 3>{64, 1, 1}).signal(done, 1).submit(*device_);
    done.wait(1);
    for (uint32_t t = 0; t < 64; ++t)
      ASSERT_EQ(reinterpret_cast<uint32_t*>(out.cpu)[t], src[(37 * t + 5) % n] + t) << "thread " << t;
    device_->free(in);
    device_->free(out);
  }
  std::unique_ptr<NvDevice> device_;
};

TEST_F(NvLocalMemory, AKernelWithAStackRunsWithLocalMemorySizedFromItsCubin) {
  const UOp program = program_of(*device_, "local_gather", local_gather_ptx("local_gather", 512));
  ASSERT_GE(program_info(program).stack_bytes, 2048) << "ptxas kept the array in registers";
  const auto& p = static_cast<const NvProgram&>(device_->program(program));
  EXPECT_EQ(p.local_bytes_per_thread, (program_info(program).stack_bytes + kLocalMemoryReserve + 31) / 32 * 32);
  run_and_check(p, 512);
}

TEST_F(NvLocalMemory, AKernelWithALargerStackGrowsTheStoreAndEarlierKernelsStillRun) {
  const UOp small = program_of(*device_, "gather_small", local_gather_ptx("gather_small", 512));
  const UOp large = program_of(*device_, "gather_large", local_gather_ptx("gather_large", 1024));
  const LoadedProgram& s = device_->program(small);
  run_and_check(s, 512);
  const LoadedProgram& l = device_->program(large);  // needs twice the local memory per thread
  EXPECT_GT(static_cast<const NvProgram&>(l).local_bytes_per_thread, static_cast<const NvProgram&>(s).local_bytes_per_thread);
  run_and_check(l, 1024);
  run_and_check(s, 512);
  // run_and_check waited for its own signal, which comes before the submission's progress release; the store and
  // the buffers are freed once the channel passed that release, so wait for a later submission (synchronize() alone
  // waits only for the timeline, which these direct submissions never signal: under ASan this raced).
  Signal& later = device_->new_signal("a later submission");
  HWQueue().signal(later, 1).submit(*device_);
  later.wait(1, std::chrono::milliseconds(20000));
  EXPECT_EQ(device_->retired_count(), 0u) << "the first store is freed once the channel passed its work";
}

}  // namespace
}  // namespace doorbell::nv
