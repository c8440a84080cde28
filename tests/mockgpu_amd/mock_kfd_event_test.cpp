// The emulated KFD's events: the event page, slot ids, SET/RESET/WAIT from the CPU, and what an engine raises:
// interrupts (by context id, or a scan of the page) and faults that fill MEMORY events.
#include <chrono>
#include <thread>

#include "mock_kfd_fixture.h"

namespace doorbell::mockgpu::amd::testing {
namespace {

class Events : public MockKfdTest {
 protected:
  // The event page (32 KiB of GTT, mapped for the CPU) and the first signal event, which registers it.
  ki::KfdEvent first_event(bool auto_reset = true) {
    page_ = alloc(0x8000, ki::kAllocGtt | ki::kAllocUncached);
    slots_ = static_cast<uint64_t*>(ki::map_allocation_for_cpu(seam(), render(), page_));
    return kfd().create_event(KFD_IOC_EVENT_SIGNAL, auto_reset, page_.handle);
  }
  ki::KfdWaitResult wait(std::vector<uint32_t> ids, bool all, uint32_t timeout_ms,
                         std::vector<kfd_event_data>* out = nullptr) {
    std::vector<kfd_event_data> data(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) data[i].event_id = ids[i];
    const ki::KfdWaitResult result = kfd().wait_events(data, all, timeout_ms);
    if (out != nullptr) *out = data;
    return result;
  }
  ki::KfdAllocation page_;
  uint64_t* slots_ = nullptr;
};

TEST_F(Events, TheEventPageIsAGttBoOfAtLeast32KiBSetToAllOnes) {
  open_kfd();
  const ki::KfdAllocation small = alloc(0x4000, ki::kAllocGtt);
  const ki::KfdAllocation vram = alloc(0x8000, ki::kAllocVram);
  kfd_ioctl_create_event_args args{};
  args.event_type = KFD_IOC_EVENT_SIGNAL;
  args.event_page_offset = small.handle;
  EXPECT_EQ(raw(AMDKFD_IOC_CREATE_EVENT, &args), -EINVAL) << "16 KiB page";
  args.event_page_offset = vram.handle;
  EXPECT_EQ(raw(AMDKFD_IOC_CREATE_EVENT, &args), -EINVAL) << "a VRAM page";
  const ki::KfdAllocation page = alloc(0x8000, ki::kAllocGtt);
  auto* slots = static_cast<uint64_t*>(ki::map_allocation_for_cpu(seam(), render(), page));
  slots[17] = 5;
  kfd().create_event(KFD_IOC_EVENT_SIGNAL, true, page.handle);
  for (int i = 0; i < 4096; ++i) ASSERT_EQ(slots[i], ~uint64_t{0}) << "slot " << i;
  args.event_page_offset = page.handle;
  EXPECT_EQ(raw(AMDKFD_IOC_CREATE_EVENT, &args), -EINVAL) << "the page is set once";
  kfd_ioctl_free_memory_of_gpu_args f{};
  f.handle = page.handle;
  EXPECT_EQ(raw(AMDKFD_IOC_FREE_MEMORY_OF_GPU, &f), -EPERM) << "the event page cannot be freed";
}

TEST_F(Events, SignalEventIdsAreTheirSlotsFrom1AndOtherEventsCountFrom0x40000000) {
  open_kfd();
  const ki::KfdEvent e1 = first_event();
  const ki::KfdEvent e2 = kfd().create_event(KFD_IOC_EVENT_SIGNAL, false);
  EXPECT_EQ(e1.event_id, 1u) << "id 0 is reserved for interrupts without a context id";
  EXPECT_EQ(e2.event_id, 2u);
  EXPECT_EQ(e2.slot, 2u);
  EXPECT_EQ(e2.trigger_data, 2u);
  EXPECT_EQ(e2.page_offset >> 62, 2u);  // KFD_MMAP_TYPE_EVENTS
  const ki::KfdEvent memory = kfd().create_event(KFD_IOC_EVENT_MEMORY, false);
  EXPECT_EQ(memory.event_id, 0x40000000u);
  kfd().destroy_event(e1.event_id);
  EXPECT_EQ(kfd().create_event(KFD_IOC_EVENT_SIGNAL, false).event_id, 1u) << "the lowest free slot again";
  kfd_ioctl_destroy_event_args d{};
  d.event_id = 99;
  EXPECT_EQ(raw(AMDKFD_IOC_DESTROY_EVENT, &d), -EINVAL);
}

TEST_F(Events, SetWaitAndResetFollowAutoReset) {
  open_kfd();
  const ki::KfdEvent automatic = first_event(true);
  const ki::KfdEvent manual = kfd().create_event(KFD_IOC_EVENT_SIGNAL, false);
  kfd().set_event(automatic.event_id);
  EXPECT_EQ(wait({automatic.event_id}, false, 0), ki::KfdWaitResult::kComplete);
  EXPECT_EQ(wait({automatic.event_id}, false, 0), ki::KfdWaitResult::kTimeout) << "the wait took the signal";
  kfd().set_event(manual.event_id);
  EXPECT_EQ(wait({manual.event_id}, false, 0), ki::KfdWaitResult::kComplete);
  EXPECT_EQ(wait({manual.event_id}, false, 0), ki::KfdWaitResult::kComplete) << "stays signaled";
  kfd().reset_event(manual.event_id);
  EXPECT_EQ(wait({manual.event_id}, false, 0), ki::KfdWaitResult::kTimeout);
  // wait_for_all needs every one; any needs one.
  kfd().set_event(manual.event_id);
  EXPECT_EQ(wait({automatic.event_id, manual.event_id}, true, 0), ki::KfdWaitResult::kTimeout);
  EXPECT_EQ(wait({automatic.event_id, manual.event_id}, false, 0), ki::KfdWaitResult::kComplete);
  // Only signal events are set from the CPU; an unknown id in a wait is EINVAL.
  const ki::KfdEvent memory = kfd().create_event(KFD_IOC_EVENT_MEMORY, false);
  kfd_ioctl_set_event_args set{};
  set.event_id = memory.event_id;
  EXPECT_EQ(raw(AMDKFD_IOC_SET_EVENT, &set), -EINVAL);
  kfd_event_data data{};
  data.event_id = 77;
  kfd_ioctl_wait_events_args w{};
  w.events_ptr = reinterpret_cast<uint64_t>(&data);
  w.num_events = 1;
  EXPECT_EQ(raw(AMDKFD_IOC_WAIT_EVENTS, &w), -EINVAL);
}

TEST_F(Events, WaitTimeoutIsInMilliseconds) {
  open_kfd();
  const ki::KfdEvent e = first_event();
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(wait({e.event_id}, false, 60), ki::KfdWaitResult::kTimeout);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(60));
  EXPECT_LT(waited, std::chrono::seconds(5));
}

TEST_F(Events, AnInterruptWithTheEventIdFiresItAndResetsItsSlot) {
  open_kfd();
  const ki::KfdEvent e0 = first_event();
  const ki::KfdEvent e1 = kfd().create_event(KFD_IOC_EVENT_SIGNAL, true);
  kfd().create_queue(sdma_queue_args());
  const EngineHooks& hooks = last_engine().hooks;
  std::thread engine([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    __atomic_store_n(&slots_[e1.slot], uint64_t{e1.event_id}, __ATOMIC_RELEASE);  // SDMA FENCE of the event id
    hooks.interrupt(e1.event_id);                                                  // SDMA TRAP, INT_CONTEXT
  });
  EXPECT_EQ(wait({e1.event_id}, false, 0xFFFFFFFF), ki::KfdWaitResult::kComplete);
  engine.join();
  EXPECT_EQ(slots_[e1.slot], ~uint64_t{0}) << "the kernel resets the slot";
  EXPECT_EQ(wait({e0.event_id}, false, 0), ki::KfdWaitResult::kTimeout);
}

TEST_F(Events, AnInterruptWhoseIdNamesNoSignaledSlotScansThePage) {
  open_kfd();
  const ki::KfdEvent e0 = first_event();
  kfd().create_event(KFD_IOC_EVENT_SIGNAL, true);
  const ki::KfdEvent e2 = kfd().create_event(KFD_IOC_EVENT_SIGNAL, true);
  kfd().create_queue(compute_queue_args());
  slots_[e2.slot] = 0;  // RELEASE_MEM data; int_ctxid 0 (tinygrad's on gfx9)
  last_engine().hooks.interrupt(0);
  EXPECT_EQ(wait({e2.event_id}, false, 0), ki::KfdWaitResult::kComplete);
  EXPECT_EQ(wait({e0.event_id}, false, 0), ki::KfdWaitResult::kTimeout);
  EXPECT_EQ(slots_[e2.slot], ~uint64_t{0});
  last_engine().hooks.interrupt(e0.event_id);  // its slot still holds all-ones: nothing fires
  EXPECT_EQ(wait({e0.event_id}, false, 0), ki::KfdWaitResult::kTimeout);
}

TEST_F(Events, AQueueFaultFillsMemoryEventsWithTheVaAndGpu) {
  open_kfd();
  first_event();
  const ki::KfdEvent memory = kfd().create_event(KFD_IOC_EVENT_MEMORY, false);
  kfd().create_queue(compute_queue_args());
  const EngineHooks& hooks = last_engine().hooks;
  std::thread engine([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    hooks.fault(QueueFault{"PM4 queue 0: ring dword 0x4: RELEASE_MEM address 0xdead000 is not mapped", 0xdead000,
                           true});
  });
  std::vector<kfd_event_data> data;
  EXPECT_EQ(wait({memory.event_id}, false, 5000, &data), ki::KfdWaitResult::kComplete);
  engine.join();
  EXPECT_EQ(data[0].memory_exception_data.gpu_id, gpu_id());
  EXPECT_EQ(data[0].memory_exception_data.va, 0xdead000u);
  EXPECT_EQ(data[0].memory_exception_data.failure.NotPresent, 1u);
}

TEST_F(Events, DestroyingAnEventFailsItsWaitersWithEIO) {
  open_kfd();
  const ki::KfdEvent e = first_event();
  std::thread other([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    kfd().destroy_event(e.event_id);
  });
  kfd_event_data data{};
  data.event_id = e.event_id;
  kfd_ioctl_wait_events_args w{};
  w.events_ptr = reinterpret_cast<uint64_t>(&data);
  w.num_events = 1;
  w.timeout = 5000;
  EXPECT_EQ(raw(AMDKFD_IOC_WAIT_EVENTS, &w), -EIO);
  EXPECT_EQ(w.wait_result, static_cast<uint32_t>(KFD_IOC_WAIT_RESULT_FAIL));
  other.join();
}

TEST_F(Events, WithoutAnEventPageTheKernelsOwnPageServes256SlotsUntilMapped) {
  open_kfd();
  const ki::KfdEvent e = kfd().create_event(KFD_IOC_EVENT_SIGNAL, false);
  EXPECT_EQ(e.event_id, 1u);
  for (int i = 2; i < 256; ++i) kfd().create_event(KFD_IOC_EVENT_SIGNAL, false);
  kfd_ioctl_create_event_args args{};
  args.event_type = KFD_IOC_EVENT_SIGNAL;
  EXPECT_EQ(raw(AMDKFD_IOC_CREATE_EVENT, &args), -ENOSPC);
  auto* page = static_cast<uint64_t*>(kfd().mmap_kfd(0x8000, e.page_offset));
  EXPECT_EQ(page[e.slot], ~uint64_t{0});
  EXPECT_EQ(raw(AMDKFD_IOC_CREATE_EVENT, &args), 0) << "mapping 32 KiB makes 4096 slots usable";
  EXPECT_EQ(args.event_id, 256u);
}

}  // namespace
}  // namespace doorbell::mockgpu::amd::testing

namespace doorbell::mockgpu::amd::testing {
namespace {

using EventsAndClose = MockKfdTest;

TEST_F(EventsAndClose, ClosingKfdEndsAWaitSleepingOnItWithEBADF) {
  const int fd = seam().open(kKfdPath, O_RDWR);
  ASSERT_GE(fd, 0);
  kfd_ioctl_create_event_args create{};
  create.event_type = KFD_IOC_EVENT_SIGNAL;
  ASSERT_EQ(seam().ioctl(fd, AMDKFD_IOC_CREATE_EVENT, &create), 0);
  int wait_result = 0;
  std::thread waiter([&] {
    kfd_event_data data{};
    data.event_id = create.event_id;
    kfd_ioctl_wait_events_args w{};
    w.events_ptr = reinterpret_cast<uint64_t>(&data);
    w.num_events = 1;
    w.timeout = 0xFFFFFFFF;
    wait_result = seam().ioctl(fd, AMDKFD_IOC_WAIT_EVENTS, &w);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(seam().close(fd), 0);
  waiter.join();
  EXPECT_EQ(wait_result, -EBADF);
}

}  // namespace
}  // namespace doorbell::mockgpu::amd::testing
