// The PM4 type-3 packets and compute registers the emulated command processor (pm4_engine.cpp) decodes, read from
// the formats themselves (firmware-notes/amd-pm4-cp.md, which cites nvd.h, soc15d.h, PAL's MEC packet header and
// tinygrad's register tables), not from the runtime's encoders (hcq/amd/pm4.h): the mock is the hardware.
#pragma once
#include <cstdint>

namespace doorbell::mockgpu::amd::pm4 {

// Header: TYPE 31:30, COUNT 29:16 (body dwords - 1), OPCODE 15:8, SHADER_TYPE 1, PREDICATE 0.
inline constexpr uint32_t kNopFillerCount = 0x3FFF;  // NOP with this count is a header-only 1-dword filler

enum Opcode : uint32_t {
  NOP = 0x10,
  DISPATCH_DIRECT = 0x15,
  WRITE_DATA = 0x37,
  WAIT_REG_MEM = 0x3C,
  INDIRECT_BUFFER = 0x3F,
  COPY_DATA = 0x40,
  EVENT_WRITE = 0x46,
  RELEASE_MEM = 0x49,
  ACQUIRE_MEM = 0x58,
  SET_SH_REG = 0x76,
  SET_UCONFIG_REG = 0x79,
  WAIT_REG_MEM64 = 0x93,  // layout: firmware-notes/amd-pm4-cp.md §7 (PAL), 9 dwords
};

// Register windows (absolute dword addresses); the packets carry the offset from the base.
inline constexpr uint32_t kShRegBase = 0x2C00, kShRegEnd = 0x2FFF;
inline constexpr uint32_t kUconfigRegBase = 0xC000, kUconfigRegEnd = 0xFFFF;

// Compute registers (absolute); the same on gc 11.0 and gc 9.4.3 except COMPUTE_PGM_RSRC3.
inline constexpr uint32_t COMPUTE_START_X = 0x2E04, COMPUTE_NUM_THREAD_X = 0x2E07, COMPUTE_PGM_LO = 0x2E0C,
                          COMPUTE_PGM_HI = 0x2E0D, COMPUTE_DISPATCH_SCRATCH_BASE_LO = 0x2E10,
                          COMPUTE_DISPATCH_SCRATCH_BASE_HI = 0x2E11, COMPUTE_PGM_RSRC1 = 0x2E12,
                          COMPUTE_PGM_RSRC2 = 0x2E13, COMPUTE_TMPRING_SIZE = 0x2E18, COMPUTE_USER_DATA_0 = 0x2E40;
inline constexpr uint32_t COMPUTE_PGM_RSRC3_GC11 = 0x2E28, COMPUTE_PGM_RSRC3_GC943 = 0x2E2D;

// DISPATCH_INITIATOR bits.
inline constexpr uint32_t COMPUTE_SHADER_EN = 1u << 0, USE_THREAD_DIMENSIONS = 1u << 5, CS_W32_EN = 1u << 15;

inline constexpr uint32_t kLdsGranuleBytes = 512;     // RSRC2.LDS_SIZE 23:15 unit
inline constexpr uint32_t kLdsCapacityBytes = 65536;  // per workgroup on gfx11 and gfx942

// Packet sizes (count field) the CP requires.
inline constexpr uint32_t kDispatchDirectCount = 3, kWaitRegMemCount = 5, kWaitRegMem64Count = 7,
                          kIndirectBufferCount = 2, kCopyDataCount = 4, kEventWriteCount = 0, kReleaseMemCount = 6,
                          kAcquireMemCountGc11 = 6, kAcquireMemCountGc9 = 5;

// EVENT_WRITE / RELEASE_MEM event fields: EVENT_TYPE 5:0, EVENT_INDEX 11:8.
inline constexpr uint32_t CS_PARTIAL_FLUSH = 7, kPartialFlushEventIndex = 4;
inline constexpr uint32_t kEventIndexEndOfPipe = 5, kEventIndexShaderDone = 6;

// WRITE_DATA / COPY_DATA selectors.
inline constexpr uint32_t kSelRegister = 0, kSelTcL2 = 2, kSelImmediate = 5, kSelMemory = 5, kSelGpuClockCount = 9,
                          kSelSystemClockCount = 10;

}  // namespace doorbell::mockgpu::amd::pm4
