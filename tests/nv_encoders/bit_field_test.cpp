// BitField: placing and reading named bit ranges, and the errors that name the field.
#include "hcq/nv/bit_field.h"

#include <gtest/gtest.h>

#include <array>
#include <stdexcept>
#include <string>

#include "tests/common/error_of.h"

namespace doorbell::nv {
namespace {

using doorbell::testing::error_of;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(BitField, FieldBitsShiftsTheValueToTheLowBit) {
  EXPECT_EQ(field_bits(BitField{"TEST_7_4", 7, 4}, 0xa), 0x000000a0u);
  EXPECT_EQ(field_bits(BitField{"TEST_31_29", 31, 29}, 0x5), 0xa0000000u);
  EXPECT_EQ(field_bits(BitField{"TEST_31_0", 31, 0}, 0xdeadbeef), 0xdeadbeefu);
}

TEST(BitField, FieldValueReadsTheFieldBackFromAWord) {
  // 0x800320b0: bits 31:29 = 4, bits 28:16 = 3, bits 15:13 = 1, bits 11:0 = 0xb0
  EXPECT_EQ(field_value(0x800320b0, BitField{"TEST_31_29", 31, 29}), 4u);
  EXPECT_EQ(field_value(0x800320b0, BitField{"TEST_28_16", 28, 16}), 3u);
  EXPECT_EQ(field_value(0x800320b0, BitField{"TEST_15_13", 15, 13}), 1u);
  EXPECT_EQ(field_value(0x800320b0, BitField{"TEST_11_0", 11, 0}), 0xb0u);
}

TEST(BitField, ValueTooLargeForTheFieldThrowsNamingItAndItsWidth) {
  const std::string message = error_of([] { field_bits(BitField{"NVTEST_NIBBLE", 3, 0}, 0x10); });
  EXPECT_TRUE(contains(message, "NVTEST_NIBBLE")) << message;
  EXPECT_TRUE(contains(message, "4 bits")) << message;
  EXPECT_TRUE(contains(message, "0x10")) << message;
}

TEST(BitField, FieldBitsRejectsAFieldBeyondOneWord) {
  const std::string message = error_of([] { field_bits(BitField{"NVTEST_WIDE", 40, 33}, 1); });
  EXPECT_TRUE(contains(message, "NVTEST_WIDE")) << message;
}

TEST(BitField, SetFieldSplitsAFieldThatStraddlesTwoWords) {
  std::array<uint32_t, 2> words{};
  set_field(words, BitField{"TEST_35_28", 35, 28}, 0xab);
  // bits 31:28 of word 0 hold the low nibble 0xb, bits 3:0 of word 1 the high nibble 0xa
  EXPECT_EQ(words[0], 0xb0000000u);
  EXPECT_EQ(words[1], 0x0000000au);
  EXPECT_EQ(get_field(words, BitField{"TEST_35_28", 35, 28}), 0xabu);
}

TEST(BitField, SetFieldReplacesOnlyTheFieldsBits) {
  std::array<uint32_t, 1> words{0xffffffffu};
  set_field(words, BitField{"TEST_15_8", 15, 8}, 0x12);
  EXPECT_EQ(words[0], 0xffff12ffu);
}

TEST(BitField, SetFieldOutsideTheStructureThrows) {
  std::array<uint32_t, 2> words{};
  const std::string message = error_of([&] { set_field(words, BitField{"NVTEST_FAR", 64, 64}, 1); });
  EXPECT_TRUE(contains(message, "NVTEST_FAR")) << message;
  EXPECT_TRUE(contains(message, "2-word")) << message;
}

TEST(BitField, RequireAlignedNamesTheValue) {
  EXPECT_NO_THROW(require_aligned("thing", 0x100, 256));
  const std::string message = error_of([] { require_aligned("QMD address", 0x1040, 256); });
  EXPECT_TRUE(contains(message, "QMD address")) << message;
  EXPECT_TRUE(contains(message, "0x1040")) << message;
  EXPECT_TRUE(contains(message, "256-byte aligned")) << message;
}

}  // namespace
}  // namespace doorbell::nv
