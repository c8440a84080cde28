// Host-unit semaphores (clc86f.h SEM_*) and the GPFIFO mechanics around them: releases with and without a
// timestamp, acquires that stall a channel until the host writes the value (circular >= on 64 bits), other channels
// running meanwhile, and the GPU thread stopping while a channel is stalled.
#include "hcq/wait_primitives.h"
#include "mock_gpu_fixture.h"

namespace doorbell::mockgpu_nv_test {
namespace {

using nv::HOPPER_CHANNEL_GPFIFO_A;

TEST_F(MockNvGpuTest, SemaphoreReleaseWithoutTimestampWritesThe64BitPayloadOnly) {
  const Block sem = take(16);
  store64(sem.cpu + 8, 0x5a5a5a5a5a5a5a5aull);
  submit(compute_, nv::encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, sem.va, 0x1234567890abcdefull, false));
  ASSERT_TRUE(wait_value(sem.cpu, 0x1234567890abcdefull));
  ASSERT_TRUE(wait_drained(compute_));
  EXPECT_EQ(load64(sem.cpu + 8), 0x5a5a5a5a5a5a5a5aull) << "a release without timestamp wrote +8";
  EXPECT_EQ(gpu_->stats().semaphore_releases, 1u);
  EXPECT_EQ(gpu_->stats().gpfifo_entries, 1u);
  EXPECT_TRUE(gpu_->faults().empty());
}

// The stamp is the GPU's PTIMER (mockgpu/nv/ptimer.h): by default the wall-clock epoch RM gives it, far from the host's
// CLOCK_MONOTONIC; less its offset, it was taken between the submission and the host seeing the payload.
TEST_F(MockNvGpuTest, SemaphoreReleaseWithTimestampWritesTheGpusTimerAtPlus8) {
  const Block sem = take(16);
  const int64_t offset = gpu_->ptimer().offset_ns();
  EXPECT_GT(offset, int64_t{1'000'000'000}) << "the GPU's timer is not the host's monotonic clock";
  const int64_t before = monotonic_ns();
  submit(compute_, join({nv::encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, sem.va, 7, true),
                         nv::encode_non_stall_interrupt()}));
  ASSERT_TRUE(wait_value(sem.cpu, 7));
  const int64_t after = monotonic_ns();
  const auto stamp = static_cast<int64_t>(load64(sem.cpu + 8) - static_cast<uint64_t>(offset));
  EXPECT_GT(stamp + int64_t{mockgpu::nv::kPtimerTickNs}, before);  // the timer counts in 32 ns steps
  EXPECT_LE(stamp, after);
  EXPECT_EQ(load64(sem.cpu + 8) % mockgpu::nv::kPtimerTickNs, 0u) << "TIME_0 bits 4:0 are not nanoseconds";
  ASSERT_TRUE(wait_drained(compute_));
  EXPECT_EQ(gpu_->stats().non_stall_interrupts, 1u);
}

TEST_F(MockNvGpuTest, GpGetFollowsEveryEntryAndManyEntriesRunInOrder) {
  const Block sem = take(16);
  for (uint64_t i = 1; i <= 50; ++i) {
    submit(compute_, nv::encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, sem.va, i, false));
  }
  ASSERT_TRUE(wait_drained(compute_));
  EXPECT_EQ(load64(sem.cpu), 50u);
  EXPECT_EQ(gpu_->stats().gpfifo_entries, 50u);
}

TEST_F(MockNvGpuTest, AcquireStallsTheChannelUntilTheHostWritesTheValue) {
  const Block wait = take(16), done = take(16);
  submit(compute_, join({nv::encode_semaphore_acquire_geq(HOPPER_CHANNEL_GPFIFO_A, wait.va, 5),
                         nv::encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, done.va, 1, false)}));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(load64(done.cpu), 0u) << "the release after an unsatisfied acquire ran";
  store64(wait.cpu, 4);
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(load64(done.cpu), 0u) << "4 passed an acquire of >= 5";
  store64(wait.cpu, 5);
  ASSERT_TRUE(wait_value(done.cpu, 1));
  EXPECT_EQ(gpu_->stats().semaphore_acquires, 1u);
}

TEST_F(MockNvGpuTest, StalledChannelDoesNotBlockTheOtherChannel) {
  const Block wait = take(16), compute_done = take(16), copy_done = take(16);
  submit(compute_, join({nv::encode_semaphore_acquire_geq(HOPPER_CHANNEL_GPFIFO_A, wait.va, 1),
                         nv::encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, compute_done.va, 1, false)}));
  submit(copy_, nv::encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, copy_done.va, 9, true));
  ASSERT_TRUE(wait_value(copy_done.cpu, 9));
  EXPECT_EQ(load64(compute_done.cpu), 0u);
  store64(wait.cpu, 1);
  ASSERT_TRUE(wait_value(compute_done.cpu, 1));
}

// ACQ_CIRC_GEQ on 64 bits: value passes when (value - payload) as int64 is >= 0.
struct CircularCase {
  uint64_t value, payload;
  bool passes;
};

TEST_F(MockNvGpuTest, AcquireCircularGeqComparesOn64BitsAcross2To32AndNearWrap) {
  const CircularCase cases[] = {
      {0x100000000ull, 0xffffffffull, true},   // across 2^32: a 32-bit compare would say 0 < ~0
      {0xffffffffull, 0x100000000ull, false},  // and the other way round
      {5, 0xfffffffffffffff0ull, true},        // the value wrapped past 2^64: still after
      {0xfffffffffffffff0ull, 5, false},       // payload wrapped, value not yet
      {0x8000000000000000ull, 0, false},       // exactly half the circle away: before
      {0x7fffffffffffffffull, 0, true},
  };
  for (const CircularCase& c : cases) {
    SCOPED_TRACE(hex(c.value) + " >= " + hex(c.payload));
    const Block wait = take(16), done = take(16);
    store64(wait.cpu, c.value);
    submit(compute_, join({nv::encode_semaphore_acquire_geq(HOPPER_CHANNEL_GPFIFO_A, wait.va, c.payload),
                           nv::encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, done.va, 1, false)}));
    if (c.passes) {
      ASSERT_TRUE(wait_value(done.cpu, 1));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      ASSERT_EQ(load64(done.cpu), 0u) << "passed";
      store64(wait.cpu, c.payload);  // unblock: equal always passes
      ASSERT_TRUE(wait_value(done.cpu, 1));
    }
  }
  EXPECT_TRUE(gpu_->faults().empty());
}

// SEM_EXECUTE words written by hand (the encoders emit only 64-bit ACQ_CIRC_GEQ): OPERATION 2:0, PAYLOAD_SIZE 24.
std::vector<uint32_t> acquire_words(uint64_t va, uint64_t payload, uint32_t operation, bool payload64) {
  nv::PushBuffer pb;
  pb.inc(nv::kSubchannelHost, nv::NVC86F_SEM_ADDR_LO,
         {static_cast<uint32_t>(va), static_cast<uint32_t>(va >> 32), static_cast<uint32_t>(payload),
          static_cast<uint32_t>(payload >> 32), operation | (payload64 ? 1u << 24 : 0u)});
  return pb.take();
}

struct AcquireCase {
  const char* what;
  uint32_t operation;
  bool payload64;
  uint64_t value, payload;
  bool passes;
  uint64_t unblock;  // a value that passes
};

TEST_F(MockNvGpuTest, AcquireOperationsOn32And64BitPayloads) {
  const AcquireCase cases[] = {
      {"ACQUIRE equal", 0, true, 7, 7, true, 0},
      {"ACQUIRE not equal", 0, true, 8, 7, false, 7},
      {"ACQ_STRICT_GEQ is not circular", 2, true, 5, 0xfffffffffffffff0ull, false, 0xfffffffffffffff0ull},
      {"ACQ_STRICT_GEQ above", 2, true, 0x100000000ull, 0xffffffffull, true, 0},
      {"ACQ_CIRC_GEQ 32-bit across wrap", 3, false, 3, 0xfffffff0u, true, 0},
      {"ACQ_CIRC_GEQ 32-bit compares the low word only", 3, false, 0x1fffffff0ull, 0xfffffff1u, false, 0xfffffff1u},
      {"ACQ_AND", 4, false, 0x10, 0x30, true, 0},
      {"ACQ_AND no common bit", 4, false, 0x40, 0x30, false, 0x20},
      {"ACQ_NOR", 5, false, 0x0f, 0xf0, true, 0},
      {"ACQ_NOR all bits", 5, false, 0xffffff0f, 0xf0, false, 0},
  };
  for (const AcquireCase& c : cases) {
    SCOPED_TRACE(c.what);
    const Block wait = take(16), done = take(16);
    store64(wait.cpu, c.value);
    submit(compute_, join({acquire_words(wait.va, c.payload, c.operation, c.payload64),
                           nv::encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, done.va, 1, false)}));
    if (!c.passes) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      ASSERT_EQ(load64(done.cpu), 0u) << "passed";
      store64(wait.cpu, c.unblock);
    }
    ASSERT_TRUE(wait_value(done.cpu, 1)) << (gpu_->faults().empty() ? "" : gpu_->faults().front());
  }
}

TEST_F(MockNvGpuTest, EntriesPublishedWithoutADoorbellWaitForOne) {
  // First a normal submission, so the GPU thread is known to be past it and idle.
  const Block first = take(16), sem = take(16);
  submit(compute_, nv::encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, first.va, 1, false));
  ASSERT_TRUE(wait_value(first.cpu, 1));
  ASSERT_TRUE(wait_drained(compute_));
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const auto words = nv::encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, sem.va, 1, false);
  const Block pb = take(words.size() * 4, 16);
  std::memcpy(pb.cpu, words.data(), words.size() * 4);
  const uint64_t entry = nv::encode_gpfifo_entry({pb.va, static_cast<uint32_t>(words.size())});
  std::memcpy(compute_.entries + 8, &entry, 8);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(compute_.userd + nv::kUserdGpPutOffset)).store(2);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(load64(sem.cpu), 0u) << "the GPU ran work nobody rang the doorbell for";
  std::atomic_ref<uint32_t>(bring_.gpu_mmio[nv::NVC361_NOTIFY_CHANNEL_PENDING / 4]).store(compute_.token);
  EXPECT_TRUE(wait_value(sem.cpu, 1));
}

TEST_F(MockNvGpuTest, OneDoorbellForTwoChannelsRunsBoth) {
  // Doorbell writes coalesce in the register, so the GPU scans every channel whatever the token says.
  const Block a = take(16), b = take(16);
  for (auto [ring, block] : {std::pair{&compute_, a}, std::pair{&copy_, b}}) {
    const auto words = nv::encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, block.va, 3, false);
    const Block pb = take(words.size() * 4, 16);
    std::memcpy(pb.cpu, words.data(), words.size() * 4);
    const uint64_t entry = nv::encode_gpfifo_entry({pb.va, static_cast<uint32_t>(words.size())});
    std::memcpy(ring->entries, &entry, 8);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(ring->userd + nv::kUserdGpPutOffset)).store(1);
  }
  std::atomic_ref<uint32_t>(bring_.gpu_mmio[nv::NVC361_NOTIFY_CHANNEL_PENDING / 4]).store(copy_.token);
  EXPECT_TRUE(wait_value(a.cpu, 3));
  EXPECT_TRUE(wait_value(b.cpu, 3));
}

TEST_F(MockNvGpuTest, NonIncrementingAndIncrementOnceHeadersRouteDataLikeTheHardware) {
  const Block sem = take(16);
  nv::PushBuffer pb;
  // ONE_INC: the first word to SEM_ADDR_LO, the rest to SEM_ADDR_HI. NON_INC: every word to SEM_PAYLOAD_LO, the
  // last one wins.
  const uint32_t lo = static_cast<uint32_t>(sem.va), hi = static_cast<uint32_t>(sem.va >> 32);
  const uint32_t addr[] = {lo, 0x55, hi};
  pb.one_inc(nv::kSubchannelHost, nv::NVC86F_SEM_ADDR_LO, addr);
  const uint32_t payloads[] = {1, 2, 42};
  pb.non_inc(nv::kSubchannelHost, nv::NVC86F_SEM_PAYLOAD_LO, payloads);
  pb.inc(nv::kSubchannelHost, nv::NVC86F_SEM_PAYLOAD_HI, {0, 0x01000001});  // 64-bit release
  submit(compute_, pb.take());
  ASSERT_TRUE(wait_value(sem.cpu, 42)) << (gpu_->faults().empty() ? "" : gpu_->faults().front());
  EXPECT_EQ(gpu_->stats().methods, 8u);
}

TEST_F(MockNvGpuTest, StopsPromptlyWhileAChannelIsStalledOnAnAcquire) {
  const Block wait = take(16);
  submit(compute_, nv::encode_semaphore_acquire_geq(HOPPER_CHANNEL_GPFIFO_A, wait.va, 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const auto start = std::chrono::steady_clock::now();
  gpu_.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST_F(MockNvGpuTest, HostMembarAndWfiAreAccepted) {
  const Block sem = take(16);
  nv::PushBuffer wfi;
  wfi.inc(nv::kSubchannelHost, nv::NVC86F_WFI, {nv::NVC86F_WFI_SCOPE_ALL});
  submit(compute_, join({nv::encode_host_sys_membar(), wfi.take(),
                         nv::encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, sem.va, 3, true)}));
  ASSERT_TRUE(wait_value(sem.cpu, 3));
  EXPECT_TRUE(gpu_->faults().empty());
}

}  // namespace
}  // namespace doorbell::mockgpu_nv_test
