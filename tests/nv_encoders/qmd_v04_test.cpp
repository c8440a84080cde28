// QMD V04_00 (HOPPER_COMPUTE_A). Expected words are placed by hand from the NVCBC0_QMDV04_00_* ranges in
// open-gpu-doc classes/compute/clcbc0qmd.h: MW(hi:lo) bit b is bit b % 32 of word b / 32.
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "hcq/nv/nv_classes.h"
#include "hcq/nv/qmd.h"
#include "tests/common/error_of.h"
#include "tests/nv_encoders/qmd_test_launch.h"

namespace doorbell::nv {
namespace {

using doorbell::testing::error_of;
using Qmd = std::array<uint32_t, kQmdV04Words>;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Words every V04 QMD from this encoder carries, whatever the launch.
Qmd fixed_words() {
  Qmd w{};
  w[0] = 0x013f0000;   // QMD_GROUP_ID 21:16 = 0x3f, QMD_TYPE 25:23 = GRID_CTA (2)
  w[17] = 0x01000000;  // API_VISIBLE_CALL_LIMIT 568 = NO_CHECK (word 17 bit 24)
  w[18] = 0x3c000040;  // QMD_MAJOR_VERSION 583:580 = 4 (bits 7:4); INVALIDATE_TEXTURE_HEADER/SAMPLER/DATA,
                       // INVALIDATE_SHADER_DATA_CACHE 602..605 (bits 26..29)
  w[35] = 0x00010000;  // CWD_MEMBAR_TYPE 1137:1136 = L1_SYSMEMBAR (word 35 bits 17:16)
  return w;
}

TEST(QmdV04, DefaultLaunchIsOneThreadOneCtaWithOneBarrier) {
  Qmd expected = fixed_words();
  expected[32] = 1;           // GRID_WIDTH 1055:1024
  expected[33] = 1;           // GRID_HEIGHT 1071:1056
  expected[34] = 1;           // GRID_DEPTH 1103:1088
  expected[36] = 0x00010001;  // CTA_THREAD_DIMENSION0 1167:1152, DIMENSION1 1183:1168
  expected[37] = 0x08000001;  // CTA_THREAD_DIMENSION2 1199:1184; BARRIER_COUNT 1215:1211 = 1 (bit 27)
  EXPECT_EQ(encode_qmd_v04(QmdLaunch{}), expected);
}

TEST(QmdV04, EveryLaunchFieldLandsOnItsBits) {
  Qmd expected = fixed_words();
  // RELEASE_ENABLE(0) 320, PAYLOAD64B(0) 332 (STRUCTURE_SIZE(0) 322:321 = FOUR_WORDS 0);
  // RELEASE_ENABLE(1) 336, STRUCTURE_SIZE(1) 338:337 = TWO_WORDS 2, PAYLOAD64B(1) 348
  expected[10] = 0x10051001;
  // RELEASE_ENABLE(2) 352, STRUCTURE_SIZE(2) 354:353 = ONE_WORD 1 (PAYLOAD64B(2) 364 off);
  // DEPENDENT_QMD_ENABLE(0) 368, ACTION(0) 371:369 = QMD_SCHEDULE 1, PREFETCH(0) 372
  expected[11] = 0x00130003;
  expected[13] = 0x00000009;  // CONSTANT_BUFFER_VALID(0) 416, CONSTANT_BUFFER_INVALIDATE(0) 419
  expected[14] = 0xabcdef01;  // DEPENDENT_QMD0_POINTER 479:448 = 0xabcdef0100 >> 8
  expected[16] = 0x90000040;  // SHADER_LOCAL_MEMORY_LOW_SIZE 535:512 = 0x40, SASS_VERSION 543:536 = 0x90
  expected[17] = 0x01000120;  // SHADER_LOCAL_MEMORY_HIGH_SIZE 567:544 = 0x120, API_VISIBLE_CALL_LIMIT bit 24
  expected[18] = 0x3c300040;  // SHARED_MEMORY_SIZE 601:584 = 0x3000 (word 18 bits 25:8), plus the fixed bits
  // MIN_SM_CONFIG_SHARED_MEM_SIZE 613:608 = 8K/4K+1 = 3, MAX 619:614 = 100K/4K+1 = 26, TARGET 625:620 = 32K/4K+1 = 9
  expected[19] = 0x00009683;  // 3 | 26 << 6 | 9 << 12
  expected[20] = 0x00002000;  // RELEASE_SEMAPHORE0_ADDR_LOWER 671:640
  expected[21] = 0x0000007f;  // RELEASE_SEMAPHORE0_ADDR_UPPER 696:672
  expected[22] = 0x00000005;  // RELEASE_SEMAPHORE0_PAYLOAD_LOWER 735:704
  expected[23] = 0x00000001;  // RELEASE_SEMAPHORE0_PAYLOAD_UPPER 767:736
  expected[24] = 0x00002010;  // RELEASE_SEMAPHORE1_ADDR_LOWER 799:768
  expected[25] = 0x0000007f;  // RELEASE_SEMAPHORE1_ADDR_UPPER 824:800
  expected[26] = 0x00000007;  // RELEASE_SEMAPHORE1_PAYLOAD_LOWER 863:832
  expected[28] = 0x00002024;  // RELEASE_SEMAPHORE2_ADDR_LOWER 927:896
  expected[29] = 0x0000007f;  // RELEASE_SEMAPHORE2_ADDR_UPPER 952:928
  expected[30] = 0x00000009;  // RELEASE_SEMAPHORE2_PAYLOAD_LOWER 991:960
  expected[32] = 0x00012345;  // GRID_WIDTH 1055:1024
  expected[33] = 0x00000678;  // GRID_HEIGHT 1071:1056
  expected[34] = 0x00000009;  // GRID_DEPTH 1103:1088
  expected[36] = 0x00040080;  // CTA_THREAD_DIMENSION0 = 128, DIMENSION1 = 4 (bits 31:16)
  // CTA_THREAD_DIMENSION2 1199:1184 = 2, REGISTER_COUNT 1208:1200 = 0x48 (bits 24:16), BARRIER_COUNT 1215:1211 = 1
  expected[37] = 0x08480002;
  expected[38] = 0x34567880;  // PROGRAM_ADDRESS_LOWER 1247:1216, unshifted
  expected[39] = 0x00007f12;  // PROGRAM_ADDRESS_UPPER 1272:1248
  expected[42] = 0x12345678;  // PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED 1375:1344 = (0x7f1234567880 >> 8) low 32 bits
  // PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED 1392:1376 = 0x7f1234567880 >> 40 = 0x7f;
  // PROGRAM_PREFETCH_SIZE 1401:1393 = 0x1000 >> 8 = 0x10 (word 43 bits 25:17)
  expected[43] = 0x0020007f;
  // CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(0) 1567:1536: 0x7f00001040 >> 6 = 0x1fc000041, low 32 bits
  expected[48] = 0xfc000041;
  // CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6(0) 1586:1568 = 0x1; SIZE_SHIFTED4(0) 1599:1587 = 0x230 >> 4 = 0x23
  expected[49] = 0x01180001;  // 0x1 | 0x23 << 19
  EXPECT_EQ(encode_qmd_v04(test::full_launch()), expected);
}

TEST(QmdV04, EncodeThenDecodeGivesTheLaunchBack) {
  const QmdLaunch launch = test::full_launch();
  const Qmd words = encode_qmd_v04(launch);
  EXPECT_EQ(decode_qmd_v04(words), launch);
}

TEST(QmdV04, DefaultLaunchRoundTrips) { EXPECT_EQ(decode_qmd_v04(encode_qmd_v04(QmdLaunch{})), QmdLaunch{}); }

TEST(QmdV04, QmdTypeQueueLeavesTheTypeBitsClear) {
  QmdLaunch launch;
  launch.qmd_type = NVCBC0_QMDV04_00_QMD_TYPE_QUEUE;
  launch.qmd_group_id = 0;
  EXPECT_EQ(encode_qmd_v04(launch)[0], 0u);
}

TEST(QmdV04, ConstantBufferSizeIsRoundedUpToSixteenBytes) {
  QmdLaunch launch;
  launch.constant_buffer0_address = 0x1000;
  launch.constant_buffer0_size = 548;  // a 20-byte parameter list on sm_90 (firmware-notes/nvidia-hopper.md §14)
  const Qmd words = encode_qmd_v04(launch);
  EXPECT_EQ(words[48], 0x40u);        // 0x1000 >> 6
  EXPECT_EQ(words[49], 0x01180000u);  // SIZE_SHIFTED4(0) 1599:1587 = (548 + 15) >> 4 = 35 = 0x23, at bit 19
  EXPECT_EQ(decode_qmd_v04(words).constant_buffer0_size, 560u);
}

TEST(QmdV04, ProgramPrefetchSizeRoundsUpToBlocksAndClampsToNineBits) {
  QmdLaunch launch;
  launch.program_address = 0x1000;
  launch.program_prefetch_size = 0x101;                // two 256-byte blocks
  EXPECT_EQ(encode_qmd_v04(launch)[43], 0x00040000u);  // PROGRAM_PREFETCH_SIZE 1401:1393 = 2 (word 43 bit 17)
  launch.program_prefetch_size = 0x100000;             // 4096 blocks; the field holds at most 0x1ff
  EXPECT_EQ(encode_qmd_v04(launch)[43], 0x03fe0000u);  // 0x1ff at bits 25:17
}

TEST(QmdV04, FieldValueTooLargeThrowsNamingTheField) {
  QmdLaunch launch;
  launch.grid_y = 0x10000;
  std::string message = error_of([&] { encode_qmd_v04(launch); });
  EXPECT_TRUE(contains(message, "NVCBC0_QMDV04_00_GRID_HEIGHT")) << message;
  EXPECT_TRUE(contains(message, "16 bits")) << message;

  launch = QmdLaunch{};
  launch.register_count = 0x200;
  message = error_of([&] { encode_qmd_v04(launch); });
  EXPECT_TRUE(contains(message, "NVCBC0_QMDV04_00_REGISTER_COUNT")) << message;

  launch = QmdLaunch{};
  launch.block_x = 0x10000;
  message = error_of([&] { encode_qmd_v04(launch); });
  EXPECT_TRUE(contains(message, "NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION0")) << message;

  launch = QmdLaunch{};
  launch.shared_memory_size = 0x40000;
  message = error_of([&] { encode_qmd_v04(launch); });
  EXPECT_TRUE(contains(message, "NVCBC0_QMDV04_00_SHARED_MEMORY_SIZE")) << message;
}

TEST(QmdV04, ProgramAddressBeyondFiftySevenBitsThrows) {
  QmdLaunch launch;
  launch.program_address = uint64_t{1} << 57;
  const std::string message = error_of([&] { encode_qmd_v04(launch); });
  EXPECT_TRUE(contains(message, "NVCBC0_QMDV04_00_PROGRAM_ADDRESS_UPPER")) << message;
}

TEST(QmdV04, ReleaseAddressBeyondFiftySevenBitsThrows) {
  QmdLaunch launch;
  launch.releases[2] = QmdRelease{.enable = true, .address = uint64_t{1} << 57};
  const std::string message = error_of([&] { encode_qmd_v04(launch); });
  EXPECT_TRUE(contains(message, "NVCBC0_QMDV04_00_RELEASE_SEMAPHORE2_ADDR_UPPER")) << message;
}

TEST(QmdV04, ConstantBufferAddressMustBeSixtyFourByteAligned) {
  QmdLaunch launch;
  launch.constant_buffer0_address = 0x1020;
  launch.constant_buffer0_size = 0x100;
  const std::string message = error_of([&] { encode_qmd_v04(launch); });
  EXPECT_TRUE(contains(message, "constant buffer 0 address")) << message;
  EXPECT_TRUE(contains(message, "64-byte aligned")) << message;
}

TEST(QmdV04, ConstantBufferAddressWithoutSizeThrows) {
  QmdLaunch launch;
  launch.constant_buffer0_address = 0x1000;
  EXPECT_THROW(encode_qmd_v04(launch), std::invalid_argument);
}

TEST(QmdV04, DependentQmdMustBeAlignedAndBelowTwoToTheForty) {
  QmdLaunch launch;
  launch.dependent_qmd_address = 0x1080;
  std::string message = error_of([&] { encode_qmd_v04(launch); });
  EXPECT_TRUE(contains(message, "dependent QMD address")) << message;
  launch.dependent_qmd_address = uint64_t{1} << 40;
  message = error_of([&] { encode_qmd_v04(launch); });
  EXPECT_TRUE(contains(message, "NVCBC0_QMDV04_00_DEPENDENT_QMD0_POINTER")) << message;
}

TEST(QmdV04, ReleaseWithTimestampMustBeSixteenByteAligned) {
  QmdLaunch launch;
  launch.releases[0] = QmdRelease{.enable = true, .address = 0x1008};
  const std::string message = error_of([&] { encode_qmd_v04(launch); });
  EXPECT_TRUE(contains(message, "release 0 address")) << message;
  EXPECT_TRUE(contains(message, "16-byte aligned")) << message;
}

TEST(QmdV04, ThirtyTwoBitReleaseRejectsAWiderPayload) {
  QmdLaunch launch;
  launch.releases[1] =
      QmdRelease{.enable = true, .address = 0x1000, .payload = 0x100000000, .timestamp = false, .payload64 = false};
  const std::string message = error_of([&] { encode_qmd_v04(launch); });
  EXPECT_TRUE(contains(message, "release 1 payload")) << message;
}

TEST(QmdV04, ZeroGridOrBlockDimensionThrows) {
  QmdLaunch launch;
  launch.grid_z = 0;
  EXPECT_TRUE(contains(error_of([&] { encode_qmd_v04(launch); }), "grid_z is 0"));
  launch = QmdLaunch{};
  launch.block_y = 0;
  EXPECT_TRUE(contains(error_of([&] { encode_qmd_v04(launch); }), "block_y is 0"));
}

TEST(QmdV04, SmConfigSharedMemoryMustBeWholeFourKilobyteUnits) {
  QmdLaunch launch;
  launch.sm_config_shared_memory_max = 5000;
  const std::string message = error_of([&] { encode_qmd_v04(launch); });
  EXPECT_TRUE(contains(message, "sm_config_shared_memory_max")) << message;
  EXPECT_TRUE(contains(message, "multiple of 4096")) << message;
}

TEST(QmdV04, DecodeRejectsAnotherMajorVersionOrSize) {
  Qmd words = encode_qmd_v04(QmdLaunch{});
  words[18] = (words[18] & ~0xf0u) | 0x30;  // QMD_MAJOR_VERSION 583:580 = 3
  const std::string message = error_of([&] { decode_qmd_v04(words); });
  EXPECT_TRUE(contains(message, "QMD_MAJOR_VERSION is 3; expected 4")) << message;
  const std::array<uint32_t, kQmdV03Words> v03{};
  EXPECT_THROW(decode_qmd_v04(v03), std::invalid_argument);
}

TEST(QmdV04, HopperComputeClassSelectsV04) {
  EXPECT_EQ(qmd_words(HOPPER_COMPUTE_A), 96u);
  const QmdLaunch launch = test::full_launch();
  const Qmd expected = encode_qmd_v04(launch);
  EXPECT_EQ(encode_qmd(HOPPER_COMPUTE_A, launch), std::vector<uint32_t>(expected.begin(), expected.end()));
  EXPECT_THROW(qmd_words(0xc6c0), std::invalid_argument);
}

}  // namespace
}  // namespace doorbell::nv
