// The emulated KFD's queues: every CREATE_QUEUE rule broken once, what the engine is handed, the doorbell page, the
// buffers a queue holds, DESTROY_QUEUE and closing /dev/kfd.
#include <sys/mman.h>

#include <cstring>

#include "mock_kfd_fixture.h"

namespace doorbell::mockgpu::amd::testing {
namespace {

using Queues = MockKfdTest;

TEST_F(Queues, ComputeQueueHandsTheEngineItsRingPointersAndDoorbell) {
  open_kfd();
  const kfd_ioctl_create_queue_args args = compute_queue_args();
  const ki::KfdQueue queue = kfd().create_queue(args);
  // doorbell_offset: type 3 in 63:62, the gpu_id in 61:46, an 8-byte-aligned byte offset below 0x2000.
  EXPECT_EQ(queue.doorbell_offset >> 62, 3u);
  EXPECT_EQ((queue.doorbell_offset >> 46) & 0xFFFF, gpu_id());
  const uint64_t byte_offset = queue.doorbell_offset & 0x1FFF;
  EXPECT_EQ(byte_offset % 8, 0u);
  EXPECT_EQ(queue.doorbell_offset & ((uint64_t{1} << 46) - 1), byte_offset);

  const RecordingEngine& engine = last_engine();
  EXPECT_EQ(engine.desc.kind, QueueDesc::Kind::kPm4Compute);
  EXPECT_EQ(engine.desc.queue_id, queue.queue_id);
  EXPECT_EQ(engine.desc.gfx_target_version, 110000u);
  EXPECT_EQ(engine.desc.ring_va, args.ring_base_address);
  EXPECT_EQ(engine.desc.ring_bytes, 4096u);
  EXPECT_EQ(engine.desc.wptr_va, args.write_pointer_address);
  EXPECT_EQ(engine.desc.rptr_va, args.read_pointer_address);
  EXPECT_EQ(engine.desc.eop_va, args.eop_buffer_address);
  EXPECT_EQ(engine.hooks.memory, seam().kfd().process_memory(kfd().fd(), gpu_id()));
  ASSERT_TRUE(engine.hooks.clock);
  const uint64_t engine_clock = engine.hooks.clock();
  EXPECT_LE(engine_clock, gpu_clock_100mhz()) << "the engines stamp the machine's 100 MHz counter";

  // The process's doorbell page (0x2000 bytes at offset & ~0x1FFF) is the page the engine watches.
  auto* page = static_cast<uint8_t*>(kfd().mmap_kfd(0x2000, queue.doorbell_offset & ~uint64_t{0x1FFF}));
  __atomic_store_n(reinterpret_cast<uint64_t*>(page + byte_offset), uint64_t{0x1234'0000'0040}, __ATOMIC_RELEASE);
  EXPECT_EQ(*engine.desc.doorbell, 0x1234'0000'0040u);
  munmap(page, 0x2000);
}

TEST_F(Queues, DispatchWithoutAShaderCoreFaultsTheQueueNamingWhatIsMissing) {
  open_kfd();
  kfd().create_queue(compute_queue_args());
  const RecordingEngine& engine = last_engine();
  ASSERT_TRUE(engine.hooks.dispatch);
  DispatchState state;
  state.code_va = 0x7000'0000;
  try {
    engine.hooks.dispatch(state);
    FAIL() << "expected a ShaderFault";
  } catch (const ShaderFault& fault) {
    EXPECT_NE(std::string(fault.what()).find("no shader core"), std::string::npos) << fault.what();
    EXPECT_EQ(fault.pc, 0x7000'0000u);
  }
}

TEST_F(Queues, EachCreateQueueRuleRefusesItsBrokenArgument) {
  open_kfd();
  const kfd_ioctl_create_queue_args good = compute_queue_args();
  const NodeQueueSizes sizes = node_queue_sizes(gpu());
  auto refused = [&](const char* what, int expected, auto change) {
    kfd_ioctl_create_queue_args args = good;
    change(args);
    EXPECT_EQ(raw(AMDKFD_IOC_CREATE_QUEUE, &args), expected) << what;
  };
  refused("percentage above 100", -EINVAL, [](auto& a) { a.queue_percentage = 101; });
  refused("priority above 15", -EINVAL, [](auto& a) { a.queue_priority = 16; });
  refused("unknown queue type", -524, [](auto& a) { a.queue_type = 7; });
  refused("ring size not a power of two", -EINVAL, [](auto& a) { a.ring_size = 3000; });
  refused("ring size past its allocation", -EINVAL, [](auto& a) { a.ring_size = 8192; });
  refused("unknown gpu", -EINVAL, [](auto& a) { a.gpu_id = 0x4242; });
  const ki::KfdAllocation two_pages = alloc(0x2000, ki::kAllocGtt);
  refused("ring not in its allocation's first page", -EINVAL, [&](auto& a) {
    a.ring_base_address = two_pages.va + 0x1000;
  });
  refused("write pointer in a two-page allocation", -EINVAL,
          [&](auto& a) { a.write_pointer_address = two_pages.va; });
  refused("read pointer not in the first page", -EINVAL,
          [&](auto& a) { a.read_pointer_address = two_pages.va + 0x1008; });
  refused("read pointer unmapped", -EINVAL, [](auto& a) { a.read_pointer_address = 0x10; });
  refused("EOP size other than 4096", -EINVAL, [](auto& a) { a.eop_buffer_size = 2048; });
  refused("EOP in a larger allocation", -EINVAL, [&](auto& a) {
    a.eop_buffer_address = two_pages.va;
  });
  refused("control stack size off the formula", -EINVAL,
          [&](auto& a) { a.ctl_stack_size = sizes.ctl_stack_bytes + 0x1000; });
  refused("context save area below the formula", -EINVAL,
          [&](auto& a) { a.ctx_save_restore_size = sizes.cwsr_bytes - 0x1000; });
  refused("CWSR allocation not of the exact size", -EINVAL,
          [&](auto& a) { a.ctx_save_restore_size = sizes.cwsr_bytes + 0x1000; });
  refused("CWSR missing", -EINVAL, [](auto& a) { a.ctx_save_restore_address = 0; });
  // Accepted: no EOP at all; a percentage whose bits 15:8 pick an XCC; a ring below 1024 bytes, clamped to 1024.
  kfd_ioctl_create_queue_args args = good;
  args.eop_buffer_address = 0;
  args.eop_buffer_size = 0;
  args.queue_percentage = 100 | (0 << 8);
  EXPECT_EQ(raw(AMDKFD_IOC_CREATE_QUEUE, &args), 0);
  EXPECT_EQ(last_engine().desc.eop_va, 0u);
  kfd_ioctl_create_queue_args small = sdma_queue_args();
  small.ring_size = 256;
  EXPECT_EQ(raw(AMDKFD_IOC_CREATE_QUEUE, &small), 0);
  EXPECT_EQ(last_engine().desc.ring_bytes, 1024u);
}

TEST_F(Queues, SdmaQueuesNeedNoEopOrCwsrAndRunOutAtTheEngineSlots) {
  open_kfd();
  const uint32_t slots = gpu().num_sdma_engines * gpu().num_sdma_queues_per_engine;
  std::vector<uint64_t> doorbells;
  for (uint32_t i = 0; i < slots; ++i) {
    const ki::KfdQueue q = kfd().create_queue(sdma_queue_args());
    EXPECT_EQ(last_engine().desc.kind, QueueDesc::Kind::kSdma);
    for (const uint64_t d : doorbells) EXPECT_NE(d, q.doorbell_offset);
    doorbells.push_back(q.doorbell_offset);
  }
  kfd_ioctl_create_queue_args args = sdma_queue_args();
  EXPECT_EQ(raw(AMDKFD_IOC_CREATE_QUEUE, &args), -ENOMEM);
  args.queue_type = KFD_IOC_QUEUE_TYPE_SDMA_XGMI;  // a 7900 XTX has no XGMI SDMA engines
  EXPECT_EQ(raw(AMDKFD_IOC_CREATE_QUEUE, &args), -ENOMEM);
}

TEST_F(Queues, AQueuesBuffersCannotBeUnmappedOrFreedUntilItIsDestroyed) {
  open_kfd();
  const kfd_ioctl_create_queue_args args = compute_queue_args();
  const ki::KfdQueue queue = kfd().create_queue(args);
  const uint64_t ring_handle = (uint64_t{gpu_id()} << 32) | 1;  // the first BO compute_queue_args made
  const uint32_t ids[] = {gpu_id()};
  kfd_ioctl_unmap_memory_from_gpu_args u{};
  u.handle = ring_handle;
  u.device_ids_array_ptr = reinterpret_cast<uint64_t>(ids);
  u.n_devices = 1;
  EXPECT_EQ(raw(AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &u), -EBUSY);
  kfd_ioctl_free_memory_of_gpu_args f{};
  f.handle = ring_handle;
  EXPECT_EQ(raw(AMDKFD_IOC_FREE_MEMORY_OF_GPU, &f), -EBUSY);
  const int destroyed = engines_destroyed();
  kfd().destroy_queue(queue.queue_id);
  EXPECT_EQ(engines_destroyed(), destroyed + 1);
  kfd_ioctl_destroy_queue_args d{};
  d.queue_id = queue.queue_id;
  EXPECT_EQ(raw(AMDKFD_IOC_DESTROY_QUEUE, &d), -EINVAL) << "destroyed twice";
  EXPECT_EQ(raw(AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &u), 0);
  EXPECT_EQ(raw(AMDKFD_IOC_FREE_MEMORY_OF_GPU, &f), 0);
}

TEST_F(Queues, DoorbellPageMapsOnlyWhole) {
  open_kfd();
  const ki::KfdQueue queue = kfd().create_queue(sdma_queue_args());
  const off_t base = static_cast<off_t>(queue.doorbell_offset & ~uint64_t{0x1FFF});
  int error = 0;
  EXPECT_EQ(seam().mmap(nullptr, 0x1000, PROT_READ | PROT_WRITE, MAP_SHARED, kfd().fd(), base, &error), MAP_FAILED);
  EXPECT_EQ(error, EINVAL) << "one page of the slice";
  EXPECT_EQ(seam().mmap(nullptr, 0x2000, PROT_READ | PROT_WRITE, MAP_SHARED, kfd().fd(), base + 0x1000, &error),
            MAP_FAILED);
  EXPECT_EQ(error, EINVAL) << "an offset inside the slice";
  const off_t unknown = static_cast<off_t>(uint64_t{0x77} << 46);  // type 0 (MMIO) of an unknown GPU
  EXPECT_EQ(seam().mmap(nullptr, 0x1000, PROT_READ, MAP_SHARED, kfd().fd(), unknown, &error), MAP_FAILED);
  EXPECT_EQ(error, ENODEV);
}

TEST_F(Queues, ClosingKfdStopsItsEnginesAndTheMachineStaysUsable) {
  open_kfd();
  kfd().create_queue(compute_queue_args());
  kfd().create_queue(sdma_queue_args());
  const int fd = kfd().fd();
  EXPECT_EQ(seam().kfd().queue_count(fd), 2u);
  open_kfd();  // the first Kfd closes: its process and queues go
  EXPECT_EQ(engines_destroyed(), 2);
  EXPECT_NE(kfd().fd(), fd);
  const ki::KfdQueue again = kfd().create_queue(compute_queue_args());
  EXPECT_EQ(again.queue_id, 0u);
  EXPECT_EQ(seam().kfd().queue_count(kfd().fd()), 1u);
}

class QueuesWithShaderCore : public MockKfdTest {
 protected:
  QueuesWithShaderCore() : MockKfdTest({MockAmdGpuConfig{}}, Engines::kRecordingWithShaderCore) {}
};

TEST_F(QueuesWithShaderCore, APm4EnginesDispatchReachesTheConfiguredShaderCoreWithTheQueuesMemoryAndClock) {
  open_kfd();
  kfd().create_queue(compute_queue_args());
  DispatchState state;
  state.code_va = 0x7100'0000;
  state.grid_workgroups = {4, 2, 1};
  const uint64_t before = gpu_clock_100mhz();
  last_engine().hooks.dispatch(state);
  const auto runs = dispatched();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].state.code_va, 0x7100'0000u);
  EXPECT_EQ(runs[0].state.grid_workgroups[0], 4u);
  EXPECT_EQ(runs[0].memory, seam().kfd().process_memory(kfd().fd(), gpu_id()));
  EXPECT_GE(runs[0].realtime, before) << "the shader core's REALTIME is the machine's 100 MHz counter";
}

class QueuesWithoutEngines : public MockKfdTest {
 protected:
  QueuesWithoutEngines() : MockKfdTest({MockAmdGpuConfig{}}, Engines::kNone) {}
};

TEST_F(QueuesWithoutEngines, CreateQueueIsENODEVWhenTheMachineHasNoEngine) {
  open_kfd();
  kfd_ioctl_create_queue_args args = compute_queue_args();
  EXPECT_EQ(raw(AMDKFD_IOC_CREATE_QUEUE, &args), -ENODEV);
}

}  // namespace
}  // namespace doorbell::mockgpu::amd::testing

namespace doorbell::mockgpu::amd::testing {
namespace {

class Gfx942Queues : public MockKfdTest {
 protected:
  Gfx942Queues() : MockKfdTest({mock_amd_gfx942()}) {}
};

TEST_F(Gfx942Queues, ComputeQueuesNeedTheEightXccCwsrAreaAndXgmiSdmaQueuesExist) {
  open_kfd();
  // The CWSR allocation covers 8 XCCs: ALIGN((0x1621000 + 0xBE00) * 8, 4096) = 0xB167000 (§K6).
  const kfd_ioctl_create_queue_args args = compute_queue_args();
  EXPECT_EQ(node_queue_sizes(gpu()).cwsr_allocation_bytes, 0xB167000u);
  kfd().create_queue(args);
  EXPECT_EQ(last_engine().desc.gfx_target_version, 90402u);
  kfd_ioctl_create_queue_args xgmi = sdma_queue_args();
  xgmi.queue_type = KFD_IOC_QUEUE_TYPE_SDMA_XGMI;
  kfd().create_queue(xgmi);
  EXPECT_EQ(last_engine().desc.kind, QueueDesc::Kind::kSdma);
}

}  // namespace
}  // namespace doorbell::mockgpu::amd::testing
