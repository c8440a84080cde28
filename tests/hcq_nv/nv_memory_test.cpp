// NvDevice's memory management on the emulated driver and GPU: buffers are blocks of few RM allocations (the
// sub-allocator, hcq/suballocator.h), a freed block is reused only once no queued command may touch it, running out
// of video memory names the request, what is free and RM's answer, and host <-> GPU transfers above
// kStagedCopyThreshold go through the copy engine and a pinned staging ring, exactly, for any size and offset.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

#include "frontend/tensor.h"
#include "hcq/devices.h"
#include "hcq/host_buffers.h"
#include "hcq/nv/nv_device.h"
#include "hcq/run_linear.h"
#include "hcq/wait_primitives.h"
#include "ir/environment.h"
#include "mockgpu/nv/mock_nv_seam.h"
#include "scheduler/schedule.h"

namespace doorbell::nv {
namespace {

// The device's seam onto an emulated machine the test keeps (mockgpu's SharedMockNvSeam): the driver's and GPU's
// counters outlive the device.
std::unique_ptr<NvDevice> open_on(const std::shared_ptr<mockgpu::nv::MockNvSeam>& machine) {
  return NvDevice::open(std::make_unique<mockgpu::nv::SharedMockNvSeam>(machine));
}

// Freed memory is retired until both channels passed the submissions made before (here the bring-up's, which the
// emulated GPU's thread may not have run yet); bounded, so that a GPU that never runs them fails the test.
void settle(NvDevice& d) {
  const int64_t give_up = monotonic_ns() + int64_t{20'000'000'000};
  while (d.retired_count() != 0 && monotonic_ns() < give_up) std::this_thread::yield();
  ASSERT_EQ(d.retired_count(), 0u);
}

// DEV=NV on the emulated GPU for this process (the registry's device, opened on first use).
Device& nv() {
  static Device& dev = [] () -> Device& {
    setenv("MOCKGPU", "1", 1);
    return device("NV");
  }();
  return dev;
}

TEST(NvMemory, ThousandsOfSmallBuffersTakeOneRmAllocation) {
  auto machine = std::make_shared<mockgpu::nv::MockNvSeam>();
  auto d = open_on(machine);
  d->set_suballocation(true);  // whatever DOORBELL_NV_SUBALLOC says
  const size_t objects_before = machine->driver().rm_object_count();
  std::vector<Device::Storage> buffers;
  for (int i = 0; i < 2000; i++) buffers.push_back(d->allocate_storage(100));
  EXPECT_EQ(machine->driver().rm_object_count() - objects_before, 1u) << "2000 buffers of 100 bytes share one 2 MiB chunk";
  for (size_t i = 1; i < buffers.size(); i++) ASSERT_EQ(buffers[i].address % 256, 0u);
  buffers.push_back(d->allocate_storage(3 << 20));
  EXPECT_EQ(buffers.back().address % (2 << 20), 0u) << "a buffer of a large page or more is aligned to one";
  for (const Device::Storage& s : buffers) d->release_storage(s);
  settle(*d);
  const SubAllocator::Stats s = d->heap_stats(/*system_memory=*/false);
  EXPECT_EQ(s.live_blocks, 0u);
  EXPECT_EQ(s.free_bytes, s.chunk_bytes) << "everything freed is free again";
  EXPECT_EQ(s.free_blocks, s.chunks) << "and coalesced";
}

TEST(NvMemory, TheBaselineMakesOneRmAllocationPerBuffer) {
  auto machine = std::make_shared<mockgpu::nv::MockNvSeam>();
  auto d = open_on(machine);
  d->set_suballocation(false);
  const size_t objects_before = machine->driver().rm_object_count();
  std::vector<Device::Storage> buffers;
  for (int i = 0; i < 20; i++) buffers.push_back(d->allocate_storage(100));
  EXPECT_EQ(machine->driver().rm_object_count() - objects_before, 20u);
  for (const Device::Storage& s : buffers) d->release_storage(s);
  settle(*d);
  EXPECT_EQ(machine->driver().rm_object_count(), objects_before);
}

// The session's VA windows reuse freed ranges: host memory has a 32 GiB window, so 40 allocate/free rounds of 1 GiB
// ran out of it while the bump pointer alone decided (the per-buffer baseline benchmark stopped after 16 Ki buffers).
TEST(NvMemory, FreedVaRangesAreReusedSoAllocateFreeCyclesNeverExhaustTheWindow) {
  auto machine = std::make_shared<mockgpu::nv::MockNvSeam>();
  auto d = open_on(machine);
  NvSession& session = d->session();
  uint64_t first_va = 0;
  for (int i = 0; i < 40; i++) {
    NvMemory m = session.alloc(1ull << 30, /*system_memory=*/true);
    if (i == 0) first_va = m.va;
    EXPECT_EQ(m.va, first_va) << "round " << i << ": the freed range is taken again";
    session.free(m);
  }
  // Neighbouring freed ranges merge: two 2 MiB pieces freed side by side hold a 4 MiB allocation.
  NvMemory a = session.alloc(2 << 20, true), b = session.alloc(2 << 20, true);
  ASSERT_EQ(b.va, a.va + (2 << 20));
  session.free(b);
  session.free(a);
  EXPECT_EQ(session.alloc(4 << 20, true).va, a.va);
}

// A freed block goes back to the heap only once the work submitted before the free completed: the next allocation
// of the same size must not land on memory a queued kernel may still write.
TEST(NvMemory, AFreedBlockIsReusedOnlyAfterTheQueuedWorkThatMayTouchItCompleted) {
  std::unique_ptr<NvDevice> d = NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>());
  d->set_suballocation(true);  // whatever DOORBELL_NV_SUBALLOC says
  NvMemory a = d->alloc(4096);
  Signal& gate = d->new_signal("gate");
  Signal& done = d->new_signal("after the gate");
  HWQueue().wait(gate, 1).signal(done, 1).submit(*d);
  d->free(a);
  NvMemory b = d->alloc(4096);
  EXPECT_NE(b.va, a.va) << "a's block is retired while the queued work may touch it";
  EXPECT_THROW(d->free(a), std::invalid_argument) << "a second free";
  gate.set(1);
  done.wait(1, std::chrono::milliseconds(20000));
  Signal& later = d->new_signal("a later submission");
  HWQueue().signal(later, 1).submit(*d);
  later.wait(1, std::chrono::milliseconds(20000));
  EXPECT_EQ(d->retired_count(), 0u);
  NvMemory c = d->alloc(4096);
  EXPECT_EQ(c.va, a.va) << "once the work completed, the freed block is the best fit again";
  d->free(b);
  d->free(c);
  NvMemory bogus = c;
  bogus.va += 256;
  EXPECT_THROW(d->free(bogus), std::invalid_argument) << "an address inside a block is no allocation";
}

TEST(NvMemory, RunningOutOfVideoMemoryNamesTheRequestWhatIsFreeAndRmsAnswer) {
  mockgpu::nv::MockGpuConfig config;
  config.vram_bytes = 64 << 20;
  std::unique_ptr<NvDevice> d = NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>(config));
  d->set_suballocation(true);
  NvMemory small = d->alloc(1 << 20);
  try {
    d->alloc(80 << 20);
    FAIL() << "expected OutOfDeviceMemory";
  } catch (const OutOfDeviceMemory& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("NV video memory: out of memory for an allocation of 83886080 bytes (83886080 bytes)"), std::string::npos) << m;
    EXPECT_NE(m.find("bytes free in 1 chunks of 2097152 bytes, the largest free block 1048576 bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("NV_ERR_NO_MEMORY"), std::string::npos) << m;
  }
  d->free(small);
  NvMemory after = d->alloc(32 << 20);  // the failure left the device usable
  EXPECT_EQ(after.size, uint64_t{32} << 20);
}

// A buffer too large for the GPU: the error names the buffer as the CPU's does, then RM's side.
TEST(NvMemory, ABufferTooLargeForTheGpuNamesTheBuffer) {
  nv();
  UOp huge = new_buffer(dtypes::float32, int64_t{200} << 28, "NV");  // 200 GiB on a 141 GiB GPU
  try {
    buffer_bytes(huge);
    FAIL() << "expected OutOfDeviceMemory";
  } catch (const OutOfDeviceMemory& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(" (53687091200 x float32) on NV: NV video memory: out of memory for buffer storage of 214748364800 bytes"),
              std::string::npos) << m;
    EXPECT_NE(m.find("NV_ERR_NO_MEMORY"), std::string::npos) << m;
  }
  UOp fine = new_buffer(dtypes::float32, 16, "NV");
  EXPECT_EQ(buffer_bytes(fine).size(), 64u) << "the device is still usable";
}

// Threads allocate and free at once (the heaps are serialised by the device's memory mutex): each fills its blocks
// with its own byte and finds it intact before freeing, so no block was handed to two threads.
TEST(NvMemory, ConcurrentAllocationsNeverShareBytes) {
  std::unique_ptr<NvDevice> d = NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>());
  d->set_suballocation(true);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<uint32_t>(t));
      std::vector<std::pair<Device::Storage, size_t>> held;  // and its size
      for (int i = 0; i < 400; i++) {
        if (held.empty() || rng() % 3 != 0) {
          const size_t bytes = 1 + rng() % 20000;
          Device::Storage s = d->allocate_storage(bytes);
          std::memset(s.host, t + 1, bytes);
          held.emplace_back(s, bytes);
        } else {
          const size_t k = rng() % held.size();
          const auto* p = static_cast<const uint8_t*>(held[k].first.host);
          for (size_t j = 0; j < held[k].second; j++) bad += p[j] != t + 1;
          d->release_storage(held[k].first);
          held.erase(held.begin() + static_cast<long>(k));
        }
      }
      for (const auto& [s, bytes] : held) d->release_storage(s);
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0) << "bytes of one thread's block were overwritten by another's";
}

// Random bytes of `n` bytes, different for each size.
std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> v(n);
  std::mt19937 rng(static_cast<uint32_t>(n));
  for (uint8_t& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

TEST(NvTransfers, RoundTripExactlyAroundTheThresholdAndTheStagingRingSize) {
  auto machine = std::make_shared<mockgpu::nv::MockNvSeam>();
  auto d = open_on(machine);
  constexpr size_t kT = NvDevice::kStagedCopyThreshold, kSlot = NvDevice::kStagingSlotBytes;
  constexpr size_t kRing = NvDevice::kStagingSlots * kSlot;
  const size_t sizes[] = {1, 255, kT - 1, kT, kT + 1, kT + 4093, kSlot + 7, kRing - 1, kRing, kRing + 1, 3 * kRing + 12345};
  for (size_t n : sizes) {
    for (size_t offset : {size_t{0}, size_t{3}}) {
      SCOPED_TRACE("size " + std::to_string(n) + " at offset " + std::to_string(offset));
      Device::Storage s = d->allocate_storage(offset + n + 64);
      const std::vector<uint8_t> in = pattern(n);
      const uint64_t copies_before = machine->gpu().stats().copies;
      d->copy_in(s, offset, in.data(), n);
      const uint64_t staged_pieces = n >= kT ? (n + kSlot - 1) / kSlot : 0;
      EXPECT_EQ(machine->gpu().stats().copies - copies_before, staged_pieces) << "the copy engine moved each slot's piece";
      const auto* mapped = static_cast<const uint8_t*>(s.host);
      ASSERT_EQ(std::memcmp(mapped + offset, in.data(), n), 0) << "the buffer holds the bytes (read through its mapping)";
      for (size_t i = 0; i < offset; i++) ASSERT_EQ(mapped[i], 0) << "nothing before the range was written";
      for (size_t i = offset + n; i < offset + n + 64; i++) ASSERT_EQ(mapped[i], 0) << "nothing after the range was written";
      std::vector<uint8_t> out(n, 0xee);
      d->copy_out(out.data(), s, offset, n);
      EXPECT_EQ(machine->gpu().stats().copies - copies_before, 2 * staged_pieces);
      ASSERT_TRUE(out == in) << "the bytes came back";
      d->release_storage(s);
    }
  }
  EXPECT_EQ(d->fault_report(), "");
  Device::Storage small = d->allocate_storage(1000);
  std::vector<uint8_t> bytes(kT);
  EXPECT_THROW(d->copy_in(small, 0, bytes.data(), kT), std::invalid_argument) << "past the storage's end";
  EXPECT_THROW(d->copy_out(bytes.data(), small, 999, 2), std::invalid_argument);
  d->release_storage(small);
  EXPECT_THROW(d->copy_in(small, 0, bytes.data(), 4), std::invalid_argument) << "released storage";
}

// A tensor's data goes in through write_buffer and comes out through read_buffer (NvDevice::copy_in/copy_out): a
// size past the staging ring, an odd one below the threshold, and a conversion on the way in and out.
TEST(NvTransfers, TensorDataRoundTripsThroughTheDeviceHooks) {
  nv();
  const std::string saved = doorbell::default_device_name();
  set_default_device_name("NV");
  for (size_t n : {size_t{1001}, size_t{3} * (8 << 20) / 4 + 17}) {
    std::vector<float> values(n);
    for (size_t i = 0; i < n; i++) values[i] = static_cast<float>(i % 1000) * 0.5f;
    Tensor t(values);
    t.realize();
    EXPECT_EQ(t.tolist<float>(), values) << n << " floats";
    std::vector<int32_t> ints(n);
    for (size_t i = 0; i < n; i++) ints[i] = static_cast<int32_t>(i % 77);
    Tensor converted = Tensor(ints, dtypes::float32).realize();
    std::vector<int32_t> back = converted.tolist<int32_t>();
    EXPECT_EQ(back, ints) << n << " ints through float32";
  }
  set_default_device_name(saved);
}

// CALL(COPY) between CPU and NV buffers runs through the host and the devices' transfer hooks: CPU -> NV -> NV ->
// CPU, past the staging ring, and an odd size below the threshold.
TEST(NvTransfers, CopyCallsBetweenCpuAndNvMoveTheBytes) {
  nv();
  for (int64_t n : {int64_t{4097}, int64_t{NvDevice::kStagingSlots * NvDevice::kStagingSlotBytes + 333}}) {
    UOp host_in = new_buffer(dtypes::uint8, n, "CPU"), on_nv = new_buffer(dtypes::uint8, n, "NV");
    UOp on_nv2 = new_buffer(dtypes::uint8, n, "NV"), host_out = new_buffer(dtypes::uint8, n, "CPU");
    const std::vector<uint8_t> in = pattern(static_cast<size_t>(n));
    std::memcpy(buffer_bytes(host_in).data(), in.data(), in.size());
    auto copy = [](const UOp& dst, const UOp& src) {
      return UOp::make(Ops::CALL, dtypes::void_, {UOp::make(Ops::COPY, dtypes::void_, {}), dst, src});
    };
    run_linear(UOp::make(Ops::LINEAR, dtypes::void_, {copy(on_nv, host_in), copy(on_nv2, on_nv), copy(host_out, on_nv2)}));
    ASSERT_EQ(std::memcmp(buffer_bytes(host_out).data(), in.data(), in.size()), 0) << n << " bytes";
  }
}

}  // namespace
}  // namespace doorbell::nv
