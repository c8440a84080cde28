// ProgramInfo: what the runtime needs to know to launch a compiled kernel, the arg of its PROGRAM UOp (tinygrad's
// ProgramInfo, uop/ops.py). It is derived from the lowered kernel and from the binary's own metadata, never from
// scanning the source text: the launch size, the scalar variables passed after the buffers, which buffer slots are
// written and read, and the resources the hardware must reserve (shared memory, registers, stack).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace doorbell {

// A kernel variable (PARAM with AddrSpace::ALU): its value is passed per launch as a 64-bit scalar.
struct KernelVariable {
  std::string name;
  int64_t vmin = 0, vmax = 0;
  bool operator==(const KernelVariable&) const = default;
};

struct ProgramInfo {
  std::string name;      // readable, tinygrad style: E_4_16 (elementwise), r_256_32 (with a reduce); the symbol too
  std::string target;    // the target that rendered and compiled it (compiler/target.h Target::name)
  // GPU: blocks per dimension (global_size) and threads per block (local_size). CPU: global_size[0] is the number
  // of cores the kernel's work is worth (its outermost loop is divided among them), local_size is 1.
  std::array<int64_t, 3> global_size{1, 1, 1};
  std::array<int64_t, 3> local_size{1, 1, 1};
  int64_t buffers = 0;                 // global buffer parameters: slots 0 .. buffers-1, in this order
  std::vector<KernelVariable> vars;    // scalar parameters after the buffers, in this order
  std::vector<int64_t> outs, ins;      // buffer slots the kernel stores to / loads from
  int64_t shared_bytes = 0;            // static shared (local) memory per block, from the kernel's local buffers
  int64_t registers = 0;               // per thread, from the binary (.nv.info REGCOUNT); 0 where it has none
  int64_t stack_bytes = 0;             // per-thread stack frame from the binary; 0 where it has none
  // Estimates from the scheduler's kernel (compiler/kernel_estimates.h), for DEBUG=2's GFLOP/s and GB/s.
  int64_t ops = 0;                     // ALU operations on data
  int64_t bytes = 0;                   // bytes read and written
  int64_t iterations = 1;              // iterations of the outermost loops: the work a CPU divides among cores
  bool operator==(const ProgramInfo&) const = default;

  // "[g0,g1,g2 x l0,l1,l2]" on a GPU, "[cores x iterations]" on the CPU.
  std::string launch_string() const;
};

// The arg of a PROGRAM: shared, so a UOp's Arg stays small; compared and hashed by value.
struct ProgramInfoArg {
  std::shared_ptr<const ProgramInfo> info;
  bool operator==(const ProgramInfoArg& o) const { return info == o.info || (info && o.info && *info == *o.info); }
};

}  // namespace doorbell
