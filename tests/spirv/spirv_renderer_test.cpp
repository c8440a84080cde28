// The SPIR-V renderer (compiler/spirv/spirv_renderer.h) on lavapipe's caps: every kernel of the fusion corpus
// (tests/scheduler/fusion_corpus_cases.h) and of the GPU dtype corpus (tests/gpucodegen/amdgpu_corpus.h: every dtype,
// casts between every pair, bitcasts, reductions, matmuls, integer division) renders and passes
// `spirv-val --target-env vulkan1.2`; the module's structure follows compiler/spirv/spirv_kernel_abi.h; kernels the
// device cannot run are refused naming the type and the feature.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <unordered_set>

#include "../gpucodegen/amdgpu_corpus.h"
#include "../scheduler/fusion_corpus_cases.h"
#include "compiler/c_renderer.h"
#include "compiler/optimizer.h"
#include "compiler/spirv/spirv_kernel_abi.h"
#include "compiler/spirv/spirv_renderer.h"
#include "compiler/spirv/spirv_target.h"
#include "spirv_tools.h"

namespace doorbell {
namespace {

struct Rendered {
  std::string name;
  LoweredKernel kernel;
  std::vector<uint32_t> words;
};

Rendered render(const UOp& sink, const SpirvDeviceCaps& caps = lavapipe_caps(), bool optimize = true) {
  std::unique_ptr<Target> t = make_spirv_target(caps);
  Rendered r{c_kernel_name(sink), t->lower(sink, optimize), {}};
  r.words = render_spirv(r.name, r.kernel, caps).words();
  return r;
}

// Instructions of a module's words as (opcode, operand words after the opcode word).
std::vector<std::pair<uint32_t, std::vector<uint32_t>>> instructions(const std::vector<uint32_t>& w) {
  std::vector<std::pair<uint32_t, std::vector<uint32_t>>> out;
  for (size_t i = 5; i < w.size();) {
    uint32_t count = w[i] >> 16, opcode = w[i] & 0xffff;
    if (count == 0 || i + count > w.size()) throw std::runtime_error("bad instruction length");
    out.emplace_back(opcode, std::vector<uint32_t>(w.begin() + static_cast<long>(i) + 1, w.begin() + static_cast<long>(i + count)));
    i += count;
  }
  return out;
}
constexpr uint32_t kOpCapability = 17, kOpExecutionMode = 16, kOpVariable = 59, kOpControlBarrier = 224,
                   kOpConstant = 43, kOpEntryPoint = 15;
constexpr uint32_t kLocalSize = 17, kStorageWorkgroup = 4;

std::vector<uint32_t> capabilities(const std::vector<uint32_t>& w) {
  std::vector<uint32_t> c;
  for (const auto& [op, ops] : instructions(w))
    if (op == kOpCapability) c.push_back(ops[0]);
  return c;
}
bool has(const std::vector<uint32_t>& v, spirv::Capability c) { return std::count(v.begin(), v.end(), static_cast<uint32_t>(c)) > 0; }

// Validates every kernel; returns the number that passed and adds a failure per kernel that did not.
int validate_all(const std::vector<UOp>& kernels, const char* what, bool optimize = true) {
  int ok = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (const UOp& sink : kernels) {
    std::string name = c_kernel_name(sink);
    try {
      Rendered r = render(sink, lavapipe_caps(), optimize);
      testing::SpirvToolResult v = testing::spirv_val(r.words);
      if (v.exit_code == 0) ok++;
      else ADD_FAILURE() << what << " kernel " << name << ": spirv-val: " << v.output.substr(0, 1500);
    } catch (const std::exception& e) {
      ADD_FAILURE() << what << " kernel " << name << ": " << std::string(e.what()).substr(0, 1500);
    }
  }
  std::printf("%s: %d of %zu kernels pass spirv-val (%.1f s)\n", what, ok, kernels.size(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return ok;
}

TEST(SpirvRenderer, EveryFusionCorpusKernelPassesSpirvVal) {
  DOORBELL_REQUIRE_SPIRV_TOOL("spirv-val");
  std::vector<UOp> kernels;
  std::unordered_set<std::string> seen;
  Tensor::manual_seed(1234);
  for (const fusion_corpus::Case& c : fusion_corpus::corpus()) {
    UOp linear = Tensor::schedule_linear(c.build());
    for (const UOp& call : linear.src())
      if (call.op() == Ops::CALL && call.src(0).op() == Ops::SINK && seen.insert(call.src(0).key().hex()).second)
        kernels.push_back(call.src(0));
  }
  ASSERT_GE(kernels.size(), 30u);
  EXPECT_EQ(validate_all(kernels, "fusion corpus"), static_cast<int>(kernels.size()));
  EXPECT_EQ(validate_all(kernels, "fusion corpus (NOOPT)", false), static_cast<int>(kernels.size()));
}

TEST(SpirvRenderer, EveryDtypeCastAndBitcastKernelPassesSpirvVal) {
  DOORBELL_REQUIRE_SPIRV_TOOL("spirv-val");
  std::vector<UOp> kernels;
  std::unordered_set<std::string> seen;
  for (const amdgpu_test::Program& p : amdgpu_test::corpus_programs())
    for (const UOp& k : amdgpu_test::kernels_of(p.outputs))
      if (seen.insert(k.key().hex()).second) kernels.push_back(k);
  ASSERT_GE(kernels.size(), 200u);
  EXPECT_EQ(validate_all(kernels, "dtype corpus"), static_cast<int>(kernels.size()));
}

UOp only_kernel(const std::vector<Tensor>& outs) {
  std::vector<UOp> ks = amdgpu_test::kernels_of(outs);
  if (ks.size() != 1) throw std::runtime_error("expected one kernel, got " + std::to_string(ks.size()));
  return ks[0];
}

TEST(SpirvRenderer, LocalSizeIsTheLaunchsLocalSizeAndTheEntryPointIsNamedTheKernel) {
  Rendered r = render(only_kernel({amdgpu_test::E({1000}) + amdgpu_test::E({1000})}));
  int modes = 0;
  for (const auto& [op, ops] : instructions(r.words)) {
    if (op == kOpExecutionMode && ops[1] == kLocalSize) {
      modes++;
      EXPECT_EQ(ops[2], static_cast<uint32_t>(r.kernel.local_size[0]));
      EXPECT_EQ(ops[3], static_cast<uint32_t>(r.kernel.local_size[1]));
      EXPECT_EQ(ops[4], static_cast<uint32_t>(r.kernel.local_size[2]));
    }
    if (op == kOpEntryPoint) {
      EXPECT_EQ(ops[0], 5u);  // GLCompute
      std::string name(reinterpret_cast<const char*>(&ops[2]));
      EXPECT_EQ(name, r.name);
    }
  }
  EXPECT_EQ(modes, 1);
  EXPECT_GT(r.kernel.local_size[0], 1);
}

TEST(SpirvRenderer, ArgumentWordsAreReadAtEightByteOffsetsAfterTheBuffers) {
  // three buffers (the output and two inputs): words 0, 8 and 16 bytes into the argument block
  Rendered r = render(only_kernel({amdgpu_test::E({64}) * amdgpu_test::E({64})}));
  std::vector<uint64_t> u64_constants;
  uint32_t u64_type = 0;
  for (const auto& [op, ops] : instructions(r.words)) {
    if (op == 21 && ops[1] == 64) u64_type = ops[0];  // OpTypeInt 64
    if (op == kOpConstant && ops[0] == u64_type && ops.size() == 4) u64_constants.push_back(ops[2] | (uint64_t{ops[3]} << 32));
  }
  for (uint64_t offset : {0u, kSpirvArgumentWordBytes, 2 * kSpirvArgumentWordBytes})
    EXPECT_EQ(std::count(u64_constants.begin(), u64_constants.end(), offset), 1) << offset;
  EXPECT_EQ(std::count(u64_constants.begin(), u64_constants.end(), 3 * kSpirvArgumentWordBytes), 0);
}

TEST(SpirvRenderer, GroupedReductionHasAWorkgroupArrayAndABarrier) {
  Rendered r = render(only_kernel({amdgpu_test::E({64, 2048}).sum(1)}));
  ASSERT_GT(r.kernel.local_size[0], 1) << "expected a grouped reduction";
  int workgroup_vars = 0, barriers = 0;
  for (const auto& [op, ops] : instructions(r.words)) {
    if (op == kOpVariable && ops[2] == kStorageWorkgroup) workgroup_vars++;
    if (op == kOpControlBarrier) barriers++;
  }
  EXPECT_GE(workgroup_vars, 1);
  EXPECT_GE(barriers, 1);
  if (const char* dump = std::getenv("DOORBELL_SPIRV_DUMP")) {  // a module to read with spirv-dis
    std::string bytes = spirv::words_to_bytes(r.words);
    FILE* f = std::fopen(dump, "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
}

TEST(SpirvRenderer, CapabilitiesOnlyForTheTypesUsed) {
  std::vector<uint32_t> f32 = capabilities(render(only_kernel({amdgpu_test::E({64}) + 1.0f})).words);
  EXPECT_TRUE(has(f32, spirv::Capability::PhysicalStorageBufferAddresses));
  EXPECT_TRUE(has(f32, spirv::Capability::Int64));  // the buffer addresses
  EXPECT_FALSE(has(f32, spirv::Capability::Int8));
  EXPECT_FALSE(has(f32, spirv::Capability::Int16));
  EXPECT_FALSE(has(f32, spirv::Capability::Float64));
  EXPECT_FALSE(has(f32, spirv::Capability::Float16));
  std::vector<uint32_t> i8 = capabilities(render(only_kernel({amdgpu_test::E({64}, dtypes::int8) + amdgpu_test::E({64}, dtypes::int8)})).words);
  EXPECT_TRUE(has(i8, spirv::Capability::Int8));
  EXPECT_TRUE(has(i8, spirv::Capability::StorageBuffer8BitAccess));
  EXPECT_FALSE(has(i8, spirv::Capability::Int16));
  std::vector<uint32_t> h = capabilities(render(only_kernel({amdgpu_test::E({64}, dtypes::float16) * 2.0f})).words);
  EXPECT_TRUE(has(h, spirv::Capability::StorageBuffer16BitAccess));
  EXPECT_FALSE(has(h, spirv::Capability::Float16));  // 16-bit floats are float32 in registers
}

std::string refusal(const UOp& sink, const SpirvDeviceCaps& caps) {
  try {
    render(sink, caps);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(SpirvRenderer, RefusesFloat64TranscendentalsNamingTheNode) {
  std::string e = refusal(only_kernel({amdgpu_test::E({16}, dtypes::float64).exp2()}), lavapipe_caps());
  EXPECT_NE(e.find("float64 transcendentals"), std::string::npos) << e;
  EXPECT_NE(e.find("EXP2"), std::string::npos) << e;
}

TEST(SpirvRenderer, RefusesTypesTheDeviceLacksNamingTypeAndFeature) {
  SpirvDeviceCaps caps = lavapipe_caps();
  caps.float64 = false;
  std::string e = refusal(only_kernel({amdgpu_test::E({16}, dtypes::float64) + 1.0}), caps);
  EXPECT_NE(e.find("float64"), std::string::npos) << e;
  EXPECT_NE(e.find("shaderFloat64"), std::string::npos) << e;
  caps = lavapipe_caps();
  caps.storage8 = false;
  e = refusal(only_kernel({amdgpu_test::E({16}, dtypes::uint8) + amdgpu_test::E({16}, dtypes::uint8)}), caps);
  EXPECT_NE(e.find("uint8"), std::string::npos) << e;
  EXPECT_NE(e.find("storageBuffer8BitAccess"), std::string::npos) << e;
  caps = lavapipe_caps();
  caps.storage16 = false;
  e = refusal(only_kernel({amdgpu_test::E({16}, dtypes::bfloat16) * 2.0f}), caps);
  EXPECT_NE(e.find("storageBuffer16BitAccess"), std::string::npos) << e;
  caps = lavapipe_caps();
  caps.int64 = false;
  EXPECT_THROW(make_spirv_target(caps), std::invalid_argument);
}

TEST(SpirvRenderer, SignedZeroInfNanPreserveFollowsTheCaps) {
  UOp k = only_kernel({amdgpu_test::E({64}) + 1.0f});
  auto modes = [&](const SpirvDeviceCaps& caps) {
    int n = 0;
    for (const auto& [op, ops] : instructions(render(k, caps).words))
      if (op == kOpExecutionMode && ops[1] == static_cast<uint32_t>(spirv::ExecutionMode::SignedZeroInfNanPreserve)) {
        n++;
        EXPECT_EQ(ops[2], 32u);
      }
    return n;
  };
  SpirvDeviceCaps caps = lavapipe_caps();
  EXPECT_EQ(modes(caps), 1);
  caps.preserve_nan32 = false;
  EXPECT_EQ(modes(caps), 0);
}

}  // namespace
}  // namespace doorbell
