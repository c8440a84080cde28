// ptxas as a subprocess: the -v report is parsed field by field (CUDA 12 prints cmem[0] and smem on the same line,
// CUDA 13 leaves cmem[0] out for sm_90), a PTX error comes back naming the command and ptxas's diagnostic, and the
// module version the renderer declares is accepted.
#include <gtest/gtest.h>

#include "compiler/gpu/ptx_renderer.h"
#include "compiler/gpu/ptxas.h"

namespace doorbell {
namespace {

TEST(Ptxas, VerboseReportIsParsedPerFunction) {
  const char* text =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'first' for 'sm_80'\n"
      "ptxas info    : Function properties for first\n"
      "    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 40 registers, used 2 barriers, 1000 bytes smem, 372 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function 'second' for 'sm_80'\n"
      "ptxas info    : Function properties for second\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 8 registers, used 0 barriers\n";
  PtxasReport r = parse_ptxas_report(text);
  ASSERT_EQ(r.functions.size(), 2u);
  const PtxasFunctionReport& f = r.functions.at("first");
  EXPECT_EQ(f.registers, 40);
  EXPECT_EQ(f.barriers, 2);
  EXPECT_EQ(f.stack_frame_bytes, 16);
  EXPECT_EQ(f.spill_store_bytes, 8);
  EXPECT_EQ(f.spill_load_bytes, 4);
  EXPECT_EQ(f.shared_bytes, 1000);
  EXPECT_EQ(f.cmem0_bytes, 372);
  const PtxasFunctionReport& s = r.functions.at("second");
  EXPECT_EQ(s.registers, 8);
  EXPECT_EQ(s.shared_bytes, 0);
  EXPECT_EQ(s.cmem0_bytes, -1) << "not printed: not known";
}

TEST(Ptxas, InvalidPtxIsAnErrorWithTheCommandAndTheDiagnostic) {
  if (!ptxas_available()) GTEST_SKIP() << "ptxas not found on PATH or in /usr/local/cuda/bin";
  std::string ptx = std::string(".version ") + kPtxVersion + "\n.target sm_90\n.address_size 64\n.visible .entry bad()\n{\n\tfrobnicate;\n\tret;\n}\n";
  try {
    assemble_ptx(ptx, "sm_90");
    FAIL() << "no error";
  } catch (const PtxasError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("-arch=sm_90"), std::string::npos) << what;
    EXPECT_NE(what.find("line 6"), std::string::npos) << what;
  }
}

TEST(Ptxas, DeclaredPtxVersionAssemblesForBothTargets) {
  if (!ptxas_available()) GTEST_SKIP() << "ptxas not found on PATH or in /usr/local/cuda/bin";
  for (const char* arch : {"sm_80", "sm_90"}) {
    std::string ptx = std::string(".version ") + kPtxVersion + "\n.target " + arch + "\n.address_size 64\n.visible .entry ok()\n{\n\tret;\n}\n";
    PtxasResult r = assemble_ptx(ptx, arch);
    EXPECT_FALSE(r.cubin.empty()) << arch;
    EXPECT_EQ(r.report.functions.count("ok"), 1u) << arch << "\n" << r.report.text;
  }
}

}  // namespace
}  // namespace doorbell
