// PM4 packets for gc 11.0 and gc 9.4.3, word for word. Header words: type 3 << 30 | (body - 1) << 16 | opcode << 8
// (firmware-notes/amd-pm4.md §2). Body words from the field tables of §5-§7, derived in each test's comment.
#include "hcq/amd/pm4.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/common/error_of.h"

namespace doorbell::amd {
namespace {

using doorbell::testing::error_of;
using Words = std::vector<uint32_t>;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

template <class F>
Words encode(F&& f) {
  CmdStream s(64);
  f(s);
  return Words(s.words().begin(), s.words().end());
}

template <class F>
std::string rejected(F&& f) {
  CmdStream s(64);
  std::string m = error_of([&] { f(s); });
  EXPECT_EQ(s.size(), 0u) << "an invalid operand is caught before anything is reserved";
  s.reserve(1, "AFTER");  // the stream is still usable: nothing is open
  s.write(0xFFFF1000);
  s.commit();
  return m;
}

const ComputeRegisters& gc11 = compute_registers(GfxIp::kGc11_0);
const ComputeRegisters& gc9 = compute_registers(GfxIp::kGc9_4_3);

// ---- Header ----

TEST(Pm4Header, ReferenceHeaderWords) {
  EXPECT_EQ(pm4_header(kPm4DispatchDirect, 4), 0xC0031500u);  // 3<<30 | 3<<16 | 0x15<<8
  EXPECT_EQ(pm4_header(kPm4WaitRegMem, 6), 0xC0053C00u);      // count 5
  EXPECT_EQ(pm4_header(kPm4IndirectBuffer, 3), 0xC0023F00u);  // count 2
  EXPECT_EQ(pm4_header(kPm4CopyData, 5), 0xC0044000u);        // count 4
  EXPECT_EQ(pm4_header(kPm4EventWrite, 1), 0xC0004600u);      // count 0
  EXPECT_EQ(pm4_header(kPm4ReleaseMem, 7), 0xC0064900u);      // count 6
  EXPECT_EQ(pm4_header(kPm4AcquireMem, 7), 0xC0065800u);      // gfx10+ form, count 6
  EXPECT_EQ(pm4_header(kPm4AcquireMem, 6), 0xC0055800u);      // gfx9 form, count 5
  EXPECT_EQ(pm4_header(kPm4SetShReg, 2), 0xC0017600u);        // one value: offset + value
  EXPECT_EQ(pm4_header(kPm4SetUconfigReg, 2), 0xC0017900u);
  EXPECT_EQ(pm4_header(kPm4WaitRegMem64, 8), 0xC0079300u);    // count 7 (9 dwords)
  EXPECT_EQ(pm4_header(kPm4Nop, 0x4000), 0xFFFF1000u);        // count 0x3FFF: the kernel's 1-dword filler
}

TEST(Pm4Header, RejectsOpcodeAndCountOutsideTheirFields) {
  EXPECT_TRUE(contains(error_of([] { pm4_header(0x100, 1); }), "opcode 0x100 does not fit 8 bits"));
  EXPECT_TRUE(contains(error_of([] { pm4_header(0x10, 0); }), "0 body dwords is outside 1-16384"));
  EXPECT_TRUE(contains(error_of([] { pm4_header(0x10, 0x4001); }), "16385 body dwords"));
}

TEST(Pm4Sizes, DeclaredSizes) {
  EXPECT_EQ(set_sh_reg_dwords(3), 5u);
  EXPECT_EQ(acquire_mem_dwords(GfxIp::kGc11_0), 8u);
  EXPECT_EQ(acquire_mem_dwords(GfxIp::kGc9_4_3), 7u);
  EXPECT_EQ(write_data_dwords(2), 6u);
}

// ---- Register tables (§3) ----

TEST(ComputeRegisters, Gc11AndGc943DifferOnlyInRsrc3) {
  EXPECT_EQ(gc11.pgm_rsrc3, 0x2E28u);
  EXPECT_EQ(gc9.pgm_rsrc3, 0x2E2Du);
  for (const ComputeRegisters* r : {&gc11, &gc9}) {
    EXPECT_EQ(r->dispatch_initiator, 0x2E00u);
    EXPECT_EQ(r->dim_x, 0x2E01u);
    EXPECT_EQ(r->start_x, 0x2E04u);
    EXPECT_EQ(r->num_thread_x, 0x2E07u);
    EXPECT_EQ(r->pgm_lo, 0x2E0Cu);
    EXPECT_EQ(r->pgm_hi, 0x2E0Du);
    EXPECT_EQ(r->dispatch_scratch_base_lo, 0x2E10u);
    EXPECT_EQ(r->pgm_rsrc1, 0x2E12u);
    EXPECT_EQ(r->pgm_rsrc2, 0x2E13u);
    EXPECT_EQ(r->resource_limits, 0x2E15u);
    EXPECT_EQ(r->static_thread_mgmt_se0, 0x2E16u);
    EXPECT_EQ(r->tmpring_size, 0x2E18u);
    EXPECT_EQ(r->restart_x, 0x2E1Bu);
    EXPECT_EQ(r->user_data_0, 0x2E40u);
  }
  EXPECT_EQ(gc11.tmpring_wavesize_unit, 256u);
  EXPECT_EQ(gc9.tmpring_wavesize_unit, 1024u);
  EXPECT_TRUE(gc11.acquire_mem_gcr && gc11.wave32_dispatch);
  EXPECT_FALSE(gc9.acquire_mem_gcr || gc9.wave32_dispatch);
}

TEST(ComputeRegisters, TargetVersionsMapToTheirIp) {
  EXPECT_EQ(gfx_ip_from_target_version(110000), GfxIp::kGc11_0);
  EXPECT_EQ(gfx_ip_from_target_version(90402), GfxIp::kGc9_4_3);
  EXPECT_EQ(gfx_ip_name(GfxIp::kGc11_0), "gc 11.0 (gfx1100)");
  EXPECT_EQ(gfx_ip_name(GfxIp::kGc9_4_3), "gc 9.4.3 (gfx942)");
  const std::string m = error_of([] { gfx_ip_from_target_version(90010); });
  EXPECT_TRUE(contains(m, "gfx_target_version 90010 is not supported")) << m;
  EXPECT_TRUE(contains(m, "110000") && contains(m, "90402")) << m;
}

// ---- SET_SH_REG (§5.1) ----

TEST(SetShReg, OffsetIsFromTheWindowBase) {
  // PGM_LO 0x2E0C - 0x2C00 = 0x20C
  const uint32_t v[] = {0x12345678, 0x9A};
  EXPECT_EQ(encode([&](CmdStream& s) { write_set_sh_reg(s, gc11, 0x2E0C, v); }),
            (Words{0xC0027600, 0x0000020C, 0x12345678, 0x9A}));
}

TEST(SetShReg, Rsrc3OffsetsDifferByIp) {
  const uint32_t v[] = {0xAB};
  // gc 11: 0x2E28 - 0x2C00 = 0x228; gc 9.4.3: 0x2E2D - 0x2C00 = 0x22D
  EXPECT_EQ(encode([&](CmdStream& s) { write_set_sh_reg(s, gc11, gc11.pgm_rsrc3, v); }), (Words{0xC0017600, 0x228, 0xAB}));
  EXPECT_EQ(encode([&](CmdStream& s) { write_set_sh_reg(s, gc9, gc9.pgm_rsrc3, v); }), (Words{0xC0017600, 0x22D, 0xAB}));
}

TEST(SetShReg, LastRegisterOfTheWindowIsAccepted) {
  const uint32_t v[] = {1};
  EXPECT_EQ(encode([&](CmdStream& s) { write_set_sh_reg(s, gc11, 0x2FFF, v); }), (Words{0xC0017600, 0x3FF, 1}));
}

TEST(SetShReg, RejectsRegistersOutsideTheWindowAndEmptyValues) {
  const uint32_t one[] = {1}, two[] = {1, 2};
  std::string m = rejected([&](CmdStream& s) { write_set_sh_reg(s, gc11, 0x3010, one); });
  EXPECT_TRUE(contains(m, "SET_SH_REG: registers 0x3010-0x3010 are outside 0x2c00-0x2fff")) << m;
  m = rejected([&](CmdStream& s) { write_set_sh_reg(s, gc11, 0x2BFF, one); });
  EXPECT_TRUE(contains(m, "outside 0x2c00-0x2fff")) << m;
  m = rejected([&](CmdStream& s) { write_set_sh_reg(s, gc11, 0x2FFF, two); });
  EXPECT_TRUE(contains(m, "registers 0x2fff-0x3000")) << m;
  m = rejected([&](CmdStream& s) { write_set_sh_reg(s, gc11, 0x2E00, std::span<const uint32_t>()); });
  EXPECT_TRUE(contains(m, "SET_SH_REG: no values")) << m;
}

// ---- DISPATCH_DIRECT (§5.2) and EVENT_WRITE (§5.5) ----

TEST(DispatchDirect, GridInWorkgroupsThenInitiator) {
  // initiator COMPUTE_SHADER_EN 1 | FORCE_START_AT_000 1<<2 | CS_W32_EN 1<<15 = 0x8005
  EXPECT_EQ(encode([](CmdStream& s) { write_dispatch_direct(s, 7, 2, 1, 0x8005); }),
            (Words{0xC0031500, 7, 2, 1, 0x8005}));
}

TEST(DispatchDirect, RejectsEmptyGridAndThreadDimensions) {
  std::string m = rejected([](CmdStream& s) { write_dispatch_direct(s, 4, 0, 1, 5); });
  EXPECT_TRUE(contains(m, "DISPATCH_DIRECT: grid 4x0x1 has an empty dimension")) << m;
  m = rejected([](CmdStream& s) { write_dispatch_direct(s, 1, 1, 1, 0x25); });
  EXPECT_TRUE(contains(m, "USE_THREAD_DIMENSIONS")) << m;
}

TEST(EventWrite, CsPartialFlush) {
  // EVENT_TYPE CS_PARTIAL_FLUSH 7 | EVENT_INDEX 4 << 8 = 0x407
  EXPECT_EQ(encode([](CmdStream& s) { write_cs_partial_flush(s); }), (Words{0xC0004600, 0x407}));
}

// ---- ACQUIRE_MEM (§6) ----

TEST(AcquireMem, Gc11UsesGcrCntl) {
  // COHER_CNTL 0, size 0xFFFFFFFF, size_hi 0xFFFFFF, base 0, base_hi 0, poll 0xA, GCR_CNTL GLI_INV(1) 0x1 |
  // GLM_WB 0x10 | GLM_INV 0x20 | GLK_INV 0x80 | GLV_INV 0x100 | GL1_INV 0x200 | GL2_INV 0x4000 | GL2_WB 0x8000 = 0xC3B1
  EXPECT_EQ(encode([](CmdStream& s) { write_acquire_mem(s, GfxIp::kGc11_0); }),
            (Words{0xC0065800, 0, 0xFFFFFFFF, 0xFFFFFF, 0, 0, 0xA, 0xC3B1}));
}

TEST(AcquireMem, Gc943UsesCpCoherCntl) {
  // CP_COHER_CNTL TC_WB 1<<18 | TCL1 1<<22 | TC 1<<23 | SH_KCACHE 1<<27 | SH_ICACHE 1<<29 = 0x28C40000
  EXPECT_EQ(encode([](CmdStream& s) { write_acquire_mem(s, GfxIp::kGc9_4_3); }),
            (Words{0xC0055800, 0x28C40000, 0xFFFFFFFF, 0xFFFFFF, 0, 0, 0xA}));
}

// ---- RELEASE_MEM (§7) ----

TEST(ReleaseMem, Gc11SixtyFourBitValueWithInterrupt) {
  // dw1 GLM_WB 1<<12 | GLM_INV 1<<13 | GL2_WB 1<<21 | SEQ 1<<22 | CACHE_POLICY 3<<25 | EVENT_INDEX 5<<8 |
  //     EVENT_TYPE 0x14 = 0x06603514
  // dw2 DATA_SEL 2<<29 | INT_SEL 2<<24 = 0x42000000
  EXPECT_EQ(encode([](CmdStream& s) {
              write_release_mem(s, GfxIp::kGc11_0, ReleaseData::kValue64, 0x7F0012345678, 0x1122334455667788,
                                ReleaseInterrupt::kAfterWriteConfirm, 0x0ABCDEF);
            }),
            (Words{0xC0064900, 0x06603514, 0x42000000, 0x12345678, 0x7F00, 0x55667788, 0x11223344, 0x0ABCDEF}));
}

TEST(ReleaseMem, Gc943FullFlushFence) {
  // dw1 TC_WB 1<<15 | TCL1 1<<16 | TC 1<<17 | TC_MD 1<<21 | 5<<8 | 0x14 = 0x00238514; dw2 DATA_SEL 2 = 0x40000000
  EXPECT_EQ(encode([](CmdStream& s) {
              write_release_mem(s, GfxIp::kGc9_4_3, ReleaseData::kValue64, 0x1000, 5);
            }),
            (Words{0xC0064900, 0x00238514, 0x40000000, 0x1000, 0, 5, 0, 0}));
}

TEST(ReleaseMem, TimestampLow32AndLow32WithInterrupt) {
  // DATA_SEL 3 (GPU clock counter) = 0x60000000
  EXPECT_EQ(encode([](CmdStream& s) { write_release_mem(s, GfxIp::kGc11_0, ReleaseData::kTimestamp64, 0x2008, 0); }),
            (Words{0xC0064900, 0x06603514, 0x60000000, 0x2008, 0, 0, 0, 0}));
  // DATA_SEL 1 = 0x20000000; a dword-aligned address is enough
  EXPECT_EQ(encode([](CmdStream& s) { write_release_mem(s, GfxIp::kGc9_4_3, ReleaseData::kLow32, 0x2004, 0xCAFE); }),
            (Words{0xC0064900, 0x00238514, 0x20000000, 0x2004, 0, 0xCAFE, 0, 0}));
  // 32-bit data with the interrupt: DATA_SEL 1 << 29 | INT_SEL 2 << 24 = 0x22000000, context id in dword 7
  EXPECT_EQ(encode([](CmdStream& s) {
              write_release_mem(s, GfxIp::kGc11_0, ReleaseData::kLow32, 0x2004, 9, ReleaseInterrupt::kAfterWriteConfirm, 42);
            }),
            (Words{0xC0064900, 0x06603514, 0x22000000, 0x2004, 0, 9, 0, 42}));
}

TEST(ReleaseMem, RejectsBadOperands) {
  std::string m = rejected([](CmdStream& s) { write_release_mem(s, GfxIp::kGc11_0, ReleaseData::kValue64, 0x1004, 1); });
  EXPECT_TRUE(contains(m, "RELEASE_MEM: address 0x1004 is not 8-byte aligned")) << m;
  m = rejected([](CmdStream& s) { write_release_mem(s, GfxIp::kGc11_0, ReleaseData::kTimestamp64, 0x1004, 0); });
  EXPECT_TRUE(contains(m, "not 8-byte aligned")) << m;
  m = rejected([](CmdStream& s) { write_release_mem(s, GfxIp::kGc11_0, ReleaseData::kLow32, 0x1002, 1); });
  EXPECT_TRUE(contains(m, "not 4-byte aligned")) << m;
  m = rejected([](CmdStream& s) { write_release_mem(s, GfxIp::kGc11_0, ReleaseData::kLow32, 0x1000, 0x100000000); });
  EXPECT_TRUE(contains(m, "does not fit the 32 bits")) << m;
  m = rejected([](CmdStream& s) { write_release_mem(s, GfxIp::kGc11_0, ReleaseData::kTimestamp64, 0x1000, 3); });
  EXPECT_TRUE(contains(m, "value 0x3 is given but the data selector writes none")) << m;
  m = rejected([](CmdStream& s) { write_release_mem(s, GfxIp::kGc11_0, ReleaseData::kNone, 0, 0); });
  EXPECT_TRUE(contains(m, "neither data nor an interrupt")) << m;
  m = rejected([](CmdStream& s) {
    write_release_mem(s, GfxIp::kGc11_0, ReleaseData::kNone, 0, 0, ReleaseInterrupt::kAfterWriteConfirm, 42);
  });
  EXPECT_TRUE(contains(m, "the interrupt after write confirm needs data to write")) << m;
  m = rejected([](CmdStream& s) {
    write_release_mem(s, GfxIp::kGc11_0, ReleaseData::kValue64, 0x1000, 1, ReleaseInterrupt::kAfterWriteConfirm,
                      0x10000000);
  });
  EXPECT_TRUE(contains(m, "context id 0x10000000 exceeds 28 bits")) << m;
  m = rejected([](CmdStream& s) { write_release_mem(s, GfxIp::kGc11_0, ReleaseData::kValue64, 0x1000, 1, ReleaseInterrupt::kNone, 5); });
  EXPECT_TRUE(contains(m, "without an interrupt")) << m;
  m = rejected([](CmdStream& s) {
    write_release_mem(s, GfxIp::kGc11_0, static_cast<ReleaseData>(5), 0x1000, 1);
  });
  EXPECT_TRUE(contains(m, "data selector 5")) << m;
  m = rejected([](CmdStream& s) {
    write_release_mem(s, GfxIp::kGc11_0, ReleaseData::kValue64, 0x1000, 1, static_cast<ReleaseInterrupt>(1), 0);
  });
  EXPECT_TRUE(contains(m, "interrupt selector 1")) << m;
}

// ---- WAIT_REG_MEM (§5.6) and WAIT_REG_MEM64 (§5.7) ----

TEST(WaitRegMem, GreaterOrEqualOnMemory) {
  // dw1 FUNCTION 5 | MEM_SPACE 1<<4 = 0x15; addr lo, hi, reference, mask, POLL_INTERVAL 4
  EXPECT_EQ(encode([](CmdStream& s) { write_wait_reg_mem(s, 0x7F00ABCD0004, 5, 77, 0xFFFFFFFF); }),
            (Words{0xC0053C00, 0x15, 0xABCD0004, 0x7F00, 77, 0xFFFFFFFF, 4}));
}

TEST(WaitRegMem64, SixtyFourBitReferenceAndMask) {
  // dw1 FUNCTION 5 | MEM_SPACE 1<<4 = 0x15; addr lo (31:3), hi; reference lo, hi; mask lo, hi; POLL_INTERVAL 4
  EXPECT_EQ(encode([](CmdStream& s) {
              write_wait_reg_mem64(s, 0x7F0000001008, 5, 0x0000000100000002, 0xFFFFFFFFFFFFFFFF);
            }),
            (Words{0xC0079300, 0x15, 0x00001008, 0x7F00, 2, 1, 0xFFFFFFFF, 0xFFFFFFFF, 4}));
  EXPECT_EQ(kWaitRegMem64Dwords, 9u);
}

TEST(WaitRegMem, RejectsBadFunctionAndAlignment) {
  std::string m = rejected([](CmdStream& s) { write_wait_reg_mem(s, 0x1000, 7, 0, 0); });
  EXPECT_TRUE(contains(m, "WAIT_REG_MEM: function 7 is not a compare function")) << m;
  m = rejected([](CmdStream& s) { write_wait_reg_mem(s, 0x1002, 3, 0, 0); });
  EXPECT_TRUE(contains(m, "WAIT_REG_MEM: address 0x1002 is not 4-byte aligned")) << m;
  m = rejected([](CmdStream& s) { write_wait_reg_mem64(s, 0x1004, 5, 0, 0); });
  EXPECT_TRUE(contains(m, "WAIT_REG_MEM64: address 0x1004 is not 8-byte aligned")) << m;
  m = rejected([](CmdStream& s) { write_wait_reg_mem64(s, 0x1000, 9, 0, 0); });
  EXPECT_TRUE(contains(m, "WAIT_REG_MEM64: function 9")) << m;
}

// ---- INDIRECT_BUFFER (§5.4) and WRITE_DATA (§5.3) ----

TEST(IndirectBuffer, SizeWithValidBit) {
  // dw3 IB_SIZE 0x40 | VALID 1<<23 = 0x00800040
  EXPECT_EQ(encode([](CmdStream& s) { write_indirect_buffer(s, 0x12340000100, 0x40); }),
            (Words{0xC0023F00, 0x40000100, 0x123, 0x00800040}));
  // the largest size fits IB_SIZE 19:0
  EXPECT_EQ(encode([](CmdStream& s) { write_indirect_buffer(s, 0x1000, 0xFFFFF); }).back(), 0x008FFFFFu);
}

TEST(IndirectBuffer, RejectsBadOperands) {
  std::string m = rejected([](CmdStream& s) { write_indirect_buffer(s, 0x1002, 8); });
  EXPECT_TRUE(contains(m, "INDIRECT_BUFFER: address 0x1002 is not 4-byte aligned")) << m;
  m = rejected([](CmdStream& s) { write_indirect_buffer(s, 0x1000, 0); });
  EXPECT_TRUE(contains(m, "size 0 dwords is outside 1-1048575")) << m;
  m = rejected([](CmdStream& s) { write_indirect_buffer(s, 0x1000, 0x100000); });
  EXPECT_TRUE(contains(m, "size 1048576 dwords")) << m;
  m = rejected([](CmdStream& s) { write_indirect_buffer(s, uint64_t{1} << 48, 8); });
  EXPECT_TRUE(contains(m, "does not fit 48 bits")) << m;
}

TEST(WriteData, MemoryWithConfirm) {
  // header count 2 + N: N = 2 gives count 4, 3<<30 | 4<<16 | 0x37<<8 = 0xC0043700 (N = 1: 0xC0033700)
  // dw1 DST_SEL 5<<8 | WR_CONFIRM 1<<20 = 0x00100500
  const uint32_t data[] = {0xAAAA, 0xBBBB};
  EXPECT_EQ(encode([&](CmdStream& s) { write_write_data(s, 0x7F0000002000, data); }),
            (Words{0xC0043700, 0x00100500, 0x2000, 0x7F00, 0xAAAA, 0xBBBB}));
  const uint32_t one[] = {1};
  EXPECT_EQ(encode([&](CmdStream& s) { write_write_data(s, 0x2000, one); }).front(), 0xC0033700u);
}

TEST(WriteData, RejectsBadOperands) {
  const uint32_t one[] = {1};
  std::string m = rejected([&](CmdStream& s) { write_write_data(s, 0x2001, one); });
  EXPECT_TRUE(contains(m, "WRITE_DATA: address 0x2001 is not 4-byte aligned")) << m;
  m = rejected([](CmdStream& s) { write_write_data(s, 0x2000, std::span<const uint32_t>()); });
  EXPECT_TRUE(contains(m, "WRITE_DATA: no data")) << m;
}

TEST(Pm4Stream, PacketsLandBackToBackWithTheirDeclaredSizes) {
  CmdStream s(64);
  write_acquire_mem(s, GfxIp::kGc9_4_3);
  EXPECT_EQ(s.size(), acquire_mem_dwords(GfxIp::kGc9_4_3));
  write_cs_partial_flush(s);
  write_release_mem(s, GfxIp::kGc9_4_3, ReleaseData::kValue64, 0x1000, 1);
  EXPECT_EQ(s.size(), acquire_mem_dwords(GfxIp::kGc9_4_3) + kEventWriteDwords + kReleaseMemDwords);
  EXPECT_EQ(s.words()[7], 0xC0004600u);
  EXPECT_EQ(s.words()[9], 0xC0064900u);
}

TEST(Pm4Stream, TooSmallBorrowedMemoryThrowsNamingThePacket) {
  std::vector<uint32_t> memory(7);
  CmdStream s(memory);
  const std::string m = error_of<std::logic_error>([&] { write_release_mem(s, GfxIp::kGc11_0, ReleaseData::kValue64, 0x1000, 1); });
  EXPECT_TRUE(contains(m, "RELEASE_MEM: 8 dwords at dword 0 pass the end of the stream's 7 dwords")) << m;
  write_acquire_mem(s, GfxIp::kGc9_4_3);  // 7 dwords still fit
  EXPECT_EQ(s.size(), 7u);
}

}  // namespace
}  // namespace doorbell::amd
