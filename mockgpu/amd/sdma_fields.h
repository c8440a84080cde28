// The SDMA packets the emulated SDMA engine (sdma_engine.cpp) decodes, from the packet headers themselves
// (firmware-notes/amd-sdma-engine.md: sdma_v6_0_0_pkt_open.h for SDMA 6.0 on gc 11.0, vega10_sdma_pkt_open.h for
// SDMA 4.4.2 on gc 9.4.3), not from the runtime's encoders (hcq/amd/sdma.h).
#pragma once
#include <cstdint>

namespace doorbell::mockgpu::amd::sdma {

// Header dword: OP 7:0, SUB_OP 15:8, per-packet fields 31:16.
enum Op : uint32_t {
  NOP = 0,
  COPY = 1,
  WRITE = 2,
  INDIRECT = 4,
  FENCE = 5,
  TRAP = 6,
  POLL_REGMEM = 8,
  CONST_FILL = 11,
  TIMESTAMP = 13,
};
inline constexpr uint32_t kCopyLinear = 0, kWriteUntiled = 0;  // SUB_OP
inline constexpr uint32_t kTimestampGetGlobal = 2;             // TIMESTAMP SUB_OP (0 SET, 1 GET local)

// Packet dwords (fixed-size packets; WRITE is 4 + data, NOP 1 + COUNT 29:16).
inline constexpr uint64_t kCopyLinearDwords = 7, kFenceDwords = 4, kTrapDwords = 2, kPollRegmemDwords = 6,
                          kConstFillDwords = 5, kTimestampDwords = 3, kIndirectDwords = 6, kWriteHeaderDwords = 4;

// COPY_LINEAR / CONST_FILL COUNT (bytes - 1): 30 bits on SDMA 6.0, 22 bits on SDMA 4.4.2 (vega10 header).
inline constexpr unsigned kCountBitsSdma6 = 30, kCountBitsSdma4 = 22;
// WRITE_UNTILED COUNT 19:0 (dwords - 1); INDIRECT IB_SIZE 19:0 (dwords); TRAP INT_CONTEXT 27:0.
inline constexpr uint32_t kIbAlignmentDwords = 8;  // an INDIRECT packet ends on an 8-dword ring boundary

}  // namespace doorbell::mockgpu::amd::sdma
