// The x86 target as the runtime uses it (compiler/x86/x86_target.h): DEBUG=4 prints each kernel's assembly listing,
// compile() assembles exactly the listing render() made, and the fallback target renders with clang what the first
// target refuses, choosing the compiler by the source.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "compiler/cpu/cpu_target.h"
#include "compiler/cpu/elf_loader.h"
#include "compiler/program.h"
#include "compiler/x86/x86_features.h"
#include "compiler/x86/x86_target.h"
#include "frontend/tensor.h"
#include "hcq/compile_linear.h"
#include "ir/debug.h"

namespace doorbell {
namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(X86Target, Debug4PrintsTheAssemblyListingOfEachKernel) {
  Tensor x = Tensor({1.f, 2.f}).to("CPU:X86");
  UOp linear = (x * 5 + 2).schedule_linear();
  const int before = debug_level();
  set_debug_level(4);
  ::testing::internal::CaptureStderr();
  compile_linear(linear);
  const std::string out = ::testing::internal::GetCapturedStderr();
  set_debug_level(before);
  EXPECT_TRUE(contains(out, ".intel_syntax noprefix")) << out;
  EXPECT_TRUE(contains(out, "\nE_2:\n")) << "the kernel's readable name is its symbol: " << out;
  EXPECT_TRUE(contains(out, "vmulss") || contains(out, "vmulps") || contains(out, "vfmadd")) << "x * 5: " << out;
  EXPECT_TRUE(contains(out, "\n  ret")) << out;
}

TEST(X86Target, CompileAssemblesTheListingAndNamesAMismatchedKernel) {
  const Target& t = cpu_x86_target();
  Tensor x = Tensor({1.f, 2.f, 3.f});
  UOp sink = (x + 1).schedule_linear().src(0).src(0);
  LoweredKernel low = t.lower(sink, true);
  const std::string listing = t.render("E_3", low, linearize(low.sink));
  CompiledBinary b = t.compile(listing, "E_3");
  auto code = LoadedObject::load(b.bytes);
  EXPECT_NE(code->symbol("E_3"), nullptr);
  try {
    t.compile(listing, "E_4");
    FAIL() << "a listing of E_3 compiled as E_4";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "defines E_3; expected the kernel E_4")) << e.what();
  }
}

// The x86 target, refusing reductions: what the fallback gets to render.
class RefusesReductions final : public Target {
 public:
  const std::string& name() const override { return cpu_x86_target().name(); }
  const std::string& cache_key() const override { return key_; }
  const LoweringOptions& options() const override { return cpu_x86_target().options(); }
  LoweredKernel lower(const UOp& sink, bool optimize) const override { return cpu_x86_target().lower(sink, optimize); }
  std::string render(const std::string& name, const LoweredKernel& k, const std::vector<Statement>& st) const override {
    if (name.rfind("r_", 0) == 0) throw std::invalid_argument("toy: no reductions: " + name);
    return cpu_x86_target().render(name, k, st);
  }
  CompiledBinary compile(const std::string& source, const std::string& name) const override {
    return cpu_x86_target().compile(source, name);
  }

 private:
  std::string key_ = "toy-refuses-reductions";
};

TEST(X86Target, FallbackRendersWhatTheFirstTargetRefusesWithTheSecond) {
  RefusesReductions first;
  std::unique_ptr<Target> both = make_fallback_target(first, cpu_c_target());
  Tensor x = Tensor::rand({4, 8});
  UOp elementwise = (x * 2).schedule_linear().src(0).src(0);
  UOp reduction = x.sum(1).schedule_linear().src(0).src(0);
  const uint64_t before = x86_fallback_count();
  CompiledProgram e = compile_program(elementwise, *both), r = compile_program(reduction, *both);
  EXPECT_EQ(x86_fallback_count(), before + 1) << "one kernel refused";
  EXPECT_TRUE(program_source(e.program).rfind(".intel_syntax", 0) == 0) << program_source(e.program);
  EXPECT_TRUE(contains(program_source(r.program), "void " + program_info(r.program).name + "(")) << program_source(r.program);
  for (const CompiledProgram* p : {&e, &r}) {  // both binaries are ELF objects the CPU device loads alike
    auto code = LoadedObject::load(program_binary(p->program));
    EXPECT_NE(code->symbol(program_info(p->program).name), nullptr);
  }
  EXPECT_EQ(program_info(e.program).target, both->name());
}

TEST(X86Features, KeepingFeaturesLeavesOutTheRestAndNamesAnUnknownOne) {
  x86::X86Features host;
  host.avx2 = host.fma = host.f16c = host.avx512f = host.avx512vl = true;
  x86::X86Features kept = x86::keep_x86_features(host, "avx2,fma,bmi2");
  EXPECT_TRUE(kept.avx2 && kept.fma);
  EXPECT_FALSE(kept.bmi2) << "a feature the host lacks stays off";
  EXPECT_FALSE(kept.f16c || kept.avx512f || kept.avx512vl) << "features not named are left out";
  EXPECT_EQ(kept.describe(), "avx2 fma");
  try {
    x86::keep_x86_features(host, "avx2,sse9");
    FAIL() << "an unknown feature was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "unknown feature 'sse9'")) << e.what();
    EXPECT_TRUE(contains(e.what(), "avx512f")) << "lists the known ones: " << e.what();
  }
}

}  // namespace
}  // namespace doorbell
