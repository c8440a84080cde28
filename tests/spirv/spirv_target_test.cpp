// The SPIR-V target (compiler/spirv/spirv_target.h): its GpuTarget from the caps, its name and cache key, the whole
// compile_program path (lower -> linearize -> render the module's text -> assemble exactly that text), and
// DOORBELL_SPIRV_VAL=1's spirv-val check naming the kernel.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>

#include "../gpucodegen/amdgpu_corpus.h"
#include "compiler/c_renderer.h"
#include "compiler/gpu/gpu_target.h"
#include "compiler/program.h"
#include "compiler/spirv/spirv_module.h"
#include "compiler/spirv/spirv_renderer.h"
#include "compiler/spirv/spirv_target.h"
#include "spirv_tools.h"

namespace doorbell {
namespace {

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

UOp a_kernel() {
  std::vector<UOp> ks = amdgpu_test::kernels_of({amdgpu_test::E({300}) * amdgpu_test::E({300}) + 2.0f});
  return ks.at(0);
}

TEST(SpirvTarget, GpuLimitsNameAndRendererComeFromTheCaps) {
  std::unique_ptr<Target> t = make_spirv_target(lavapipe_caps());
  EXPECT_EQ(t->options().renderer, "SPIRV");
  ASSERT_NE(t->options().gpu, nullptr);
  const GpuTarget& g = *t->options().gpu;
  EXPECT_EQ(g.vendor, GpuVendor::VK);
  EXPECT_EQ(g.arch, "vulkan1.2");
  EXPECT_EQ(g.warp_size, 8);
  EXPECT_EQ(g.max_threads_per_block, 1024);
  EXPECT_EQ(g.max_shared_bytes, 32768);
  EXPECT_EQ(g.max_global[0], 65535);
  EXPECT_EQ(t->name(), "SPIRV vulkan1.2 llvmpipe (LLVM 15.0.6, 256 bits)");
}

TEST(SpirvTarget, CacheKeyChangesWithDeviceDriverAndCaps) {
  const std::string base = make_spirv_target(lavapipe_caps())->cache_key();
  EXPECT_EQ(make_spirv_target(lavapipe_caps())->cache_key(), base);
  SpirvDeviceCaps c = lavapipe_caps();
  c.driver = "Mesa 23.0.0";
  EXPECT_NE(make_spirv_target(c)->cache_key(), base);
  c = lavapipe_caps();
  c.device_name = "another GPU";
  EXPECT_NE(make_spirv_target(c)->cache_key(), base);
  c = lavapipe_caps();
  c.preserve_nan32 = false;
  EXPECT_NE(make_spirv_target(c)->cache_key(), base);
  c = lavapipe_caps();
  c.max_shared_bytes = 16384;
  EXPECT_NE(make_spirv_target(c)->cache_key(), base);
}

TEST(SpirvTarget, RefusesADeviceWithoutInt64NamingTheFeature) {
  SpirvDeviceCaps c = lavapipe_caps();
  c.int64 = false;
  try {
    make_spirv_target(c);
    FAIL() << "expected a refusal";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("shaderInt64"), std::string::npos) << e.what();
  }
}

TEST(SpirvTarget, TheBinaryIsTheAssembledSourceAndTheRenderersWords) {
  std::unique_ptr<Target> t = make_spirv_target(lavapipe_caps());
  CompiledProgram p = compile_program(a_kernel(), *t);
  const ProgramInfo& info = program_info(p.program);
  const std::string& source = program_source(p.program);
  const std::string& binary = program_binary(p.program);
  EXPECT_NE(source.find("OpEntryPoint GLCompute"), std::string::npos) << source;
  EXPECT_NE(source.find("\"" + info.name + "\""), std::string::npos) << source;
  std::vector<uint32_t> words = spirv::bytes_to_words(binary);
  ASSERT_GE(words.size(), 5u);
  EXPECT_EQ(words[0], 0x07230203u);
  EXPECT_EQ(words, spirv::assemble(source));
  // the renderer's own words for the same lowered kernel: what is printed is what runs
  const SpirvDeviceCaps caps = lavapipe_caps();
  EXPECT_EQ(words, render_spirv(info.name, t->lower(a_kernel(), true), caps).words());
  EXPECT_EQ(info.buffers, 3);
  EXPECT_GT(info.local_size[0], 1);
  if (testing::find_spirv_tool("spirv-val")) {
    testing::SpirvToolResult v = testing::spirv_val(words);
    EXPECT_EQ(v.exit_code, 0) << v.output;
  }
}

TEST(SpirvTarget, SpirvValCheckNamesTheKernelAndTheValidatorsMessage) {
  DOORBELL_REQUIRE_SPIRV_TOOL("spirv-val");
  std::unique_ptr<Target> t = make_spirv_target(lavapipe_caps());
  const UOp k = a_kernel();
  const std::string name = c_kernel_name(k);
  const std::string source = t->render(name, t->lower(k, true), {});
  ScopedEnv val("DOORBELL_SPIRV_VAL", "1");
  EXPECT_NO_THROW(t->compile(source, name));
  // without the push constant block's Block decoration the module assembles but is not valid Vulkan SPIR-V
  std::string broken = source;
  size_t at = broken.find(" Block\n");
  ASSERT_NE(at, std::string::npos) << source;
  size_t line = broken.rfind('\n', at) + 1;
  broken.erase(line, at + 7 - line);
  try {
    t->compile(broken, name);
    FAIL() << "expected spirv-val to reject the module";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("spirv-val rejects kernel '" + name + "'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("PushConstant"), std::string::npos) << e.what();
  }
  // with the check off, the same text compiles: the device would be the first to see it
  ScopedEnv off("DOORBELL_SPIRV_VAL", "0");
  EXPECT_NO_THROW(t->compile(broken, name));
}

TEST(SpirvTarget, SpirvValMissingFromPathNamesThePackage) {
  std::unique_ptr<Target> t = make_spirv_target(lavapipe_caps());
  const UOp k = a_kernel();
  const std::string name = c_kernel_name(k);
  const std::string source = t->render(name, t->lower(k, true), {});
  ScopedEnv val("DOORBELL_SPIRV_VAL", "1");
  ScopedEnv path("PATH", "/nonexistent-doorbell");
  try {
    t->compile(source, name);
    FAIL() << "expected a missing spirv-val to be reported";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("spirv-tools"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace doorbell
