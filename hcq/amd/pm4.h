// Pure encoders for the PM4 type-3 packets a compute queue (MEC) runs, for gc 11.0 and gc 9.4.3: register writes,
// dispatch, end-of-pipe release (signal value, timestamp, interrupt), waits on memory, cache acquire, indirect
// buffers. Each packet has a declared size in dwords and a writer that reserves exactly that in a CmdStream
// (cmd_stream.h), fills it and commits. Layouts and field values: firmware-notes/amd-pm4.md, each with its source
// (the amdgpu kernel headers nvd.h and soc15d.h). Invalid input throws std::invalid_argument naming the operand and
// what was expected, before anything is reserved: an unaligned address, a register outside its window, a count that
// does not fit its field.
#pragma once
#include <cstdint>
#include <span>

#include "hcq/amd/amd_registers.h"
#include "hcq/amd/cmd_stream.h"

namespace doorbell::amd {

// Header: type 3 in 31:30, count (body dwords - 1) in 29:16, opcode in 15:8.
uint32_t pm4_header(uint32_t opcode, uint32_t body_dwords);

inline constexpr uint32_t kPm4Nop = 0x10, kPm4DispatchDirect = 0x15, kPm4WriteData = 0x37, kPm4WaitRegMem = 0x3C,
                          kPm4IndirectBuffer = 0x3F, kPm4CopyData = 0x40, kPm4EventWrite = 0x46,
                          kPm4ReleaseMem = 0x49, kPm4AcquireMem = 0x58, kPm4SetShReg = 0x76,
                          kPm4SetUconfigReg = 0x79;

// ---- Declared sizes (dwords, header included) ----
inline constexpr size_t kDispatchDirectDwords = 5;
inline constexpr size_t kReleaseMemDwords = 8;
inline constexpr size_t kWaitRegMemDwords = 7;
inline constexpr size_t kWaitRegMem64Dwords = 9;
inline constexpr size_t kIndirectBufferDwords = 4;
inline constexpr size_t kEventWriteDwords = 2;
size_t set_sh_reg_dwords(size_t values);        // 2 + values
size_t acquire_mem_dwords(GfxIp ip);            // 8 on gc 11, 7 on gc 9.4.3
size_t write_data_dwords(size_t data_dwords);   // 4 + data

// SET_SH_REG: `values` to consecutive registers from absolute `reg` (within the SH window of `regs`).
void write_set_sh_reg(CmdStream& s, const ComputeRegisters& regs, uint32_t reg, std::span<const uint32_t> values);
// DISPATCH_DIRECT: a grid of workgroups with DISPATCH_INITIATOR `initiator`.
void write_dispatch_direct(CmdStream& s, uint32_t groups_x, uint32_t groups_y, uint32_t groups_z, uint32_t initiator);
// EVENT_WRITE CS_PARTIAL_FLUSH (event 7, index 4): the CP waits for earlier dispatches' waves before going on.
void write_cs_partial_flush(CmdStream& s);
// ACQUIRE_MEM invalidating the shader caches and L2 over all memory (the kernel's emit_mem_sync values for the IP).
void write_acquire_mem(CmdStream& s, GfxIp ip);

// RELEASE_MEM at end of pipe with a cache write-back (the kernel's fence flush bits for the IP):
enum class ReleaseData { kNone = 0, kLow32 = 1, kValue64 = 2, kTimestamp64 = 3 };
enum class ReleaseInterrupt { kNone = 0, kAfterWriteConfirm = 2 };
// Writes `value` (kValue64; address 8-byte aligned), its low 32 bits (kLow32; value < 2^32, address dword aligned)
// or the 64-bit GPU clock counter (kTimestamp64; address 8-byte aligned, value 0), and with kAfterWriteConfirm raises
// an interrupt carrying `context_id` (the KFD event id, < 2^28; 0 without an interrupt). kNone is rejected: the
// interrupt fires on the data write's confirmation. gc 9.4.3 uses the kernel's default full-flush fence bits.
void write_release_mem(CmdStream& s, GfxIp ip, ReleaseData data, uint64_t address, uint64_t value,
                       ReleaseInterrupt interrupt = ReleaseInterrupt::kNone, uint32_t context_id = 0);

// WAIT_REG_MEM on memory: stalls until (mem32 & mask) FUNC reference. FUNC codes: 0 always, 1 <, 2 <=, 3 ==, 4 !=,
// 5 >=, 6 >. Address dword aligned; poll interval 4.
void write_wait_reg_mem(CmdStream& s, uint64_t address, uint32_t function, uint32_t reference, uint32_t mask);
// WAIT_REG_MEM64 (opcode 0x93 in nvd.h and soc15d.h; 9 dwords with 64-bit reference and mask, layout from PAL's
// PM4_ME_WAIT_REG_MEM64: firmware-notes/amd-pm4.md §5.7) on memory: stalls until the 64-bit (mem64 & mask) FUNC
// reference; our Signal values are 64-bit, so waits use FUNC 5 (>=). Address 8-byte aligned. Poll interval 4.
inline constexpr uint32_t kPm4WaitRegMem64 = 0x93;
void write_wait_reg_mem64(CmdStream& s, uint64_t address, uint32_t function, uint64_t reference, uint64_t mask);

// INDIRECT_BUFFER: runs `dwords` dwords at `address` (dword aligned, below 2^48; nonzero size below 2^20), VALID set.
void write_indirect_buffer(CmdStream& s, uint64_t address, uint32_t dwords);
// WRITE_DATA of `data` to memory at `address` (dword aligned), with write confirm.
void write_write_data(CmdStream& s, uint64_t address, std::span<const uint32_t> data);

}  // namespace doorbell::amd
