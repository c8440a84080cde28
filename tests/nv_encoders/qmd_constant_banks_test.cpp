// Constant banks 1..7 in the QMD (CONSTANT_BUFFER_VALID/INVALIDATE/ADDR/SIZE_SHIFTED4(i)), word for word from the
// headers' (i) formulas: V04 open-gpu-doc classes/compute/clcbc0qmd.h:407, 414, 525-527; V03 clc6c0qmd.h:606,
// 693-701.
#include <gtest/gtest.h>

#include "hcq/nv/qmd.h"

namespace doorbell::nv {
namespace {

uint32_t bit(std::span<const uint32_t> w, uint32_t b) { return (w[b / 32] >> (b % 32)) & 1; }

TEST(QmdConstantBanks, V04Bank3LandsOnItsIndexedBits) {
  QmdLaunch q;
  q.constant_buffers[3] = {0x7f0012345640ull, 0x11};  // 64-byte aligned; 17 bytes round up to 32
  const auto w = encode_qmd_v04(q);
  EXPECT_EQ(bit(w, 416 + 3 * 4), 1u) << "VALID(3)";
  EXPECT_EQ(bit(w, 419 + 3 * 4), 1u) << "INVALIDATE(3)";
  EXPECT_EQ(bit(w, 416), 0u) << "VALID(0): bank 0 is not bound";
  // ADDR_LOWER_SHIFTED6(3) = bits 1759:1728 = word 54; ADDR_UPPER_SHIFTED6(3) 1778:1760 and SIZE_SHIFTED4(3)
  // 1791:1779 share word 55.
  const uint64_t shifted = 0x7f0012345640ull >> 6;
  EXPECT_EQ(w[54], static_cast<uint32_t>(shifted));
  EXPECT_EQ(w[55], static_cast<uint32_t>(shifted >> 32) | (2u << 19));
  EXPECT_EQ(decode_qmd_v04(w).constant_buffers[3], (QmdConstantBuffer{0x7f0012345640ull, 32}));
}

TEST(QmdConstantBanks, V03Bank4LandsOnItsIndexedBits) {
  QmdLaunch q;
  q.constant_buffers[4] = {0x12345678ull, 0x40};
  const auto w = encode_qmd_v03(q);
  EXPECT_EQ(bit(w, 640 + 4), 1u) << "VALID(4)";
  // ADDR_LOWER(4) = bits 1311:1280 = word 40; ADDR_UPPER(4) 1328:1312, INVALIDATE(4) 1330 and SIZE_SHIFTED4(4)
  // 1343:1331 share word 41.
  EXPECT_EQ(w[40], 0x12345678u);
  EXPECT_EQ(w[41], (1u << 18) | (4u << 19));
  EXPECT_EQ(decode_qmd_v03(w).constant_buffers[4], (QmdConstantBuffer{0x12345678ull, 0x40}));
}

TEST(QmdConstantBanks, EveryBankRoundTripsBesideBankZero) {
  QmdLaunch q;
  q.constant_buffer0_address = 0x1000;
  q.constant_buffer0_size = 0x230;
  for (uint32_t i = 1; i < kQmdConstantBuffers; ++i) q.constant_buffers[i] = {0x100000 + 0x1000 * i, 16 * i};
  EXPECT_EQ(decode_qmd_v04(encode_qmd_v04(q)), q);
  EXPECT_EQ(decode_qmd_v03(encode_qmd_v03(q)), q);
}

TEST(QmdConstantBanks, MisalignedBankOnV04AndBankZeroInTheArrayThrow) {
  QmdLaunch q;
  q.constant_buffers[3] = {0x1020, 16};
  try {
    encode_qmd_v04(q);
    FAIL() << "expected a refusal";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("constant buffer 3 address"), std::string::npos) << e.what();
  }
  q.constant_buffers[3] = {};
  q.constant_buffers[0] = {0x1000, 16};
  EXPECT_THROW(encode_qmd_v04(q), std::invalid_argument);
  q.constant_buffers[0] = {};
  q.constant_buffers[5] = {0x1000, 0};
  EXPECT_THROW(encode_qmd_v03(q), std::invalid_argument) << "an address without a size";
}

TEST(QmdConstantBanks, SizeBeyondItsFieldThrowsNamingTheIndexedField) {
  QmdLaunch q;
  q.constant_buffers[6] = {0x1000, 0x10000 << 4};
  try {
    encode_qmd_v04(q);
    FAIL() << "expected a refusal";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("CONSTANT_BUFFER_SIZE_SHIFTED4(6)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace doorbell::nv
