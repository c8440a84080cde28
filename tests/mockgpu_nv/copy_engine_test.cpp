// The copy class (clc8b5.h HOPPER_DMA_COPY_A) on the copy channel: linear copies from encode_copy_linear and the
// semaphore releases of encode_copy_semaphore_release (four-word with timestamp, one-word without).
#include <random>

#include "hcq/wait_primitives.h"
#include "mock_gpu_fixture.h"

namespace doorbell::mockgpu_nv_test {
namespace {

using nv::HOPPER_DMA_COPY_A;

TEST_F(MockNvGpuTest, CopyEngineCopiesBytesThenReleasesItsSemaphoreWithTimestamp) {
  constexpr uint64_t kBytes = (1u << 20) + 13;
  const Block src = take(kBytes), dst = take(kBytes), sem = take(16);
  std::mt19937 rng(5);
  for (uint64_t i = 0; i < kBytes; ++i) src.cpu[i] = static_cast<uint8_t>(rng());
  const int64_t before = monotonic_ns();
  submit(copy_, join({nv::encode_set_object(nv::kSubchannelCopy, HOPPER_DMA_COPY_A),
                      nv::encode_copy_linear(HOPPER_DMA_COPY_A, dst.va, src.va, kBytes),
                      nv::encode_copy_semaphore_release(HOPPER_DMA_COPY_A, sem.va, 0x100000002ull, true)}));
  ASSERT_TRUE(wait_value(sem.cpu, 0x100000002ull)) << (gpu_->faults().empty() ? "" : gpu_->faults().front());
  const auto stamp = static_cast<int64_t>(load64(sem.cpu + 8) - static_cast<uint64_t>(gpu_->ptimer().offset_ns()));  // PTIMER
  EXPECT_GT(stamp + int64_t{mockgpu::nv::kPtimerTickNs}, before);  // the timer counts in 32 ns steps
  EXPECT_LE(stamp, monotonic_ns());
  EXPECT_EQ(std::memcmp(src.cpu, dst.cpu, kBytes), 0);
  EXPECT_EQ(gpu_->stats().copies, 1u);
  EXPECT_EQ(gpu_->stats().semaphore_releases, 1u);
}

TEST_F(MockNvGpuTest, CopyEngineOneWordReleaseWritesThe64BitPayloadWithoutTimestamp) {
  const Block sem = take(16);
  store64(sem.cpu + 8, 77);
  submit(copy_, join({nv::encode_set_object(nv::kSubchannelCopy, HOPPER_DMA_COPY_A),
                      nv::encode_copy_semaphore_release(HOPPER_DMA_COPY_A, sem.va, 0xabcdef0012345678ull, false)}));
  ASSERT_TRUE(wait_value(sem.cpu, 0xabcdef0012345678ull)) << (gpu_->faults().empty() ? "" : gpu_->faults().front());
  ASSERT_TRUE(wait_drained(copy_));
  EXPECT_EQ(load64(sem.cpu + 8), 77u);
  EXPECT_EQ(gpu_->stats().copies, 0u);
}

TEST_F(MockNvGpuTest, CopyEngineCopyOfZeroBytesEncodesNothingAndSmallCopiesChainInOrder) {
  const Block a = take(64), b = take(64), c = take(64), sem = take(16);
  for (int i = 0; i < 64; ++i) a.cpu[i] = static_cast<uint8_t>(i + 1);
  EXPECT_TRUE(nv::encode_copy_linear(HOPPER_DMA_COPY_A, b.va, a.va, 0).empty());
  submit(copy_, join({nv::encode_set_object(nv::kSubchannelCopy, HOPPER_DMA_COPY_A),
                      nv::encode_copy_linear(HOPPER_DMA_COPY_A, b.va, a.va, 64),
                      nv::encode_copy_linear(HOPPER_DMA_COPY_A, c.va + 1, b.va, 63),
                      nv::encode_copy_semaphore_release(HOPPER_DMA_COPY_A, sem.va, 1, true)}));
  ASSERT_TRUE(wait_value(sem.cpu, 1));
  EXPECT_EQ(c.cpu[0], 0);
  for (int i = 1; i < 64; ++i) EXPECT_EQ(c.cpu[i], i) << i;
  EXPECT_EQ(gpu_->stats().copies, 2u);
}

}  // namespace
}  // namespace doorbell::mockgpu_nv_test
