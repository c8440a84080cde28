// Kernels with private (scratch) memory on the AMD device (hcq/amd/amd_device.h ensure_scratch), and the user SGPRs
// a kernel may enable beyond the kernarg pointer (the HSA dispatch packet, the dispatch id): a hand-written LLVM IR
// kernel with a private array indexed at run time, compiled by LLVM 19 for gfx1100, made into a PROGRAM and run on
// the emulated machine. Our renderer's kernels enable none of these, so this is where they are exercised.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "compiler/gpu/amd_code_object.h"
#include "compiler/program.h"
#include "tests/hcq_amd/amd_test_machine.h"
#if DOORBELL_HAVE_LLVM
#include "compiler/gpu/llvm/amdgpu_compiler.h"
#endif

namespace doorbell::amd {
namespace {

#if DOORBELL_HAVE_LLVM

// out[i] = arr[in[i] & 63] where arr[j] = j + i lives in private memory (a volatile array: it stays in scratch).
constexpr const char* kScratchKernel = R"(target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"
declare i32 @llvm.amdgcn.workitem.id.x()
define amdgpu_kernel void @scratchy(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias %in) #0 {
entry:
  %arr = alloca [64 x i32], align 4, addrspace(5)
  %i = call i32 @llvm.amdgcn.workitem.id.x()
  br label %fill
fill:
  %j = phi i32 [0, %entry], [%jn, %fill]
  %p = getelementptr [64 x i32], ptr addrspace(5) %arr, i32 0, i32 %j
  %x = add i32 %j, %i
  store volatile i32 %x, ptr addrspace(5) %p
  %jn = add i32 %j, 1
  %c = icmp ult i32 %jn, 64
  br i1 %c, label %fill, label %read
read:
  %src = getelementptr i32, ptr addrspace(1) %in, i32 %i
  %idx = load i32, ptr addrspace(1) %src
  %m = and i32 %idx, 63
  %q = getelementptr [64 x i32], ptr addrspace(5) %arr, i32 0, i32 %m
  %v = load volatile i32, ptr addrspace(5) %q
  %dst = getelementptr i32, ptr addrspace(1) %out, i32 %i
  store i32 %v, ptr addrspace(1) %dst
  ret void
}
attributes #0 = { nounwind "amdgpu-no-implicitarg-ptr" "amdgpu-flat-work-group-size"="1,64" }
)";

// A PROGRAM for the device's target holding `object`: what compile_program would make for a kernel of two buffers.
UOp program_of(const AmdDevice& d, const std::string& name, std::string object, int64_t threads) {
  auto info = std::make_shared<ProgramInfo>();
  info->name = name;
  info->target = d.target().name();
  info->global_size = {1, 1, 1};
  info->local_size = {threads, 1, 1};
  info->buffers = 2;
  return UOp::make(Ops::PROGRAM, dtypes::void_,
                   {UOp::make(Ops::SINK, dtypes::void_, {}), UOp::make(Ops::LINEAR, dtypes::void_, {}),
                    UOp::make(Ops::SOURCE, dtypes::void_, {}, std::string(kScratchKernel)),
                    UOp::make(Ops::BINARY, dtypes::uint8, {}, std::move(object))},
                   ProgramInfoArg{std::move(info)});
}

TEST(AmdScratch, AKernelWithAPrivateArrayAndADispatchPacketRunsWithScratch) {
  const AmdgpuCompiled c = compile_amdgpu(kScratchKernel, "gfx1100");
  ASSERT_TRUE(c.linked) << c.linker;
  const KernelDescriptor kd = read_amd_code_object(c.object).kernel("scratchy").kd;
  ASSERT_TRUE(kd.enable_private_segment()) << "LLVM kept the array in scratch";
  ASSERT_GE(kd.private_segment_fixed_size, 256u);
  std::unique_ptr<AmdDevice> d = open_amd_test_device();
  const UOp program = program_of(*d, "scratchy", c.object, 64);
  const LoadedProgram& loaded = d->program(program);
  AmdMemory in = d->alloc(64 * 4), out = d->alloc(64 * 4);
  for (int i = 0; i < 64; i++) reinterpret_cast<int32_t*>(in.cpu)[i] = 100 + 3 * i;  // & 63: 36 + 3i mod 64
  std::memset(out.cpu, 0, 64 * 4);
  Signal& done = d->new_signal("scratch done");
  HWQueue().exec(loaded, std::vector<uint64_t>{out.va, in.va}, {1, 1, 1}, {64, 1, 1}).signal(done, 1).submit(*d);
  done.wait(1, std::chrono::milliseconds(20000));
  for (int i = 0; i < 64; i++) ASSERT_EQ(reinterpret_cast<const int32_t*>(out.cpu)[i], ((100 + 3 * i) & 63) + i) << "lane " << i;
}

#endif  // DOORBELL_HAVE_LLVM

}  // namespace
}  // namespace doorbell::amd
