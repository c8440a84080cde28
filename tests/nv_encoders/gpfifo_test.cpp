// GPFIFO entries and the submit stores. Entry bits from clc86f.h NVC86F_GP_ENTRY*: entry0 FETCH 0:0, GET 31:2;
// entry1 GET_HI 7:0, LEVEL 9:9 (SUBROUTINE 1), LENGTH 30:10 (dwords), SYNC 31:31 (WAIT 1). USERD GPPut at 0x8c
// (Nvc86fControl), doorbell NVC361_NOTIFY_CHANNEL_PENDING at 0x90 of the usermode region (clc361.h).
#include "hcq/nv/gpfifo.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/common/error_of.h"

namespace doorbell::nv {
namespace {

using doorbell::testing::error_of;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(GpfifoEntry, SubroutineEntryAsTinygradSubmitsIt) {
  // entry0 = VA bits 31:2 in place = 0x34567890; entry1 = GET_HI 0x12 | LEVEL_SUBROUTINE 1 << 9 | LENGTH 0x40 << 10
  EXPECT_EQ(encode_gpfifo_entry({.pushbuffer_address = 0x1234567890, .length_words = 0x40}), 0x0001021234567890u);
}

TEST(GpfifoEntry, MainLevelWithSyncWait) {
  // entry1 = GET_HI 0x12 | LENGTH 0x40 << 10 | SYNC_WAIT 1 << 31
  EXPECT_EQ(encode_gpfifo_entry(
                {.pushbuffer_address = 0x1234567890, .length_words = 0x40, .subroutine = false, .sync_wait = true}),
            0x8001001234567890u);
}

TEST(GpfifoEntry, LongestLengthFillsTheLengthField) {
  // LENGTH 0x1fffff << 10 = 0x7ffffc00, LEVEL_SUBROUTINE 0x200
  EXPECT_EQ(encode_gpfifo_entry({.pushbuffer_address = 0x1000, .length_words = 0x1fffff}), 0x7ffffe0000001000u);
}

TEST(GpfifoEntry, DecodeGivesTheEntryBack) {
  const GpfifoEntry entry{.pushbuffer_address = 0xfedcba9874, .length_words = 0x1234, .subroutine = true};
  EXPECT_EQ(decode_gpfifo_entry(encode_gpfifo_entry(entry)), entry);
  const GpfifoEntry main{.pushbuffer_address = 0x40, .length_words = 1, .subroutine = false, .sync_wait = true};
  EXPECT_EQ(decode_gpfifo_entry(encode_gpfifo_entry(main)), main);
}

TEST(GpfifoEntry, AddressAtOrAboveTwoToTheFortyThrowsNamingGetHi) {
  const std::string message =
      error_of([] { encode_gpfifo_entry({.pushbuffer_address = uint64_t{1} << 40, .length_words = 1}); });
  EXPECT_TRUE(contains(message, "NVC86F_GP_ENTRY1_GET_HI")) << message;
}

TEST(GpfifoEntry, LengthOutOfRangeThrows) {
  EXPECT_THROW(encode_gpfifo_entry({.pushbuffer_address = 0x1000, .length_words = 0}), std::invalid_argument);
  const std::string message =
      error_of([] { encode_gpfifo_entry({.pushbuffer_address = 0x1000, .length_words = 0x200000}); });
  EXPECT_TRUE(contains(message, "NVC86F_GP_ENTRY1_LENGTH")) << message;
}

TEST(GpfifoEntry, UnalignedPushbufferThrows) {
  const std::string message = error_of([] { encode_gpfifo_entry({.pushbuffer_address = 0x1002, .length_words = 1}); });
  EXPECT_TRUE(contains(message, "4-byte aligned")) << message;
}

TEST(GpfifoEntry, ControlEntryIsNotDecoded) {
  EXPECT_THROW(decode_gpfifo_entry(0x0000000400000000u), std::invalid_argument);
}

// UVM's order (ogkm kernel-open/nvidia-uvm/uvm_volta_host.c:31-45): entries, fence, GPPut, wmb(), doorbell. The
// emulator runs in-process on coherent memory and cannot show a doorbell overtaking GPPut, so the order is checked
// here, on the steps the device obeys one by one.
TEST(GpfifoSubmit, FenceGpPutFenceThenDoorbellWithTheWorkSubmitToken) {
  const auto writes = gpfifo_submit_writes(5, 0x10000, 0xdeadbeef);
  ASSERT_EQ(writes.size(), 4u);
  EXPECT_EQ(writes[0], (SubmitWrite{SubmitRegion::kFence, 0, 0}));
  EXPECT_EQ(writes[1], (SubmitWrite{SubmitRegion::kUserd, 0x8c, 5}));
  EXPECT_EQ(writes[2], (SubmitWrite{SubmitRegion::kFence, 0, 0})) << "a write barrier between GPPut and the doorbell";
  EXPECT_EQ(writes[3], (SubmitWrite{SubmitRegion::kUsermode, 0x90, 0xdeadbeef}));
}

TEST(GpfifoSubmit, PutIndexOutsideTheRingThrows) {
  const std::string message = error_of([] { gpfifo_submit_writes(0x10000, 0x10000, 1); });
  EXPECT_TRUE(contains(message, "put index 65536")) << message;
}

}  // namespace
}  // namespace doorbell::nv
