// What the AMD encoders (pm4.cpp, sdma.cpp, dispatch_plan.cpp) share: the hex text of their error messages, the
// alignment check every address operand goes through, and the halves of a 64-bit value as packets carry them.
#pragma once
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace doorbell::amd::encoder {

inline std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

// Throws std::invalid_argument naming the packet, the operand and the alignment it needs.
inline void require_aligned(const char* packet, const char* operand, uint64_t address, uint64_t alignment) {
  if (address % alignment)
    throw std::invalid_argument(std::string(packet) + ": " + operand + " " + hex(address) + " is not " +
                                std::to_string(alignment) + "-byte aligned");
}

inline uint32_t lo(uint64_t v) { return static_cast<uint32_t>(v); }
inline uint32_t hi(uint64_t v) { return static_cast<uint32_t>(v >> 32); }

}  // namespace doorbell::amd::encoder
