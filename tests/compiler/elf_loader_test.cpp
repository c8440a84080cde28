// The ELF loader on objects made by the C compiler: every relocation type a kernel object uses, calls into libm
// through jump stubs, and clear errors for broken objects.
#include <elf.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "compiler/cpu/clang_compiler.h"
#include "compiler/cpu/elf_loader.h"
#include "compiler/cpu_kernel_abi.h"

namespace doorbell {
namespace {

#define SKIP_WITHOUT_C_COMPILER() \
  if (!find_c_compiler()) GTEST_SKIP() << "no C compiler (clang-19, clang or cc) on PATH: objects cannot be made"

// A kernel with a float table in .rodata (PC32), a call to libm's expf (PLT32), a global variable read through
// the GOT (GOTPCREL family, since -fPIC makes a global preemptible) and a function pointer in .data (R_X86_64_64).
constexpr const char* kSource = R"C(
#include <stdint.h>
float expf(float);
float sinf(float);
static const float table[4] = {0.5f, 1.25f, -3.0f, 7.0f};
float scale = 2.0f;
float (*volatile trig)(float) = sinf;
void kernel_elf(void* const* bufs, const int64_t* vars, int32_t core_id, int32_t core_count) {
  float* out = (float*)bufs[0];
  const float* in = (const float*)bufs[1];
  for (int i = 0; i < 4; i++) out[i] = expf(in[i]) * table[i] * scale + trig(in[i]);
}
)C";

std::set<uint32_t> relocation_types(const std::string& elf) {
  Elf64_Ehdr eh;
  std::memcpy(&eh, elf.data(), sizeof eh);
  std::set<uint32_t> types;
  for (size_t i = 0; i < eh.e_shnum; i++) {
    Elf64_Shdr sh;
    std::memcpy(&sh, elf.data() + eh.e_shoff + i * sizeof sh, sizeof sh);
    if (sh.sh_type != SHT_RELA) continue;
    for (uint64_t off = 0; off < sh.sh_size; off += sizeof(Elf64_Rela)) {
      Elf64_Rela r;
      std::memcpy(&r, elf.data() + sh.sh_offset + off, sizeof r);
      types.insert(static_cast<uint32_t>(ELF64_R_TYPE(r.r_info)));
    }
  }
  return types;
}

TEST(ElfLoader, RelocatesRodataLibmCallsGotAndAbsolutePointers) {
  SKIP_WITHOUT_C_COMPILER();
  CompiledObject obj = compile_c(kSource);
  std::set<uint32_t> types = relocation_types(obj.object);
  EXPECT_TRUE(types.count(R_X86_64_PLT32)) << "the call to expf";
  EXPECT_TRUE(types.count(R_X86_64_64)) << "the function pointer in .data";
  EXPECT_TRUE(types.count(R_X86_64_PC32) || types.count(R_X86_64_GOTPCREL) || types.count(R_X86_64_REX_GOTPCRELX) ||
              types.count(R_X86_64_GOTPCRELX))
      << "rip-relative data references";
  std::shared_ptr<LoadedObject> code = LoadedObject::load(obj.object);
  auto fn = reinterpret_cast<CpuKernelFn>(code->symbol("kernel_elf"));
  float in[4] = {0.f, 1.f, -2.f, 0.5f}, out[4] = {};
  void* bufs[2] = {out, in};
  fn(bufs, nullptr, 0, 1);
  const float table[4] = {0.5f, 1.25f, -3.0f, 7.0f};
  for (int i = 0; i < 4; i++) EXPECT_FLOAT_EQ(out[i], std::exp(in[i]) * table[i] * 2.0f + std::sin(in[i])) << i;
}

TEST(ElfLoader, ATruncatedObjectIsAClearError) {
  SKIP_WITHOUT_C_COMPILER();
  CompiledObject obj = compile_c(kSource);
  for (size_t keep : {size_t{10}, size_t{200}, obj.object.size() - 8}) {
    try {
      LoadedObject::load(std::string_view(obj.object).substr(0, keep));
      ADD_FAILURE() << "an object truncated to " << keep << " bytes loaded";
    } catch (const ElfLoadError& e) {
      EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
    }
  }
}

TEST(ElfLoader, NotAnElfObjectIsAClearError) {
  std::string junk(128, 'x');
  try {
    LoadedObject::load(junk);
    FAIL() << "junk loaded";
  } catch (const ElfLoadError& e) {
    EXPECT_NE(std::string(e.what()).find("magic"), std::string::npos) << e.what();
  }
}

TEST(ElfLoader, AnUnresolvedSymbolIsNamed) {
  SKIP_WITHOUT_C_COMPILER();
  CompiledObject obj = compile_c("void doorbell_no_such_function(void);\nvoid k(void) { doorbell_no_such_function(); }\n");
  try {
    LoadedObject::load(obj.object);
    FAIL() << "an object with an unresolved call loaded";
  } catch (const ElfLoadError& e) {
    EXPECT_NE(std::string(e.what()).find("doorbell_no_such_function"), std::string::npos) << e.what();
  }
}

TEST(ElfLoader, AMissingKernelSymbolIsNamed) {
  SKIP_WITHOUT_C_COMPILER();
  std::shared_ptr<LoadedObject> code = LoadedObject::load(compile_c(kSource).object);
  try {
    code->symbol("kernel_missing");
    FAIL() << "a missing symbol was found";
  } catch (const ElfLoadError& e) {
    EXPECT_NE(std::string(e.what()).find("kernel_missing"), std::string::npos) << e.what();
  }
}

TEST(ClangCompiler, ACompileErrorQuotesTheCompilerAndTheSourceLine) {
  SKIP_WITHOUT_C_COMPILER();
  try {
    compile_c("int ok(void) { return 1; }\nint bad(void) { return undeclared_name; }\n");
    FAIL() << "bad C compiled";
  } catch (const CCompileError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("undeclared_name"), std::string::npos) << m;
    EXPECT_NE(m.find("source line 2"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace doorbell
