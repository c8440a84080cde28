#include "mockgpu/amd/engine_support.h"

#include <atomic>
#include <chrono>
#include <cstdio>

namespace doorbell::mockgpu::amd::engine {

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

Ip ip_from_target_version(uint32_t gfx_target_version, const std::string& who) {
  if (gfx_target_version / 10000 == 11) return Ip::kGc11_0;
  if (gfx_target_version == 90402) return Ip::kGc9_4_3;
  throw std::invalid_argument(who + ": gfx_target_version " + std::to_string(gfx_target_version) +
                              " is not emulated; expected 110000 (gc 11.0) or 90402 (gc 9.4.3)");
}

void check_queue(const QueueDesc& queue, const EngineHooks& hooks, const std::string& who) {
  if (hooks.memory == nullptr) throw std::invalid_argument(who + ": EngineHooks::memory is null");
  if (queue.ring_bytes < 256 || (queue.ring_bytes & (queue.ring_bytes - 1)) != 0)
    throw std::invalid_argument(who + ": ring size " + std::to_string(queue.ring_bytes) +
                                " bytes; expected a power of two of at least 256");
  if (queue.ring_va % 256 != 0)
    throw std::invalid_argument(who + ": ring address " + hex(queue.ring_va) + " is not 256-byte aligned");
  if (queue.doorbell == nullptr && queue.wptr_va == 0)
    throw std::invalid_argument(who + ": the queue has neither a doorbell nor a write-pointer address");
}

uint8_t* EngineMemory::at(uint64_t va, uint64_t bytes, const std::string& what) const {
  try {
    return memory_.translate(va, bytes);
  } catch (const std::exception& e) {
    throw PacketFault(what + ": " + e.what(), va, true);
  }
}

uint32_t EngineMemory::load32(uint64_t va, const std::string& what) const {
  return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(at(va, 4, what))).load(std::memory_order_acquire);
}
uint64_t EngineMemory::load64(uint64_t va, const std::string& what) const {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(at(va, 8, what))).load(std::memory_order_acquire);
}
void EngineMemory::store32(uint64_t va, uint32_t value, const std::string& what) const {
  std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(at(va, 4, what))).store(value, std::memory_order_release);
}
void EngineMemory::store64(uint64_t va, uint64_t value, const std::string& what) const {
  std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(at(va, 8, what))).store(value, std::memory_order_release);
}

uint64_t read_write_pointer(const QueueDesc& queue, const EngineMemory& memory) {
  if (queue.doorbell != nullptr) {
    // The doorbell page is plain host memory shared with the process; its 64-bit store is the release.
    return __atomic_load_n(const_cast<const uint64_t*>(queue.doorbell), __ATOMIC_ACQUIRE);
  }
  return memory.load64(queue.wptr_va, "write pointer");
}

uint64_t gpu_clock(const EngineHooks& hooks) {
  if (hooks.clock) return hooks.clock();
  const auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  return static_cast<uint64_t>(ns) / 10;  // 100 MHz: one tick per 10 ns
}

bool compare(uint32_t function, uint64_t value, uint64_t reference, const std::string& packet) {
  switch (function) {
    case 0: return true;
    case 1: return value < reference;
    case 2: return value <= reference;
    case 3: return value == reference;
    case 4: return value != reference;
    case 5: return value >= reference;
    case 6: return value > reference;
    default: throw PacketFault(packet + " FUNCTION " + std::to_string(function) + " is reserved; expected 0-6");
  }
}

}  // namespace doorbell::mockgpu::amd::engine
