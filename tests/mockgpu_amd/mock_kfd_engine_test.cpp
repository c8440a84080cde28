// The emulated KFD with the emulated PM4 and SDMA engines behind its queues, driven as a runtime drives the kernel:
// packets written into a ring the process maps through the render node, the write pointer, the doorbell page from
// /dev/kfd, and completions that come back as events through the event page (firmware-notes/amd-kfd.md §K8).
#include <chrono>
#include <vector>

#include "mock_kfd_fixture.h"

namespace doorbell::mockgpu::amd::testing {
namespace {

using Words = std::vector<uint32_t>;

// RELEASE_MEM (PM4 type 3, opcode 0x49, 8 dwords): EVENT_TYPE 0x14 with EVENT_INDEX 5; DATA_SEL 31:29, INT_SEL 26:24;
// address; 64-bit data; the interrupt's context id (firmware-notes/amd-pm4-cp.md).
Words release_mem(uint32_t data_sel, uint32_t int_sel, uint64_t va, uint64_t value, uint32_t ctxid) {
  return {0xC0064900, 0x514, data_sel << 29 | int_sel << 24, static_cast<uint32_t>(va),
          static_cast<uint32_t>(va >> 32), static_cast<uint32_t>(value), static_cast<uint32_t>(value >> 32), ctxid};
}
// SDMA FENCE (op 5, MTYPE UC in 18:16) of a 32-bit value and TRAP (op 6) with its INT_CONTEXT
// (firmware-notes/amd-sdma-engine.md).
Words sdma_fence(uint64_t va, uint32_t value) {
  return {0x00030005, static_cast<uint32_t>(va), static_cast<uint32_t>(va >> 32), value};
}
Words sdma_trap(uint32_t context) { return {0x00000006, context}; }

class EngineQueues : public MockKfdTest {
 protected:
  EngineQueues() : MockKfdTest({MockAmdGpuConfig{}}, Engines::kEmulated) {}

  struct Mapped {
    ki::KfdAllocation allocation;
    uint8_t* cpu = nullptr;
  };
  Mapped mapped(uint64_t size, uint32_t flags) {
    Mapped m;
    m.allocation = alloc(size, flags);
    m.cpu = static_cast<uint8_t*>(ki::map_allocation_for_cpu(seam(), render(), m.allocation));
    return m;
  }

  // A queue as a runtime keeps it: its ring and pointer page mapped for the CPU, its doorbell in the mapped page.
  struct Queue {
    uint32_t* ring = nullptr;
    uint64_t ring_dwords = 0;
    uint64_t* wptr = nullptr;
    volatile uint64_t* doorbell = nullptr;
    uint64_t written = 0;  // dwords
    bool sdma = false;
  };

  void SetUp() override {
    open_kfd();
    const Mapped page = mapped(0x8000, ki::kAllocGtt | ki::kAllocUncached);
    slots_ = reinterpret_cast<uint64_t*>(page.cpu);
    event_ = kfd().create_event(KFD_IOC_EVENT_SIGNAL, true, page.allocation.handle);
    event_va_ = page.allocation.va + uint64_t{event_.slot} * 8;
  }

  Queue make_queue(bool sdma) {
    const Mapped ring = mapped(0x1000, ki::kAllocGtt);
    const Mapped pointers = mapped(0x1000, ki::kAllocGtt | ki::kAllocUncached);
    kfd_ioctl_create_queue_args args = sdma ? sdma_queue_args() : compute_queue_args();
    args.ring_base_address = ring.allocation.va;
    args.ring_size = 0x1000;
    args.write_pointer_address = pointers.allocation.va;
    args.read_pointer_address = pointers.allocation.va + 8;
    const ki::KfdQueue q = kfd().create_queue(args);
    Queue queue;
    queue.sdma = sdma;
    queue.ring = reinterpret_cast<uint32_t*>(ring.cpu);
    queue.ring_dwords = 0x1000 / 4;
    queue.wptr = reinterpret_cast<uint64_t*>(pointers.cpu);
    if (doorbells_ == nullptr) {
      doorbells_ = static_cast<uint8_t*>(kfd().mmap_kfd(0x2000, q.doorbell_offset & ~uint64_t{0x1FFF}));
    }
    queue.doorbell = reinterpret_cast<volatile uint64_t*>(doorbells_ + (q.doorbell_offset & 0x1FFF));
    return queue;
  }

  // Writes the packets at the write pointer, then the pointer, then the doorbell (PM4: dwords; SDMA: bytes).
  static void submit(Queue& q, const Words& words) {
    for (const uint32_t w : words) q.ring[q.written++ % q.ring_dwords] = w;
    const uint64_t pointer = q.sdma ? q.written * 4 : q.written;
    __atomic_store_n(q.wptr, pointer, __ATOMIC_RELEASE);
    __atomic_store_n(q.doorbell, pointer, __ATOMIC_RELEASE);
  }
  ki::KfdWaitResult wait(uint32_t event_id, uint32_t timeout_ms, kfd_event_data* out = nullptr) {
    kfd_event_data data{};
    data.event_id = event_id;
    const ki::KfdWaitResult result = kfd().wait_events({&data, 1}, false, timeout_ms);
    if (out != nullptr) *out = data;
    return result;
  }

  uint64_t* slots_ = nullptr;
  ki::KfdEvent event_;
  uint64_t event_va_ = 0;
  uint8_t* doorbells_ = nullptr;
};

TEST_F(EngineQueues, Pm4ReleaseMemSignalsAnEventThroughItsSlotAndInterrupt) {
  Queue q = make_queue(false);
  const Mapped data = mapped(0x1000, ki::kAllocGtt);
  const uint64_t before = kfd().clock_counters(gpu_id()).gpu_clock_counter;
  // A timestamp (DATA_SEL 3) of the 100 MHz counter, then the event's slot written with an interrupt (INT_SEL 2)
  // whose context id is the event id.
  submit(q, release_mem(3, 0, data.allocation.va, 0, 0));
  submit(q, release_mem(1, 2, event_va_, 1, event_.event_id));
  ASSERT_EQ(wait(event_.event_id, 5000), ki::KfdWaitResult::kComplete);
  const uint64_t after = kfd().clock_counters(gpu_id()).gpu_clock_counter;
  const uint64_t stamp = *reinterpret_cast<volatile uint64_t*>(data.cpu);
  EXPECT_GE(stamp, before);
  EXPECT_LE(stamp, after) << "the CP stamps the counter GET_CLOCK_COUNTERS reads";
  EXPECT_EQ(slots_[event_.slot], ~uint64_t{0}) << "the kernel resets the slot it found signaled";
}

TEST_F(EngineQueues, SdmaFenceAndTrapSignalAnEvent) {
  Queue q = make_queue(true);
  submit(q, sdma_fence(event_va_, event_.event_id));
  submit(q, sdma_trap(event_.event_id));
  EXPECT_EQ(wait(event_.event_id, 5000), ki::KfdWaitResult::kComplete);
  EXPECT_EQ(slots_[event_.slot], ~uint64_t{0});
}

TEST_F(EngineQueues, AFaultingQueueFillsTheMemoryEventAndTheProcessCarriesOn) {
  const ki::KfdEvent memory = kfd().create_event(KFD_IOC_EVENT_MEMORY, false);
  Queue q = make_queue(false);
  const uint64_t unmapped = 0x7e0000000000;
  submit(q, release_mem(1, 0, unmapped, 1, 0));
  kfd_event_data data{};
  ASSERT_EQ(wait(memory.event_id, 5000, &data), ki::KfdWaitResult::kComplete);
  EXPECT_EQ(data.memory_exception_data.gpu_id, gpu_id());
  EXPECT_EQ(data.memory_exception_data.va, unmapped);
  // Another queue of the same process still works.
  Queue sdma = make_queue(true);
  submit(sdma, sdma_fence(event_va_, 1));
  submit(sdma, sdma_trap(event_.event_id));
  EXPECT_EQ(wait(event_.event_id, 5000), ki::KfdWaitResult::kComplete);
}

}  // namespace
}  // namespace doorbell::mockgpu::amd::testing
