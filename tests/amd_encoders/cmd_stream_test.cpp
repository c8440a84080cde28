// CmdStream: a packet reserves its size, writes exactly that, commits; every misuse throws std::logic_error naming
// the packet, and the stream stays usable.
#include "hcq/amd/cmd_stream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/common/error_of.h"

namespace doorbell::amd {
namespace {

using doorbell::testing::error_of;
using Words = std::vector<uint32_t>;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
Words words(const CmdStream& s) { return Words(s.words().begin(), s.words().end()); }

TEST(CmdStream, WritesReservedPacketsIntoBorrowedMemory) {
  std::vector<uint32_t> memory(4, 0xEEEEEEEE);
  CmdStream s(memory);
  s.reserve(3, "A");
  s.write(1);
  s.write(2);
  s.write(3);
  s.commit();
  EXPECT_EQ(s.size(), 3u);
  EXPECT_EQ(words(s), (Words{1, 2, 3}));
  EXPECT_EQ(memory, (Words{1, 2, 3, 0xEEEEEEEE})) << "the stream writes the caller's memory in place";
  EXPECT_EQ(s.capacity(), 4u);
}

TEST(CmdStream, OwnedStreamGrowsUpToItsCapacity) {
  CmdStream s(5);
  for (uint32_t i = 0; i < 5; i++) {
    s.reserve(1, "ONE");
    s.write(i);
    s.commit();
  }
  EXPECT_EQ(words(s), (Words{0, 1, 2, 3, 4}));
  const std::string m = error_of<std::logic_error>([&] { s.reserve(1, "SIXTH"); });
  EXPECT_TRUE(contains(m, "SIXTH")) << m;
  EXPECT_TRUE(contains(m, "pass the end of the stream's 5 dwords")) << m;
}

TEST(CmdStream, ReservationPastTheEndThrowsAndLeavesTheStreamUsable) {
  std::vector<uint32_t> memory(4);
  CmdStream s(memory);
  const std::string m = error_of<std::logic_error>([&] { s.reserve(5, "RELEASE_MEM"); });
  EXPECT_TRUE(contains(m, "RELEASE_MEM: 5 dwords at dword 0 pass the end of the stream's 4 dwords")) << m;
  s.reserve(4, "NOP");
  for (int i = 0; i < 4; i++) s.write(7);
  s.commit();
  EXPECT_EQ(s.size(), 4u);
}

TEST(CmdStream, MoreDwordsThanReservedThrowsNamingThePacket) {
  CmdStream s(16);
  s.reserve(2, "EVENT_WRITE");
  s.write(1);
  s.write(2);
  const std::string m = error_of<std::logic_error>([&] { s.write(3); });
  EXPECT_TRUE(contains(m, "EVENT_WRITE: more dwords written than the 2 reserved")) << m;
  s.commit();
  EXPECT_EQ(words(s), (Words{1, 2}));
}

TEST(CmdStream, CommitWithUnwrittenDwordsThrowsAndRollbackDropsThePacket) {
  CmdStream s(16);
  s.reserve(1, "FIRST");
  s.write(9);
  s.commit();
  s.reserve(3, "DISPATCH_DIRECT");
  s.write(1);
  const std::string m = error_of<std::logic_error>([&] { s.commit(); });
  EXPECT_TRUE(contains(m, "DISPATCH_DIRECT: committed with 2 of its 3 reserved dwords unwritten")) << m;
  s.rollback();
  EXPECT_EQ(words(s), (Words{9})) << "only whole packets remain";
  s.reserve(1, "NEXT");
  s.write(10);
  s.commit();
  EXPECT_EQ(words(s), (Words{9, 10}));
}

TEST(CmdStream, ReserveWhileAPacketIsOpenThrowsNamingBoth) {
  CmdStream s(16);
  s.reserve(2, "SET_SH_REG");
  const std::string m = error_of<std::logic_error>([&] { s.reserve(1, "RELEASE_MEM"); });
  EXPECT_TRUE(contains(m, "RELEASE_MEM: reserved while SET_SH_REG is not committed")) << m;
}

TEST(CmdStream, WriteOrCommitOutsideAPacketThrows) {
  CmdStream s(16);
  EXPECT_TRUE(contains(error_of<std::logic_error>([&] { s.write(1); }), "outside a reserved packet"));
  EXPECT_TRUE(contains(error_of<std::logic_error>([&] { s.commit(); }), "commit without a reserved packet"));
  EXPECT_TRUE(contains(error_of<std::logic_error>([&] { s.reserve(0, "EMPTY"); }), "EMPTY: a packet reserves at least one dword"));
  EXPECT_EQ(s.size(), 0u);
}

}  // namespace
}  // namespace doorbell::amd
