#pragma once
// The emulated KFD's per-process state (mock_kfd.h): private to mock_kfd*.cpp. What each piece stands for in the
// kernel is named beside it (amdkfd/kfd_priv.h).
#include <linux/kfd_ioctl.h>
#include <sys/types.h>

#include <bitset>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "mockgpu/amd/mock_kfd.h"

namespace doorbell::mockgpu::amd {

inline constexpr uint64_t kPageBytes = 4096;
inline constexpr uint64_t kDoorbellSliceBytes = 0x2000;  // 1024 queues x 8 bytes (firmware-notes/amd-kfd.md §K7)
inline constexpr uint32_t kMaxQueues = 1024;             // KFD_MAX_NUM_OF_QUEUES_PER_PROCESS
inline constexpr uint64_t kMmapTypeShift = 62, kMmapGpuIdShift = 46;  // kfd_priv.h KFD_MMAP_TYPE_*, KFD_MMAP_GPU_ID
inline constexpr uint64_t kMmapTypeDoorbell = 3, kMmapTypeEvents = 2, kMmapTypeMmio = 0;
inline constexpr uint64_t kEventPageBytes = uint64_t{KFD_SIGNAL_EVENT_LIMIT} * 8;  // 32 KiB
inline constexpr uint64_t kUnsignaledSlot = ~uint64_t{0};
inline constexpr uint32_t kFirstNonSignalEventId = (0x7FFFFFFFu >> 1) + 1;  // (INT_MAX >> 1) + 1, kfd_events.c

inline uint64_t page_align(uint64_t value) { return (value + kPageBytes - 1) / kPageBytes * kPageBytes; }

// Host memory shared by a memfd: the driver's own mapping is the GPU's view; the process maps the same memfd.
struct SharedMemory {
  int memfd = -1;
  uint8_t* host = nullptr;
  uint64_t bytes = 0;
};
// Throws std::runtime_error naming the purpose and the errno.
SharedMemory make_shared_memory(uint64_t bytes, const char* purpose);

struct MockKfd::Bo {  // a kgd_mem behind an IDR handle
  uint32_t id = 0, gpu_id = 0, flags = 0;
  uint64_t va = 0, size = 0;  // size rounded up to pages
  uint64_t mmap_offset = 0;  // render node (VRAM, GTT), /dev/kfd (DOORBELL, MMIO_REMAP), the CPU VA (USERPTR)
  SharedMemory memory;        // memfd-backed BOs; for USERPTR and DOORBELL only `host` is set (not owned)
  std::set<uint32_t> mapped_on;  // gpu_ids whose VM maps it
  int queue_refs = 0;            // queues using it as ring, pointers, EOP or CWSR (kfd_queue_acquire_buffers)
};

struct MockKfd::Queue {
  uint32_t id = 0, gpu_id = 0, type = 0;
  uint32_t doorbell_slot = 0;
  std::vector<uint32_t> bos;  // the BOs it holds a reference on
  std::unique_ptr<QueueEngine> engine;
};

struct EventWaiter {  // kfd_event_waiter
  bool activated = false;
  bool event_gone = false;  // the event was destroyed while waited on
};

struct MockKfd::Event {  // kfd_event
  uint32_t id = 0, type = 0;
  bool auto_reset = false, signaled = false;
  std::vector<EventWaiter*> waiters;
  kfd_hsa_memory_exception_data memory{};  // MEMORY events: what the last fault filled
};

struct GpuProcessState {  // kfd_process_device
  int render_fd = -1;     // the DRM file ACQUIRE_VM attached (pdd->drm_file)
  std::unique_ptr<GpuMemory> memory = std::make_unique<GpuMemory>();  // the process's VM on this GPU
  SharedMemory doorbells;  // the process's doorbell slice (allocated with the first queue or DOORBELL BO)
  SharedMemory mmio;       // the MMIO remap page (HDP flush) a MMIO_REMAP BO and a /dev/kfd MMIO mmap show
  std::bitset<kMaxQueues> doorbell_slots;
  int sdma_queues = 0;
};

struct MockKfd::Process {  // kfd_process
  pid_t pid = 0;
  std::vector<GpuProcessState> gpus;  // by GPU index
  std::map<uint32_t, Bo> bos;         // by IDR id (one IDR per process here: ids are unique across its GPUs)
  uint32_t next_bo_id = 1;
  std::map<uint32_t, Queue> queues;
  std::map<uint32_t, Event> events;
  uint8_t* signal_page = nullptr;  // the event page: a BO's GPU view, or the driver's own (events_memory)
  uint64_t signal_page_bytes = 0;
  uint32_t signal_page_bo = 0;     // the BO id registered as the event page (0: none)
  SharedMemory events_memory;      // a kernel-allocated event page (no BO passed at the first CREATE_EVENT)
  uint32_t next_non_signal_id = kFirstNonSignalEventId;
  bool xnack = false;
  std::condition_variable events_changed;
  int waits_in_progress = 0;  // WAIT_EVENTS calls sleeping with the driver's mutex released
  bool closing = false;       // close() of its fd began: sleeping waits end (EBADF) before the process goes
  std::vector<std::pair<uint8_t*, uint64_t>> retired;  // GPU views of freed BOs, unmapped once no engine runs
};

}  // namespace doorbell::mockgpu::amd
