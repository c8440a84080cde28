// C source -> a relocatable x86-64 ELF object, by running a C compiler found on PATH at run time (clang-19,
// else clang, else cc), so the build needs no LLVM. compiler/cpu/elf_loader.h loads the object.
#pragma once
#include <optional>
#include <stdexcept>
#include <string>

namespace doorbell {

// The compiler's failure: its command line, exit status and stderr, and the source line it complains about.
class CCompileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CompiledObject {
  std::string object;     // the bytes of the ELF .o
  std::string compiler;   // the executable that made it
  double compile_ms = 0;  // wall time of the compiler process, or of the disk cache lookup that found the object
  bool from_disk_cache = false;
};

// The first of clang-19, clang, cc found on PATH, as a full path; nullopt when there is none.
std::optional<std::string> find_c_compiler();

// The flags every kernel is compiled with: what changes code belongs in the program cache key.
// -fwrapv: signed integers wrap as the IR defines; -ffp-contract=off: no fused multiply-add the C compiler invents,
// so scalar results match exec_alu (vector kernels fuse where the renderer says so, compiler/cpu/vectorize.h); -fno-math-errno: math builtins need not set errno; no unwind tables and no stack protector, so the
// object has no .eh_frame and no reference to __stack_chk_fail.
const char* c_compile_flags();

// The disk cache key of a kernel's object (compiler/object_cache.h): its source, the compiler, the flags and this
// CPU's model and feature flags (what -march=native compiles for).
std::string c_object_cache_key(const std::string& source, const std::string& compiler);

// Looks in the object cache on disk (compiler/object_cache.h) first, and stores what it compiles there.
// Throws CCompileError when no compiler exists or compilation fails.
CompiledObject compile_c(const std::string& source);

}  // namespace doorbell
