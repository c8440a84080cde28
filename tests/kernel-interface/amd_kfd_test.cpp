// The KFD ioctl wrappers (kernel-interface/amd/kfd.h) against a scripted stand-in kernel: the request numbers and
// argument bytes they send (offsets from <linux/kfd_ioctl.h>, KFD 1.11, as firmware-notes/amd-kfd.md records them),
// the answers they return, the errors they raise, and the MAP/UNMAP resume protocol.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstddef>
#include <vector>

#include "kernel-interface/amd/kfd.h"
#include "tests/common/error_of.h"
#include "tests/kernel-interface/amd_fake_seam.h"

namespace doorbell::kernel_interface::amd {
namespace {

using testing::FakeAmdSeam;
using testing::field_at;
using testing::set_field;
using doorbell::testing::error_of;

// Request numbers: _IOC(dir, 'K', nr, size) with dir in bits 31:30 (R 2, W 1, RW 3) and the size in bits 29:16.
static_assert(AMDKFD_IOC_GET_VERSION == 0x80084b01);           // R, nr 0x01, 8 bytes
static_assert(AMDKFD_IOC_CREATE_QUEUE == 0xc0584b02);          // RW, 0x02, 88
static_assert(AMDKFD_IOC_DESTROY_QUEUE == 0xc0084b03);         // RW, 0x03, 8
static_assert(AMDKFD_IOC_GET_CLOCK_COUNTERS == 0xc0284b05);    // RW, 0x05, 40
static_assert(AMDKFD_IOC_CREATE_EVENT == 0xc0204b08);          // RW, 0x08, 32
static_assert(AMDKFD_IOC_DESTROY_EVENT == 0x40084b09);         // W, 0x09, 8
static_assert(AMDKFD_IOC_SET_EVENT == 0x40084b0a);             // W, 0x0A, 8
static_assert(AMDKFD_IOC_RESET_EVENT == 0x40084b0b);           // W, 0x0B, 8
static_assert(AMDKFD_IOC_WAIT_EVENTS == 0xc0184b0c);           // RW, 0x0C, 24
static_assert(AMDKFD_IOC_GET_PROCESS_APERTURES_NEW == 0xc0104b14);  // RW, 0x14, 16
static_assert(AMDKFD_IOC_ACQUIRE_VM == 0x40084b15);            // W, 0x15, 8
static_assert(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU == 0xc0284b16);   // RW, 0x16, 40
static_assert(AMDKFD_IOC_FREE_MEMORY_OF_GPU == 0x40084b17);    // W, 0x17, 8
static_assert(AMDKFD_IOC_MAP_MEMORY_TO_GPU == 0xc0184b18);     // RW, 0x18, 24
static_assert(AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU == 0xc0184b19); // RW, 0x19, 24
static_assert(AMDKFD_IOC_AVAILABLE_MEMORY == 0xc0104b23);      // RW, 0x23, 16

// Struct layouts the stand-in kernel below reads by offset.
static_assert(offsetof(kfd_ioctl_create_queue_args, doorbell_offset) == 24);
static_assert(offsetof(kfd_ioctl_create_queue_args, ring_size) == 32);
static_assert(offsetof(kfd_ioctl_create_queue_args, gpu_id) == 36);
static_assert(offsetof(kfd_ioctl_create_queue_args, queue_type) == 40);
static_assert(offsetof(kfd_ioctl_create_queue_args, queue_id) == 52);
static_assert(offsetof(kfd_ioctl_create_queue_args, eop_buffer_address) == 56);
static_assert(offsetof(kfd_ioctl_create_queue_args, ctx_save_restore_size) == 80);
static_assert(offsetof(kfd_ioctl_create_queue_args, ctl_stack_size) == 84);
static_assert(sizeof(kfd_ioctl_create_queue_args) == 88);
static_assert(offsetof(kfd_ioctl_alloc_memory_of_gpu_args, handle) == 16);
static_assert(offsetof(kfd_ioctl_alloc_memory_of_gpu_args, mmap_offset) == 24);
static_assert(offsetof(kfd_ioctl_alloc_memory_of_gpu_args, gpu_id) == 32);
static_assert(offsetof(kfd_ioctl_alloc_memory_of_gpu_args, flags) == 36);
static_assert(offsetof(kfd_ioctl_map_memory_to_gpu_args, device_ids_array_ptr) == 8);
static_assert(offsetof(kfd_ioctl_map_memory_to_gpu_args, n_devices) == 16);
static_assert(offsetof(kfd_ioctl_map_memory_to_gpu_args, n_success) == 20);
static_assert(offsetof(kfd_ioctl_unmap_memory_from_gpu_args, n_success) == 20);
static_assert(offsetof(kfd_ioctl_create_event_args, event_trigger_data) == 8);
static_assert(offsetof(kfd_ioctl_create_event_args, event_type) == 12);
static_assert(offsetof(kfd_ioctl_create_event_args, auto_reset) == 16);
static_assert(offsetof(kfd_ioctl_create_event_args, event_id) == 24);
static_assert(offsetof(kfd_ioctl_create_event_args, event_slot_index) == 28);
static_assert(offsetof(kfd_ioctl_wait_events_args, num_events) == 8);
static_assert(offsetof(kfd_ioctl_wait_events_args, timeout) == 16);
static_assert(offsetof(kfd_ioctl_wait_events_args, wait_result) == 20);
static_assert(sizeof(kfd_event_data) == 48 && offsetof(kfd_event_data, event_id) == 40);
static_assert(offsetof(kfd_ioctl_get_process_apertures_new_args, num_of_nodes) == 8);
static_assert(sizeof(kfd_process_device_apertures) == 56 && offsetof(kfd_process_device_apertures, gpu_id) == 48);
static_assert(offsetof(kfd_ioctl_get_clock_counters_args, system_clock_freq) == 24);
static_assert(offsetof(kfd_ioctl_get_clock_counters_args, gpu_id) == 32);
static_assert(offsetof(kfd_ioctl_acquire_vm_args, gpu_id) == 4);
static_assert(offsetof(kfd_ioctl_get_available_memory_args, gpu_id) == 8);

constexpr uint32_t kGpu = 0x4A3F;  // a gpu_id as the topology hashes them (16 bits)

TEST(AmdKfd, OpeningChecksTheInterfaceVersion) {
  FakeAmdSeam seam;
  seam.kfd_minor = 14;
  Kfd kfd(seam);
  EXPECT_EQ(kfd.version().major, 1u);
  EXPECT_EQ(kfd.version().minor, 14u);
  EXPECT_EQ(kfd.fd(), FakeAmdSeam::kKfdFd);
  ASSERT_EQ(seam.requests.size(), 1u);
  EXPECT_EQ(seam.requests[0], 0x80084b01u);
}

TEST(AmdKfd, AnOlderMinorOrAnotherMajorIsRefusedNamingBothVersionsAndTheFdIsClosed) {
  FakeAmdSeam seam;
  seam.kfd_minor = 10;
  EXPECT_EQ(error_of<std::runtime_error>([&] { Kfd kfd(seam); }),
            "/dev/kfd speaks KFD ioctl interface 1.10; doorbell needs 1.11 or a later 1.x");
  EXPECT_EQ(seam.open_count(), 0);
  seam.kfd_major = 2;
  seam.kfd_minor = 0;
  EXPECT_EQ(error_of<std::runtime_error>([&] { Kfd kfd(seam); }),
            "/dev/kfd speaks KFD ioctl interface 2.0; doorbell needs 1.11 or a later 1.x");
  EXPECT_EQ(seam.open_count(), 0);
}

TEST(AmdKfd, OpenFailureNamesThePathAndTheErrno) {
  FakeAmdSeam seam;
  seam.open_errors["/dev/kfd"] = EACCES;
  EXPECT_EQ(error_of<std::runtime_error>([&] { Kfd kfd(seam); }),
            "open of /dev/kfd failed: errno 13 (Permission denied)");
}

TEST(AmdKfd, AcquireVmSendsTheDrmFdAndGpuIdAndNamesThemOnFailure) {
  FakeAmdSeam seam;
  Kfd kfd(seam);
  seam.on_ioctl = [](int fd, unsigned long request, void* arg) {
    EXPECT_EQ(fd, FakeAmdSeam::kKfdFd);
    EXPECT_EQ(request, 0x40084b15u);
    EXPECT_EQ(field_at<uint32_t>(arg, 0), 7u);
    EXPECT_EQ(field_at<uint32_t>(arg, 4), kGpu);
    return 0;
  };
  kfd.acquire_vm(7, kGpu);
  seam.on_ioctl = [](int, unsigned long, void*) { return -EBUSY; };
  EXPECT_EQ(error_of<std::runtime_error>([&] { kfd.acquire_vm(7, kGpu); }),
            "AMDKFD_IOC_ACQUIRE_VM of gpu 19007 with drm fd 7 failed: errno 16 (Device or resource busy)");
}

TEST(AmdKfd, ProcessAperturesAsksForTheCountThenTheEntries) {
  FakeAmdSeam seam;
  Kfd kfd(seam);
  int calls = 0;
  seam.on_ioctl = [&](int, unsigned long request, void* arg) {
    EXPECT_EQ(request, 0xc0104b14u);
    ++calls;
    if (calls == 1) {  // the count: no array, num_of_nodes 0
      EXPECT_EQ(field_at<uint64_t>(arg, 0), 0u);
      EXPECT_EQ(field_at<uint32_t>(arg, 8), 0u);
      set_field<uint32_t>(arg, 8, 2);
      return 0;
    }
    EXPECT_EQ(field_at<uint32_t>(arg, 8), 2u);
    auto* entries = reinterpret_cast<kfd_process_device_apertures*>(field_at<uint64_t>(arg, 0));
    EXPECT_NE(entries, nullptr);
    for (uint32_t i = 0; i < 2; ++i) {
      entries[i].gpuvm_base = 0x10000;
      entries[i].gpuvm_limit = (uint64_t{1} << 47) - 1;
      entries[i].lds_base = uint64_t{1} << 48;
      entries[i].gpu_id = kGpu + i;
    }
    return 0;
  };
  const auto apertures = kfd.process_apertures();
  EXPECT_EQ(calls, 2);
  ASSERT_EQ(apertures.size(), 2u);
  EXPECT_EQ(apertures[1].gpu_id, kGpu + 1);
  EXPECT_EQ(apertures[0].gpuvm_limit, 0x7FFFFFFFFFFFu);
  EXPECT_EQ(apertures[0].lds_base, 0x1000000000000u);
}

TEST(AmdKfd, AllocSendsItsArgumentsAndReturnsTheHandleAndMmapOffset) {
  FakeAmdSeam seam;
  Kfd kfd(seam);
  seam.on_ioctl = [](int, unsigned long request, void* arg) {
    EXPECT_EQ(request, 0xc0284b16u);
    EXPECT_EQ(field_at<uint64_t>(arg, 0), 0x7f0000200000u);  // va_addr
    EXPECT_EQ(field_at<uint64_t>(arg, 8), 0x200000u);        // size
    EXPECT_EQ(field_at<uint64_t>(arg, 24), 0u);              // mmap_offset: out for VRAM
    EXPECT_EQ(field_at<uint32_t>(arg, 32), kGpu);
    EXPECT_EQ(field_at<uint32_t>(arg, 36), kAllocVram | kAllocWritable | kAllocPublic);
    EXPECT_EQ(field_at<uint32_t>(arg, 36), 0xA0000001u);  // bits 0, 29, 31
    set_field<uint64_t>(arg, 16, uint64_t{kGpu} << 32 | 5);
    set_field<uint64_t>(arg, 24, 0x1234000);
    return 0;
  };
  const KfdAllocation a = kfd.alloc(kGpu, 0x7f0000200000, 0x200000, kAllocVram | kAllocWritable | kAllocPublic);
  EXPECT_EQ(a.handle, 0x4A3F00000005u);
  EXPECT_EQ(a.mmap_offset, 0x1234000u);
  EXPECT_EQ(a.va, 0x7f0000200000u);
  EXPECT_EQ(a.size, 0x200000u);
  EXPECT_EQ(a.gpu_id, kGpu);
}

TEST(AmdKfd, UserptrAllocPassesTheCpuAddressInMmapOffset) {
  FakeAmdSeam seam;
  Kfd kfd(seam);
  seam.on_ioctl = [](int, unsigned long, void* arg) {
    EXPECT_EQ(field_at<uint64_t>(arg, 24), 0x7f1234560000u);
    EXPECT_EQ(field_at<uint32_t>(arg, 36), kAllocUserptr);
    return 0;
  };
  kfd.alloc(kGpu, 0x7f1234560000, 0x1000, kAllocUserptr, 0x7f1234560000);
}

TEST(AmdKfd, AllocFailureNamesSizeVaGpuFlagsAndErrno) {
  FakeAmdSeam seam;
  Kfd kfd(seam);
  seam.on_ioctl = [](int, unsigned long, void*) { return -EINVAL; };
  EXPECT_EQ(error_of<std::runtime_error>([&] { kfd.alloc(kGpu, 0x10000, 0x2000, kAllocVram | kAllocPublic); }),
            "AMDKFD_IOC_ALLOC_MEMORY_OF_GPU of 0x2000 bytes at va 0x10000 on gpu 19007 with flags 0x20000001 failed: "
            "errno 22 (Invalid argument)");
}

TEST(AmdKfd, MapResumesFromNSuccessAfterAnInterruptedCall) {
  FakeAmdSeam seam;
  Kfd kfd(seam);
  const std::vector<uint32_t> gpus = {kGpu, kGpu + 1, kGpu + 2};
  std::vector<uint32_t> n_success_seen;
  seam.on_ioctl = [&](int, unsigned long request, void* arg) {
    EXPECT_EQ(request, 0xc0184b18u);
    EXPECT_EQ(field_at<uint64_t>(arg, 0), 0x4A3F00000005u);
    EXPECT_EQ(field_at<uint64_t>(arg, 8), reinterpret_cast<uint64_t>(gpus.data()));
    EXPECT_EQ(field_at<uint32_t>(arg, 16), 3u);
    const uint32_t n_success = field_at<uint32_t>(arg, 20);
    n_success_seen.push_back(n_success);
    if (n_success_seen.size() == 1) {  // one device mapped, then a signal
      set_field<uint32_t>(arg, 20, 1);
      return -EINTR;
    }
    set_field<uint32_t>(arg, 20, 3);
    return 0;
  };
  kfd.map_to_gpu(0x4A3F00000005, gpus);
  EXPECT_EQ(n_success_seen, (std::vector<uint32_t>{0, 1}));
}

TEST(AmdKfd, UnmapResumesFromNSuccessToo) {
  FakeAmdSeam seam;
  Kfd kfd(seam);
  const std::vector<uint32_t> gpus = {kGpu, kGpu + 1};
  std::vector<uint32_t> n_success_seen;
  seam.on_ioctl = [&](int, unsigned long request, void* arg) {
    EXPECT_EQ(request, 0xc0184b19u);
    n_success_seen.push_back(field_at<uint32_t>(arg, 20));
    set_field<uint32_t>(arg, 20, field_at<uint32_t>(arg, 20) + 1);  // one device per call
    return field_at<uint32_t>(arg, 20) == 2 ? 0 : -EAGAIN;
  };
  kfd.unmap_from_gpu(0x4A3F00000005, gpus);
  EXPECT_EQ(n_success_seen, (std::vector<uint32_t>{0, 1}));
}

TEST(AmdKfd, MapFailureNamesTheDeviceThatFailedAndHowManyWereDone) {
  FakeAmdSeam seam;
  Kfd kfd(seam);
  const std::vector<uint32_t> gpus = {kGpu, kGpu + 1};
  seam.on_ioctl = [](int, unsigned long, void* arg) {
    set_field<uint32_t>(arg, 20, 1);
    return -ENOMEM;
  };
  EXPECT_EQ(error_of<std::runtime_error>([&] { kfd.map_to_gpu(0x4A3F00000005, gpus); }),
            "AMDKFD_IOC_MAP_MEMORY_TO_GPU of handle 0x4a3f00000005 on gpus [19007, 19008] failed on gpu 19008 with "
            "1 of 2 devices done: errno 12 (Cannot allocate memory)");
}

TEST(AmdKfd, MapThatNeverProgressesGivesUpInsteadOfSpinning) {
  FakeAmdSeam seam;
  Kfd kfd(seam);
  const std::vector<uint32_t> gpus = {kGpu};
  int calls = 0;
  seam.on_ioctl = [&](int, unsigned long, void*) {
    ++calls;
    return -EAGAIN;
  };
  EXPECT_EQ(error_of<std::runtime_error>([&] { kfd.map_to_gpu(5, gpus); }),
            "AMDKFD_IOC_MAP_MEMORY_TO_GPU of handle 0x5 on gpus [19007] made no progress in 16 calls (n_success 0 "
            "of 1): errno 11 (Resource temporarily unavailable)");
  EXPECT_EQ(calls, 16);
}

TEST(AmdKfd, MapRejectsAnNSuccessBeyondTheDeviceCountAndAnEmptyGpuList) {
  FakeAmdSeam seam;
  Kfd kfd(seam);
  const std::vector<uint32_t> gpus = {kGpu};
  seam.on_ioctl = [](int, unsigned long, void* arg) {
    set_field<uint32_t>(arg, 20, 4);
    return 0;
  };
  EXPECT_EQ(error_of<std::runtime_error>([&] { kfd.map_to_gpu(5, gpus); }),
            "AMDKFD_IOC_MAP_MEMORY_TO_GPU of handle 0x5 on gpus [19007] answered n_success 4 after 0; expected a "
            "count from 0 to 1");
  EXPECT_EQ(error_of<std::invalid_argument>([&] { kfd.unmap_from_gpu(5, {}); }),
            "AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU of handle 0x5 on gpus []: no gpu ids (n_devices 0)");
}

TEST(AmdKfd, FreeAndAvailableMemorySendTheirFields) {
  FakeAmdSeam seam;
  Kfd kfd(seam);
  seam.on_ioctl = [](int, unsigned long request, void* arg) {
    if (request == 0x40084b17u) {
      EXPECT_EQ(field_at<uint64_t>(arg, 0), 0x4A3F00000009u);
      return 0;
    }
    EXPECT_EQ(request, 0xc0104b23u);
    EXPECT_EQ(field_at<uint32_t>(arg, 8), kGpu);
    set_field<uint64_t>(arg, 0, uint64_t{24} << 30);
    return 0;
  };
  kfd.free(0x4A3F00000009);
  EXPECT_EQ(kfd.available_memory(kGpu), uint64_t{24} << 30);
  seam.on_ioctl = [](int, unsigned long, void*) { return -EPERM; };
  EXPECT_EQ(error_of<std::runtime_error>([&] { kfd.free(0x4A3F00000009); }),
            "AMDKFD_IOC_FREE_MEMORY_OF_GPU of handle 0x4a3f00000009 failed: errno 1 (Operation not permitted)");
}

TEST(AmdKfd, CreateQueuePassesTheCallersArgsAndReturnsQueueIdAndDoorbellOffset) {
  FakeAmdSeam seam;
  Kfd kfd(seam);
  kfd_ioctl_create_queue_args in{};
  in.ring_base_address = 0x7f0000100000;
  in.ring_size = 0x100000;
  in.gpu_id = kGpu;
  in.queue_type = KFD_IOC_QUEUE_TYPE_COMPUTE;
  in.queue_percentage = 100;
  in.queue_priority = 7;
  in.eop_buffer_address = 0x7f0000300000;
  in.eop_buffer_size = 0x1000;
  in.ctx_save_restore_address = 0x7f0004000000;
  in.ctx_save_restore_size = 0x2BEA000;
  in.ctl_stack_size = 0xA000;
  // KFD_MMAP_TYPE_DOORBELL (3 << 62) | gpu_id << 46 | byte offset 0x10 in the process's slice.
  const uint64_t doorbell = uint64_t{3} << 62 | uint64_t{kGpu} << 46 | 0x10;
  seam.on_ioctl = [&](int, unsigned long request, void* arg) {
    EXPECT_EQ(request, 0xc0584b02u);
    EXPECT_EQ(field_at<uint64_t>(arg, 0), 0x7f0000100000u);
    EXPECT_EQ(field_at<uint32_t>(arg, 32), 0x100000u);
    EXPECT_EQ(field_at<uint32_t>(arg, 36), kGpu);
    EXPECT_EQ(field_at<uint32_t>(arg, 40), 0u);
    EXPECT_EQ(field_at<uint32_t>(arg, 44), 100u);
    EXPECT_EQ(field_at<uint32_t>(arg, 48), 7u);
    EXPECT_EQ(field_at<uint64_t>(arg, 56), 0x7f0000300000u);
    EXPECT_EQ(field_at<uint64_t>(arg, 64), 0x1000u);
    EXPECT_EQ(field_at<uint64_t>(arg, 72), 0x7f0004000000u);
    EXPECT_EQ(field_at<uint32_t>(arg, 80), 0x2BEA000u);
    EXPECT_EQ(field_at<uint32_t>(arg, 84), 0xA000u);
    set_field<uint64_t>(arg, 24, doorbell);
    set_field<uint32_t>(arg, 52, 3);
    return 0;
  };
  const KfdQueue queue = kfd.create_queue(in);
  EXPECT_EQ(queue.queue_id, 3u);
  EXPECT_EQ(queue.doorbell_offset, 0xd28fc00000000010u);
  seam.on_ioctl = [](int, unsigned long, void*) { return -EINVAL; };
  EXPECT_EQ(error_of<std::runtime_error>([&] { kfd.create_queue(in); }),
            "AMDKFD_IOC_CREATE_QUEUE of type 0 on gpu 19007 (ring 0x7f0000100000 size 0x100000, eop 0x7f0000300000 "
            "size 0x1000, cwsr 0x7f0004000000 size 0x2bea000, ctl stack 0xa000) failed: errno 22 (Invalid argument)");
}

TEST(AmdKfd, DestroyQueueSendsTheQueueId) {
  FakeAmdSeam seam;
  Kfd kfd(seam);
  seam.on_ioctl = [](int, unsigned long request, void* arg) {
    EXPECT_EQ(request, 0xc0084b03u);
    EXPECT_EQ(field_at<uint32_t>(arg, 0), 3u);
    return -ENOENT;
  };
  EXPECT_EQ(error_of<std::runtime_error>([&] { kfd.destroy_queue(3); }),
            "AMDKFD_IOC_DESTROY_QUEUE of queue 3 failed: errno 2 (No such file or directory)");
}

TEST(AmdKfd, TheFirstEventCarriesTheEventPageHandle) {
  FakeAmdSeam seam;
  Kfd kfd(seam);
  seam.on_ioctl = [](int, unsigned long request, void* arg) {
    EXPECT_EQ(request, 0xc0204b08u);
    EXPECT_EQ(field_at<uint64_t>(arg, 0), 0x4A3F00000002u);  // in: the event page's BO handle
    EXPECT_EQ(field_at<uint32_t>(arg, 12), KFD_IOC_EVENT_SIGNAL);
    EXPECT_EQ(field_at<uint32_t>(arg, 16), 1u);
    set_field<uint64_t>(arg, 0, uint64_t{2} << 62);  // out: KFD_MMAP_TYPE_EVENTS
    set_field<uint32_t>(arg, 8, 4);
    set_field<uint32_t>(arg, 24, 4);
    set_field<uint32_t>(arg, 28, 4);
    return 0;
  };
  const KfdEvent event = kfd.create_event(KFD_IOC_EVENT_SIGNAL, true, 0x4A3F00000002);
  EXPECT_EQ(event.event_id, 4u);
  EXPECT_EQ(event.slot, 4u);
  EXPECT_EQ(event.trigger_data, 4u);
  EXPECT_EQ(event.page_offset, 0x8000000000000000u);
  seam.on_ioctl = [](int, unsigned long, void* arg) {
    EXPECT_EQ(field_at<uint64_t>(arg, 0), 0u);  // later events pass no page
    EXPECT_EQ(field_at<uint32_t>(arg, 12), KFD_IOC_EVENT_MEMORY);
    EXPECT_EQ(field_at<uint32_t>(arg, 16), 0u);
    return -EINVAL;
  };
  EXPECT_EQ(error_of<std::runtime_error>([&] { kfd.create_event(KFD_IOC_EVENT_MEMORY, false); }),
            "AMDKFD_IOC_CREATE_EVENT of type 8 failed: errno 22 (Invalid argument)");
}

TEST(AmdKfd, SetResetAndDestroyEventSendTheEventId) {
  FakeAmdSeam seam;
  Kfd kfd(seam);
  std::vector<unsigned long> requests;
  seam.on_ioctl = [&](int, unsigned long request, void* arg) {
    EXPECT_EQ(field_at<uint32_t>(arg, 0), 9u);
    requests.push_back(request);
    return 0;
  };
  kfd.set_event(9);
  kfd.reset_event(9);
  kfd.destroy_event(9);
  EXPECT_EQ(requests, (std::vector<unsigned long>{0x40084b0a, 0x40084b0b, 0x40084b09}));
}

TEST(AmdKfd, WaitEventsSendsTheArrayAndReturnsTheResultAndExceptionData) {
  FakeAmdSeam seam;
  Kfd kfd(seam);
  std::vector<kfd_event_data> events(2);
  events[0].event_id = 4;
  events[1].event_id = 0x40000000;
  seam.on_ioctl = [&](int, unsigned long request, void* arg) {
    EXPECT_EQ(request, 0xc0184b0cu);
    EXPECT_EQ(field_at<uint64_t>(arg, 0), reinterpret_cast<uint64_t>(events.data()));
    EXPECT_EQ(field_at<uint32_t>(arg, 8), 2u);
    EXPECT_EQ(field_at<uint32_t>(arg, 12), 0u);
    EXPECT_EQ(field_at<uint32_t>(arg, 16), 1000u);
    auto* data = reinterpret_cast<kfd_event_data*>(field_at<uint64_t>(arg, 0));
    data[1].memory_exception_data.gpu_id = kGpu;  // a GPU page fault
    data[1].memory_exception_data.va = 0xdead000;
    set_field<uint32_t>(arg, 20, KFD_IOC_WAIT_RESULT_COMPLETE);
    return 0;
  };
  EXPECT_EQ(kfd.wait_events(events, false, 1000), KfdWaitResult::kComplete);
  EXPECT_EQ(events[1].memory_exception_data.gpu_id, kGpu);
  EXPECT_EQ(events[1].memory_exception_data.va, 0xdead000u);
  seam.on_ioctl = [](int, unsigned long, void* arg) {
    set_field<uint32_t>(arg, 20, KFD_IOC_WAIT_RESULT_TIMEOUT);
    return 0;
  };
  EXPECT_EQ(kfd.wait_events(events, true, 0), KfdWaitResult::kTimeout);
  seam.on_ioctl = [](int, unsigned long, void* arg) {
    set_field<uint32_t>(arg, 20, 7);
    return 0;
  };
  EXPECT_EQ(error_of<std::runtime_error>([&] { kfd.wait_events(events, true, 0); }),
            "AMDKFD_IOC_WAIT_EVENTS of events [4, 1073741824] (all, timeout 0 ms) answered wait_result 7; expected 0 "
            "(complete), 1 (timeout) or 2 (fail)");
  seam.on_ioctl = [](int, unsigned long, void*) { return -ERESTART; };
  EXPECT_EQ(error_of<std::runtime_error>([&] { kfd.wait_events(std::span(events).first(1), false, 5); }),
            "AMDKFD_IOC_WAIT_EVENTS of events [4] (any, timeout 5 ms) failed: errno 85 (Interrupted system call "
            "should be restarted)");
}

TEST(AmdKfd, ClockCountersSendTheGpuIdAndReturnAllFourCounters) {
  FakeAmdSeam seam;
  Kfd kfd(seam);
  seam.on_ioctl = [](int, unsigned long request, void* arg) {
    EXPECT_EQ(request, 0xc0284b05u);
    EXPECT_EQ(field_at<uint32_t>(arg, 32), kGpu);
    set_field<uint64_t>(arg, 0, 123456789);
    set_field<uint64_t>(arg, 8, 1000);
    set_field<uint64_t>(arg, 16, 2000);
    set_field<uint64_t>(arg, 24, 1000000000);
    return 0;
  };
  const KfdClockCounters clocks = kfd.clock_counters(kGpu);
  EXPECT_EQ(clocks.gpu_clock_counter, 123456789u);
  EXPECT_EQ(clocks.cpu_clock_counter, 1000u);
  EXPECT_EQ(clocks.system_clock_counter, 2000u);
  EXPECT_EQ(clocks.system_clock_freq, 1000000000u);
}

TEST(AmdKfd, MmapKfdMapsTheKfdFdSharedAtTheOffset) {
  FakeAmdSeam seam;
  Kfd kfd(seam);
  alignas(4096) static unsigned char page[0x2000];
  seam.on_mmap = [&](const FakeAmdSeam::MmapCall&, int*) { return static_cast<void*>(page); };
  const uint64_t offset = uint64_t{3} << 62 | uint64_t{kGpu} << 46;
  EXPECT_EQ(kfd.mmap_kfd(0x2000, offset), page);
  ASSERT_EQ(seam.mmaps.size(), 1u);
  EXPECT_EQ(seam.mmaps[0].addr, nullptr);
  EXPECT_EQ(seam.mmaps[0].length, 0x2000u);
  EXPECT_EQ(seam.mmaps[0].prot, PROT_READ | PROT_WRITE);
  EXPECT_EQ(seam.mmaps[0].flags, MAP_SHARED);
  EXPECT_EQ(seam.mmaps[0].fd, FakeAmdSeam::kKfdFd);
  EXPECT_EQ(static_cast<uint64_t>(seam.mmaps[0].offset), offset);
  seam.on_mmap = nullptr;
  EXPECT_EQ(error_of<std::runtime_error>([&] { kfd.mmap_kfd(0x2000, offset); }),
            "mmap of 0x2000 bytes of the KFD fd at offset 0xd28fc00000000000 failed: errno 19 (No such device)");
}

TEST(AmdKfd, ReserveVaOverReservesAndTrimsToTheAlignment) {
  FakeAmdSeam seam;
  seam.on_mmap = [](const FakeAmdSeam::MmapCall&, int*) { return reinterpret_cast<void*>(0x7f0000123000); };
  const uint64_t va = reserve_va(seam, 0x10000, 0x200000);
  EXPECT_EQ(va, 0x7f0000200000u);
  ASSERT_EQ(seam.mmaps.size(), 1u);
  EXPECT_EQ(seam.mmaps[0].addr, nullptr);
  EXPECT_EQ(seam.mmaps[0].length, 0x10000u + 0x200000 - 0x1000);
  EXPECT_EQ(seam.mmaps[0].prot, PROT_NONE);
  EXPECT_EQ(seam.mmaps[0].flags & (MAP_PRIVATE | MAP_ANONYMOUS), MAP_PRIVATE | MAP_ANONYMOUS);
  EXPECT_EQ(seam.mmaps[0].fd, -1);
  // Head [0x7f0000123000, 0x7f0000200000) and tail [0x7f0000210000, 0x7f0000332000) go back.
  const std::vector<std::pair<uint64_t, std::size_t>> expected = {{0x7f0000123000, 0xDD000},
                                                                   {0x7f0000210000, 0x122000}};
  EXPECT_EQ(seam.munmaps, expected);
}

TEST(AmdKfd, ReserveVaOfAnAlreadyAlignedMappingTrimsOnlyTheTail) {
  FakeAmdSeam seam;
  seam.on_mmap = [](const FakeAmdSeam::MmapCall&, int*) { return reinterpret_cast<void*>(0x7f0000200000); };
  EXPECT_EQ(reserve_va(seam, 0x1000, 0x4000), 0x7f0000200000u);
  const std::vector<std::pair<uint64_t, std::size_t>> expected = {{0x7f0000201000, 0x3000}};
  EXPECT_EQ(seam.munmaps, expected);
}

TEST(AmdKfd, ReserveVaRejectsBadSizesAndNamesMmapFailures) {
  FakeAmdSeam seam;
  EXPECT_EQ(error_of<std::invalid_argument>([&] { reserve_va(seam, 0x1000, 0x3000); }),
            "reserve_va of 0x1000 bytes aligned to 0x3000: the size must be a nonzero multiple of 4 KiB and the "
            "alignment a power of two of at least 4 KiB (both below 2^56)");
  EXPECT_THROW(reserve_va(seam, 0, 0x1000), std::invalid_argument);
  EXPECT_THROW(reserve_va(seam, 0x1800, 0x1000), std::invalid_argument);
  seam.on_mmap = [](const FakeAmdSeam::MmapCall&, int* error) {
    *error = ENOMEM;
    return MAP_FAILED;
  };
  EXPECT_EQ(error_of<std::runtime_error>([&] { reserve_va(seam, 0x1000, 0x1000); }),
            "reserve_va of 0x1000 bytes aligned to 0x1000: anonymous PROT_NONE mmap of 0x1000 bytes failed: errno 12 "
            "(Cannot allocate memory)");
}

TEST(AmdKfd, ReserveVaGivesEverythingBackWhenTrimmingFails) {
  FakeAmdSeam seam;
  seam.on_mmap = [](const FakeAmdSeam::MmapCall&, int*) { return reinterpret_cast<void*>(0x7f0000123000); };
  seam.munmap_result = -EINVAL;
  EXPECT_EQ(error_of<std::runtime_error>([&] { reserve_va(seam, 0x10000, 0x200000); }),
            "reserve_va of 0x10000 bytes aligned to 0x200000: trimming the reservation at 0x7f0000123000 failed: "
            "errno 22 (Invalid argument)");
  ASSERT_EQ(seam.munmaps.size(), 3u);
  EXPECT_EQ(seam.munmaps[2], (std::pair<uint64_t, std::size_t>{0x7f0000123000, 0x20F000}));
}

TEST(AmdKfd, ReserveVaOnTheRealKernelGivesAnAlignedInaccessibleRange) {
  LinuxSyscalls linux_seam;
  const uint64_t va = reserve_va(linux_seam, 0x10000, 0x200000);
  EXPECT_EQ(va % 0x200000, 0u);
  // The range is mapped: a MAP_FIXED_NOREPLACE probe at its start fails with EEXIST.
  void* probe = ::mmap(reinterpret_cast<void*>(va), 0x1000, PROT_READ,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  const int probe_errno = errno;
  EXPECT_EQ(probe, MAP_FAILED);
  if (probe != MAP_FAILED) ::munmap(probe, 0x1000);
  EXPECT_EQ(probe_errno, EEXIST);
  release_va(linux_seam, va, 0x10000);
}

TEST(AmdKfd, ReleaseVaNamesTheRangeOnFailure) {
  FakeAmdSeam seam;
  seam.munmap_result = -EINVAL;
  EXPECT_EQ(error_of<std::runtime_error>([&] { release_va(seam, 0x7f0000200000, 0x10000); }),
            "release_va of 0x10000 bytes at 0x7f0000200000: munmap failed: errno 22 (Invalid argument)");
}

TEST(AmdKfd, MapAllocationForCpuMapsTheRenderNodeFixedAndSharedAtTheAllocationsOffset) {
  FakeAmdSeam seam;
  const KfdAllocation allocation{0x4A3F00000005, 0x7f0000200000, 0x200000, 0x1234000, kAllocGtt, kGpu};
  seam.on_mmap = [](const FakeAmdSeam::MmapCall& call, int*) { return call.addr; };
  EXPECT_EQ(map_allocation_for_cpu(seam, 9, allocation), reinterpret_cast<void*>(0x7f0000200000));
  ASSERT_EQ(seam.mmaps.size(), 1u);
  EXPECT_EQ(seam.mmaps[0].addr, reinterpret_cast<void*>(0x7f0000200000));
  EXPECT_EQ(seam.mmaps[0].length, 0x200000u);
  EXPECT_EQ(seam.mmaps[0].prot, PROT_READ | PROT_WRITE);
  EXPECT_EQ(seam.mmaps[0].flags, MAP_SHARED | MAP_FIXED);
  EXPECT_EQ(seam.mmaps[0].fd, 9);
  EXPECT_EQ(seam.mmaps[0].offset, 0x1234000);
  seam.on_mmap = nullptr;
  EXPECT_EQ(error_of<std::runtime_error>([&] { map_allocation_for_cpu(seam, 9, allocation); }),
            "mmap of allocation 0x4a3f00000005 (0x200000 bytes at va 0x7f0000200000, flags 0x2) on render fd 9 at "
            "offset 0x1234000 failed: errno 19 (No such device)");
  const KfdAllocation userptr{1, 0x7f0000200000, 0x1000, 0x7f0000200000, kAllocUserptr, kGpu};
  EXPECT_EQ(error_of<std::invalid_argument>([&] { map_allocation_for_cpu(seam, 9, userptr); }),
            "map_allocation_for_cpu of allocation 0x1 (0x1000 bytes at va 0x7f0000200000, flags 0x4): only VRAM and "
            "GTT allocations have a render-node mmap offset");
}

}  // namespace
}  // namespace doorbell::kernel_interface::amd
