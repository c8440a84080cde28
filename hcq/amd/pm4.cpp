// Layouts and values: firmware-notes/amd-pm4.md (§N cited per packet).
#include "hcq/amd/pm4.h"

#include <cstdio>
#include <stdexcept>
#include <string>

#include "hcq/amd/encoder_checks.h"

namespace doorbell::amd {
namespace {

using encoder::hex;
using encoder::hi;
using encoder::lo;
using encoder::require_aligned;

void require_function(const char* packet, uint32_t function) {
  // FUNCTION[2:0]: 0 always, 1 <, 2 <=, 3 ==, 4 !=, 5 >=, 6 > (§5.6); 7 is reserved.
  if (function > 6)
    throw std::invalid_argument(std::string(packet) + ": function " + std::to_string(function) +
                                " is not a compare function (0 always, 1 <, 2 <=, 3 ==, 4 !=, 5 >=, 6 >)");
}

// The kernel's poll interval for its WAIT_REG_MEMs (§5.6).
constexpr uint32_t kPollInterval = 4;
constexpr uint32_t kMemSpaceMemory = 1u << 4;  // WAIT_REG_MEM MEM_SPACE[5:4] = 1

}  // namespace

uint32_t pm4_header(uint32_t opcode, uint32_t body_dwords) {
  // §2: type 3 in 31:30, count = body - 1 in 29:16, opcode in 15:8.
  if (opcode > 0xFF) throw std::invalid_argument("PM4 header: opcode " + hex(opcode) + " does not fit 8 bits");
  if (body_dwords < 1 || body_dwords > 0x4000)
    throw std::invalid_argument("PM4 header: " + std::to_string(body_dwords) +
                                " body dwords is outside 1-16384 (count field 29:16 holds body - 1)");
  return (3u << 30) | ((body_dwords - 1) << 16) | (opcode << 8);
}

size_t set_sh_reg_dwords(size_t values) { return 2 + values; }
size_t acquire_mem_dwords(GfxIp ip) { return compute_registers(ip).acquire_mem_gcr ? 8 : 7; }
size_t write_data_dwords(size_t data_dwords) { return 4 + data_dwords; }

void write_set_sh_reg(CmdStream& s, const ComputeRegisters& regs, uint32_t reg, std::span<const uint32_t> values) {
  // §5.1: dword 1 is the offset from 0x2C00, then the values for consecutive registers.
  if (values.empty()) throw std::invalid_argument("SET_SH_REG: no values (at least one register is written)");
  if (values.size() > 0x3FFF)
    throw std::invalid_argument("SET_SH_REG: " + std::to_string(values.size()) + " values exceed the count field");
  if (reg < regs.sh_reg_base || reg > regs.sh_reg_end || values.size() - 1 > regs.sh_reg_end - reg)
    throw std::invalid_argument("SET_SH_REG: registers " + hex(reg) + "-" + hex(reg + values.size() - 1) +
                                " are outside " + hex(regs.sh_reg_base) + "-" + hex(regs.sh_reg_end));
  s.reserve(set_sh_reg_dwords(values.size()), "SET_SH_REG");
  s.write(pm4_header(kPm4SetShReg, static_cast<uint32_t>(1 + values.size())));
  s.write(reg - regs.sh_reg_base);
  for (uint32_t v : values) s.write(v);
  s.commit();
}

void write_dispatch_direct(CmdStream& s, uint32_t groups_x, uint32_t groups_y, uint32_t groups_z,
                           uint32_t initiator) {
  // §5.2: DIM_X/Y/Z in workgroups (USE_THREAD_DIMENSIONS clear), then DISPATCH_INITIATOR.
  if (groups_x == 0 || groups_y == 0 || groups_z == 0)
    throw std::invalid_argument("DISPATCH_DIRECT: grid " + std::to_string(groups_x) + "x" + std::to_string(groups_y) +
                                "x" + std::to_string(groups_z) + " has an empty dimension (each must be >= 1)");
  if (initiator & (1u << 5))
    throw std::invalid_argument("DISPATCH_DIRECT: initiator " + hex(initiator) +
                                " sets USE_THREAD_DIMENSIONS (bit 5); the dims are workgroups");
  s.reserve(kDispatchDirectDwords, "DISPATCH_DIRECT");
  s.write(pm4_header(kPm4DispatchDirect, 4));
  s.write(groups_x);
  s.write(groups_y);
  s.write(groups_z);
  s.write(initiator);
  s.commit();
}

void write_cs_partial_flush(CmdStream& s) {
  // §5.5: EVENT_TYPE[5:0] = CS_PARTIAL_FLUSH 7, EVENT_INDEX[11:8] = 4.
  s.reserve(kEventWriteDwords, "EVENT_WRITE");
  s.write(pm4_header(kPm4EventWrite, 1));
  s.write(7u | (4u << 8));
  s.commit();
}

void write_acquire_mem(CmdStream& s, GfxIp ip) {
  // §6: the whole address range (size 0xFFFFFFFF, size_hi 0xFFFFFF, base 0), poll interval 0xA.
  if (compute_registers(ip).acquire_mem_gcr) {
    // gc 11 (gfx_v11_0_emit_mem_sync): COHER_CNTL 0, GCR_CNTL = GLI_INV(1) 0x1 | GLM_WB 0x10 | GLM_INV 0x20 |
    // GLK_INV 0x80 | GLV_INV 0x100 | GL1_INV 0x200 | GL2_INV 0x4000 | GL2_WB 0x8000 = 0xC3B1.
    s.reserve(8, "ACQUIRE_MEM");
    s.write(pm4_header(kPm4AcquireMem, 7));
    for (uint32_t w : {0u, 0xFFFFFFFFu, 0xFFFFFFu, 0u, 0u, 0xAu, 0xC3B1u}) s.write(w);
  } else {
    // gc 9.4.3 (gfx_v9_0_emit_mem_sync): CP_COHER_CNTL = TC_WB 1<<18 | TCL1 1<<22 | TC 1<<23 | SH_KCACHE 1<<27 |
    // SH_ICACHE 1<<29 = 0x28C40000.
    s.reserve(7, "ACQUIRE_MEM");
    s.write(pm4_header(kPm4AcquireMem, 6));
    for (uint32_t w : {0x28C40000u, 0xFFFFFFFFu, 0xFFFFFFu, 0u, 0u, 0xAu}) s.write(w);
  }
  s.commit();
}

void write_release_mem(CmdStream& s, GfxIp ip, ReleaseData data, uint64_t address, uint64_t value,
                       ReleaseInterrupt interrupt, uint32_t context_id) {
  // §7.
  const auto data_sel = static_cast<uint32_t>(data);
  const auto int_sel = static_cast<uint32_t>(interrupt);
  if (data_sel > 3) throw std::invalid_argument("RELEASE_MEM: data selector " + std::to_string(data_sel) + " is not 0-3");
  if (int_sel != 0 && int_sel != 2)
    throw std::invalid_argument("RELEASE_MEM: interrupt selector " + std::to_string(int_sel) + " is not 0 or 2");
  // INT_SEL 2 raises the interrupt when the data write is confirmed (§7): without data there is nothing to confirm.
  if (data == ReleaseData::kNone)
    throw std::invalid_argument(interrupt == ReleaseInterrupt::kNone
                                    ? "RELEASE_MEM: neither data nor an interrupt: the packet would do nothing"
                                    : "RELEASE_MEM: the interrupt after write confirm needs data to write (data selector 0)");
  if (data == ReleaseData::kLow32) {
    require_aligned("RELEASE_MEM", "address", address, 4);
    if (value > 0xFFFFFFFFu)
      throw std::invalid_argument("RELEASE_MEM: value " + hex(value) + " does not fit the 32 bits of kLow32");
  } else if (data != ReleaseData::kNone) {
    require_aligned("RELEASE_MEM", "address", address, 8);  // 64-bit data and the clock need 8 bytes
  }
  if (data == ReleaseData::kTimestamp64 && value != 0)
    throw std::invalid_argument("RELEASE_MEM: value " + hex(value) + " is given but the data selector writes none");
  if (context_id >> 28)
    throw std::invalid_argument("RELEASE_MEM: context id " + hex(context_id) + " exceeds 28 bits (the KFD event id)");
  if (interrupt == ReleaseInterrupt::kNone && context_id != 0)
    throw std::invalid_argument("RELEASE_MEM: context id " + hex(context_id) + " without an interrupt");
  // dword 1: EVENT_TYPE CACHE_FLUSH_AND_INV_TS_EVENT 0x14, EVENT_INDEX 5 (end of pipe) << 8, plus the kernel's
  // fence cache actions:
  //   gc 11: GLM_WB 1<<12 | GLM_INV 1<<13 | GL2_WB 1<<21 | SEQ 1<<22 | CACHE_POLICY 3<<25 -> 0x06603514
  //   gc 9.4.3: TC_WB_ACTION_EN 1<<15 | TCL1_ACTION_EN 1<<16 | TC_ACTION_EN 1<<17 | TC_MD_ACTION_EN 1<<21 -> 0x00238514
  const uint32_t event = 0x14u | (5u << 8);
  const uint32_t dw1 = ip == GfxIp::kGc11_0 ? event | (1u << 12) | (1u << 13) | (1u << 21) | (1u << 22) | (3u << 25)
                                            : event | (1u << 15) | (1u << 16) | (1u << 17) | (1u << 21);
  s.reserve(kReleaseMemDwords, "RELEASE_MEM");
  s.write(pm4_header(kPm4ReleaseMem, 7));
  s.write(dw1);
  s.write((data_sel << 29) | (int_sel << 24));  // DST_SEL 0 (memory), INT_SEL[26:24], DATA_SEL[31:29]
  s.write(lo(address));
  s.write(hi(address));
  s.write(lo(value));
  s.write(hi(value));
  s.write(context_id);
  s.commit();
}

void write_wait_reg_mem(CmdStream& s, uint64_t address, uint32_t function, uint32_t reference, uint32_t mask) {
  // §5.6: dword 1 FUNCTION | MEM_SPACE 1 (memory), OPERATION 0 (wait), ENGINE 0 (ME).
  require_function("WAIT_REG_MEM", function);
  require_aligned("WAIT_REG_MEM", "address", address, 4);
  s.reserve(kWaitRegMemDwords, "WAIT_REG_MEM");
  s.write(pm4_header(kPm4WaitRegMem, 6));
  s.write(function | kMemSpaceMemory);
  s.write(lo(address));
  s.write(hi(address));
  s.write(reference);
  s.write(mask);
  s.write(kPollInterval);
  s.commit();
}

void write_wait_reg_mem64(CmdStream& s, uint64_t address, uint32_t function, uint64_t reference, uint64_t mask) {
  // §5.7: as WAIT_REG_MEM with 64-bit reference and mask (lo, hi each); the address is 8-byte aligned.
  require_function("WAIT_REG_MEM64", function);
  require_aligned("WAIT_REG_MEM64", "address", address, 8);
  s.reserve(kWaitRegMem64Dwords, "WAIT_REG_MEM64");
  s.write(pm4_header(kPm4WaitRegMem64, 8));
  s.write(function | kMemSpaceMemory);
  s.write(lo(address));
  s.write(hi(address));
  s.write(lo(reference));
  s.write(hi(reference));
  s.write(lo(mask));
  s.write(hi(mask));
  s.write(kPollInterval);
  s.commit();
}

void write_indirect_buffer(CmdStream& s, uint64_t address, uint32_t dwords) {
  // §5.4: IB_BASE_LO 31:2, IB_BASE_HI 15:0, dword 3 IB_SIZE[19:0] | VALID 1<<23 (VMID 0 on a user queue).
  require_aligned("INDIRECT_BUFFER", "address", address, 4);
  if (address >> 48)
    throw std::invalid_argument("INDIRECT_BUFFER: address " + hex(address) + " does not fit 48 bits (IB_BASE_HI 15:0)");
  if (dwords == 0 || dwords > 0xFFFFF)
    throw std::invalid_argument("INDIRECT_BUFFER: size " + std::to_string(dwords) +
                                " dwords is outside 1-1048575 (IB_SIZE 19:0)");
  s.reserve(kIndirectBufferDwords, "INDIRECT_BUFFER");
  s.write(pm4_header(kPm4IndirectBuffer, 3));
  s.write(lo(address));
  s.write(hi(address));
  s.write(dwords | (1u << 23));
  s.commit();
}

void write_write_data(CmdStream& s, uint64_t address, std::span<const uint32_t> data) {
  // §5.3: dword 1 DST_SEL 5 (memory) << 8 | WR_CONFIRM 1 << 20 = 0x00100500; addresses increment.
  require_aligned("WRITE_DATA", "address", address, 4);
  if (data.empty()) throw std::invalid_argument("WRITE_DATA: no data (at least one dword is written)");
  if (data.size() > 0x3FFD)
    throw std::invalid_argument("WRITE_DATA: " + std::to_string(data.size()) + " data dwords exceed the count field");
  s.reserve(write_data_dwords(data.size()), "WRITE_DATA");
  s.write(pm4_header(kPm4WriteData, static_cast<uint32_t>(3 + data.size())));
  s.write((5u << 8) | (1u << 20));
  s.write(lo(address));
  s.write(hi(address));
  for (uint32_t d : data) s.write(d);
  s.commit();
}

}  // namespace doorbell::amd
