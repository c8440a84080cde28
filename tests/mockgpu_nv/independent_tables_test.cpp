// The mock's own reading of NVIDIA's headers (mockgpu/nv/mock_gpu_methods.h) against the hcq/nv encoders, field by
// field: both were written from the headers independently, so any disagreement is a bug in one of them.
#include <gtest/gtest.h>

#include "hcq/nv/gpfifo.h"
#include "hcq/nv/nv_classes.h"
#include "hcq/nv/pushbuffer.h"
#include "hcq/nv/qmd.h"
#include "mockgpu/nv/mock_gpu_methods.h"

namespace doorbell::mockgpu_nv_test {
namespace {

namespace hw = mockgpu::nv::hw;

nv::QmdLaunch sample_launch() {
  nv::QmdLaunch q;
  q.program_address = 0x1234567800ull;
  q.grid_x = 70000, q.grid_y = 3, q.grid_z = 2;
  q.block_x = 128, q.block_y = 2, q.block_z = 3;
  q.shared_memory_size = 0x2300;
  q.constant_buffer0_address = 0x10203040c0ull;
  q.constant_buffer0_size = 0x230;
  q.releases[0] = {.enable = true,
                   .address = 0x1000000010ull,
                   .payload = 0x1122334455667788ull,
                   .timestamp = true,
                   .payload64 = true};
  q.releases[1] = {.enable = true, .address = 0x1000000028ull, .payload = 0x99, .timestamp = false, .payload64 = true};
  q.releases[2] = {.enable = true, .address = 0x1000000034ull, .payload = 0x77, .timestamp = false, .payload64 = false};
  q.dependent_qmd_address = 0x2000000300ull;
  return q;
}

void expect_decoded(const hw::QmdLayout& layout, std::span<const uint32_t> words, const nv::QmdLaunch& q) {
  const hw::Qmd d = hw::decode_qmd(layout, words);
  EXPECT_EQ(d.major, layout.major);
  EXPECT_EQ(d.minor, 0u);
  EXPECT_EQ(d.program_address, q.program_address);
  EXPECT_EQ(d.grid, (std::array<uint32_t, 3>{q.grid_x, q.grid_y, q.grid_z}));
  EXPECT_EQ(d.block, (std::array<uint32_t, 3>{q.block_x, q.block_y, q.block_z}));
  EXPECT_EQ(d.shared_memory_size, q.shared_memory_size);
  EXPECT_TRUE(d.constant_buffer0_valid);
  EXPECT_EQ(d.constant_buffer0_address, q.constant_buffer0_address);
  EXPECT_EQ(d.constant_buffer0_size, q.constant_buffer0_size);
  const uint32_t sizes[3] = {hw::RELEASE_STRUCTURE_SIZE_SEMAPHORE_FOUR_WORDS,
                             hw::RELEASE_STRUCTURE_SIZE_SEMAPHORE_TWO_WORDS,
                             hw::RELEASE_STRUCTURE_SIZE_SEMAPHORE_ONE_WORD};
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE("release " + std::to_string(i));
    EXPECT_TRUE(d.release_enabled[i]);
    EXPECT_EQ(d.releases[i].address, q.releases[i].address);
    EXPECT_EQ(d.releases[i].payload, q.releases[i].payload);
    EXPECT_EQ(d.releases[i].payload64, q.releases[i].payload64);
    EXPECT_EQ(d.releases[i].structure_size, sizes[i]);
    EXPECT_FALSE(d.releases[i].reduction);
  }
  EXPECT_TRUE(d.dependent_enable);
  EXPECT_EQ(d.dependent_action, hw::DEPENDENT_QMD_ACTION_QMD_SCHEDULE);
  EXPECT_EQ(d.dependent_address, q.dependent_qmd_address);
}

TEST(MockNvGpuTablesVsEncoders, QmdV04FromTheEncoderDecodesToTheSameLaunch) {
  const nv::QmdLaunch q = sample_launch();
  const auto words = nv::encode_qmd_v04(q);
  ASSERT_EQ(words.size(), hw::kQmdV04.words);
  expect_decoded(hw::kQmdV04, words, q);
}

TEST(MockNvGpuTablesVsEncoders, QmdV03FromTheEncoderDecodesToTheSameLaunch) {
  nv::QmdLaunch q = sample_launch();
  q.grid_y = 3;
  const auto words = nv::encode_qmd_v03(q);
  ASSERT_EQ(words.size(), hw::kQmdV03.words);
  expect_decoded(hw::kQmdV03, words, q);
}

TEST(MockNvGpuTablesVsEncoders, QmdLayoutFollowsTheComputeClass) {
  EXPECT_EQ(hw::qmd_layout(hw::HOPPER_COMPUTE_A), &hw::kQmdV04);
  EXPECT_EQ(hw::qmd_layout(hw::AMPERE_COMPUTE_B), &hw::kQmdV03);
  EXPECT_EQ(hw::qmd_layout(hw::ADA_COMPUTE_A), &hw::kQmdV03);
  EXPECT_EQ(hw::qmd_layout(hw::HOPPER_DMA_COPY_A), nullptr);
  EXPECT_EQ(nv::qmd_words(nv::HOPPER_COMPUTE_A), hw::kQmdV04.words);
  EXPECT_EQ(nv::qmd_words(nv::ADA_COMPUTE_A), hw::kQmdV03.words);
}

TEST(MockNvGpuTablesVsEncoders, MethodHeadersFromThePushBufferDecodeToTheSameFields) {
  struct Case {
    nv::SecOp op;
    uint32_t subchannel, method, count;
  };
  for (const Case& c : {Case{nv::SecOp::kIncMethod, 1, 0x2b4, 3}, Case{nv::SecOp::kNonIncMethod, 4, 0x3ffc, 0x1fff},
                        Case{nv::SecOp::kImmdDataMethod, 7, 0x2c0, 9}, Case{nv::SecOp::kOneInc, 0, 0x5c, 5}}) {
    const hw::MethodHeader h = hw::decode_method_header(nv::method_header(c.op, c.subchannel, c.method, c.count));
    EXPECT_EQ(h.sec_op, static_cast<uint32_t>(c.op));
    EXPECT_EQ(h.subchannel, c.subchannel);
    EXPECT_EQ(h.method, c.method);
    EXPECT_EQ(h.count, c.count);
  }
}

TEST(MockNvGpuTablesVsEncoders, GpEntryFromTheEncoderDecodesToTheSameFields) {
  const uint64_t word = nv::encode_gpfifo_entry({0xab12345678ull, 0x1fffff, true, true});
  const hw::GpEntry e = hw::decode_gp_entry(word);
  EXPECT_EQ(e.pushbuffer_va, 0xab12345678ull);
  EXPECT_EQ(e.length_words, 0x1fffffu);
  EXPECT_TRUE(e.subroutine);
  EXPECT_TRUE(e.sync_wait);
  EXPECT_FALSE(e.fetch_conditional);
}

TEST(MockNvGpuTablesVsEncoders, MethodOffsetsAgreeWithTheEncoders) {
  EXPECT_EQ(hw::NVC86F_SEM_ADDR_LO, nv::NVC86F_SEM_ADDR_LO);
  EXPECT_EQ(hw::NVC86F_SEM_EXECUTE, nv::NVC86F_SEM_EXECUTE);
  EXPECT_EQ(hw::NVC56F_NON_STALL_INTERRUPT, nv::NVC56F_NON_STALL_INTERRUPT);
  EXPECT_EQ(hw::NVC86F_MEM_OP_A, nv::NVC86F_MEM_OP_A);
  EXPECT_EQ(hw::NVC86F_WFI, nv::NVC86F_WFI);
  EXPECT_EQ(hw::NVCBC0_SEND_PCAS_A, nv::NVCBC0_SEND_PCAS_A);
  EXPECT_EQ(hw::NVCBC0_SEND_SIGNALING_PCAS2_B, nv::NVCBC0_SEND_SIGNALING_PCAS2_B);
  EXPECT_EQ(hw::NVCBC0_SET_SHADER_LOCAL_MEMORY_A, nv::NVCBC0_SET_SHADER_LOCAL_MEMORY_A);
  EXPECT_EQ(hw::NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A, nv::NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A);
  EXPECT_EQ(hw::NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_A, nv::NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_A);
  EXPECT_EQ(hw::NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_A, nv::NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_A);
  EXPECT_EQ(hw::NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI, nv::NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI);
  EXPECT_EQ(hw::NVC8B5_SET_SEMAPHORE_A, nv::NVC8B5_SET_SEMAPHORE_A);
  EXPECT_EQ(hw::NVC8B5_LAUNCH_DMA, nv::NVC8B5_LAUNCH_DMA);
  EXPECT_EQ(hw::NVC8B5_OFFSET_IN_UPPER, nv::NVC8B5_OFFSET_IN_UPPER);
  EXPECT_EQ(hw::NVC8B5_LINE_LENGTH_IN, nv::NVC8B5_LINE_LENGTH_IN);
  EXPECT_EQ(hw::kUserdGpGet, nv::kUserdGpGetOffset);
  EXPECT_EQ(hw::kUserdGpPut, nv::kUserdGpPutOffset);
}

}  // namespace
}  // namespace doorbell::mockgpu_nv_test
