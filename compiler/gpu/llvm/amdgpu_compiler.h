// AMDGPU compiler: LLVM IR text (compiler/gpu/llvmir_renderer.h) -> an HSA code object, with LLVM 19 in process.
// Built only with DOORBELL_WITH_LLVM (then DOORBELL_HAVE_LLVM=1 is defined for users of doorbell_compiler); this
// header has no LLVM types, and amdgpu_compiler.cpp is the only file that includes LLVM headers.
//
// Steps: parse the IR, run the O2 pipeline (PassBuilder), run the AMDGPU backend to an ELF relocatable object in
// memory, then link it into the loadable code object (an ET_DYN shared object) with `ld.lld-19 -shared` as a
// subprocess: lld is not packaged as a library in our Debian LLVM packages (no liblldELF / lld headers in
// llvm-19-dev), and the HSA loader only takes shared objects. Without ld.lld the relocatable object is returned
// and `linked` says so.
#pragma once
#include <stdexcept>
#include <string>

namespace doorbell {

class AmdgpuCompileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct AmdgpuCompileOptions {
  bool link = true;           // run ld.lld when it is found
  int opt_level = 2;          // 0..3, the PassBuilder pipeline and the codegen level
};

struct AmdgpuCompiled {
  std::string object;       // the code object (linked) or the relocatable object
  bool linked = false;      // object is the ld.lld shared object
  std::string relocatable;  // the backend's ELF relocatable object
  std::string linker;       // path of the ld.lld used, or why none was
  double parse_ms = 0, optimize_ms = 0, codegen_ms = 0, link_ms = 0;
  double total_ms() const { return parse_ms + optimize_ms + codegen_ms + link_ms; }
};

// `arch`: "gfx1100", "gfx942", ... Throws AmdgpuCompileError with LLVM's diagnostic (and the IR line it names) on
// parse or verification errors, on an unknown arch, or when ld.lld fails.
AmdgpuCompiled compile_amdgpu(const std::string& ir, const std::string& arch, const AmdgpuCompileOptions& options = {});

// ld.lld-19 (or ld.lld) on PATH or in /usr/lib/llvm-19/bin; empty when there is none.
std::string find_ld_lld();

}  // namespace doorbell
