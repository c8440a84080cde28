// What the PM4 and SDMA engines (queue_engine.h) share: the fault a packet raises, memory access through GpuMemory
// that turns an unmapped address into a memory fault naming it, the hardware variant a queue's gfx_target_version
// selects, and the queue pointers' reads and writes.
#pragma once
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "mockgpu/amd/engine_thread.h"
#include "mockgpu/amd/queue_engine.h"

namespace doorbell::mockgpu::amd::engine {

// A broken packet rule. The engine prefixes the queue and ring offset and hands it to EngineHooks::fault.
class PacketFault : public std::runtime_error {
 public:
  explicit PacketFault(const std::string& message, uint64_t address = 0, bool memory = false)
      : std::runtime_error(message), address(address), memory(memory) {}
  uint64_t address;
  bool memory;
};

std::string hex(uint64_t value);  // "0x1c"

// A queue's one fault: step() runs an engine's packets, and a PacketFault or any other error they throw becomes the
// queue's fault, prefixed with where() (the ring or IB position), reported once through EngineHooks::fault; the queue
// then stops (every later step is kDone).
class FaultLatch {
 public:
  bool faulted() const { return faulted_.load(); }
  template <class Run, class Where>
  EngineThread::Step step(const EngineHooks& hooks, Run&& run, Where&& where) {
    if (faulted_.load()) return EngineThread::Step::kDone;
    try {
      return run();
    } catch (const PacketFault& e) {
      report(hooks, {where() + ": " + e.what(), e.address, e.memory});
    } catch (const std::exception& e) {
      report(hooks, {where() + ": " + e.what(), 0, false});
    }
    return EngineThread::Step::kDone;
  }

 private:
  void report(const EngineHooks& hooks, const QueueFault& fault) {
    faulted_.store(true);
    if (hooks.fault) hooks.fault(fault);
  }
  std::atomic<bool> faulted_{false};
};

inline uint32_t bits(uint32_t word, unsigned hi, unsigned lo) {
  return (word >> lo) & (hi - lo == 31 ? 0xFFFFFFFFu : ((1u << (hi - lo + 1)) - 1));
}

// The graphics IP, and with it the SDMA version (gc 11.0 has SDMA 6.0, gc 9.4.3 SDMA 4.4.2).
enum class Ip { kGc11_0, kGc9_4_3 };
// 11xxyy -> gc 11.0, 90402 -> gc 9.4.3; else std::invalid_argument naming `who`, the version and the supported ones.
Ip ip_from_target_version(uint32_t gfx_target_version, const std::string& who);

// Checks what every engine needs of its QueueDesc and hooks (power-of-two ring, memory); std::invalid_argument else.
void check_queue(const QueueDesc& queue, const EngineHooks& hooks, const std::string& who);

// Memory of the emulated GPU as the engines reach it. Every access translates through GpuMemory; an address no
// mapping covers, or an access running off its mapping, is a PacketFault with memory = true naming `what` and the
// address.
class EngineMemory {
 public:
  explicit EngineMemory(const GpuMemory& memory) : memory_(memory) {}
  uint8_t* at(uint64_t va, uint64_t bytes, const std::string& what) const;
  // Whole-word loads and stores are atomic (the host polls and writes the same words from its own threads).
  uint32_t load32(uint64_t va, const std::string& what) const;
  uint64_t load64(uint64_t va, const std::string& what) const;
  void store32(uint64_t va, uint32_t value, const std::string& what) const;
  void store64(uint64_t va, uint64_t value, const std::string& what) const;

 private:
  const GpuMemory& memory_;
};

// The write pointer the process last announced: the doorbell's 64-bit value, or when the queue has no doorbell
// (engine tests) the 64-bit word at wptr_va.
uint64_t read_write_pointer(const QueueDesc& queue, const EngineMemory& memory);

// The GPU timestamp: hooks.clock, or without one a 100 MHz count of the host's steady clock
// (firmware-notes/amd-pm4-cp.md §8).
uint64_t gpu_clock(const EngineHooks& hooks);

// WAIT_REG_MEM / POLL_REGMEM compare functions (3 bits, the same codes on both engines): 0 always, 1 <, 2 <=, 3 ==,
// 4 !=, 5 >=, 6 >; 7 is reserved: a PacketFault naming `packet`.
bool compare(uint32_t function, uint64_t value, uint64_t reference, const std::string& packet);

}  // namespace doorbell::mockgpu::amd::engine
