// PROGRAM: a compiled kernel as a UOp (reference §4, seeds 003): PROGRAM(SINK, LINEAR, SOURCE, BINARY), where
// LINEAR lists the linearizer's statements in order (a loop's RANGE where it opens, END(RANGE) where it closes),
// SOURCE's arg is the C source and BINARY's arg the ELF object bytes (dtype uint8). compile_kernel renders,
// compiles and loads a kernel once per (kernel content key, renderer target, settings that change code): the
// program cache, shared by every thread of the process.
#pragma once
#include <cstdint>
#include <string>

#include "compiler/cpu_kernel_abi.h"
#include "ir/uop.h"

namespace doorbell {

// What renders and compiles CPU kernels now; part of the program cache key.
inline constexpr const char* kCpuRendererTarget = "c/x86_64/clang-subprocess";

struct CompiledKernel {
  UOp program;             // Ops::PROGRAM
  CpuKernelFn fn = nullptr;  // valid for the life of the process (the cache keeps the code mapped)
  std::string name;        // the C function's name
  double compile_ms = 0;   // of the C compiler process when this kernel was compiled (or of the disk cache read)
  bool from_disk_cache = false;  // the object came from the disk cache (compiler/cpu/object_cache.h)
  bool cache_hit = false;  // this call found the program in the cache
};

// `kernel` is a CALL (its src[0] is used) or the kernel SINK itself. Throws std::invalid_argument for a kernel the
// renderer cannot express, CCompileError when compilation fails, ElfLoadError when the object cannot be loaded.
CompiledKernel compile_kernel(const UOp& kernel);

// Called with the kernel SINK of every compile_kernel request, cache hit or not, on the requesting thread: for tools
// that collect the kernels a program compiles (the GPU codegen tests harvest the conformance suite's this way).
// nullptr removes it.
using KernelObserver = void (*)(const UOp& sink);
void set_kernel_observer(KernelObserver observer);

struct ProgramCacheStats {
  uint64_t hits = 0, misses = 0;  // misses: kernels compiled
  size_t entries = 0;
};
ProgramCacheStats program_cache_stats();

}  // namespace doorbell
