// The engines behind the emulated KFD's user-mode queues: a PM4 compute queue's command processor (MEC) and an SDMA
// engine. The emulated KFD (mock_kfd.h) makes one when CREATE_QUEUE succeeds and destroys it at DESTROY_QUEUE or when
// the process closes /dev/kfd. Each runs on its own thread: it reads the 64-bit doorbell the process writes (PM4: a
// dword count, SDMA: a byte offset; firmware-notes/amd-pm4-cp.md §2, amd-sdma-engine.md §2), executes the
// packets between its read pointer and that value straight from the ring memory, reports its read pointer at
// rptr_va, and stops at the first fault: the packet's rule it broke, named with the ring offset (a bad packet, an
// unaligned or unmapped address, a register outside its range). It touches memory only through GpuMemory and tells
// the KFD what the hardware would: interrupts (RELEASE_MEM INT_SEL, SDMA TRAP) with their context id, and faults.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "mockgpu/amd/amd_memory.h"
#include "mockgpu/amd/shader_core.h"

namespace doorbell::mockgpu::amd {

struct QueueDesc {
  enum class Kind { kPm4Compute, kSdma } kind = Kind::kPm4Compute;
  uint32_t gfx_target_version = 110000;  // 110000 gfx1100 (gc 11.0), 90402 gfx942 (gc 9.4.3): packet variants
  uint32_t queue_id = 0;
  uint64_t ring_va = 0, ring_bytes = 0;  // a power of two
  uint64_t wptr_va = 0, rptr_va = 0;     // the process's write pointer (read by the engine), its read-pointer report
  volatile uint64_t* doorbell = nullptr; // the queue's 64-bit doorbell in the process's doorbell page
  uint64_t eop_va = 0;                   // compute: the EOP buffer (0 or 4096 bytes)
};

// A fault stops the queue; `address` is the faulting memory address (0 for a packet-rule fault).
struct QueueFault {
  std::string message;  // "PM4 queue 3: ring dword 0x1c: SET_SH_REG register 0x3010 is outside 0x2C00-0x2FFF"
  uint64_t address = 0;
  bool memory = false;  // a memory access fault (KFD reports it as a memory exception with the VA)
};

struct EngineHooks {
  const GpuMemory* memory = nullptr;
  std::function<void(uint32_t context_id)> interrupt;  // to the KFD's event handling
  std::function<void(const QueueFault&)> fault;        // called once, from the engine's thread
  std::function<uint64_t()> clock;                      // the 100 MHz GPU timestamp counter
  // Runs one dispatch to completion (PM4 only): the shader core's run_dispatch (shader_core.h) in the emulated GPU,
  // a recorder in the engines' own tests. Throws ShaderFault for a faulting program, which faults the queue.
  std::function<void(const DispatchState&)> dispatch;
};

class QueueEngine {
 public:
  virtual ~QueueEngine() = default;  // stops the thread; work not yet read from the ring is dropped
  // Counters for tests: packets executed, and whether the queue stopped on a fault.
  virtual uint64_t packets_executed() const = 0;
  virtual bool faulted() const = 0;
};

std::unique_ptr<QueueEngine> make_pm4_engine(const QueueDesc& queue, EngineHooks hooks);
std::unique_ptr<QueueEngine> make_sdma_engine(const QueueDesc& queue, EngineHooks hooks);
// The engine of the queue's kind: what the emulated KFD builds at CREATE_QUEUE (MockKfdOptions::make_engine).
inline std::unique_ptr<QueueEngine> make_queue_engine(const QueueDesc& queue, EngineHooks hooks) {
  return queue.kind == QueueDesc::Kind::kSdma ? make_sdma_engine(queue, std::move(hooks))
                                              : make_pm4_engine(queue, std::move(hooks));
}

}  // namespace doorbell::mockgpu::amd
