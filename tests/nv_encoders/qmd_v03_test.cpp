// QMD V03_00 (AMPERE_COMPUTE_B, ADA_COMPUTE_A). Expected words are placed by hand from the NVC6C0_QMDV03_00_* ranges
// in open-gpu-doc classes/compute/clc6c0qmd.h: MW(hi:lo) bit b is bit b % 32 of word b / 32.
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
using Qmd = std::array<uint32_t, kQmdV03Words>;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(QmdV03, DefaultLaunchIsOneThreadOneCtaWithOneBarrier) {
  Qmd expected{};
  expected[4] = 0x0000007f;   // QMD_GROUP_ID 133:128 = 0x3f, SM_GLOBAL_CACHING_ENABLE 134
  expected[5] = 0x3c000000;   // INVALIDATE_TEXTURE_HEADER/SAMPLER/DATA_CACHE, INVALIDATE_SHADER_DATA_CACHE 186..189
  expected[11] = 0x04010000;  // CWD_MEMBAR_TYPE 369:368 = L1_SYSMEMBAR, API_VISIBLE_CALL_LIMIT 378 = NO_CHECK
  expected[12] = 1;           // CTA_RASTER_WIDTH 415:384
  expected[13] = 1;           // CTA_RASTER_HEIGHT 431:416
  expected[14] = 1;           // CTA_RASTER_DEPTH 463:448
  expected[18] = 0x00010030;  // QMD_MAJOR_VERSION 583:580 = 3, CTA_THREAD_DIMENSION0 607:592 = 1
  expected[19] = 0x00010001;  // CTA_THREAD_DIMENSION1 623:608 = 1, CTA_THREAD_DIMENSION2 639:624 = 1
  expected[23] = 0x08000000;  // BARRIER_COUNT 767:763 = 1
  EXPECT_EQ(encode_qmd_v03(QmdLaunch{}), expected);
}

TEST(QmdV03, EveryLaunchFieldLandsOnItsBits) {
  Qmd expected{};
  expected[4] = 0x0000007f;   // QMD_GROUP_ID, SM_GLOBAL_CACHING_ENABLE
  expected[5] = 0x3c000000;   // the four INVALIDATE_* bits
  expected[8] = 0x12345678;   // PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED 287:256 = (0x7f1234567880 >> 8) low 32 bits
  expected[11] = 0x04010000;  // CWD_MEMBAR_TYPE, API_VISIBLE_CALL_LIMIT
  expected[12] = 0x00012345;  // CTA_RASTER_WIDTH 415:384
  expected[13] = 0x00000678;  // CTA_RASTER_HEIGHT 431:416
  expected[14] = 0x00000009;  // CTA_RASTER_DEPTH 463:448
  expected[15] = 0xabcdef01;  // DEPENDENT_QMD0_POINTER 511:480 = 0xabcdef0100 >> 8
  // DEPENDENT_QMD0_ENABLE 512, DEPENDENT_QMD0_ACTION 515:513 = QMD_SCHEDULE 1, DEPENDENT_QMD0_PREFETCH 516
  expected[16] = 0x00000013;
  // SHARED_MEMORY_SIZE 561:544 = 0x3000, MIN_SM_CONFIG_SHARED_MEM_SIZE 567:562 = 3 (bits 23:18),
  // MAX_SM_CONFIG_SHARED_MEM_SIZE 574:569 = 26 (bits 30:25)
  expected[17] = 0x340c3000;
  expected[18] = 0x00800030;  // QMD_MAJOR_VERSION = 3, CTA_THREAD_DIMENSION0 607:592 = 128
  expected[19] = 0x00020004;  // CTA_THREAD_DIMENSION1 623:608 = 4, CTA_THREAD_DIMENSION2 639:624 = 2
  // CONSTANT_BUFFER_VALID(0) 640, REGISTER_COUNT_V 656:648 = 0x48 (bits 16:8),
  // TARGET_SM_CONFIG_SHARED_MEM_SIZE 662:657 = 9 (bits 22:17)
  expected[20] = 0x00124801;
  expected[23] = 0x08000040;  // SHADER_LOCAL_MEMORY_LOW_SIZE 759:736 = 0x40, BARRIER_COUNT 767:763 = 1
  expected[24] = 0x00002000;  // RELEASE0_ADDRESS_LOWER 799:768
  // RELEASE0_ADDRESS_UPPER 807:800 = 0x7f, RELEASE0_ENABLE 823 (bit 23), RELEASE0_PAYLOAD64B 829 (bit 29),
  // RELEASE0_STRUCTURE_SIZE 831:830 = FOUR_WORDS 0
  expected[25] = 0x2080007f;
  expected[26] = 0x00000005;  // RELEASE0_PAYLOAD_LOWER 863:832
  expected[27] = 0x00000001;  // RELEASE0_PAYLOAD_UPPER 895:864
  expected[28] = 0x00002010;  // RELEASE1_ADDRESS_LOWER 927:896
  // RELEASE1_ADDRESS_UPPER 935:928, RELEASE1_ENABLE 951, RELEASE1_PAYLOAD64B 957, STRUCTURE_SIZE 959:958 = TWO_WORDS 2
  expected[29] = 0xa080007f;
  expected[30] = 0x00000007;  // RELEASE1_PAYLOAD_LOWER 991:960
  expected[32] = 0x00001040;  // CONSTANT_BUFFER_ADDR_LOWER(0) 1055:1024, unshifted
  // CONSTANT_BUFFER_ADDR_UPPER(0) 1072:1056 = 0x7f, CONSTANT_BUFFER_INVALIDATE(0) 1074 (bit 18),
  // CONSTANT_BUFFER_SIZE_SHIFTED4(0) 1087:1075 = 0x230 >> 4 = 0x23 (bits 31:19)
  expected[33] = 0x011c007f;
  expected[48] = 0x34567880;  // PROGRAM_ADDRESS_LOWER 1567:1536
  expected[49] = 0x00007f12;  // PROGRAM_ADDRESS_UPPER 1584:1568
  expected[50] = 0x00000120;  // SHADER_LOCAL_MEMORY_HIGH_SIZE 1623:1600
  // PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED 1640:1632 = 0x7f, PROGRAM_PREFETCH_SIZE 1649:1641 = 0x10 (bits 17:9),
  // SASS_VERSION 1663:1656 = 0x90
  expected[51] = 0x9000207f;
  expected[52] = 0x00002024;  // RELEASE2_ADDRESS_LOWER 1695:1664
  // RELEASE2_ADDRESS_UPPER 1703:1696 = 0x7f, RELEASE2_ENABLE 1719 (bit 23), STRUCTURE_SIZE 1727:1726 = ONE_WORD 1
  expected[53] = 0x4080007f;
  expected[54] = 0x00000009;  // RELEASE2_PAYLOAD_LOWER 1759:1728
  EXPECT_EQ(encode_qmd_v03(test::full_launch()), expected);
}

TEST(QmdV03, EncodeThenDecodeGivesTheLaunchBack) {
  const QmdLaunch launch = test::full_launch();
  EXPECT_EQ(decode_qmd_v03(encode_qmd_v03(launch)), launch);
}

TEST(QmdV03, ConstantBufferAddressIsStoredUnshifted) {
  QmdLaunch launch;
  launch.constant_buffer0_address = 0x1234567890;  // not 64-byte aligned: V03 keeps every address bit
  launch.constant_buffer0_size = 0x160;
  const Qmd words = encode_qmd_v03(launch);
  EXPECT_EQ(words[32], 0x34567890u);
  EXPECT_EQ(words[33], 0x00b40012u);  // upper 0x12, INVALIDATE(0) bit 18, SIZE_SHIFTED4(0) = 0x16 at bit 19
  EXPECT_EQ(decode_qmd_v03(words).constant_buffer0_address, 0x1234567890u);
}

TEST(QmdV03, ReleaseAddressBeyondFortyBitsThrowsNamingTheField) {
  QmdLaunch launch;
  launch.releases[0] = QmdRelease{.enable = true, .address = uint64_t{1} << 40};
  const std::string message = error_of([&] { encode_qmd_v03(launch); });
  EXPECT_TRUE(contains(message, "NVC6C0_QMDV03_00_RELEASE0_ADDRESS_UPPER")) << message;
  EXPECT_TRUE(contains(message, "8 bits")) << message;
}

TEST(QmdV03, ProgramAddressBeyondFortyNineBitsThrowsNamingTheField) {
  QmdLaunch launch;
  launch.program_address = uint64_t{1} << 49;
  const std::string message = error_of([&] { encode_qmd_v03(launch); });
  EXPECT_TRUE(contains(message, "NVC6C0_QMDV03_00_PROGRAM_ADDRESS_UPPER")) << message;
}

TEST(QmdV03, GridHeightTooLargeThrowsNamingTheCtaRasterField) {
  QmdLaunch launch;
  launch.grid_y = 0x10000;
  const std::string message = error_of([&] { encode_qmd_v03(launch); });
  EXPECT_TRUE(contains(message, "NVC6C0_QMDV03_00_CTA_RASTER_HEIGHT")) << message;
}

TEST(QmdV03, DecodeRejectsAnotherMajorVersion) {
  Qmd words = encode_qmd_v03(QmdLaunch{});
  words[18] = (words[18] & ~0xf0u) | 0x40;  // QMD_MAJOR_VERSION 583:580 = 4
  const std::string message = error_of([&] { decode_qmd_v03(words); });
  EXPECT_TRUE(contains(message, "QMD_MAJOR_VERSION is 4; expected 3")) << message;
}

TEST(QmdV03, AmpereAndAdaComputeClassesSelectV03) {
  EXPECT_EQ(qmd_words(AMPERE_COMPUTE_B), 64u);
  EXPECT_EQ(qmd_words(ADA_COMPUTE_A), 64u);
  const Qmd expected = encode_qmd_v03(test::full_launch());
  EXPECT_EQ(encode_qmd(ADA_COMPUTE_A, test::full_launch()), std::vector<uint32_t>(expected.begin(), expected.end()));
}

}  // namespace
}  // namespace doorbell::nv
