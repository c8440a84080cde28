// Pure encoders for the SDMA packets a copy queue runs (SDMA 6.0 on gfx11, 4.4.2 on gfx942): linear copy, fence
// (a 32-bit write), poll on memory, global timestamp, trap (interrupt), NOP padding, indirect buffer. Declared sizes,
// CmdStream writers and std::invalid_argument on bad operands as in pm4.h. Layouts: firmware-notes/amd-sdma.md (the
// amdgpu kernel headers sdma_v6_0_0_pkt_open.h and vega10_sdma_pkt_open.h).
#pragma once
#include <cstdint>

#include "hcq/amd/amd_registers.h"
#include "hcq/amd/cmd_stream.h"

namespace doorbell::amd {

inline constexpr size_t kSdmaCopyLinearDwords = 7;
inline constexpr size_t kSdmaFenceDwords = 4;
inline constexpr size_t kSdmaPollRegMemDwords = 6;
inline constexpr size_t kSdmaTimestampDwords = 3;
inline constexpr size_t kSdmaTrapDwords = 2;
inline constexpr size_t kSdmaIndirectDwords = 6;
// The most bytes one COPY_LINEAR moves: 2^30 on SDMA 6 (gc 11), 4 MiB on SDMA 4.4.2 (gc 9.4.3).
uint64_t sdma_max_copy_bytes(GfxIp ip);
// Dwords of a copy of `bytes` split into COPY_LINEARs of at most sdma_max_copy_bytes.
size_t sdma_copy_dwords(GfxIp ip, uint64_t bytes);

// COPY_LINEARs for `bytes` (>= 1; no wrap past 2^64), reserved together as one sdma_copy_dwords block.
void write_sdma_copy(CmdStream& s, GfxIp ip, uint64_t dst, uint64_t src, uint64_t bytes);
// FENCE: writes the 32-bit `value` at `address` (dword aligned). A 64-bit signal value is two fences, high word first.
void write_sdma_fence(CmdStream& s, GfxIp ip, uint64_t address, uint32_t value);
// POLL_REGMEM on memory: waits until (mem32 & mask) FUNC value (FUNC 0-6 as WAIT_REG_MEM; address dword aligned),
// interval 4, retry count 0xFFF (taken to mean "forever": firmware-notes/amd-sdma.md §5).
void write_sdma_poll_regmem(CmdStream& s, uint64_t address, uint32_t function, uint32_t value, uint32_t mask);
// TIMESTAMP GET_GLOBAL: the 64-bit global timestamp at `address` (8-byte aligned).
void write_sdma_timestamp(CmdStream& s, uint64_t address);
// TRAP: an interrupt with INT_CONTEXT `context_id` (28 bits: the KFD event id).
void write_sdma_trap(CmdStream& s, uint32_t context_id);
// `dwords` one-dword NOPs (a zero dword is a NOP): pads a ring tail, or an indirect packet's end to 8 dwords.
void write_sdma_nops(CmdStream& s, size_t dwords);
// INDIRECT: runs `dwords` (a nonzero multiple of 8 below 2^20) at `address` (32-byte aligned). The caller pads the
// ring first so the 6-dword packet ends on an 8-dword boundary: write_sdma_nops(s, (2 - ring_dword) & 7).
void write_sdma_indirect(CmdStream& s, uint64_t address, uint32_t dwords);

}  // namespace doorbell::amd
