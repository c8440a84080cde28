// The emulated MEC (mockgpu/amd/pm4_engine.cpp) running hand-written PM4 words. Header words are
// TYPE 3 << 30 | COUNT << 16 | OPCODE << 8 with COUNT = body dwords - 1 (nvd.h / soc15d.h PACKET3), e.g. SET_SH_REG
// (0x76) with 2 values: 0xC0000000 | 2 << 16 | 0x7600 = 0xC0027600. Field positions: firmware-notes/amd-pm4-cp.md.
#include <chrono>
#include <cstring>
#include <thread>

#include "tests/mockgpu_amd/queue_engine_fixture.h"

namespace doorbell::mockgpu::amd::testing {
namespace {

// SET_SH_REG of values.size() registers from absolute address `reg` (the packet carries reg - 0x2C00).
Words set_sh(uint32_t reg, const Words& values) {
  Words w{0xC0007600u | static_cast<uint32_t>(values.size()) << 16, reg - 0x2C00};
  w.insert(w.end(), values.begin(), values.end());
  return w;
}
Words join(std::initializer_list<Words> parts) {
  Words all;
  for (const Words& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

// DISPATCH_DIRECT 0xC0031500: dims in workgroups, then DISPATCH_INITIATOR. gc11 initiator
// COMPUTE_SHADER_EN 0 | FORCE_START_AT_000 2 | CS_W32_EN 15 = 0x8005; wave64 0x5.
Words dispatch(uint32_t x, uint32_t y, uint32_t z, uint32_t initiator = 0x8005) {
  return {0xC0031500, x, y, z, initiator};
}

// RELEASE_MEM 0xC0064900. dw1: EVENT_TYPE CACHE_FLUSH_AND_INV_TS_EVENT 0x14 | EVENT_INDEX 5 << 8 = 0x514.
// dw2: DATA_SEL 31:29 | INT_SEL 26:24.
Words release_mem(uint32_t data_sel, uint32_t int_sel, uint64_t va, uint64_t value, uint32_t ctxid) {
  return {0xC0064900,
          0x514,
          data_sel << 29 | int_sel << 24,
          static_cast<uint32_t>(va),
          static_cast<uint32_t>(va >> 32),
          static_cast<uint32_t>(value),
          static_cast<uint32_t>(value >> 32),
          ctxid};
}

// A program: PGM_LO/HI = code >> 8, RSRC1/2, RSRC3 (0x2E28 gc11), 4 user SGPRs, NUM_THREAD 64x2x1, TMPRING_SIZE,
// DISPATCH_SCRATCH_BASE.
constexpr uint64_t kCode = kData + 0x1000;

TEST_F(QueueEngineTest, Pm4DispatchDirectHandsTheShaderCoreTheProgrammedState) {
  start_pm4();
  const uint64_t scratch = kData + 0x4000;
  const uint32_t rsrc2 = 4 << 1 | 1 << 7 | 3 << 15;                   // USER_SGPR 4, TGID_X_EN, LDS_SIZE 3 (1536 bytes)
  submit(join({set_sh(0x2E0C, {lo(kCode >> 8), hi(kCode >> 8)}),      // COMPUTE_PGM_LO/HI
               set_sh(0x2E12, {0x60AF0041, rsrc2}),                   // COMPUTE_PGM_RSRC1/2
               set_sh(0x2E28, {0x00000010}),                          // COMPUTE_PGM_RSRC3 (gc11)
               set_sh(0x2E40, {0x11, 0x22, 0x33, 0x44}),              // COMPUTE_USER_DATA_0..3
               set_sh(0x2E07, {64, 2, 1}),                            // COMPUTE_NUM_THREAD_X/Y/Z
               set_sh(0x2E18, {5 << 12 | 32}),                        // TMPRING_SIZE WAVESIZE 5 (x256), WAVES 32
               set_sh(0x2E10, {lo(scratch >> 8), hi(scratch >> 8)}),  // DISPATCH_SCRATCH_BASE_LO/HI
               dispatch(7, 3, 2)}));
  drain();
  const auto got = dispatches();
  ASSERT_EQ(got.size(), 1u);
  const DispatchState& s = got[0];
  EXPECT_EQ(s.code_va, kCode);
  EXPECT_EQ(s.rsrc1, 0x60AF0041u);
  EXPECT_EQ(s.rsrc2, rsrc2);
  EXPECT_EQ(s.rsrc3, 0x10u);
  EXPECT_EQ(s.user_data[0], 0x11u);
  EXPECT_EQ(s.user_data[3], 0x44u);
  EXPECT_EQ(s.user_data[4], 0u);
  EXPECT_EQ(s.workgroup_size, (std::array<uint32_t, 3>{64, 2, 1}));
  EXPECT_EQ(s.grid_workgroups, (std::array<uint32_t, 3>{7, 3, 2}));
  EXPECT_TRUE(s.wave32);
  EXPECT_EQ(s.lds_bytes, 1536u);
  EXPECT_EQ(s.scratch_va, scratch);
  EXPECT_EQ(s.scratch_wave_bytes, 5u * 256);
  EXPECT_EQ(engine_->packets_executed(), 8u);
}

TEST_F(QueueEngineTest, Pm4Gc943ReadsRsrc3At0x2E2DAndDispatchesWave64) {
  start_pm4(Options().target(90402));
  submit(join({set_sh(0x2E0C, {lo(kCode >> 8), hi(kCode >> 8)}), set_sh(0x2E28, {0xBAD}),
               set_sh(0x2E2D, {0x00010003}),  // RSRC3 on gc 9.4.3: ACCUM_OFFSET 3, TG_SPLIT 16
               set_sh(0x2E07, {256, 1, 1}), set_sh(0x2E18, {2 << 12}),  // WAVESIZE 2 (x1024)
               dispatch(1, 1, 1, 0x5)}));
  drain();
  const auto got = dispatches();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].rsrc3, 0x00010003u);
  EXPECT_FALSE(got[0].wave32);
  EXPECT_EQ(got[0].scratch_wave_bytes, 2048u);
}

TEST_F(QueueEngineTest, Pm4ReleaseMemWritesDataAndClockThenInterruptsWithContextId) {
  start_pm4(Options().clock_hook([] { return uint64_t{0x123456789AB}; }));
  submit(join({release_mem(1, 0, kData, 0xAABBCCDD, 0),              // 32-bit data, no interrupt
               release_mem(2, 0, kData + 8, 0x1122334455667788, 0),  // 64-bit data
               release_mem(3, 2, kData + 16, 0, 0x0000BEEF)}));      // clock, interrupt after write
  drain();
  EXPECT_EQ(load32(kData), 0xAABBCCDDu);
  EXPECT_EQ(load64(kData + 8), 0x1122334455667788u);
  EXPECT_EQ(load64(kData + 16), 0x123456789ABu);
  EXPECT_EQ(interrupts(), (std::vector<uint32_t>{0xBEEF}));
}

TEST_F(QueueEngineTest, Pm4InterruptOnlyReleaseMemSignalsWithoutWriting) {
  start_pm4();
  store64(kData, 7);
  submit(release_mem(0, 1, kData, 99, 42));  // INT_SEL 1 (interrupt only), DATA_SEL 0
  drain();
  EXPECT_EQ(load64(kData), 7u);
  EXPECT_EQ(interrupts(), (std::vector<uint32_t>{42}));
}

TEST_F(QueueEngineTest, Pm4PacketStraddlingTheRingEndWraps) {
  start_pm4(Options().ring(256));  // 64 dwords
  // NOP 0xC03C1000: count 60, 62 dwords; then a 1-dword filler 0xFFFF1000 (NOP count 0x3FFF): wptr 63.
  Words nop(62, 0);
  nop[0] = 0xC03C1000;
  submit(nop);
  submit({0xFFFF1000});
  drain();
  EXPECT_EQ(reported_rptr(), 63u);
  // WRITE_DATA (0x37) with 2 data dwords: count 4 -> 0xC0043700; dw1 DST_SEL 5 << 8 | WR_CONFIRM 1 << 20 = 0x100500.
  // Its 6 dwords occupy ring dwords 63, 0, 1, 2, 3, 4.
  submit({0xC0043700, 0x100500, lo(kData), hi(kData), 0xCAFE0001, 0xCAFE0002});
  drain();
  EXPECT_EQ(load32(kData), 0xCAFE0001u);
  EXPECT_EQ(load32(kData + 4), 0xCAFE0002u);
  EXPECT_EQ(reported_rptr(), 69u);  // the report is the monotonic dword count, not the ring index (5)
  EXPECT_EQ(engine_->packets_executed(), 3u);
}

TEST_F(QueueEngineTest, Pm4WaitRegMemStallsUntilTheHostWritesThenContinues) {
  start_pm4();
  // WAIT_REG_MEM 0xC0053C00: dw1 FUNCTION 5 (>=) | MEM_SPACE 1 << 4 = 0x15; addr lo, hi; reference 3; mask; interval.
  submit(join({{0xC0053C00, 0x15, lo(kData), hi(kData), 3, 0xFFFFFFFF, 4}, release_mem(1, 0, kData + 8, 1, 0)}));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(engine_->packets_executed(), 0u);
  EXPECT_EQ(load32(kData + 8), 0u);
  store32(kData, 2);  // still < 3
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(engine_->packets_executed(), 0u);
  store32(kData, 3);
  drain();
  EXPECT_EQ(load32(kData + 8), 1u);
  EXPECT_EQ(engine_->packets_executed(), 2u);
}

TEST_F(QueueEngineTest, Pm4WaitRegMemAppliesTheMaskBeforeComparing) {
  start_pm4();
  store32(kData, 0xFF00);
  // FUNCTION 3 (==) | MEM_SPACE 1 = 0x13; (0xFF00 & 0x0F00) == 0x0F00
  submit({0xC0053C00, 0x13, lo(kData), hi(kData), 0x0F00, 0x0F00, 4});
  drain();
  EXPECT_EQ(engine_->packets_executed(), 1u);
}

TEST_F(QueueEngineTest, Pm4WaitRegMem64ComparesSixtyFourBits) {
  start_pm4();
  store64(kData, 0x00000001FFFFFFFF);
  // WAIT_REG_MEM64 (0x93), count 7: 0xC0079300; dw1 0x15 (>=, memory); addr lo (8-aligned), hi; reference lo, hi;
  // mask lo, hi; interval (PAL PM4_MEC_WAIT_REG_MEM64).
  submit(join(
      {{0xC0079300, 0x15, lo(kData), hi(kData), 0, 2, 0xFFFFFFFF, 0xFFFFFFFF, 4}, release_mem(1, 0, kData + 8, 5, 0)}));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(load32(kData + 8), 0u) << "0x1FFFFFFFF >= 0x200000000 must not pass (a 32-bit compare would)";
  store64(kData, 0x0000000200000000);
  drain();
  EXPECT_EQ(load32(kData + 8), 5u);
}

TEST_F(QueueEngineTest, Pm4IndirectBufferRunsItsPacketsAndResumesAStallInside) {
  start_pm4();
  const uint64_t ib = kData + 0x8000;
  // IB: WAIT_REG_MEM (== 1) on kData, then WRITE_DATA of one dword (count 3: 0xC0033700).
  const Words body{0xC0053C00, 0x13,  lo(kData),      hi(kData),      1,     0xFFFFFFFF, 4,
                   0xC0033700, 0x500, lo(kData + 16), hi(kData + 16), 0x600D};
  std::memcpy(host(ib), body.data(), body.size() * 4);
  // INDIRECT_BUFFER 0xC0023F00: base lo, hi; IB_SIZE 12 | VALID 1 << 23 = 0x80000C. Then a release after it.
  submit(join({{0xC0023F00, lo(ib), hi(ib), 0x80000C}, release_mem(1, 0, kData + 20, 9, 0)}));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(reported_rptr(), 0u) << "the INDIRECT_BUFFER packet completes with its IB";
  store32(kData, 1);
  drain();
  EXPECT_EQ(load32(kData + 16), 0x600Du);
  EXPECT_EQ(load32(kData + 20), 9u);
  EXPECT_EQ(engine_->packets_executed(), 4u);  // two IB packets, the INDIRECT_BUFFER, the RELEASE_MEM
}

TEST_F(QueueEngineTest, Pm4CopyDataFromMemoryImmediateAndClock) {
  start_pm4(Options().clock_hook([] { return uint64_t{0x0000000500000006}; }));
  store64(kData, 0x8877665544332211);
  // COPY_DATA 0xC0044000. dw1 SRC_SEL 3:0 | DST_SEL 11:8 | COUNT_SEL 16 (64-bit).
  submit(join({{0xC0044000, 0x10502, lo(kData), hi(kData), lo(kData + 8), hi(kData + 8)},  // mem -> mem, 64
               {0xC0044000, 0x00505, 0xD00D, 0, lo(kData + 16), hi(kData + 16)},           // immediate, 32
               {0xC0044000, 0x10509, 0, 0, lo(kData + 24), hi(kData + 24)},                // GPU clock, 64
               {0xC0044000, 0x0050A, 0, 0, lo(kData + 32), hi(kData + 32)}}));             // system clock, 32
  drain();
  EXPECT_EQ(load64(kData + 8), 0x8877665544332211u);
  EXPECT_EQ(load32(kData + 16), 0xD00Du);
  EXPECT_EQ(load64(kData + 24), 0x0000000500000006u);
  EXPECT_EQ(load32(kData + 32), 6u);
}

TEST_F(QueueEngineTest, Pm4WriteDataWithoutAddressIncrementRewritesOneDword) {
  start_pm4();
  // WRITE_DATA, 3 data dwords (count 5): dw1 DST_SEL 2 (TC_L2) << 8 | ADDR_INCR 1 << 16 = 0x10200.
  submit({0xC0053700, 0x10200, lo(kData), hi(kData), 1, 2, 3});
  drain();
  EXPECT_EQ(load32(kData), 3u);
  EXPECT_EQ(load32(kData + 4), 0u);
}

TEST_F(QueueEngineTest, Pm4AcceptsEventWriteAcquireMemAndNops) {
  start_pm4();
  // EVENT_WRITE 0xC0004600, CS_PARTIAL_FLUSH 7 | EVENT_INDEX 4 << 8 = 0x407. ACQUIRE_MEM gc11 (count 6): 0xC0065800,
  // the kernel's gfx_v11_0_emit_mem_sync body (GCR_CNTL 0xC3B1). NOP 0xC0011000 with 2 ignored dwords.
  submit(join({{0xC0004600, 0x407},
               {0xC0065800, 0, 0xFFFFFFFF, 0xFFFFFF, 0, 0, 0xA, 0xC3B1},
               {0xC0011000, 0xDEAD, 0xBEEF},
               {0xFFFF1000}}));
  drain();
  EXPECT_EQ(engine_->packets_executed(), 4u);
}

TEST_F(QueueEngineTest, Pm4Gc943AcquireMemIsSevenDwords) {
  start_pm4(Options().target(90402));
  // ACQUIRE_MEM gfx9 (count 5) 0xC0055800: CP_COHER_CNTL 0x28C40000 (gfx_v9_0_emit_mem_sync), size, size_hi, base,
  // base_hi, poll.
  submit({0xC0055800, 0x28C40000, 0xFFFFFFFF, 0xFFFFFF, 0, 0, 0xA});
  drain();
  submit({0xC0065800, 0, 0xFFFFFFFF, 0xFFFFFF, 0, 0, 0xA, 0xC3B1});  // the gc11 size
  const QueueFault f = fault();
  EXPECT_TRUE(contains(f.message, "ACQUIRE_MEM count 6; expected 5")) << f.message;
}

TEST_F(QueueEngineTest, Pm4TimestampsCountAtOneHundredMegahertz) {
  start_pm4();  // no clock hook: the engine's own 100 MHz counter
  const auto before = std::chrono::steady_clock::now();
  submit(release_mem(3, 0, kData, 0, 0));
  drain();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  submit(release_mem(3, 0, kData + 8, 0, 0));
  drain();
  const auto after = std::chrono::steady_clock::now();
  const uint64_t ticks = load64(kData + 8) - load64(kData);
  const uint64_t max_ticks =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(after - before).count()) / 10 + 1;
  EXPECT_GE(ticks, 2000000u) << "20 ms at 100 MHz";
  EXPECT_LE(ticks, max_ticks);
}

// ---- faults: one report naming queue, ring dword, packet and rule; then the queue stops ----

TEST_F(QueueEngineTest, Pm4ZeroDwordIsATypeZeroHeaderFault) {
  start_pm4();
  submit({0xFFFF1000, 0xFFFF1000, 0, 0xFFFF1000});
  const QueueFault f = fault();
  EXPECT_TRUE(contains(f.message, "PM4 queue 3: ring dword 0x2: header 0x0 is a type-0 packet")) << f.message;
  EXPECT_FALSE(f.memory);
  EXPECT_EQ(engine_->packets_executed(), 2u);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(engine_->packets_executed(), 2u) << "a faulted queue runs nothing more";
  EXPECT_EQ(reported_rptr(), 2u);
}

TEST_F(QueueEngineTest, Pm4TypeTwoHeaderFaults) {
  start_pm4();
  submit({0x80000000});
  EXPECT_TRUE(contains(fault().message, "type-2 packet"));
}

TEST_F(QueueEngineTest, Pm4UnknownOpcodeFaults) {
  start_pm4();
  submit({0xC0001100, 0});  // SET_BASE (0x11): not emulated
  const QueueFault f = fault();
  EXPECT_TRUE(contains(f.message, "unknown opcode 0x11")) << f.message;
}

TEST_F(QueueEngineTest, Pm4SetShRegOutsideItsWindowFaults) {
  start_pm4();
  submit({0xC0017600, 0x3010 - 0x2C00, 1});
  const QueueFault f = fault();
  EXPECT_EQ(f.message, "PM4 queue 3: ring dword 0x0: SET_SH_REG register 0x3010 is outside 0x2c00-0x2fff");
}

TEST_F(QueueEngineTest, Pm4SetShRegRunningPastTheWindowEndFaults) {
  start_pm4();
  submit(set_sh(0x2FFF, {1, 2}));  // the second value would land on 0x3000
  EXPECT_TRUE(contains(fault().message, "SET_SH_REG register 0x3000 is outside"));
}

TEST_F(QueueEngineTest, Pm4SetUconfigRegTakesTheWholeWindowAndFaultsBeyond) {
  start_pm4();
  // SET_UCONFIG_REG 0xC0017900: CP_PERFMON_CNTL 0xD808 (above nvd.h's 0xC400 end: accepted), then 0xFFFF + 1.
  submit({0xC0017900, 0xD808 - 0xC000, 0});
  drain();
  submit({0xC0027900, 0xFFFF - 0xC000, 1, 2});
  EXPECT_TRUE(contains(fault().message, "SET_UCONFIG_REG register 0x10000 is outside 0xc000-0xffff"));
}

TEST_F(QueueEngineTest, Pm4DispatchWithoutAProgramFaults) {
  start_pm4();
  submit(join({set_sh(0x2E07, {64, 1, 1}), dispatch(1, 1, 1)}));
  EXPECT_TRUE(contains(fault().message, "DISPATCH_DIRECT: COMPUTE_PGM_LO/HI are 0"));
  EXPECT_TRUE(dispatches().empty());
}

TEST_F(QueueEngineTest, Pm4DispatchOfAnUnmappedProgramIsAMemoryFault) {
  start_pm4();
  submit(
      join({set_sh(0x2E0C, {lo(kUnmapped >> 8), hi(kUnmapped >> 8)}), set_sh(0x2E07, {64, 1, 1}), dispatch(1, 1, 1)}));
  const QueueFault f = fault();
  EXPECT_TRUE(f.memory);
  EXPECT_EQ(f.address, kUnmapped);
  EXPECT_TRUE(contains(f.message, "DISPATCH_DIRECT program")) << f.message;
}

TEST_F(QueueEngineTest, Pm4DispatchWithTooMuchLdsFaults) {
  start_pm4();
  // LDS_SIZE 129 granules of 512 bytes = 66048 > 65536
  submit(join({set_sh(0x2E0C, {lo(kCode >> 8), hi(kCode >> 8)}), set_sh(0x2E13, {129u << 15}),
               set_sh(0x2E07, {64, 1, 1}), dispatch(1, 1, 1)}));
  EXPECT_TRUE(contains(fault().message, "LDS_SIZE 129 (66048 bytes) exceeds the 65536-byte LDS"));
}

TEST_F(QueueEngineTest, Pm4DispatchWithAnEmptyWorkgroupDimensionFaults) {
  start_pm4();
  submit(join({set_sh(0x2E0C, {lo(kCode >> 8), hi(kCode >> 8)}), set_sh(0x2E07, {64, 0, 1}), dispatch(1, 1, 1)}));
  EXPECT_TRUE(contains(fault().message, "COMPUTE_NUM_THREAD_Y is 0"));
}

TEST_F(QueueEngineTest, Pm4Gc943DispatchWithCsW32EnFaults) {
  start_pm4(Options().target(90402));
  submit(join({set_sh(0x2E0C, {lo(kCode >> 8), hi(kCode >> 8)}), set_sh(0x2E07, {64, 1, 1}), dispatch(1, 1, 1)}));
  EXPECT_TRUE(contains(fault().message, "gc 9.4.3 has no wave32 dispatch"));
}

TEST_F(QueueEngineTest, Pm4ShaderFaultFaultsTheQueueWithTheShadersMessageAndAddress) {
  start_pm4(Options().dispatch_hook([](const DispatchState&) {
    throw ShaderFault("global_load_b32 v1, v0, s[0:1]: address 0x1000 is not mapped", kCode + 0x24, 0x1000);
  }));
  submit(join({set_sh(0x2E0C, {lo(kCode >> 8), hi(kCode >> 8)}), set_sh(0x2E07, {64, 1, 1}), dispatch(1, 1, 1),
               release_mem(1, 0, kData, 1, 0)}));
  const QueueFault f = fault();
  EXPECT_TRUE(f.memory);
  EXPECT_EQ(f.address, 0x1000u);
  EXPECT_TRUE(contains(f.message, "shader fault at pc " + std::string("0x7f0000121024"))) << f.message;
  EXPECT_TRUE(contains(f.message, "global_load_b32 v1, v0, s[0:1]: address 0x1000 is not mapped")) << f.message;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(load32(kData), 0u) << "the release after the faulting dispatch never runs";
}

TEST_F(QueueEngineTest, Pm4ReleaseMemSixtyFourBitToAnUnalignedAddressFaults) {
  start_pm4();
  submit(release_mem(2, 0, kData + 4, 1, 0));
  EXPECT_TRUE(contains(fault().message, "RELEASE_MEM DATA_SEL 2 address 0x7f0000120004 is not 8-byte aligned"));
}

TEST_F(QueueEngineTest, Pm4ReleaseMemToAnUnmappedAddressIsAMemoryFault) {
  start_pm4();
  submit(release_mem(1, 2, kUnmapped, 1, 5));
  const QueueFault f = fault();
  EXPECT_TRUE(f.memory);
  EXPECT_EQ(f.address, kUnmapped);
  EXPECT_TRUE(interrupts().empty());
}

TEST_F(QueueEngineTest, Pm4WaitOnARegisterFaults) {
  start_pm4();
  submit({0xC0053C00, 0x03, 0x2E00, 0, 1, 0xFFFFFFFF, 4});  // MEM_SPACE 0
  EXPECT_TRUE(contains(fault().message, "WAIT_REG_MEM MEM_SPACE 0: register waits are not emulated"));
}

TEST_F(QueueEngineTest, Pm4IndirectBufferRulesFault) {
  struct Case {
    Words packet;
    std::string message;
  };
  const uint64_t ib = kData + 0x8000;
  const std::vector<Case> cases{
      {{0xC0023F00, lo(ib), hi(ib), 0x00000C}, "lacks VALID (bit 23)"},
      {{0xC0023F00, lo(ib), hi(ib), 0x800000}, "IB_SIZE is 0"},
      {{0xC0023F00, lo(ib) + 2, hi(ib), 0x800004}, "is not dword aligned"},
  };
  for (const Case& c : cases) {
    engine_.reset();
    faults_.clear();
    // The next engine must not see the last case's write pointer (in the wptr word and the doorbell): it would run
    // the last packet again, still in the ring, and report its fault for this case (seen once in 77 runs).
    wptr_ = 0;
    doorbell_ = 0;
    store64(kWptrVa, 0);
    store64(kRptrVa, 0);
    start_pm4();
    submit(c.packet);
    const QueueFault f = fault();
    EXPECT_TRUE(contains(f.message, "INDIRECT_BUFFER")) << f.message;
    EXPECT_TRUE(contains(f.message, c.message)) << f.message;
  }
}

TEST_F(QueueEngineTest, Pm4NestedIndirectBufferFaults) {
  start_pm4();
  const uint64_t ib = kData + 0x8000;
  const Words body{0xC0023F00, lo(ib), hi(ib), 0x800004};
  std::memcpy(host(ib), body.data(), body.size() * 4);
  submit({0xC0023F00, lo(ib), hi(ib), 0x800004});
  const QueueFault f = fault();
  EXPECT_TRUE(contains(f.message, "ring dword 0x0: IB 0x7f0000128000 dword 0x0: INDIRECT_BUFFER inside an IB"))
      << f.message;
}

TEST_F(QueueEngineTest, Pm4WritePointerMoreThanARingAheadFaults) {
  start_pm4(Options().ring(256));
  submit(Words(65, 0xFFFF1000));  // 65 dwords announced on a 64-dword ring
  EXPECT_TRUE(contains(fault().message, "write pointer 0x41 is more than the ring (0x40 dwords) ahead"));
}

TEST_F(QueueEngineTest, Pm4PacketRunningPastTheWritePointerFaults) {
  start_pm4();
  submit({0xC0053C00, 0x15, lo(kData)});  // a 7-dword WAIT_REG_MEM of which 3 dwords are announced
  EXPECT_TRUE(contains(fault().message, "WAIT_REG_MEM packet of 7 dwords runs past the write pointer 0x3"));
}

TEST_F(QueueEngineTest, Pm4PacketRulesFault) {
  struct Case {
    Words packet;
    std::string message;
  };
  const std::vector<Case> cases{
      // WRITE_DATA to an address that is not dword aligned
      {{0xC0033700, 0x500, lo(kData + 2), hi(kData + 2), 1}, "WRITE_DATA address 0x7f0000120002 is not 4-byte aligned"},
      // WRITE_DATA to a register (DST_SEL 0)
      {{0xC0033700, 0x000, 0x2E00, 0, 1}, "WRITE_DATA DST_SEL 0 is not emulated"},
      // EVENT_WRITE with a timestamp-form body (count 2)
      {{0xC0024600, 0x514, 0, 0}, "EVENT_WRITE count 2"},
      // CS_PARTIAL_FLUSH with EVENT_INDEX 0
      {{0xC0004600, 0x007}, "EVENT_WRITE CS_PARTIAL_FLUSH with EVENT_INDEX 0; expected 4"},
      // RELEASE_MEM DATA_SEL 5 (GDS), INT_SEL 1 with data, EVENT_INDEX 0
      {release_mem(5, 0, kData, 0, 0), "RELEASE_MEM DATA_SEL 5 is not emulated"},
      {release_mem(1, 1, kData, 0, 0), "RELEASE_MEM INT_SEL 1 (interrupt only) with DATA_SEL 1"},
      {{0xC0064900, 0x014, 1u << 29, lo(kData), hi(kData), 0, 0, 0}, "RELEASE_MEM EVENT_INDEX 0"},
      // DISPATCH_DIRECT with the wrong count
      {{0xC0021500, 1, 1, 1}, "DISPATCH_DIRECT count 2; expected 3"},
      // WAIT_REG_MEM64 on an address that is only 4-byte aligned, and a reserved FUNCTION
      {{0xC0079300, 0x15, lo(kData + 4), hi(kData + 4), 0, 0, ~0u, ~0u, 4},
       "WAIT_REG_MEM64 address 0x7f0000120004 is not 8-byte aligned"},
      {{0xC0053C00, 0x17, lo(kData), hi(kData), 0, ~0u, 4}, "WAIT_REG_MEM FUNCTION 7 is reserved"},
      // COPY_DATA from a register
      {{0xC0044000, 0x500, 0x2E00, 0, lo(kData), hi(kData)}, "COPY_DATA SRC_SEL 0 is not emulated"},
  };
  for (const Case& c : cases) {
    engine_.reset();
    faults_.clear();
    // The next engine must not see the last case's write pointer (in the wptr word and the doorbell): it would run
    // the last packet again, still in the ring, and report its fault for this case (seen once in 77 runs).
    wptr_ = 0;
    doorbell_ = 0;
    store64(kWptrVa, 0);
    store64(kRptrVa, 0);
    start_pm4();
    submit(c.packet);
    const QueueFault f = fault();
    EXPECT_TRUE(contains(f.message, "PM4 queue 3: ring dword 0x0: " + c.message)) << f.message;
    EXPECT_FALSE(f.memory) << f.message;
  }
}

TEST_F(QueueEngineTest, Pm4DestructionStopsAStalledQueuePromptly) {
  start_pm4();
  submit({0xC0053C00, 0x13, lo(kData), hi(kData), 1, 0xFFFFFFFF, 4});
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto before = std::chrono::steady_clock::now();
  engine_.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::milliseconds(200));
}

TEST_F(QueueEngineTest, Pm4UnsupportedTargetIsRejectedAtCreation) {
  EngineHooks hooks;
  hooks.memory = &memory_;
  QueueDesc d;
  d.gfx_target_version = 100300;
  d.ring_va = kRingVa;
  d.ring_bytes = 4096;
  d.wptr_va = kWptrVa;
  try {
    make_pm4_engine(d, hooks);
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "gfx_target_version 100300 is not emulated")) << e.what();
  }
}

}  // namespace
}  // namespace doorbell::mockgpu::amd::testing
