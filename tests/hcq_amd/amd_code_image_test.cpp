// The AMD device's loader (hcq/amd/amd_code_image.h) on code objects LLVM 19 and ld.lld make from hand-written IR:
// the image the PT_LOAD segments make, the descriptor and entry inside it, the kernarg layout from the metadata
// (explicit arguments, COV5 hidden ones), and the refusals: an unlinked object, a relocation the loader would have to
// apply, a kernel that is not there.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "compiler/gpu/amd_code_object.h"
#include "hcq/amd/amd_code_image.h"
#if DOORBELL_HAVE_LLVM
#include "compiler/gpu/llvm/amdgpu_compiler.h"
#endif

namespace doorbell::amd {
namespace {

TEST(AmdCodeImage, RelocationTypesAreNamedAsLlvmNamesThem) {
  EXPECT_EQ(amdgpu_relocation_name(0), "R_AMDGPU_NONE");
  EXPECT_EQ(amdgpu_relocation_name(3), "R_AMDGPU_ABS64");
  EXPECT_EQ(amdgpu_relocation_name(13), "R_AMDGPU_RELATIVE64");
  EXPECT_EQ(amdgpu_relocation_name(12), "type 12");  // unassigned in AMDGPU.def
  EXPECT_EQ(amdgpu_relocation_name(99), "type 99");
}

#if DOORBELL_HAVE_LLVM

// out[id] = in[id] + var (a buffer, a buffer, a 64-bit variable), as our LLVM IR renderer declares kernels.
std::string kernel_ir(const std::string& attributes) {
  return R"(target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"
declare i32 @llvm.amdgcn.workitem.id.x()
define amdgpu_kernel void @k(ptr addrspace(1) noalias %data0, ptr addrspace(1) noalias %data1, i64 %var0) #0 {
entry:
  %i = call i32 @llvm.amdgcn.workitem.id.x()
  %src = getelementptr i64, ptr addrspace(1) %data1, i32 %i
  %v = load i64, ptr addrspace(1) %src
  %s = add i64 %v, %var0
  %dst = getelementptr i64, ptr addrspace(1) %data0, i32 %i
  store i64 %s, ptr addrspace(1) %dst
  ret void
}
attributes #0 = { nounwind )" + attributes + R"( }
)";
}

TEST(AmdCodeImage, SegmentsDescriptorAndExplicitArgumentsOfALinkedKernel) {
  const AmdgpuCompiled c = compile_amdgpu(kernel_ir("\"amdgpu-no-implicitarg-ptr\""), "gfx1100");
  ASSERT_TRUE(c.linked) << c.linker;
  const AmdCodeImage image = make_amd_code_image(c.object, "k");
  const AmdCodeObject co = read_amd_code_object(c.object);
  EXPECT_EQ(image.kd_offset, co.kernel("k").kd_address);
  EXPECT_EQ(image.entry_offset % 256, 0u);
  EXPECT_LE(image.kd_offset + 64, image.bytes.size());
  EXPECT_EQ(image.alignment % 256, 0u);
  // The descriptor's bytes in the image are the ones in the file (the segment holding .rodata was copied).
  const ElfSection* rodata = co.section(".rodata");
  ASSERT_NE(rodata, nullptr);
  EXPECT_EQ(std::memcmp(image.bytes.data() + image.kd_offset, c.object.data() + rodata->offset + (image.kd_offset - rodata->addr), 64), 0);
  ASSERT_EQ(image.explicit_args.size(), 3u);
  for (int i = 0; i < 3; i++) {
    EXPECT_EQ(image.explicit_args[i].offset, 8u * i);
    EXPECT_EQ(image.explicit_args[i].size, 8u);
  }
  EXPECT_EQ(image.explicit_args[0].value_kind, "global_buffer");
  EXPECT_EQ(image.explicit_args[2].value_kind, "by_value");
  EXPECT_FALSE(image.hidden_offset.has_value());
  EXPECT_EQ(image.kernarg_size, 24u);
  EXPECT_TRUE(image.kd.enable_sgpr_kernarg_segment_ptr());
}

TEST(AmdCodeImage, HiddenArgumentsStartAfterTheExplicitOnes) {
  AmdgpuCompileOptions o;
  o.opt_level = 0;  // at O2 the attributor drops the implicit arguments this kernel does not read
  const AmdgpuCompiled c = compile_amdgpu(kernel_ir(""), "gfx1100", o);
  const AmdCodeImage image = make_amd_code_image(c.object, "k");
  ASSERT_TRUE(image.hidden_offset.has_value());
  EXPECT_EQ(*image.hidden_offset, 24u);  // block_count_x right after the three explicit arguments
  EXPECT_EQ(image.explicit_args.size(), 3u);
  EXPECT_EQ(image.kernarg_size, 24u + 256u);
}

TEST(AmdCodeImage, RefusesAnUnlinkedObjectAndAMissingKernel) {
  AmdgpuCompileOptions o;
  o.link = false;
  const AmdgpuCompiled rel = compile_amdgpu(kernel_ir("\"amdgpu-no-implicitarg-ptr\""), "gfx1100", o);
  try {
    make_amd_code_image(rel.object, "k");
    FAIL() << "an ET_REL object was loaded";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("AMD: program k: the code object is relocatable (ET_REL)"), std::string::npos) << e.what();
  }
  const AmdgpuCompiled linked = compile_amdgpu(kernel_ir("\"amdgpu-no-implicitarg-ptr\""), "gfx1100");
  EXPECT_THROW(make_amd_code_image(linked.object, "nope"), std::invalid_argument);
}

TEST(AmdCodeImage, RefusesARelocationItWouldHaveToApply) {
  // A global holding the address of another: ld.lld -shared leaves a dynamic relocation for the loader.
  const std::string ir = R"(target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"
@g = addrspace(1) global i64 7
@p = addrspace(1) global ptr addrspace(1) @g
define amdgpu_kernel void @k(ptr addrspace(1) %out) #0 {
entry:
  %q = load ptr addrspace(1), ptr addrspace(1) @p
  %v = load i64, ptr addrspace(1) %q
  store i64 %v, ptr addrspace(1) %out
  ret void
}
attributes #0 = { nounwind "amdgpu-no-implicitarg-ptr" }
)";
  const AmdgpuCompiled c = compile_amdgpu(ir, "gfx1100");
  ASSERT_TRUE(c.linked);
  try {
    make_amd_code_image(c.object, "k");
    FAIL() << "a code object with a dynamic relocation was loaded";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("holds a relocation R_AMDGPU_"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("the loader applies none"), std::string::npos) << e.what();
  }
}

#endif  // DOORBELL_HAVE_LLVM

}  // namespace
}  // namespace doorbell::amd
