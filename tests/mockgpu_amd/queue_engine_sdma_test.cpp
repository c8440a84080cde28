// The emulated SDMA engine (mockgpu/amd/sdma_engine.cpp) running hand-written SDMA packets. Header dword:
// OP 7:0 | SUB_OP 15:8 | packet fields 31:16 (sdma_v6_0_0_pkt_open.h, vega10_sdma_pkt_open.h); layouts and their
// sources in firmware-notes/amd-sdma-engine.md. Pointers are byte offsets.
#include <chrono>
#include <cstring>
#include <thread>

#include "tests/mockgpu_amd/queue_engine_fixture.h"

namespace doorbell::mockgpu::amd::testing {
namespace {

// COPY_LINEAR: header op 1 sub 0 = 0x1; COUNT = bytes - 1; dw2 0 (no swaps/cache policy); src lo, hi; dst lo, hi.
Words copy_linear(uint64_t src, uint64_t dst, uint32_t bytes) {
  return {0x00000001,
          bytes - 1,
          0,
          static_cast<uint32_t>(src),
          static_cast<uint32_t>(src >> 32),
          static_cast<uint32_t>(dst),
          static_cast<uint32_t>(dst >> 32)};
}
// FENCE: op 5 with MTYPE 3 (UC) in 18:16 = 0x00030005; addr lo, hi; 32-bit data.
Words fence(uint64_t va, uint32_t value) {
  return {0x00030005, static_cast<uint32_t>(va), static_cast<uint32_t>(va >> 32), value};
}

TEST_F(QueueEngineTest, SdmaCopyLinearCopiesCountPlusOneBytes) {
  start_sdma();
  for (int i = 0; i < 100; ++i) host(kData)[i] = static_cast<uint8_t>(i + 1);
  submit(copy_linear(kData, kData + 0x1000, 77));
  drain();
  EXPECT_EQ(std::memcmp(host(kData), host(kData + 0x1000), 77), 0);
  EXPECT_EQ(host(kData + 0x1000)[77], 0) << "COUNT is bytes - 1: byte 77 is not copied";
  EXPECT_EQ(reported_rptr(), 28u);  // the byte read pointer
}

TEST_F(QueueEngineTest, SdmaWriteUntiledFenceAndTrap) {
  start_sdma();
  // WRITE_UNTILED op 2 sub 0 = 0x2; dst lo, hi; COUNT 19:0 = dwords - 1 = 2; then 3 dwords.
  // TRAP op 6: dw1 INT_CONTEXT 27:0 (bits above are dropped).
  submit({0x00000002, lo(kData), hi(kData), 2, 0xA, 0xB, 0xC});
  submit(fence(kData + 16, 0x5EED));
  submit({0x00000006, 0xF0000077});
  drain();
  EXPECT_EQ(load32(kData), 0xAu);
  EXPECT_EQ(load32(kData + 8), 0xCu);
  EXPECT_EQ(load32(kData + 16), 0x5EEDu);
  EXPECT_EQ(interrupts(), (std::vector<uint32_t>{0x77}));
  EXPECT_EQ(engine_->packets_executed(), 3u);
}

TEST_F(QueueEngineTest, SdmaPollRegmemStallsUntilSatisfied) {
  start_sdma();
  // POLL_REGMEM op 8 | FUNC 5 (>=) << 28 | MEM_POLL 1 << 31 = 0xD0000008; addr lo, hi; value 10; mask;
  // dw5 INTERVAL 4 | RETRY_COUNT 0xFFF << 16 = 0x0FFF0004.
  submit({0xD0000008, lo(kData), hi(kData), 10, 0xFFFFFFFF, 0x0FFF0004});
  submit(fence(kData + 8, 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(engine_->packets_executed(), 0u);
  EXPECT_EQ(reported_rptr(), 0u);
  store32(kData, 10);
  drain();
  EXPECT_EQ(load32(kData + 8), 1u);
}

TEST_F(QueueEngineTest, SdmaTimestampGetGlobalWritesTheClock) {
  start_sdma(Options().clock_hook([] { return uint64_t{0xABCDEF0123}; }));
  // TIMESTAMP op 13 sub 2 (GET_GLOBAL) = 0x20D; addr lo (8-byte aligned), hi.
  submit({0x0000020D, lo(kData + 8), hi(kData + 8)});
  drain();
  EXPECT_EQ(load64(kData + 8), 0xABCDEF0123u);
  submit({0x0000020D, lo(kData + 4), hi(kData + 4)});
  EXPECT_TRUE(contains(fault().message, "TIMESTAMP GET_GLOBAL address 0x7f0000120004 is not 8-byte aligned"));
}

TEST_F(QueueEngineTest, SdmaTimestampsCountAtOneHundredMegahertz) {
  start_sdma();
  const auto before = std::chrono::steady_clock::now();
  submit({0x0000020D, lo(kData), hi(kData)});
  drain();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  submit({0x0000020D, lo(kData + 8), hi(kData + 8)});
  drain();
  const auto after = std::chrono::steady_clock::now();
  const uint64_t ticks = load64(kData + 8) - load64(kData);
  EXPECT_GE(ticks, 2000000u);
  EXPECT_LE(
      ticks,
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(after - before).count()) / 10 + 1);
}

TEST_F(QueueEngineTest, SdmaConstFillWritesDwordsOrBytes) {
  start_sdma();
  // CONST_FILL op 11: FILLSIZE 31:30 = 2 (dword) -> 0x8000000B; dst lo, hi; data; COUNT = bytes - 1.
  submit({0x8000000B, lo(kData), hi(kData), 0x01020304, 15});
  submit({0x0000000B, lo(kData + 32), hi(kData + 32), 0x1FF, 2});  // FILLSIZE 0: the low byte, 3 bytes
  drain();
  EXPECT_EQ(load32(kData), 0x01020304u);
  EXPECT_EQ(load32(kData + 12), 0x01020304u);
  EXPECT_EQ(load32(kData + 16), 0u);
  EXPECT_EQ(load32(kData + 32), 0x00FFFFFFu);
}

TEST_F(QueueEngineTest, SdmaRingWrapsAfterNopPadding) {
  start_sdma(Options().ring(256));
  // 232 bytes of 1-dword NOPs (zero dwords) and one counted NOP (COUNT 29:16 = 3: 4 dwords): 248 bytes. Then zero
  // padding to the end (8 bytes) and a FENCE at ring offset 0.
  submit(Words(58, 0));
  submit({0x00030000, 1, 2, 3});
  drain();
  EXPECT_EQ(reported_rptr(), 248u);
  EXPECT_EQ(engine_->packets_executed(), 59u);
  submit({0, 0});
  submit(fence(kData, 0xF00D));
  drain();
  EXPECT_EQ(load32(kData), 0xF00Du);
  EXPECT_EQ(reported_rptr(), 272u);  // monotonic: 256 + 16
}

TEST_F(QueueEngineTest, SdmaPacketCrossingTheRingEndFaults) {
  start_sdma(Options().ring(256));
  submit(Words(60, 0));  // 240 bytes
  drain();
  submit(copy_linear(kData, kData + 64, 4));  // 28 bytes from 240: crosses 256
  const QueueFault f = fault();
  EXPECT_EQ(f.message,
            "SDMA queue 2: ring byte 0xf0: COPY_LINEAR packet of 7 dwords crosses the ring end (0x100 bytes); pad the "
            "tail with NOPs and continue at 0");
}

TEST_F(QueueEngineTest, SdmaIndirectRunsItsIbWhenItEndsOnAnEightDwordBoundary) {
  start_sdma();
  const uint64_t ib = kData + 0x8000;  // 32-byte aligned
  Words body = fence(kData, 0x1B);
  body.resize(8, 0);  // padded with zero NOPs to 8 dwords
  std::memcpy(host(ib), body.data(), body.size() * 4);
  // 2 NOPs so that the 6-dword INDIRECT ends at dword 8. INDIRECT op 4: IB lo, hi; IB_SIZE 8; CSA lo, hi 0.
  submit({0, 0});
  submit({0x00000004, lo(ib), hi(ib), 8, 0, 0});
  drain();
  EXPECT_EQ(load32(kData), 0x1Bu);
  EXPECT_EQ(reported_rptr(), 32u);
  EXPECT_EQ(engine_->packets_executed(), 8u);  // 2 NOPs, the IB's FENCE and 4 NOPs, the INDIRECT
}

TEST_F(QueueEngineTest, SdmaIndirectNotEndingOnAnEightDwordBoundaryFaults) {
  start_sdma();
  const uint64_t ib = kData + 0x8000;
  submit({0x00000004, lo(ib), hi(ib), 8, 0, 0});
  EXPECT_TRUE(contains(fault().message, "INDIRECT packet ends at ring dword 0x6; it must end on an 8-dword boundary"));
}

TEST_F(QueueEngineTest, SdmaIndirectSizeMustBeAPaddedMultipleOfEight) {
  start_sdma();
  const uint64_t ib = kData + 0x8000;
  submit({0, 0, 0x00000004, lo(ib), hi(ib), 5, 0, 0});
  EXPECT_TRUE(contains(fault().message, "INDIRECT IB_SIZE 5 dwords; an IB is padded to a multiple of 8 dwords"));
}

TEST_F(QueueEngineTest, SdmaNestedIndirectFaults) {
  start_sdma();
  const uint64_t ib = kData + 0x8000;
  Words body{0x00000004, lo(ib), hi(ib), 8, 0, 0, 0, 0};
  std::memcpy(host(ib), body.data(), body.size() * 4);
  submit({0, 0, 0x00000004, lo(ib), hi(ib), 8, 0, 0});
  EXPECT_TRUE(contains(fault().message, "IB 0x7f0000128000 byte 0x0: INDIRECT inside an IB"));
}

TEST_F(QueueEngineTest, SdmaGc943CopyOfFourMebibytesOrMoreFaults) {
  start_sdma(Options().target(90402));
  submit(copy_linear(kData, kData + 64, 4u << 20));  // COUNT 0x3FFFFF fits 22 bits: 4 MiB would, 4 MiB + 1 not
  const QueueFault f = fault();
  EXPECT_TRUE(f.memory) << "4 MiB is legal on SDMA 4.4.2; it faults only because the arena is 1 MiB: " << f.message;
}

TEST_F(QueueEngineTest, SdmaGc943CountAboveTwentyTwoBitsFaults) {
  start_sdma(Options().target(90402));
  submit(copy_linear(kData, kData + 64, (4u << 20) + 1));
  const QueueFault f = fault();
  EXPECT_TRUE(contains(f.message, "COPY_LINEAR COUNT 0x400000 does not fit the 22-bit field of SDMA 4.4.2"))
      << f.message;
  EXPECT_FALSE(f.memory);
}

TEST_F(QueueEngineTest, SdmaGc11CopyTakesThirtyBitCounts) {
  // 5 MiB mapped beside the arena: a 4 MiB + 1 copy is legal on SDMA 6.0.
  std::vector<uint8_t> big((5u << 20) + 64);
  const uint64_t big_va = 0x7f0010000000;
  ASSERT_TRUE(memory_.map(big_va, big.data(), big.size(), 2));
  big[(4u << 20)] = 0x5A;
  start_sdma();
  submit(copy_linear(big_va, big_va + 32, (4u << 20) + 1));
  drain();
  EXPECT_EQ(big[(4u << 20) + 32], 0x5A);
  engine_.reset();
}

TEST_F(QueueEngineTest, SdmaCopyFromAnUnmappedAddressIsAMemoryFaultNamingIt) {
  start_sdma();
  submit(copy_linear(kUnmapped + 0x40, kData, 16));
  const QueueFault f = fault();
  EXPECT_TRUE(f.memory);
  EXPECT_EQ(f.address, kUnmapped + 0x40);
  EXPECT_TRUE(contains(f.message, "SDMA queue 2: ring byte 0x0: COPY_LINEAR source of 16 bytes")) << f.message;
}

TEST_F(QueueEngineTest, SdmaUnknownOpcodeAndRegisterPollFault) {
  start_sdma();
  submit({0x00000003});  // op 3 is unassigned
  EXPECT_TRUE(contains(fault().message, "unknown or unemulated SDMA opcode 3"));
  engine_.reset();
  faults_.clear();
  wptr_ = 0;
  start_sdma();
  submit({0x50000008, 0x1234, 0, 1, 1, 0x0FFF0004});  // MEM_POLL 0: a register poll
  EXPECT_TRUE(contains(fault().message, "POLL_REGMEM with MEM_POLL 0"));
}

TEST_F(QueueEngineTest, SdmaFenceToAnUnalignedAddressFaults) {
  start_sdma();
  submit(fence(kData + 2, 1));
  EXPECT_TRUE(contains(fault().message, "FENCE address 0x7f0000120002 is not 4-byte aligned"));
}

TEST_F(QueueEngineTest, SdmaPacketRulesFault) {
  struct Case {
    Words packet;
    std::string message;
  };
  const uint64_t ib = kData + 0x8000;
  const std::vector<Case> cases{
      // COPY_LINEAR with backwards (bit 25); COPY sub-op 1 (tiled)
      {{0x02000001, 3, 0, lo(kData), hi(kData), lo(kData + 64), hi(kData + 64)}, "backwards (bit 25)"},
      {{0x00000101, 3, 0, lo(kData), hi(kData), lo(kData + 64), hi(kData + 64)}, "COPY sub-op 1 is not emulated"},
      // TIMESTAMP sub-op 1 (GET, local)
      {{0x0000010D, lo(kData), hi(kData)}, "TIMESTAMP sub-op 1 is not emulated"},
      // CONST_FILL FILLSIZE 1; dword fill of 6 bytes
      {{0x4000000B, lo(kData), hi(kData), 0, 3}, "CONST_FILL FILLSIZE 1 is not emulated"},
      {{0x8000000B, lo(kData), hi(kData), 0, 5}, "CONST_FILL dword fill of 6 bytes"},
      // INDIRECT (ending at dword 8) with VMID 1 in 19:16, an unaligned base, IB_SIZE 0
      {{0, 0, 0x00010004, lo(ib), hi(ib), 8, 0, 0}, "INDIRECT VMID 1"},
      {{0, 0, 0x00000004, lo(ib + 8), hi(ib + 8), 8, 0, 0},
       "INDIRECT IB base address 0x7f0000128008 is not 32-byte aligned"},
      {{0, 0, 0x00000004, lo(ib), hi(ib), 0, 0, 0}, "INDIRECT IB_SIZE is 0"},
      // POLL_REGMEM with FUNC 7 (reserved)
      {{0xF0000008, lo(kData), hi(kData), 0, 0, 0x0FFF0004}, "POLL_REGMEM FUNCTION 7 is reserved"},
  };
  for (const Case& c : cases) {
    engine_.reset();
    faults_.clear();
    wptr_ = 0;
    store64(kRptrVa, 0);
    start_sdma();
    submit(c.packet);
    const QueueFault f = fault();
    EXPECT_TRUE(contains(f.message, "SDMA queue 2: ring byte ")) << f.message;
    EXPECT_TRUE(contains(f.message, c.message)) << f.message;
    EXPECT_FALSE(f.memory) << f.message;
  }
}

TEST_F(QueueEngineTest, SdmaWritePointerThatIsNotADwordOffsetFaults) {
  start_sdma();
  auto* ring = reinterpret_cast<uint32_t*>(host(kRingVa));
  ring[0] = 0;
  __atomic_store_n(&doorbell_, uint64_t{6}, __ATOMIC_RELEASE);
  EXPECT_TRUE(contains(fault().message, "write pointer 0x6 is not a multiple of 4"));
}

TEST_F(QueueEngineTest, SdmaDestructionStopsAStalledQueuePromptly) {
  start_sdma();
  submit({0xD0000008, lo(kData), hi(kData), 10, 0xFFFFFFFF, 0x0FFF0004});
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto before = std::chrono::steady_clock::now();
  engine_.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::milliseconds(200));
}

}  // namespace
}  // namespace doorbell::mockgpu::amd::testing
