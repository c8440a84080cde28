// Pushbuffer method headers, the checked writer and the decoder. Header words are derived from clc56f.h:
// NVC56F_DMA_METHOD_ADDRESS 11:0 (dwords), NVC56F_DMA_METHOD_SUBCHANNEL 15:13, NVC56F_DMA_METHOD_COUNT /
// NVC56F_DMA_IMMD_DATA 28:16, NVC56F_DMA_SEC_OP 31:29 (INC_METHOD 1, NON_INC_METHOD 3, IMMD_DATA_METHOD 4, ONE_INC 5).
#include "hcq/nv/pushbuffer.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "tests/common/error_of.h"

namespace doorbell::nv {
namespace {

using doorbell::testing::error_of;
using Words = std::vector<uint32_t>;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(MethodHeader, IncrementingHeaderOfSendPcasAOnCompute) {
  // SEC_OP 1 << 29 = 0x20000000, COUNT 1 << 16, SUBCHANNEL 1 << 13 = 0x2000, ADDRESS 0x2b4 >> 2 = 0xad
  EXPECT_EQ(method_header(SecOp::kIncMethod, 1, 0x2b4, 1), 0x200120adu);
}

TEST(MethodHeader, NonIncrementingHeaderOfLoadInlineQmdData) {
  // SEC_OP 3 << 29 = 0x60000000, COUNT 3 << 16, SUBCHANNEL 1 << 13, ADDRESS 0x320 >> 2 = 0xc8
  EXPECT_EQ(method_header(SecOp::kNonIncMethod, 1, 0x320, 3), 0x600320c8u);
}

TEST(MethodHeader, ImmediateHeaderCarriesTheValueInTheCountField) {
  // SEC_OP 4 << 29 = 0x80000000, IMMD_DATA 3 << 16, SUBCHANNEL 1 << 13, ADDRESS 0x2c0 >> 2 = 0xb0
  EXPECT_EQ(method_header(SecOp::kImmdDataMethod, 1, 0x2c0, 3), 0x800320b0u);
}

TEST(MethodHeader, IncrementOnceHeaderOnTheCopySubchannel) {
  // SEC_OP 5 << 29 = 0xa0000000, COUNT 2 << 16, SUBCHANNEL 4 << 13 = 0x8000, ADDRESS 0x240 >> 2 = 0x90
  EXPECT_EQ(method_header(SecOp::kOneInc, 4, 0x240, 2), 0xa0028090u);
}

TEST(MethodHeader, LargestOffsetSubchannelAndCountFillEveryFieldBit) {
  // 0x20000000 | COUNT 0x1fff << 16 | SUBCHANNEL 7 << 13 | ADDRESS 0x3ffc >> 2 = 0xfff; bit 12 (between ADDRESS and
  // SUBCHANNEL) belongs to no field and stays clear
  EXPECT_EQ(method_header(SecOp::kIncMethod, 7, 0x3ffc, 0x1fff), 0x3fffefffu);
}

TEST(MethodHeader, MethodOffsetThatIsNotFourAlignedThrowsNamingIt) {
  const std::string message = error_of([] { method_header(SecOp::kIncMethod, 0, 0x5e, 1); });
  EXPECT_TRUE(contains(message, "0x5e")) << message;
  EXPECT_TRUE(contains(message, "4-byte aligned")) << message;
}

TEST(MethodHeader, MethodOffsetBeyondTwelveDwordBitsThrows) {
  const std::string message = error_of([] { method_header(SecOp::kIncMethod, 0, 0x4000, 1); });
  EXPECT_TRUE(contains(message, "0x4000")) << message;
  EXPECT_TRUE(contains(message, "out of range")) << message;
}

TEST(MethodHeader, SubchannelAboveSevenThrows) {
  const std::string message = error_of([] { method_header(SecOp::kIncMethod, 8, 0x0, 1); });
  EXPECT_TRUE(contains(message, "subchannel 8")) << message;
}

TEST(MethodHeader, ImmediateAboveThirteenBitsThrows) {
  const std::string message = error_of([] { method_header(SecOp::kImmdDataMethod, 1, 0x2c0, 0x2000); });
  EXPECT_TRUE(contains(message, "NVC56F_DMA_IMMD_DATA")) << message;
}

TEST(MethodHeader, CountAboveThirteenBitsThrows) {
  const std::string message = error_of([] { method_header(SecOp::kIncMethod, 1, 0x320, 0x2000); });
  EXPECT_TRUE(contains(message, "NVC56F_DMA_METHOD_COUNT")) << message;
}

TEST(PushBuffer, IncWritesHeaderThenData) {
  PushBuffer pb;
  pb.inc(0, 0x5c, {1, 2, 3});
  // SEC_OP 1, COUNT 3, SUBCHANNEL 0, ADDRESS 0x5c >> 2 = 0x17
  EXPECT_EQ(pb.words(), (Words{0x20030017, 1, 2, 3}));
}

TEST(PushBuffer, NonIncOneIncAndImmediateAppendInOrder) {
  PushBuffer pb;
  const uint32_t qmd[] = {0xa, 0xb};
  pb.non_inc(1, 0x320, qmd);
  pb.one_inc(4, 0x240, qmd);
  pb.immediate(1, 0x2c0, 9);
  EXPECT_EQ(pb.words(), (Words{0x600220c8, 0xa, 0xb, 0xa0028090, 0xa, 0xb, 0x800920b0}));
}

TEST(PushBuffer, ReserveWriteCommitProducesTheReservedWords) {
  PushBuffer pb;
  pb.reserve(3);
  pb.header(SecOp::kIncMethod, 4, 0x400, 2);  // 0x20000000 | 2 << 16 | 4 << 13 | 0x400 >> 2 = 0x20028100
  pb.write(0x7e00);
  pb.write(0x20000000);
  pb.commit();
  EXPECT_EQ(pb.words(), (Words{0x20028100, 0x7e00, 0x20000000}));
}

TEST(PushBuffer, WritingMoreWordsThanReservedThrows) {
  PushBuffer pb;
  pb.reserve(2);
  pb.header(SecOp::kIncMethod, 0, 0x5c, 5);
  pb.write(1);
  const std::string message = error_of<std::length_error>([&] { pb.write(2); });
  EXPECT_TRUE(contains(message, "exceeds the reservation")) << message;
}

TEST(PushBuffer, CommitBeforeEveryReservedWordIsWrittenThrows) {
  PushBuffer pb;
  pb.reserve(4);
  pb.header(SecOp::kIncMethod, 0, 0x5c, 1);
  pb.write(1);
  const std::string message = error_of<std::logic_error>([&] { pb.commit(); });
  EXPECT_TRUE(contains(message, "2 of the 4 reserved words")) << message;
}

TEST(PushBuffer, CommitWhileAHeaderStillExpectsDataThrows) {
  PushBuffer pb;
  pb.reserve(2);
  pb.header(SecOp::kIncMethod, 0, 0x5c, 5);
  pb.write(1);
  const std::string message = error_of<std::logic_error>([&] { pb.commit(); });
  EXPECT_TRUE(contains(message, "0x5c")) << message;
  EXPECT_TRUE(contains(message, "4 data words")) << message;
}

TEST(PushBuffer, DataWordWithoutAHeaderThrows) {
  PushBuffer pb;
  pb.reserve(1);
  const std::string message = error_of<std::logic_error>([&] { pb.write(7); });
  EXPECT_TRUE(contains(message, "without a method header")) << message;
}

TEST(PushBuffer, WriteWithoutAReservationThrows) {
  PushBuffer pb;
  pb.reserve(2);
  pb.header(SecOp::kIncMethod, 0, 0x20, 1);
  pb.write(0);
  pb.commit();
  EXPECT_THROW(pb.header(SecOp::kIncMethod, 0, 0x20, 1), std::logic_error);
}

TEST(PushBuffer, SecondReservationWhileOneIsOpenThrows) {
  PushBuffer pb;
  pb.reserve(1);
  EXPECT_THROW(pb.reserve(1), std::logic_error);
}

TEST(PushBuffer, ReservingBeyondCapacityThrows) {
  PushBuffer pb(4);
  pb.inc(0, 0x5c, {1, 2, 3});
  const std::string message = error_of<std::length_error>([&] { pb.inc(0, 0x5c, {1}); });
  EXPECT_TRUE(contains(message, "capacity")) << message;
  EXPECT_EQ(pb.size(), 4u);
}

TEST(PushBuffer, BadMethodLeavesNoReservationOpen) {
  PushBuffer pb;
  EXPECT_THROW(pb.inc(0, 0x5e, {1}), std::invalid_argument);
  pb.inc(0, 0x5c, {1});
  EXPECT_EQ(pb.words(), (Words{0x20010017, 1}));
}

TEST(PushBuffer, MethodWithoutDataThrows) {
  PushBuffer pb;
  EXPECT_THROW(pb.inc(0, 0x5c, {}), std::invalid_argument);
}

TEST(PushBuffer, WordsWhileAReservationIsOpenThrows) {
  PushBuffer pb;
  pb.reserve(1);
  EXPECT_THROW(pb.words(), std::logic_error);
}

TEST(PushBuffer, CapacityAboveOneGpfifoEntryThrows) {
  EXPECT_THROW(PushBuffer(0x200000), std::invalid_argument);
  EXPECT_THROW(PushBuffer(0), std::invalid_argument);
}

// The device's way: the writer fills a piece of its pushbuffer ring in place, with the same checks.
TEST(PushBuffer, WritesIntoExternalMemoryWithinItsSizeAndLeavesTheRestAlone) {
  std::vector<uint32_t> ring(8, 0xcccccccc);
  PushBuffer pb(std::span<uint32_t>(ring.data() + 1, 5));
  pb.inc(0, 0x5c, {1, 2});
  pb.immediate(1, 0x2c0, 3);
  EXPECT_EQ(pb.size(), 4u);
  EXPECT_EQ(ring, (Words{0xcccccccc, 0x20020017, 1, 2, 0x800320b0, 0xcccccccc, 0xcccccccc, 0xcccccccc}));
  const std::string message = error_of<std::length_error>([&] { pb.inc(0, 0x5c, {4}); });
  EXPECT_TRUE(contains(message, "capacity")) << message;
  EXPECT_EQ(ring[5], 0xccccccccu) << "nothing written past the external memory's end";
  EXPECT_THROW(pb.words(), std::logic_error) << "the words are in the external memory";
}

TEST(PushBuffer, ExternalMemoryOfNoWordsThrows) {
  EXPECT_THROW(PushBuffer(std::span<uint32_t>()), std::invalid_argument);
}

TEST(DecodePushbuffer, ReadsEachHeaderKindBack) {
  const Words words{0x20030017, 1,   2,   3,  // INC, subchannel 0, 0x5c
                    0x00000000,               // NVC56F_DMA_NOP
                    0x600220c8, 0xa, 0xb,     // NON_INC, subchannel 1, 0x320
                    0xa0028090, 0xc, 0xd,     // ONE_INC, subchannel 4, 0x240
                    0x800920b0};              // IMMD 9, subchannel 1, 0x2c0
  const std::vector<DecodedMethod> methods = decode_pushbuffer(words);
  ASSERT_EQ(methods.size(), 4u);
  EXPECT_EQ(methods[0], (DecodedMethod{0, 0, 0x5c, SecOp::kIncMethod, {1, 2, 3}}));
  EXPECT_EQ(methods[1], (DecodedMethod{5, 1, 0x320, SecOp::kNonIncMethod, {0xa, 0xb}}));
  EXPECT_EQ(methods[2], (DecodedMethod{8, 4, 0x240, SecOp::kOneInc, {0xc, 0xd}}));
  EXPECT_EQ(methods[3], (DecodedMethod{11, 1, 0x2c0, SecOp::kImmdDataMethod, {9}}));
}

TEST(DecodePushbuffer, MethodOfFollowsTheSecOp) {
  const DecodedMethod inc{0, 0, 0x5c, SecOp::kIncMethod, {1, 2, 3}};
  EXPECT_EQ(inc.method_of(0), 0x5cu);
  EXPECT_EQ(inc.method_of(2), 0x64u);
  const DecodedMethod non_inc{0, 1, 0x320, SecOp::kNonIncMethod, {1, 2, 3}};
  EXPECT_EQ(non_inc.method_of(2), 0x320u);
  const DecodedMethod one_inc{0, 4, 0x240, SecOp::kOneInc, {1, 2, 3}};
  EXPECT_EQ(one_inc.method_of(0), 0x240u);
  EXPECT_EQ(one_inc.method_of(1), 0x244u);
  EXPECT_EQ(one_inc.method_of(2), 0x244u);
}

TEST(DecodePushbuffer, UnsupportedSecOpThrowsNamingTheWord) {
  const Words words{0x20010017, 1, 0xe0000000};  // SEC_OP 7: END_PB_SEGMENT
  const std::string message = error_of([&] { decode_pushbuffer(words); });
  EXPECT_TRUE(contains(message, "word 2")) << message;
  EXPECT_TRUE(contains(message, "SEC_OP 7")) << message;
}

TEST(DecodePushbuffer, HeaderWhoseDataRunsPastTheEndThrows) {
  const Words words{0x20050017, 1, 2};
  const std::string message = error_of([&] { decode_pushbuffer(words); });
  EXPECT_TRUE(contains(message, "declares 5 data words, but only 2 follow")) << message;
}

TEST(DecodePushbuffer, RoundTripsWhatTheWriterWrote) {
  PushBuffer pb;
  pb.inc(1, 0x1698, {0x1011});
  pb.immediate(1, 0x2c0, 3);
  const std::vector<DecodedMethod> methods = decode_pushbuffer(pb.words());
  ASSERT_EQ(methods.size(), 2u);
  EXPECT_EQ(methods[0].method, 0x1698u);
  EXPECT_EQ(methods[0].data, (Words{0x1011}));
  EXPECT_EQ(methods[1].sec_op, SecOp::kImmdDataMethod);
  EXPECT_EQ(methods[1].data, (Words{3}));
}

}  // namespace
}  // namespace doorbell::nv
