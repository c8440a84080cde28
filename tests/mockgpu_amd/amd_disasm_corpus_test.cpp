// Every kernel of the fusion corpus (tests/scheduler/fusion_corpus_cases.h), compiled for gfx1100 through the AMDGPU
// target (compiler/gpu/amdgpu_target.h; code objects come from the disk object cache after the first run), decodes
// and disassembles with our RDNA3 decoder to exactly llvm-objdump-19's text, instruction by instruction. With
// DOORBELL_AMD_MNEMONICS=<file> the corpus's mnemonic histogram is written there.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "compiler/program.h"
#include "tests/gpucodegen/amdgpu_corpus.h"
#include "tests/mockgpu_amd/amd_disasm_corpus.h"
#include "tests/scheduler/fusion_corpus_cases.h"
#if DOORBELL_HAVE_LLVM
#include "compiler/gpu/amdgpu_target.h"
#endif

namespace doorbell {
namespace {

TEST(AmdDisasmCorpus, ObjdumpOutputSplitsIntoEachFilesTextInstructionsByAddress) {
  const std::string out =
      "\n/tmp/d/k0.o:\tfile format elf64-amdgpu\n\nDisassembly of section .text:\n\n"
      "0000000000000000 <E_4>:\n"
      "\ts_load_b64 s[0:1], s[0:1], 0x10                            // 000000000000: F4040000 F8000010\n"
      "\ts_branch 21                                                // 000000000008: BFA00015 <E_4+0x60>\n"
      "\n/tmp/d/k1.o:\tfile format elf64-amdgpu\n\nDisassembly of section .rodata:\n"
      "\ts_nop 0                                                    // 000000000040: BF800000\n"
      "Disassembly of section .text:\n"
      "\tv_dual_mov_b32 v3, 0 :: v_dual_lshlrev_b32 v0, 2, v0// 000000001900: CA220080 03000082\n";
  std::map<std::string, amd_disasm_corpus::ObjdumpText> files = amd_disasm_corpus::parse_objdump(out);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files["/tmp/d/k0.o"].size(), 2u);
  EXPECT_EQ(files["/tmp/d/k0.o"][0x8], "s_branch 21") << "the branch target comment is not part of the text";
  ASSERT_EQ(files["/tmp/d/k1.o"].size(), 1u) << "only .text counts";
  EXPECT_EQ(files["/tmp/d/k1.o"][0x1900], "v_dual_mov_b32 v3, 0 :: v_dual_lshlrev_b32 v0, 2, v0");
}

TEST(AmdDisasmCorpus, EveryFusionCorpusKernelDisassemblesLikeLlvmObjdump) {
#if !DOORBELL_HAVE_LLVM
  GTEST_SKIP() << "built without LLVM: no gfx1100 code objects to read";
#else
  const std::optional<std::string> objdump = amd_disasm_corpus::find_objdump();
  if (!objdump) GTEST_SKIP() << "llvm-objdump-19 not found on PATH or in /usr/lib/llvm-19/bin";
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<Target> gfx = make_amdgpu_target("gfx1100");
  std::vector<amd_disasm_corpus::CodeObject> objects;
  for (const auto& c : fusion_corpus::corpus())
    for (const UOp& sink : amdgpu_test::kernels_of(c.build())) {
      CompiledProgram p = compile_program(sink, *gfx);
      objects.push_back({std::string(c.name) + "/" + program_info(p.program).name, program_binary(p.program)});
    }
  const double compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  amd_disasm_corpus::Result r = amd_disasm_corpus::check(objects, *objdump);
  const double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("fusion corpus, gfx1100: %d kernels, %ld instructions, %zu distinct mnemonics, %zu differences "
              "(compile %.1f s, check %.1f s)\n",
              r.kernels, r.instructions, r.mnemonics.size(), r.differences.size(), compile_s, total_s - compile_s);
  for (size_t i = 0; i < r.differences.size() && i < 40; ++i) ADD_FAILURE() << r.differences[i];
  if (const char* path = std::getenv("DOORBELL_AMD_MNEMONICS"); path && *path)  // the histogram, for the executor's plan
    std::ofstream(path) << amd_disasm_corpus::histogram(r.mnemonics);
  EXPECT_EQ(r.objects, static_cast<int>(objects.size()));
  EXPECT_GE(r.kernels, 40) << "the corpus has more than 40 kernels";
  EXPECT_GT(r.instructions, 1000);
#endif
}

}  // namespace
}  // namespace doorbell
