// Typed wrappers over AMD's KFD (/dev/kfd) ioctls, through the syscall seam (kernel-interface/syscall_seam.h) so an
// emulated driver (mockgpu/amd) can stand where the kernel is. Request numbers and structs are the kernel's own
// (<linux/kfd_ioctl.h> from linux-libc-dev, KFD ioctl 1.11; firmware-notes/amd-kfd.md). Every failure throws
// std::runtime_error naming the ioctl, its important arguments and the errno the driver answered.
#pragma once
#include <linux/kfd_ioctl.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernel-interface/syscall_seam.h"

namespace doorbell::kernel_interface::amd {

struct KfdVersion {
  uint32_t major = 0, minor = 0;
};

// Memory domains and flags (KFD_IOC_ALLOC_MEM_FLAGS_*), re-exported so callers need not include the kernel header.
inline constexpr uint32_t kAllocVram = KFD_IOC_ALLOC_MEM_FLAGS_VRAM, kAllocGtt = KFD_IOC_ALLOC_MEM_FLAGS_GTT,
                          kAllocUserptr = KFD_IOC_ALLOC_MEM_FLAGS_USERPTR,
                          kAllocDoorbell = KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL,
                          kAllocWritable = KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE,
                          kAllocExecutable = KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE,
                          kAllocPublic = KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC,
                          kAllocNoSubstitute = KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE,
                          kAllocCoherent = KFD_IOC_ALLOC_MEM_FLAGS_COHERENT,
                          kAllocUncached = KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED;

struct KfdAllocation {
  uint64_t handle = 0;       // gpu_id << 32 | id
  uint64_t va = 0, size = 0;
  uint64_t mmap_offset = 0;  // for mmap on the render node (VRAM, GTT)
  uint32_t flags = 0, gpu_id = 0;
};

struct KfdQueue {
  uint32_t queue_id = 0;
  uint64_t doorbell_offset = 0;  // KFD mmap type 3 | gpu_id << 46 | byte offset in the process's doorbell slice
};

struct KfdEvent {
  uint32_t event_id = 0, slot = 0, trigger_data = 0;
  uint64_t page_offset = 0;
};

struct KfdClockCounters {
  uint64_t gpu_clock_counter = 0, cpu_clock_counter = 0, system_clock_counter = 0, system_clock_freq = 0;
};

enum class KfdWaitResult { kComplete = 0, kTimeout = 1, kFail = 2 };

// One open /dev/kfd. Opening checks the interface version: major 1 and minor >= 11 (what this build's header
// describes); otherwise it throws naming both versions.
class Kfd {
 public:
  explicit Kfd(SyscallSeam& seam, const std::string& path = "/dev/kfd");
  SyscallSeam& seam() const { return *seam_; }
  int fd() const { return fd_.get(); }
  KfdVersion version() const { return version_; }

  void acquire_vm(int drm_fd, uint32_t gpu_id);
  std::vector<kfd_process_device_apertures> process_apertures();  // the two-call protocol

  // `va` must be kept reserved by the caller (reserve_va below); for USERPTR `userptr` is the CPU address.
  KfdAllocation alloc(uint32_t gpu_id, uint64_t va, uint64_t size, uint32_t flags, uint64_t userptr = 0);
  void free(uint64_t handle);
  void map_to_gpu(uint64_t handle, std::span<const uint32_t> gpu_ids);
  void unmap_from_gpu(uint64_t handle, std::span<const uint32_t> gpu_ids);
  uint64_t available_memory(uint32_t gpu_id);

  KfdQueue create_queue(const kfd_ioctl_create_queue_args& args);  // args as filled by the caller (gpu_id, ...)
  void destroy_queue(uint32_t queue_id);

  // The first event of the process passes the event page's handle (`event_page_handle`), later ones 0.
  KfdEvent create_event(uint32_t type, bool auto_reset, uint64_t event_page_handle = 0);
  void destroy_event(uint32_t event_id);
  void set_event(uint32_t event_id);
  void reset_event(uint32_t event_id);
  // Waits for the events (filled with their ids; MEMORY events come back with their exception data); timeout in ms
  // (0 polls, 0xFFFFFFFF forever).
  KfdWaitResult wait_events(std::span<kfd_event_data> events, bool wait_for_all, uint32_t timeout_ms);

  KfdClockCounters clock_counters(uint32_t gpu_id);

  // mmaps `length` bytes of /dev/kfd at `offset` (the doorbell page); throws naming the offset and the errno.
  void* mmap_kfd(std::size_t length, uint64_t offset);

 private:
  SyscallSeam* seam_;
  SeamFd fd_;
  KfdVersion version_;
};

// Address space a KFD allocation will occupy: an anonymous PROT_NONE mapping through the seam, `align`-aligned, that
// keeps the range from being reused by the host while the GPU uses it (KFD reserves nothing on the CPU side).
// release_va undoes it. Throw naming the size and the errno.
uint64_t reserve_va(SyscallSeam& seam, uint64_t size, uint64_t align);
void release_va(SyscallSeam& seam, uint64_t va, uint64_t size);
// Maps a VRAM/GTT allocation's CPU view at its VA (MAP_FIXED over the reservation) from the render node fd.
void* map_allocation_for_cpu(SyscallSeam& seam, int render_fd, const KfdAllocation& allocation);

}  // namespace doorbell::kernel_interface::amd
