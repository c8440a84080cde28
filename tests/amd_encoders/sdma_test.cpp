// SDMA packets for SDMA 6.0 (gc 11) and 4.4.2 (gc 9.4.3), word for word. Header: OP 7:0, SUB_OP 15:8, packet fields
// in 31:16 (firmware-notes/amd-sdma.md §2); bodies from §3-§9 as derived in each comment.
#include "hcq/amd/sdma.h"

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
Words encode(F&& f, size_t capacity = 256) {
  CmdStream s(capacity);
  f(s);
  return Words(s.words().begin(), s.words().end());
}

template <class F>
std::string rejected(F&& f) {
  CmdStream s(64);
  std::string m = error_of([&] { f(s); });
  EXPECT_EQ(s.size(), 0u) << "an invalid operand is caught before anything is reserved";
  write_sdma_nops(s, 1);  // still usable
  return m;
}

// ---- COPY_LINEAR (§3) ----

TEST(SdmaCopy, OnePacketBelowTheLimit) {
  // header OP 1 | SUB_OP 0 = 0x1; COUNT = bytes - 1 = 0xFFF; dw2 0; src lo/hi; dst lo/hi
  EXPECT_EQ(encode([](CmdStream& s) { write_sdma_copy(s, GfxIp::kGc11_0, 0x7F0000002000, 0x7E0000001000, 4096); }),
            (Words{0x1, 0xFFF, 0, 0x1000, 0x7E00, 0x2000, 0x7F00}));
}

TEST(SdmaCopy, MaxBytesPerPacketByIp) {
  EXPECT_EQ(sdma_max_copy_bytes(GfxIp::kGc11_0), uint64_t{1} << 30);  // COUNT 29:0
  EXPECT_EQ(sdma_max_copy_bytes(GfxIp::kGc9_4_3), uint64_t{1} << 22);  // COUNT 21:0
  EXPECT_EQ(sdma_copy_dwords(GfxIp::kGc11_0, 1), 7u);
  EXPECT_EQ(sdma_copy_dwords(GfxIp::kGc11_0, uint64_t{1} << 30), 7u);
  EXPECT_EQ(sdma_copy_dwords(GfxIp::kGc11_0, (uint64_t{1} << 30) + 1), 14u);
  EXPECT_EQ(sdma_copy_dwords(GfxIp::kGc9_4_3, (uint64_t{4} << 20) * 3), 21u);
}

TEST(SdmaCopy, SplitsAtTheIpLimitOnGc943) {
  // 4 MiB + 16 bytes on SDMA 4.4.2: one 4 MiB packet (COUNT 0x3FFFFF) and one of 16 bytes (COUNT 15), the second
  // starting 0x400000 further on both sides.
  const uint64_t src = 0x10000000, dst = 0x20000000;
  EXPECT_EQ(encode([&](CmdStream& s) { write_sdma_copy(s, GfxIp::kGc9_4_3, dst, src, (4u << 20) + 16); }),
            (Words{0x1, 0x3FFFFF, 0, 0x10000000, 0, 0x20000000, 0,  //
                   0x1, 15, 0, 0x10400000, 0, 0x20400000, 0}));
}

TEST(SdmaCopy, SplitsAtTheIpLimitOnGc11) {
  // 2^30 + 4 bytes on SDMA 6: COUNT 0x3FFFFFFF, then COUNT 3 at +0x40000000 (carrying into the high word)
  const uint64_t src = 0x1C0000000, dst = 0x2C0000000;
  EXPECT_EQ(encode([&](CmdStream& s) { write_sdma_copy(s, GfxIp::kGc11_0, dst, src, (uint64_t{1} << 30) + 4); }),
            (Words{0x1, 0x3FFFFFFF, 0, 0xC0000000, 1, 0xC0000000, 2,  //
                   0x1, 3, 0, 0x00000000, 2, 0x00000000, 3}));
}

TEST(SdmaCopy, RejectsEmptyAndWrappingCopies) {
  std::string m = rejected([](CmdStream& s) { write_sdma_copy(s, GfxIp::kGc11_0, 0x1000, 0x2000, 0); });
  EXPECT_TRUE(contains(m, "COPY_LINEAR: a copy of 0 bytes")) << m;
  m = rejected([](CmdStream& s) { write_sdma_copy(s, GfxIp::kGc11_0, 0xFFFFFFFFFFFFF000, 0x2000, 0x2000); });
  EXPECT_TRUE(contains(m, "wrap around the address space")) << m;
  EXPECT_TRUE(contains(error_of([] { sdma_copy_dwords(GfxIp::kGc9_4_3, 0); }), "0 bytes"));
}

// ---- FENCE (§4) ----

TEST(SdmaFence, Sdma6HeaderCarriesUncachedMtype) {
  // OP 5 | MTYPE 3 << 16 = 0x00030005
  EXPECT_EQ(encode([](CmdStream& s) { write_sdma_fence(s, GfxIp::kGc11_0, 0x7F0000001004, 0xDEADBEEF); }),
            (Words{0x00030005, 0x1004, 0x7F00, 0xDEADBEEF}));
}

TEST(SdmaFence, Vega10LayoutHasNoHeaderFields) {
  EXPECT_EQ(encode([](CmdStream& s) { write_sdma_fence(s, GfxIp::kGc9_4_3, 0x1000, 7); }),
            (Words{0x00000005, 0x1000, 0, 7}));
  const std::string m = rejected([](CmdStream& s) { write_sdma_fence(s, GfxIp::kGc9_4_3, 0x1002, 7); });
  EXPECT_TRUE(contains(m, "FENCE: address 0x1002 is not 4-byte aligned")) << m;
}

// ---- POLL_REGMEM (§5) ----

TEST(SdmaPollRegmem, GreaterOrEqualOnMemory) {
  // header OP 8 | FUNC 5 << 28 | MEM_POLL 1 << 31 = 0xD0000008; dw5 INTERVAL 4 | RETRY_COUNT 0xFFF << 16 = 0x0FFF0004
  EXPECT_EQ(encode([](CmdStream& s) { write_sdma_poll_regmem(s, 0x7F0000003000, 5, 9, 0xFFFFFFFF); }),
            (Words{0xD0000008, 0x3000, 0x7F00, 9, 0xFFFFFFFF, 0x0FFF0004}));
  // FUNC 3 (==): 0x80000000 | 3 << 28 | 8 = 0xB0000008
  EXPECT_EQ(encode([](CmdStream& s) { write_sdma_poll_regmem(s, 0x3000, 3, 1, 1); }).front(), 0xB0000008u);
}

TEST(SdmaPollRegmem, RejectsBadFunctionAndAlignment) {
  std::string m = rejected([](CmdStream& s) { write_sdma_poll_regmem(s, 0x3000, 7, 0, 0); });
  EXPECT_TRUE(contains(m, "POLL_REGMEM: function 7")) << m;
  m = rejected([](CmdStream& s) { write_sdma_poll_regmem(s, 0x3001, 5, 0, 0); });
  EXPECT_TRUE(contains(m, "POLL_REGMEM: address 0x3001 is not 4-byte aligned")) << m;
}

// ---- TIMESTAMP (§6), TRAP (§7), NOP (§8) ----

TEST(SdmaTimestamp, GetGlobal) {
  // OP 13 | SUB_OP 2 << 8 = 0x20D
  EXPECT_EQ(encode([](CmdStream& s) { write_sdma_timestamp(s, 0x7F0000004008); }), (Words{0x20D, 0x4008, 0x7F00}));
  const std::string m = rejected([](CmdStream& s) { write_sdma_timestamp(s, 0x4004); });
  EXPECT_TRUE(contains(m, "TIMESTAMP: address 0x4004 is not 8-byte aligned")) << m;
}

TEST(SdmaTrap, ContextIdInTwentyEightBits) {
  EXPECT_EQ(encode([](CmdStream& s) { write_sdma_trap(s, 0x0FFFFFFF); }), (Words{0x6, 0x0FFFFFFF}));
  const std::string m = rejected([](CmdStream& s) { write_sdma_trap(s, 0x10000000); });
  EXPECT_TRUE(contains(m, "TRAP: context id 0x10000000 exceeds 28 bits")) << m;
}

TEST(SdmaNops, ZeroDwords) {
  EXPECT_EQ(encode([](CmdStream& s) { write_sdma_nops(s, 3); }), (Words{0, 0, 0}));
  EXPECT_EQ(encode([](CmdStream& s) { write_sdma_nops(s, 0); }), Words{});
}

// ---- INDIRECT (§9) ----

TEST(SdmaIndirect, BaseSizeAndNoCsa) {
  // OP 4 (VMID 0); base lo/hi; IB_SIZE 16; CSA 0, 0
  EXPECT_EQ(encode([](CmdStream& s) { write_sdma_indirect(s, 0x7F0000005020, 16); }),
            (Words{0x4, 0x5020, 0x7F00, 16, 0, 0}));
}

TEST(SdmaIndirect, EndsOnAnEightDwordBoundaryAfterPadding) {
  // The ring rule: pad with (2 - wptr) & 7 NOPs so the 6-dword packet ends at a multiple of 8.
  CmdStream s(64);
  write_sdma_trap(s, 1);  // wptr 2: (2 - 2) & 7 = 0 NOPs would be needed here
  write_sdma_nops(s, 1);  // wptr 3 -> (2 - 3) & 7 = 7 NOPs
  write_sdma_nops(s, (2 - s.size()) & 7);
  write_sdma_indirect(s, 0x1000, 8);
  EXPECT_EQ(s.size() % 8, 0u);
  EXPECT_EQ(s.size(), 16u);
}

TEST(SdmaIndirect, RejectsBadOperands) {
  std::string m = rejected([](CmdStream& s) { write_sdma_indirect(s, 0x1010, 8); });
  EXPECT_TRUE(contains(m, "INDIRECT: address 0x1010 is not 32-byte aligned")) << m;
  m = rejected([](CmdStream& s) { write_sdma_indirect(s, 0x1000, 12); });
  EXPECT_TRUE(contains(m, "INDIRECT: size 12 dwords is not a nonzero multiple of 8")) << m;
  m = rejected([](CmdStream& s) { write_sdma_indirect(s, 0x1000, 0); });
  EXPECT_TRUE(contains(m, "size 0 dwords")) << m;
  m = rejected([](CmdStream& s) { write_sdma_indirect(s, 0x1000, 0x100000); });
  EXPECT_TRUE(contains(m, "below 2^20")) << m;
}

}  // namespace
}  // namespace doorbell::amd
