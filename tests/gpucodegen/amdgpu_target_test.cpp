// The AMDGPU target (compiler/gpu/amdgpu_target.h) through compile_program: the PROGRAM holds the LLVM IR and the code
// object LLVM made, its ProgramInfo's registers and local memory are the code object's own metadata, and the disk
// object cache keeps code objects like every other target's binaries.
#include <gtest/gtest.h>

#include "compiler/gpu/amd_code_object.h"
#include "compiler/gpu/amdgpu_target.h"
#include "compiler/object_cache.h"
#include "compiler/program.h"
#include "frontend/tensor.h"
#include "tests/common/temp_tree.h"

namespace doorbell {
namespace {

UOp only_kernel(const Tensor& t) {
  UOp linear = t.schedule_linear();
  EXPECT_EQ(linear.src().size(), 1u);
  return linear.src(0).src(0);
}

TEST(AmdgpuTarget, TheProgramHoldsTheIrAndTheCodeObjectAndItsInfoIsTheCodeObjectsMetadata) {
#if !DOORBELL_HAVE_LLVM
  GTEST_SKIP() << "built without LLVM: no AMDGPU compiler";
#else
  std::unique_ptr<Target> gfx = make_amdgpu_target("gfx1100");
  UOp sink = only_kernel(Tensor::empty({5000}).sum());  // a grouped reduce: LDS and a barrier
  CompiledProgram p = compile_program(sink, *gfx);
  const ProgramInfo& info = program_info(p.program);
  EXPECT_EQ(info.target, gfx->name());
  EXPECT_NE(program_source(p.program).find("amdgpu_kernel"), std::string::npos) << "the SOURCE is the LLVM IR";
  AmdCodeObject co = read_amd_code_object(program_binary(p.program));
  const MsgPack* md = co.kernel_metadata(info.name);
  ASSERT_NE(md, nullptr) << "the code object describes the kernel by its readable name";
  EXPECT_EQ(info.registers, md->find(".vgpr_count")->as_int());
  EXPECT_GT(info.registers, 0);
  EXPECT_EQ(info.shared_bytes, md->find(".group_segment_fixed_size")->as_int()) << "LDS of the local buffers";
  EXPECT_GT(info.local_size[0], 1);
#endif
}

TEST(AmdgpuTarget, ASecondCompileOfTheSameSourceReadsTheCodeObjectFromTheDiskCache) {
#if !DOORBELL_HAVE_LLVM
  GTEST_SKIP() << "built without LLVM: no AMDGPU compiler";
#else
  testing::TempTree dir;
  const std::optional<std::string> saved = object_cache_dir();
  set_object_cache_dir(dir.root().string());
  std::unique_ptr<Target> gfx = make_amdgpu_target("gfx942");
  LoweredKernel k = gfx->lower(only_kernel(Tensor::empty({64}) * 3), true);
  const std::string ir = gfx->render("E_64", k, {});
  CompiledBinary first = gfx->compile(ir, "E_64"), second = gfx->compile(ir, "E_64");
  set_object_cache_dir(saved);
  EXPECT_FALSE(first.from_disk_cache);
  EXPECT_TRUE(second.from_disk_cache);
  EXPECT_EQ(first.bytes, second.bytes);
  EXPECT_EQ(first.registers, second.registers) << "the metadata read from the cached object too";
#endif
}

TEST(AmdgpuTarget, AKernelVariableIsAnI64ParameterAfterTheBuffers) {
#if !DOORBELL_HAVE_LLVM
  GTEST_SKIP() << "built without LLVM: no AMDGPU compiler";
#else
  std::unique_ptr<Target> gfx = make_amdgpu_target("gfx1100");
  Tensor x = Tensor::empty({16});
  UOp start = UOp::variable("start", 0, 12);
  UOp linear = (x.narrow(0, start.bind(3), 4) * 2).schedule_linear();
  ASSERT_EQ(linear.src().size(), 1u);
  CompiledProgram p = compile_program(linear.src(0), *gfx);
  const ProgramInfo& info = program_info(p.program);
  ASSERT_EQ(info.vars.size(), 1u);
  EXPECT_EQ(info.vars[0].name, "start");
  const std::string& ir = program_source(p.program);
  EXPECT_NE(ir.find("noalias %data1, i64 %var0)"), std::string::npos) << ir.substr(0, 600);
  EXPECT_FALSE(program_binary(p.program).empty());
#endif
}

TEST(AmdgpuTarget, OnlyAmdArchitecturesMakeAnAmdgpuTarget) {
  EXPECT_THROW(make_amdgpu_target("sm_90"), std::invalid_argument);
  EXPECT_THROW(make_amdgpu_target("gfx9999"), std::invalid_argument);
}

}  // namespace
}  // namespace doorbell
