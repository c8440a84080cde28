// PROGRAM: a compiled kernel as a UOp (seed 003): PROGRAM(SINK, LINEAR, SOURCE, BINARY) with a ProgramInfo arg
// (ir/program_info.h), where SINK is the scheduler's kernel, LINEAR lists the linearizer's statements of the lowered
// kernel in order (a loop's RANGE where it opens, END(RANGE) where it closes), SOURCE's arg is the source text the
// target rendered (C, PTX, ...) and BINARY's arg the bytes its compiler made (an ELF object, a cubin, ...).
//
// compile_program drives every target (compiler/target.h) the same way: the target's pipeline (compiler/pipeline.h),
// linearize, a readable name (compiler/kernel_name.h), render, compile, ProgramInfo. It compiles a kernel once per
// process per (kernel content key, target cache key, NOOPT): the program cache, shared by every thread and bounded
// (program_cache_limit, least recently used first out). Targets
// with a compiler process keep its binaries on disk across processes too (compiler/object_cache.h).
#pragma once
#include <cstdint>
#include <string>

#include "compiler/cpu_kernel_abi.h"
#include "compiler/target.h"
#include "ir/program_info.h"
#include "ir/uop.h"

namespace doorbell {

struct CompiledProgram {
  UOp program;                   // Ops::PROGRAM
  double compile_ms = 0;         // of the compiler when this request compiled it (or of the disk cache read)
  bool from_disk_cache = false;  // the binary came from the disk object cache
  bool cache_hit = false;        // this request found the program in the program cache
};

// `kernel` is a CALL (its src[0] is used) or the kernel SINK itself. Throws std::invalid_argument for a kernel the
// target cannot express, and the target compiler's error (CCompileError, PtxasError) when compilation fails.
CompiledProgram compile_program(const UOp& kernel, const Target& target);

// The parts of a PROGRAM. Each throws std::invalid_argument when `program` is not a PROGRAM.
const ProgramInfo& program_info(const UOp& program);
const std::string& program_source(const UOp& program);
const std::string& program_binary(const UOp& program);

// compile_program for the CPU's C target, loaded into this process: for tests and tools that call a kernel directly.
struct CompiledKernel {
  UOp program;               // Ops::PROGRAM
  CpuKernelFn fn = nullptr;  // valid for the life of the process (the loaded code is never unmapped)
  std::string name;          // the C function's name
  double compile_ms = 0;
  bool from_disk_cache = false;
  bool cache_hit = false;
};
CompiledKernel compile_kernel(const UOp& kernel);

// Called with the kernel SINK of every compile_program request, cache hit or not, on the requesting thread: for tools
// that collect the kernels a program compiles (the GPU codegen tests harvest the conformance suite's this way).
// nullptr removes it.
using KernelObserver = void (*)(const UOp& sink);
void set_kernel_observer(KernelObserver observer);

struct ProgramCacheStats {
  uint64_t hits = 0, misses = 0;  // misses: kernels compiled
  uint64_t evictions = 0;         // least recently used programs dropped past the limit
  size_t entries = 0;
};
ProgramCacheStats program_cache_stats();

// The most programs the cache keeps, and the most each device keeps loaded (Device::program): least recently used
// ones go first. DOORBELL_PROGRAM_CACHE, read on first use, else 4096; a value that is not a whole number >= 1
// throws std::invalid_argument naming the variable.
size_t program_cache_limit();
// Sets the limit (tests, tools), trims the cache to it and returns the previous one; 0 throws.
size_t set_program_cache_limit(size_t limit);

}  // namespace doorbell
