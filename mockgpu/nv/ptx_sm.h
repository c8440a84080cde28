// The emulated NVIDIA SM: runs a decoded PTX entry (mockgpu/nv/ptx_program.h) over a grid of blocks with the
// results the hardware gives (PTX ISA 8.0 semantics; the comments in ptx_sm.cpp name the sections).
//
// Threads of a block run one at a time, each until it reaches bar.sync or exits; the block passes the barrier
// when every thread has arrived. Shared memory is per block and starts filled with kSharedPoison (hardware leaves
// it undefined; the pattern makes a read before a write show up in tests). Faults (unmapped or unaligned address,
// shared access out of range, a barrier some threads never reach) throw PtxFault naming the address, the
// instruction with its line and the thread (block and thread index); an unmapped global access also carries the
// address and direction, which the command processor reports as an MMU fault.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

#include "mockgpu/nv/ptx_program.h"

namespace doorbell::mockgpu::nv {

inline constexpr uint8_t kSharedPoison = 0xCD;

// A global access to an address the memory does not map: what the GPU's MMU reports as a fault.
struct PtxUnmappedAccess {
  uint64_t address = 0;
  bool write = false;  // a store; otherwise a load
};

struct PtxFault : std::runtime_error {
  using std::runtime_error::runtime_error;
  PtxFault(const std::string& what, PtxUnmappedAccess access) : std::runtime_error(what), unmapped(access) {}
  std::optional<PtxUnmappedAccess> unmapped;  // set when the fault is an unmapped global access
};

// Device memory as the SM sees it: the command processor implements it over the GPU's page table, tests over host
// buffers.
class GlobalMemory {
 public:
  struct Range {
    uint64_t va = 0, bytes = 0;
    uint8_t* host = nullptr;
  };
  virtual ~GlobalMemory() = default;
  // Host pointer to `bytes` bytes at device address `va`; throws (naming va) when any of them is unmapped.
  virtual uint8_t* translate(uint64_t va, size_t bytes) = 0;
  // A mapped range containing [va, va + bytes) that the SM may cache for the rest of the launch (a page, or a
  // whole buffer): fewer translate calls in the hot loop. The default is exactly the access.
  virtual Range mapped_range(uint64_t va, size_t bytes) { return {va, bytes, translate(va, bytes)}; }
};

struct PtxDim3 {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t count() const { return uint64_t{x} * y * z; }
};

// Thrown out of run_kernel when `PtxRunOptions::preempt` was set: the launch was abandoned, which is no fault (the
// command processor preempts a channel that RM frees). Not a std::exception, so that no handler turns it into one.
struct PtxPreempted {};

struct PtxRunOptions {
  // Taken branches a thread may execute before the launch is declared hung (a fault, not a hang).
  uint64_t max_branches_per_thread = uint64_t{1} << 32;
  // Preemption points: at the start of every block and at every taken branch the SM reads this flag and, when it
  // is set, abandons the launch (PtxPreempted).
  const std::atomic<bool>* preempt = nullptr;
  // Counts the blocks that ran to their end (the emulator's progress counter).
  std::atomic<uint64_t>* blocks_completed = nullptr;
  // Each thread's .local memory (PtxEntry::local_bytes) in device memory: thread t of the running block at
  // local_base + t * local_stride (the command processor points it at the shader local memory store). Blocks run one
  // after another, so each block's threads reuse the same slices.
  uint64_t local_base = 0;
  uint64_t local_stride = 0;
};

struct PtxRunStats {
  uint64_t instructions = 0;  // executed, predicated-off ones included
};

// Runs `entry` of `program` on a grid of `grid` blocks of `block` threads. `params` is the kernel parameter buffer
// laid out as the entry's .param declarations say (PtxEntry::params); `dynamic_shared_bytes` backs an
// `.extern .shared` array. Throws std::invalid_argument for a bad launch (no such entry, too small a parameter
// buffer, more threads than .maxntid or 1024, less local memory per thread than the .local arrays take) and PtxFault
// for a fault during execution.
PtxRunStats run_kernel(const PtxProgram& program, const std::string& entry, PtxDim3 grid, PtxDim3 block,
                       std::span<const uint8_t> params, uint32_t dynamic_shared_bytes, GlobalMemory& mem,
                       const PtxRunOptions& options = {});

}  // namespace doorbell::mockgpu::nv
