#include "kernel-interface/amd/kfd.h"

#include <fcntl.h>
#include <sys/mman.h>

#include <cerrno>
#include <stdexcept>

#include "kernel-interface/amd/amd_hex.h"

namespace doorbell::kernel_interface::amd {

// The request numbers and struct sizes this file sends, as firmware-notes/amd-kfd.md "Runtime side" records them
// (computed from <linux/kfd_ioctl.h> of KFD 1.11): a header that changed them would break the ABI the notes describe.
static_assert(AMDKFD_IOC_GET_VERSION == 0x80084b01);
static_assert(AMDKFD_IOC_CREATE_QUEUE == 0xc0584b02 && sizeof(kfd_ioctl_create_queue_args) == 88);
static_assert(AMDKFD_IOC_DESTROY_QUEUE == 0xc0084b03);
static_assert(AMDKFD_IOC_GET_CLOCK_COUNTERS == 0xc0284b05);
static_assert(AMDKFD_IOC_CREATE_EVENT == 0xc0204b08);
static_assert(AMDKFD_IOC_DESTROY_EVENT == 0x40084b09);
static_assert(AMDKFD_IOC_SET_EVENT == 0x40084b0a);
static_assert(AMDKFD_IOC_RESET_EVENT == 0x40084b0b);
static_assert(AMDKFD_IOC_WAIT_EVENTS == 0xc0184b0c);
static_assert(AMDKFD_IOC_GET_PROCESS_APERTURES_NEW == 0xc0104b14);
static_assert(AMDKFD_IOC_ACQUIRE_VM == 0x40084b15);
static_assert(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU == 0xc0284b16);
static_assert(AMDKFD_IOC_FREE_MEMORY_OF_GPU == 0x40084b17);
static_assert(AMDKFD_IOC_MAP_MEMORY_TO_GPU == 0xc0184b18);
static_assert(AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU == 0xc0184b19);
static_assert(AMDKFD_IOC_AVAILABLE_MEMORY == 0xc0104b23);
static_assert(sizeof(kfd_event_data) == 48 && sizeof(kfd_process_device_apertures) == 56);

namespace {

constexpr uint32_t kRequiredMajor = 1, kMinimumMinor = 11;
// MAP/UNMAP calls that fail with EINTR/EAGAIN without mapping another device before the wrapper gives up: the kernel
// resumes from n_success, so only calls that make no progress count.
constexpr int kMaxCallsWithoutProgress = 16;

// One ioctl on the KFD fd; throws naming the ioctl, `what` (its important arguments) and the errno.
template <class Args>
void kfd_call(SyscallSeam& seam, int fd, unsigned long request, const char* name, Args& args, const std::string& what) {
  const int result = seam.ioctl(fd, request, &args);
  if (result < 0) {
    throw std::runtime_error(std::string(name) + (what.empty() ? "" : " " + what) + " failed: " +
                             describe_errno(result));
  }
}

std::string ids_text(std::span<const uint32_t> ids) {
  std::string text = "[";
  for (std::size_t i = 0; i < ids.size(); ++i) text += (i ? ", " : "") + std::to_string(ids[i]);
  return text + "]";
}

// MAP_MEMORY_TO_GPU and UNMAP_MEMORY_FROM_GPU share their struct layout and their resume protocol: the kernel
// counts the devices it finished in n_success and starts from there on the next call.
template <class Args>
void map_or_unmap(SyscallSeam& seam, int fd, unsigned long request, const char* name, uint64_t handle,
                  std::span<const uint32_t> gpu_ids) {
  const std::string what = "of handle " + hex(handle) + " on gpus " + ids_text(gpu_ids);
  if (gpu_ids.empty()) throw std::invalid_argument(std::string(name) + " " + what + ": no gpu ids (n_devices 0)");
  Args args{};
  args.handle = handle;
  args.device_ids_array_ptr = reinterpret_cast<uint64_t>(gpu_ids.data());
  args.n_devices = static_cast<uint32_t>(gpu_ids.size());
  args.n_success = 0;
  int calls_without_progress = 0;
  for (;;) {
    const uint32_t before = args.n_success;
    const int result = seam.ioctl(fd, request, &args);
    if (args.n_success > args.n_devices || args.n_success < before) {
      throw std::runtime_error(std::string(name) + " " + what + " answered n_success " +
                               std::to_string(args.n_success) + " after " + std::to_string(before) +
                               "; expected a count from " + std::to_string(before) + " to " +
                               std::to_string(args.n_devices));
    }
    if (result >= 0 && args.n_success == args.n_devices) return;
    // EINTR/EAGAIN (and a success short of n_devices) are repeated from n_success; the kernel also fails after
    // mapping every device (waiting for the page-table update), and a repeat then only waits again.
    const bool repeat = result >= 0 || result == -EINTR || result == -EAGAIN;
    if (!repeat) {
      const std::string where = args.n_success < args.n_devices
                                    ? " on gpu " + std::to_string(gpu_ids[args.n_success])
                                    : " after the mappings (waiting for the page tables)";
      throw std::runtime_error(std::string(name) + " " + what + " failed" + where + " with " +
                               std::to_string(args.n_success) + " of " + std::to_string(args.n_devices) +
                               " devices done: " + describe_errno(result));
    }
    calls_without_progress = args.n_success > before ? 0 : calls_without_progress + 1;
    if (calls_without_progress >= kMaxCallsWithoutProgress) {
      throw std::runtime_error(std::string(name) + " " + what + " made no progress in " +
                               std::to_string(kMaxCallsWithoutProgress) + " calls (n_success " +
                               std::to_string(args.n_success) + " of " + std::to_string(args.n_devices) + ")" +
                               (result < 0 ? ": " + describe_errno(result) : ""));
    }
  }
}

}  // namespace

Kfd::Kfd(SyscallSeam& seam, const std::string& path) : seam_(&seam), fd_(seam, path, O_RDWR) {
  kfd_ioctl_get_version_args args{};
  kfd_call(*seam_, fd(), AMDKFD_IOC_GET_VERSION, "AMDKFD_IOC_GET_VERSION", args, "on " + path);
  version_ = {args.major_version, args.minor_version};
  if (version_.major != kRequiredMajor || version_.minor < kMinimumMinor) {
    throw std::runtime_error(path + " speaks KFD ioctl interface " + std::to_string(version_.major) + "." +
                             std::to_string(version_.minor) + "; doorbell needs " + std::to_string(kRequiredMajor) +
                             "." + std::to_string(kMinimumMinor) + " or a later 1.x");
  }
}

void Kfd::acquire_vm(int drm_fd, uint32_t gpu_id) {
  kfd_ioctl_acquire_vm_args args{};
  args.drm_fd = static_cast<uint32_t>(drm_fd);
  args.gpu_id = gpu_id;
  kfd_call(*seam_, fd(), AMDKFD_IOC_ACQUIRE_VM, "AMDKFD_IOC_ACQUIRE_VM", args,
           "of gpu " + std::to_string(gpu_id) + " with drm fd " + std::to_string(drm_fd));
}

std::vector<kfd_process_device_apertures> Kfd::process_apertures() {
  // First call with no array: the kernel answers the node count. Second call: it fills min(count, num) entries
  // and answers how many it filled.
  kfd_ioctl_get_process_apertures_new_args args{};
  kfd_call(*seam_, fd(), AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, "AMDKFD_IOC_GET_PROCESS_APERTURES_NEW", args,
           "(count)");
  std::vector<kfd_process_device_apertures> apertures(args.num_of_nodes);
  if (apertures.empty()) return apertures;
  const uint32_t asked = args.num_of_nodes;
  args.kfd_process_device_apertures_ptr = reinterpret_cast<uint64_t>(apertures.data());
  kfd_call(*seam_, fd(), AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, "AMDKFD_IOC_GET_PROCESS_APERTURES_NEW", args,
           "of " + std::to_string(asked) + " nodes");
  if (args.num_of_nodes > asked) {
    throw std::runtime_error("AMDKFD_IOC_GET_PROCESS_APERTURES_NEW of " + std::to_string(asked) +
                             " nodes answered " + std::to_string(args.num_of_nodes) + " filled entries");
  }
  apertures.resize(args.num_of_nodes);
  return apertures;
}

KfdAllocation Kfd::alloc(uint32_t gpu_id, uint64_t va, uint64_t size, uint32_t flags, uint64_t userptr) {
  kfd_ioctl_alloc_memory_of_gpu_args args{};
  args.va_addr = va;
  args.size = size;
  args.mmap_offset = (flags & kAllocUserptr) ? userptr : 0;  // in for USERPTR (the CPU address), out otherwise
  args.gpu_id = gpu_id;
  args.flags = flags;
  kfd_call(*seam_, fd(), AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, "AMDKFD_IOC_ALLOC_MEMORY_OF_GPU", args,
           "of " + hex(size) + " bytes at va " + hex(va) + " on gpu " + std::to_string(gpu_id) + " with flags " +
               hex(flags));
  return KfdAllocation{args.handle, va, size, args.mmap_offset, flags, gpu_id};
}

void Kfd::free(uint64_t handle) {
  kfd_ioctl_free_memory_of_gpu_args args{};
  args.handle = handle;
  kfd_call(*seam_, fd(), AMDKFD_IOC_FREE_MEMORY_OF_GPU, "AMDKFD_IOC_FREE_MEMORY_OF_GPU", args,
           "of handle " + hex(handle));
}

void Kfd::map_to_gpu(uint64_t handle, std::span<const uint32_t> gpu_ids) {
  map_or_unmap<kfd_ioctl_map_memory_to_gpu_args>(*seam_, fd(), AMDKFD_IOC_MAP_MEMORY_TO_GPU,
                                                 "AMDKFD_IOC_MAP_MEMORY_TO_GPU", handle, gpu_ids);
}

void Kfd::unmap_from_gpu(uint64_t handle, std::span<const uint32_t> gpu_ids) {
  map_or_unmap<kfd_ioctl_unmap_memory_from_gpu_args>(*seam_, fd(), AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU,
                                                     "AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU", handle, gpu_ids);
}

uint64_t Kfd::available_memory(uint32_t gpu_id) {
  kfd_ioctl_get_available_memory_args args{};
  args.gpu_id = gpu_id;
  kfd_call(*seam_, fd(), AMDKFD_IOC_AVAILABLE_MEMORY, "AMDKFD_IOC_AVAILABLE_MEMORY", args,
           "of gpu " + std::to_string(gpu_id));
  return args.available;
}

KfdQueue Kfd::create_queue(const kfd_ioctl_create_queue_args& in) {
  kfd_ioctl_create_queue_args args = in;
  kfd_call(*seam_, fd(), AMDKFD_IOC_CREATE_QUEUE, "AMDKFD_IOC_CREATE_QUEUE", args,
           "of type " + std::to_string(in.queue_type) + " on gpu " + std::to_string(in.gpu_id) + " (ring " +
               hex(in.ring_base_address) + " size " + hex(in.ring_size) + ", eop " + hex(in.eop_buffer_address) +
               " size " + hex(in.eop_buffer_size) + ", cwsr " + hex(in.ctx_save_restore_address) + " size " +
               hex(in.ctx_save_restore_size) + ", ctl stack " + hex(in.ctl_stack_size) + ")");
  return KfdQueue{args.queue_id, args.doorbell_offset};
}

void Kfd::destroy_queue(uint32_t queue_id) {
  kfd_ioctl_destroy_queue_args args{};
  args.queue_id = queue_id;
  kfd_call(*seam_, fd(), AMDKFD_IOC_DESTROY_QUEUE, "AMDKFD_IOC_DESTROY_QUEUE", args,
           "of queue " + std::to_string(queue_id));
}

KfdEvent Kfd::create_event(uint32_t type, bool auto_reset, uint64_t event_page_handle) {
  kfd_ioctl_create_event_args args{};
  args.event_page_offset = event_page_handle;  // in: the signal page's BO handle on first use; out: its mmap offset
  args.event_type = type;
  args.auto_reset = auto_reset ? 1 : 0;
  kfd_call(*seam_, fd(), AMDKFD_IOC_CREATE_EVENT, "AMDKFD_IOC_CREATE_EVENT", args,
           "of type " + std::to_string(type) + (event_page_handle ? " with event page " + hex(event_page_handle) : ""));
  return KfdEvent{args.event_id, args.event_slot_index, args.event_trigger_data, args.event_page_offset};
}

void Kfd::destroy_event(uint32_t event_id) {
  kfd_ioctl_destroy_event_args args{};
  args.event_id = event_id;
  kfd_call(*seam_, fd(), AMDKFD_IOC_DESTROY_EVENT, "AMDKFD_IOC_DESTROY_EVENT", args,
           "of event " + std::to_string(event_id));
}

void Kfd::set_event(uint32_t event_id) {
  kfd_ioctl_set_event_args args{};
  args.event_id = event_id;
  kfd_call(*seam_, fd(), AMDKFD_IOC_SET_EVENT, "AMDKFD_IOC_SET_EVENT", args, "of event " + std::to_string(event_id));
}

void Kfd::reset_event(uint32_t event_id) {
  kfd_ioctl_reset_event_args args{};
  args.event_id = event_id;
  kfd_call(*seam_, fd(), AMDKFD_IOC_RESET_EVENT, "AMDKFD_IOC_RESET_EVENT", args,
           "of event " + std::to_string(event_id));
}

KfdWaitResult Kfd::wait_events(std::span<kfd_event_data> events, bool wait_for_all, uint32_t timeout_ms) {
  kfd_ioctl_wait_events_args args{};
  args.events_ptr = reinterpret_cast<uint64_t>(events.data());
  args.num_events = static_cast<uint32_t>(events.size());
  args.wait_for_all = wait_for_all ? 1 : 0;
  args.timeout = timeout_ms;
  std::string ids;
  for (std::size_t i = 0; i < events.size(); ++i) ids += (i ? ", " : "") + std::to_string(events[i].event_id);
  const std::string what = "of events [" + ids + "] (" + (wait_for_all ? "all" : "any") + ", timeout " +
                           std::to_string(timeout_ms) + " ms)";
  kfd_call(*seam_, fd(), AMDKFD_IOC_WAIT_EVENTS, "AMDKFD_IOC_WAIT_EVENTS", args, what);
  // KFD_IOC_WAIT_RESULT_COMPLETE 0, _TIMEOUT 1, _FAIL 2.
  if (args.wait_result > KFD_IOC_WAIT_RESULT_FAIL) {
    throw std::runtime_error("AMDKFD_IOC_WAIT_EVENTS " + what + " answered wait_result " +
                             std::to_string(args.wait_result) + "; expected 0 (complete), 1 (timeout) or 2 (fail)");
  }
  return static_cast<KfdWaitResult>(args.wait_result);
}

KfdClockCounters Kfd::clock_counters(uint32_t gpu_id) {
  kfd_ioctl_get_clock_counters_args args{};
  args.gpu_id = gpu_id;
  kfd_call(*seam_, fd(), AMDKFD_IOC_GET_CLOCK_COUNTERS, "AMDKFD_IOC_GET_CLOCK_COUNTERS", args,
           "of gpu " + std::to_string(gpu_id));
  return KfdClockCounters{args.gpu_clock_counter, args.cpu_clock_counter, args.system_clock_counter,
                          args.system_clock_freq};
}

void* Kfd::mmap_kfd(std::size_t length, uint64_t offset) {
  int error = 0;
  void* address = seam_->mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd(), static_cast<off_t>(offset),
                              &error);
  if (address == MAP_FAILED) {
    throw std::runtime_error("mmap of " + hex(length) + " bytes of the KFD fd at offset " + hex(offset) +
                             " failed: " + describe_errno(error));
  }
  return address;
}

uint64_t reserve_va(SyscallSeam& seam, uint64_t size, uint64_t align) {
  constexpr uint64_t kPage = 4096;
  if (size == 0 || size % kPage != 0 || align < kPage || (align & (align - 1)) != 0 || size > (uint64_t{1} << 56) ||
      align > (uint64_t{1} << 56)) {
    throw std::invalid_argument("reserve_va of " + hex(size) + " bytes aligned to " + hex(align) +
                                ": the size must be a nonzero multiple of 4 KiB and the alignment a power of two "
                                "of at least 4 KiB (both below 2^56)");
  }
  // Over-reserve by the alignment, then give back the head and tail around the aligned range.
  const uint64_t span = size + align - kPage;
  int error = 0;
  void* base = seam.mmap(nullptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0, &error);
  if (base == MAP_FAILED) {
    throw std::runtime_error("reserve_va of " + hex(size) + " bytes aligned to " + hex(align) +
                             ": anonymous PROT_NONE mmap of " + hex(span) + " bytes failed: " + describe_errno(error));
  }
  const uint64_t start = reinterpret_cast<uint64_t>(base);
  const uint64_t aligned = (start + align - 1) & ~(align - 1);
  const uint64_t head = aligned - start, tail = start + span - (aligned + size);
  const int head_result = head != 0 ? seam.munmap(base, head) : 0;
  const int tail_result = tail != 0 ? seam.munmap(reinterpret_cast<void*>(aligned + size), tail) : 0;
  if (head_result < 0 || tail_result < 0) {
    seam.munmap(base, span);  // give everything back rather than keep a reservation of the wrong shape
    throw std::runtime_error("reserve_va of " + hex(size) + " bytes aligned to " + hex(align) +
                             ": trimming the reservation at " + hex(start) + " failed: " +
                             describe_errno(head_result < 0 ? head_result : tail_result));
  }
  return aligned;
}

void release_va(SyscallSeam& seam, uint64_t va, uint64_t size) {
  const int result = seam.munmap(reinterpret_cast<void*>(va), size);
  if (result < 0) {
    throw std::runtime_error("release_va of " + hex(size) + " bytes at " + hex(va) + ": munmap failed: " +
                             describe_errno(result));
  }
}

void* map_allocation_for_cpu(SyscallSeam& seam, int render_fd, const KfdAllocation& allocation) {
  const std::string what = "allocation " + hex(allocation.handle) + " (" + hex(allocation.size) + " bytes at va " +
                           hex(allocation.va) + ", flags " + hex(allocation.flags) + ")";
  if ((allocation.flags & (kAllocVram | kAllocGtt)) == 0) {
    throw std::invalid_argument("map_allocation_for_cpu of " + what +
                                ": only VRAM and GTT allocations have a render-node mmap offset");
  }
  int error = 0;
  void* address = seam.mmap(reinterpret_cast<void*>(allocation.va), allocation.size, PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_FIXED, render_fd, static_cast<off_t>(allocation.mmap_offset), &error);
  if (address == MAP_FAILED) {
    throw std::runtime_error("mmap of " + what + " on render fd " + std::to_string(render_fd) + " at offset " +
                             hex(allocation.mmap_offset) + " failed: " + describe_errno(error));
  }
  if (reinterpret_cast<uint64_t>(address) != allocation.va) {
    throw std::runtime_error("mmap of " + what + " with MAP_FIXED answered " +
                             hex(reinterpret_cast<uint64_t>(address)));
  }
  return address;
}

}  // namespace doorbell::kernel_interface::amd
