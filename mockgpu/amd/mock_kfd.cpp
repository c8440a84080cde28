// The emulated KFD's files, its ioctl dispatcher, the render node and the process-wide ioctls (version, VM,
// apertures, clocks, XNACK). Memory: mock_kfd_memory.cpp; queues: mock_kfd_queues.cpp; events: mock_kfd_events.cpp.
#include "mockgpu/amd/mock_kfd.h"

#include <linux/kfd_ioctl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <string>

#include "mockgpu/amd/mock_amd_topology.h"
#include "mockgpu/amd/mock_kfd_state.h"

namespace doorbell::mockgpu::amd {

namespace {
// DRM_IOCTL_AMDGPU_INFO = DRM_IOW(DRM_COMMAND_BASE + DRM_AMDGPU_INFO, struct drm_amdgpu_info) and the
// struct drm_amdgpu_info_device offsets written, from libdrm 2.4.114 include/drm/amdgpu_drm.h
// (firmware-notes/amd-kfd.md §K11); checked against the installed header when there is one.
constexpr unsigned long kDrmIoctlAmdgpuInfo = 0x40206445;
constexpr uint32_t kAmdgpuInfoDevInfo = 0x16;
constexpr std::size_t kInfoReturnPointer = 0, kInfoReturnSize = 8, kInfoQuery = 12, kInfoBytes = 32;
constexpr std::size_t kDevInfoBytes = 368;
constexpr std::size_t kDevDeviceId = 0, kDevChipRev = 4, kDevExternalRev = 8, kDevPciRev = 12, kDevFamily = 16,
                      kDevNumShaderEngines = 20, kDevNumShaderArraysPerEngine = 24, kDevGpuCounterFreq = 28,
                      kDevMaxEngineClock = 32, kDevCuActiveNumber = 48, kDevCuBitmap = 56,
                      kDevVirtualAddressOffset = 144, kDevVirtualAddressMax = 152,
                      kDevVirtualAddressAlignment = 160, kDevGartPageSize = 168, kDevWaveFrontSize = 240,
                      kDevNumCuPerSh = 248;
constexpr uint64_t kVaReservedBottom = uint64_t{1} << 20;  // AMDGPU_VA_RESERVED_SIZE (linux 6.1 amdgpu_vm.h)
constexpr uint64_t kGmcHoleStart = uint64_t{1} << 47;      // AMDGPU_GMC_HOLE_START: the user VA ends below it
}  // namespace
}  // namespace doorbell::mockgpu::amd

#if __has_include(<libdrm/amdgpu_drm.h>)
#include <libdrm/amdgpu_drm.h>

#include <cstddef>
namespace doorbell::mockgpu::amd {
static_assert(kDrmIoctlAmdgpuInfo == DRM_IOCTL_AMDGPU_INFO);
static_assert(kAmdgpuInfoDevInfo == AMDGPU_INFO_DEV_INFO);
static_assert(sizeof(drm_amdgpu_info) == kInfoBytes && offsetof(drm_amdgpu_info, query) == kInfoQuery &&
              offsetof(drm_amdgpu_info, return_size) == kInfoReturnSize);
static_assert(sizeof(drm_amdgpu_info_device) == kDevInfoBytes);
static_assert(offsetof(drm_amdgpu_info_device, device_id) == kDevDeviceId &&
              offsetof(drm_amdgpu_info_device, chip_rev) == kDevChipRev &&
              offsetof(drm_amdgpu_info_device, external_rev) == kDevExternalRev &&
              offsetof(drm_amdgpu_info_device, pci_rev) == kDevPciRev &&
              offsetof(drm_amdgpu_info_device, family) == kDevFamily &&
              offsetof(drm_amdgpu_info_device, num_shader_engines) == kDevNumShaderEngines &&
              offsetof(drm_amdgpu_info_device, num_shader_arrays_per_engine) == kDevNumShaderArraysPerEngine &&
              offsetof(drm_amdgpu_info_device, gpu_counter_freq) == kDevGpuCounterFreq &&
              offsetof(drm_amdgpu_info_device, max_engine_clock) == kDevMaxEngineClock &&
              offsetof(drm_amdgpu_info_device, cu_active_number) == kDevCuActiveNumber &&
              offsetof(drm_amdgpu_info_device, cu_bitmap) == kDevCuBitmap &&
              offsetof(drm_amdgpu_info_device, virtual_address_offset) == kDevVirtualAddressOffset &&
              offsetof(drm_amdgpu_info_device, virtual_address_max) == kDevVirtualAddressMax &&
              offsetof(drm_amdgpu_info_device, virtual_address_alignment) == kDevVirtualAddressAlignment &&
              offsetof(drm_amdgpu_info_device, gart_page_size) == kDevGartPageSize &&
              offsetof(drm_amdgpu_info_device, wave_front_size) == kDevWaveFrontSize &&
              offsetof(drm_amdgpu_info_device, num_cu_per_sh) == kDevNumCuPerSh);
}  // namespace doorbell::mockgpu::amd
#endif

namespace doorbell::mockgpu::amd {

namespace {
template <typename T>
void put(uint8_t* bytes, std::size_t offset, T value) {
  std::memcpy(bytes + offset, &value, sizeof value);
}

uint64_t clock_ns(clockid_t clock) {
  timespec now{};
  clock_gettime(clock, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

// N of "/dev/dri/renderDN", or -1.
int render_minor(const std::string& path) {
  const std::string prefix = "/dev/dri/renderD";
  if (path.size() <= prefix.size() || path.size() > prefix.size() + 4 || path.rfind(prefix, 0) != 0) return -1;
  int minor = 0;
  for (std::size_t i = prefix.size(); i < path.size(); ++i) {
    if (path[i] < '0' || path[i] > '9') return -1;
    minor = minor * 10 + (path[i] - '0');
  }
  return minor;
}
}  // namespace

uint64_t gpu_clock_100mhz() {
  static const auto start = std::chrono::steady_clock::now();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count()) / 10;
}

SharedMemory make_shared_memory(uint64_t bytes, const char* purpose) {
  SharedMemory memory;
  memory.bytes = bytes;
  memory.memfd = memfd_create(purpose, MFD_CLOEXEC);
  if (memory.memfd < 0) throw std::runtime_error(std::string(purpose) + ": memfd_create: " + std::strerror(errno));
  if (ftruncate(memory.memfd, static_cast<off_t>(bytes)) != 0) {
    const int error = errno;
    ::close(memory.memfd);
    throw std::runtime_error(std::string(purpose) + ": ftruncate to " + std::to_string(bytes) +
                             " bytes: " + std::strerror(error));
  }
  void* host = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memory.memfd, 0);
  if (host == MAP_FAILED) {
    const int error = errno;
    ::close(memory.memfd);
    throw std::runtime_error(std::string(purpose) + ": mmap of " + std::to_string(bytes) +
                             " bytes: " + std::strerror(error));
  }
  memory.host = static_cast<uint8_t*>(host);
  return memory;
}

namespace {
void release_shared_memory(SharedMemory& memory) {
  if (memory.memfd >= 0) {
    ::munmap(memory.host, memory.bytes);
    ::close(memory.memfd);
  }
  memory = SharedMemory{};
}
}  // namespace

MockKfd::MockKfd(MockKfdOptions options) : options_(std::move(options)) {
  if (options_.gpus.empty()) throw std::invalid_argument("MockKfd: no GPU; expected at least one MockAmdGpuConfig");
  for (std::size_t i = 0; i < options_.gpus.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (options_.gpus[i].gpu_id == options_.gpus[j].gpu_id || options_.gpus[i].gpu_id == 0 ||
          options_.gpus[i].drm_render_minor == options_.gpus[j].drm_render_minor) {
        throw std::invalid_argument("MockKfd: GPU " + std::to_string(i) +
                                    " repeats a gpu_id or render minor, or has gpu_id 0; expected distinct ones");
      }
    }
  }
  vram_used_.assign(options_.gpus.size(), 0);
}

MockKfd::~MockKfd() {
  std::vector<int> kfd_fds;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [fd, file] : files_)
      if (file.kind == FileKind::kKfd) kfd_fds.push_back(fd);
  }
  for (const int fd : kfd_fds) close(fd);
}

int MockKfd::gpu_index(uint32_t gpu_id) const {
  for (std::size_t i = 0; i < options_.gpus.size(); ++i)
    if (options_.gpus[i].gpu_id == gpu_id) return static_cast<int>(i);
  return -1;
}

int MockKfd::open(const std::string& path, int flags) {
  (void)flags;
  std::lock_guard lock(mutex_);
  OpenFile file;
  if (path == kKfdPath) {
    // Opening /dev/kfd creates the process with a device record for every GPU (kfd_create_process).
    file.kind = FileKind::kKfd;
    file.process = std::make_unique<Process>();
    file.process->pid = getpid();
    file.process->gpus.resize(options_.gpus.size());
  } else if (const int minor = render_minor(path); minor >= 0) {
    int gpu = -1;
    for (std::size_t i = 0; i < options_.gpus.size(); ++i)
      if (static_cast<int>(options_.gpus[i].drm_render_minor) == minor) gpu = static_cast<int>(i);
    if (gpu < 0) return -ENOENT;
    file.kind = FileKind::kRender;
    file.gpu = gpu;
  } else if (auto text = topology_file(options_.gpus, path)) {
    file.kind = FileKind::kText;
    file.text = std::move(*text);
  } else {
    return -ENOENT;
  }
  const int fd = next_fd_++;
  files_.emplace(fd, std::move(file));
  return fd;
}

ssize_t MockKfd::read(int fd, void* buffer, std::size_t length) {
  std::lock_guard lock(mutex_);
  auto it = files_.find(fd);
  if (it == files_.end()) return -EBADF;
  OpenFile& file = it->second;
  if (file.kind != FileKind::kText) return -EINVAL;
  const std::size_t position = std::min(file.position, file.text.size());
  const std::size_t count = std::min(length, file.text.size() - position);
  std::memcpy(buffer, file.text.data() + position, count);
  file.position = position + count;
  return static_cast<ssize_t>(count);
}

int MockKfd::close(int fd) {
  std::unique_ptr<Process> process;
  std::vector<std::unique_ptr<QueueEngine>> engines;
  {
    std::unique_lock lock(mutex_);
    auto it = files_.find(fd);
    if (it == files_.end()) return -EBADF;
    if (it->second.kind == FileKind::kRender) {
      // The DRM file goes; a process whose VM it held keeps the VM until it closes /dev/kfd (the kernel holds a
      // reference on the file), but no new ACQUIRE_VM can name this fd.
      files_.erase(it);
      return 0;
    }
    process = std::move(it->second.process);
    files_.erase(it);
    if (process != nullptr) {
      // Threads sleeping in WAIT_EVENTS on this process hold it: wake them and let them leave first.
      process->closing = true;
      process->events_changed.notify_all();
      process->events_changed.wait(lock, [&] { return process->waits_in_progress == 0; });
    }
    if (process != nullptr) {
      std::vector<uint32_t> ids;
      for (const auto& [id, queue] : process->queues) ids.push_back(id);
      for (const uint32_t id : ids) engines.push_back(remove_queue_locked(*process, id));
    }
  }
  engines.clear();  // the engine threads stop with the mutex released: they may be waiting for it in a callback
  if (process == nullptr) return 0;
  std::lock_guard lock(mutex_);
  // Kernel: kfd_process_notifier_release frees every BO and the doorbell slice with the process.
  for (auto& [id, bo] : process->bos) {
    if ((bo.flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM) != 0) {
      vram_used_[static_cast<std::size_t>(gpu_index(bo.gpu_id))] -= bo.size;
    }
    release_shared_memory(bo.memory);
  }
  process->bos.clear();
  for (GpuProcessState& gpu : process->gpus) {
    release_shared_memory(gpu.doorbells);
    release_shared_memory(gpu.mmio);
  }
  release_shared_memory(process->events_memory);
  release_retired_locked(*process);
  return 0;
}

void MockKfd::release_retired_locked(Process& p) {
  if (!p.queues.empty()) return;
  for (const auto& [host, bytes] : p.retired) ::munmap(host, bytes);
  p.retired.clear();
}

void* MockKfd::mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset, int* error) {
  auto fail = [error](int code) {
    if (error != nullptr) *error = code;
    return MAP_FAILED;
  };
  if (fd == -1 && (flags & MAP_ANONYMOUS) != 0) {  // reserve_va and the like: the kernel's
    void* result = ::mmap(addr, length, prot, flags, -1, offset);
    return result == MAP_FAILED ? fail(errno) : result;
  }
  std::lock_guard lock(mutex_);
  auto it = files_.find(fd);
  if (it == files_.end()) return fail(EBADF);
  // The offset is the kernel's unsigned one: a /dev/kfd doorbell offset (type 3 in bits 63:62) is a negative off_t.
  const uint64_t off = static_cast<uint64_t>(offset);
  if (off % kPageBytes != 0 || length == 0) return fail(EINVAL);
  const int map_flags = MAP_SHARED | (flags & MAP_FIXED);
  int memfd = -1;
  if (it->second.kind == FileKind::kRender) {
    // A BO's CPU view: the DRM fake offset ALLOC returned, on the DRM file the BO's process acquired its VM with
    // (firmware-notes/amd-kfd.md §K4: another file is not allowed the object, EACCES; an unknown offset or a longer
    // range, EINVAL).
    bool other_file = false;
    for (auto& [kfd_fd, kfd_file] : files_) {
      if (kfd_file.kind != FileKind::kKfd) continue;
      for (const auto& [id, bo] : kfd_file.process->bos) {
        if (bo.memory.memfd < 0 || bo.mmap_offset != off ||
            (bo.flags & (KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_GTT)) == 0) {
          continue;
        }
        const int gpu = gpu_index(bo.gpu_id);
        if (kfd_file.process->gpus[static_cast<std::size_t>(gpu)].render_fd != fd) {
          other_file = true;
          continue;
        }
        if (page_align(length) > bo.size) return fail(EINVAL);
        memfd = bo.memory.memfd;
      }
    }
    if (memfd < 0) return fail(other_file ? EACCES : EINVAL);
  } else if (it->second.kind == FileKind::kKfd) {
    // kfd_mmap: type in bits 63:62, gpu_id in 61:46 (firmware-notes/amd-kfd.md §K7).
    Process& p = *it->second.process;
    const uint64_t type = off >> kMmapTypeShift;
    const int gpu = gpu_index(static_cast<uint32_t>((off >> kMmapGpuIdShift) & 0xFFFF));
    if (type == kMmapTypeEvents) {
      // kfd_event_mmap: at most the event page's 32 KiB, once the process has one; the slots mapped are the
      // slots signal events may use.
      if (p.signal_page == nullptr || page_align(length) > kEventPageBytes) return fail(EINVAL);
      if (p.events_memory.memfd >= 0) {
        memfd = p.events_memory.memfd;
        p.signal_page_bytes = page_align(length);
      } else {
        memfd = p.bos.at(p.signal_page_bo).memory.memfd;
      }
    } else {
      if (gpu < 0) return fail(ENODEV);  // kfd_mmap: no device with that gpu_id
      GpuProcessState& state = p.gpus[static_cast<std::size_t>(gpu)];
      if (type == kMmapTypeDoorbell) {
        // kfd_doorbell_mmap: the whole 8 KiB slice; userspace passes the queue's offset & ~0x1FFF.
        if (length != kDoorbellSliceBytes || (off & ((uint64_t{1} << kMmapGpuIdShift) - 1)) != 0) {
          return fail(EINVAL);
        }
        if (state.doorbells.memfd < 0) state.doorbells = make_shared_memory(kDoorbellSliceBytes, "kfd-doorbells");
        memfd = state.doorbells.memfd;
      } else if (type == kMmapTypeMmio) {
        // kfd_mmio_mmap: exactly one page.
        if (length != kPageBytes) return fail(EINVAL);
        if (state.mmio.memfd < 0) state.mmio = make_shared_memory(kPageBytes, "kfd-mmio-remap");
        memfd = state.mmio.memfd;
      } else {
        return fail(EINVAL);  // RESERVED_MEM (CWSR trap pages) is not emulated
      }
    }
  } else {
    return fail(ENODEV);
  }
  void* result = ::mmap(addr, length, prot, map_flags, memfd, 0);
  return result == MAP_FAILED ? fail(errno) : result;
}

// The driver maps nothing in the process but through mmap(): every munmap is the kernel's (a BO's CPU view goes as
// a real VMA does; the GPU's view of the BO is the driver's own and stays).
int MockKfd::munmap(void* addr, std::size_t length) { return ::munmap(addr, length) == 0 ? 0 : -errno; }

int MockKfd::ioctl(int fd, unsigned long request, void* arg) {
  std::unique_lock lock(mutex_);
  auto it = files_.find(fd);
  if (it == files_.end()) return -EBADF;
  if (it->second.kind == FileKind::kRender) return render_ioctl(it->second, request, arg);
  if (it->second.kind != FileKind::kKfd) return -ENOTTY;
  Process& p = *it->second.process;

  // kfd_ioctl (firmware-notes/amd-kfd.md §K1): nr in the table (else ENOTTY), the caller the process that opened
  // the file (else EBADF), the kernel's own direction and size, usize bytes
  // copied in, zero-filled up to the kernel's size, usize bytes copied back (also after a failure).
  const unsigned nr = _IOC_NR(request);
  if (nr >= AMDKFD_COMMAND_END || nr < AMDKFD_COMMAND_START) return -ENOTTY;
  if (p.pid != getpid()) return -EBADF;  // "Using KFD FD in wrong process"
  unsigned long kernel_cmd = 0;
  switch (nr) {
    case _IOC_NR(AMDKFD_IOC_GET_VERSION): kernel_cmd = AMDKFD_IOC_GET_VERSION; break;
    case _IOC_NR(AMDKFD_IOC_CREATE_QUEUE): kernel_cmd = AMDKFD_IOC_CREATE_QUEUE; break;
    case _IOC_NR(AMDKFD_IOC_DESTROY_QUEUE): kernel_cmd = AMDKFD_IOC_DESTROY_QUEUE; break;
    case _IOC_NR(AMDKFD_IOC_GET_CLOCK_COUNTERS): kernel_cmd = AMDKFD_IOC_GET_CLOCK_COUNTERS; break;
    case _IOC_NR(AMDKFD_IOC_CREATE_EVENT): kernel_cmd = AMDKFD_IOC_CREATE_EVENT; break;
    case _IOC_NR(AMDKFD_IOC_DESTROY_EVENT): kernel_cmd = AMDKFD_IOC_DESTROY_EVENT; break;
    case _IOC_NR(AMDKFD_IOC_SET_EVENT): kernel_cmd = AMDKFD_IOC_SET_EVENT; break;
    case _IOC_NR(AMDKFD_IOC_RESET_EVENT): kernel_cmd = AMDKFD_IOC_RESET_EVENT; break;
    case _IOC_NR(AMDKFD_IOC_WAIT_EVENTS): kernel_cmd = AMDKFD_IOC_WAIT_EVENTS; break;
    case _IOC_NR(AMDKFD_IOC_GET_PROCESS_APERTURES_NEW): kernel_cmd = AMDKFD_IOC_GET_PROCESS_APERTURES_NEW; break;
    case _IOC_NR(AMDKFD_IOC_ACQUIRE_VM): kernel_cmd = AMDKFD_IOC_ACQUIRE_VM; break;
    case _IOC_NR(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU): kernel_cmd = AMDKFD_IOC_ALLOC_MEMORY_OF_GPU; break;
    case _IOC_NR(AMDKFD_IOC_FREE_MEMORY_OF_GPU): kernel_cmd = AMDKFD_IOC_FREE_MEMORY_OF_GPU; break;
    case _IOC_NR(AMDKFD_IOC_MAP_MEMORY_TO_GPU): kernel_cmd = AMDKFD_IOC_MAP_MEMORY_TO_GPU; break;
    case _IOC_NR(AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU): kernel_cmd = AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU; break;
    case _IOC_NR(AMDKFD_IOC_SET_XNACK_MODE): kernel_cmd = AMDKFD_IOC_SET_XNACK_MODE; break;
    case _IOC_NR(AMDKFD_IOC_AVAILABLE_MEMORY): kernel_cmd = AMDKFD_IOC_AVAILABLE_MEMORY; break;
    default: return -EOPNOTSUPP;  // an ioctl of KFD 1.11 this emulator does not implement (SVM, CRIU, ...)
  }
  const std::size_t usize = _IOC_SIZE(request), ksize = _IOC_SIZE(kernel_cmd);
  const unsigned kdir = _IOC_DIR(kernel_cmd);
  alignas(8) uint8_t kdata[128] = {};
  static_assert(sizeof(kfd_ioctl_create_queue_args) <= sizeof kdata);
  if (usize > sizeof kdata || ksize > sizeof kdata) return -EINVAL;  // larger than any struct of any KFD version
  if ((kdir & _IOC_WRITE) != 0 && usize > 0) {
    if (arg == nullptr) return -EFAULT;
    std::memcpy(kdata, arg, usize);
  }
  int result = 0;
  switch (nr) {
    case _IOC_NR(AMDKFD_IOC_GET_VERSION): result = get_version(p, kdata); break;
    case _IOC_NR(AMDKFD_IOC_CREATE_QUEUE): result = create_queue(p, kdata); break;
    case _IOC_NR(AMDKFD_IOC_DESTROY_QUEUE): {
      const auto* args = reinterpret_cast<const kfd_ioctl_destroy_queue_args*>(kdata);
      std::unique_ptr<QueueEngine> engine;
      if (p.queues.count(args->queue_id) == 0) {
        result = -EINVAL;  // pqm_destroy_queue: no such queue
      } else {
        engine = remove_queue_locked(p, args->queue_id);
        lock.unlock();
        engine.reset();  // its thread stops with the mutex released
        lock.lock();
        // The fd may have been closed meanwhile (its close freed everything); else free what waited for the queue.
        if (auto again = files_.find(fd); again != files_.end() && again->second.process.get() == &p) {
          release_retired_locked(p);
        }
      }
      break;
    }
    case _IOC_NR(AMDKFD_IOC_GET_CLOCK_COUNTERS): result = get_clock_counters(p, kdata); break;
    case _IOC_NR(AMDKFD_IOC_CREATE_EVENT): result = create_event(p, kdata); break;
    case _IOC_NR(AMDKFD_IOC_DESTROY_EVENT): result = destroy_event(p, kdata); break;
    case _IOC_NR(AMDKFD_IOC_SET_EVENT): result = set_event(p, kdata, true); break;
    case _IOC_NR(AMDKFD_IOC_RESET_EVENT): result = set_event(p, kdata, false); break;
    case _IOC_NR(AMDKFD_IOC_WAIT_EVENTS): result = wait_events(p, kdata, lock); break;
    case _IOC_NR(AMDKFD_IOC_GET_PROCESS_APERTURES_NEW): result = get_process_apertures_new(p, kdata); break;
    case _IOC_NR(AMDKFD_IOC_ACQUIRE_VM): result = acquire_vm(p, kdata); break;
    case _IOC_NR(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU): result = alloc_memory(p, kdata); break;
    case _IOC_NR(AMDKFD_IOC_FREE_MEMORY_OF_GPU): result = free_memory(p, kdata); break;
    case _IOC_NR(AMDKFD_IOC_MAP_MEMORY_TO_GPU): result = map_memory(p, kdata, true); break;
    case _IOC_NR(AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU): result = map_memory(p, kdata, false); break;
    case _IOC_NR(AMDKFD_IOC_SET_XNACK_MODE): result = set_xnack_mode(p, kdata); break;
    case _IOC_NR(AMDKFD_IOC_AVAILABLE_MEMORY): result = available_memory(p, kdata); break;
  }
  if ((kdir & _IOC_READ) != 0 && usize > 0) {
    if (arg == nullptr) return -EFAULT;
    std::memcpy(arg, kdata, usize);
  }
  return result;
}

int MockKfd::get_version(Process&, void* args) {
  auto* a = static_cast<kfd_ioctl_get_version_args*>(args);
  a->major_version = KFD_IOCTL_MAJOR_VERSION;
  a->minor_version = KFD_IOCTL_MINOR_VERSION;
  return 0;
}

int MockKfd::acquire_vm(Process& p, void* args) {
  // kfd_ioctl_acquire_vm + kfd_process_device_init_vm (firmware-notes/amd-kfd.md §K2).
  const auto* a = static_cast<const kfd_ioctl_acquire_vm_args*>(args);
  auto file = files_.find(static_cast<int>(a->drm_fd));
  if (file == files_.end()) return -EINVAL;  // fget of a descriptor that is not open
  const int gpu = gpu_index(a->gpu_id);
  if (gpu < 0) return -EINVAL;
  GpuProcessState& state = p.gpus[static_cast<std::size_t>(gpu)];
  if (state.render_fd >= 0) return state.render_fd == static_cast<int>(a->drm_fd) ? 0 : -EBUSY;
  // kfd_process_device_init_vm / amdgpu_amdkfd_gpuvm_acquire_process_vm: the file must be this GPU's DRM file.
  if (file->second.kind != FileKind::kRender || file->second.gpu != gpu) return -EINVAL;
  state.render_fd = static_cast<int>(a->drm_fd);
  return 0;
}

int MockKfd::get_process_apertures_new(Process& p, void* args) {
  // kfd_ioctl_get_process_apertures_new: 0 nodes asks for the count; otherwise min(count, asked) entries, and the
  // count written is how many were filled. gfx9+ apertures: kfd_init_apertures_v9 (firmware-notes/amd-kfd.md §K2).
  auto* a = static_cast<kfd_ioctl_get_process_apertures_new_args*>(args);
  const uint32_t count = static_cast<uint32_t>(p.gpus.size());
  if (a->num_of_nodes == 0) {
    a->num_of_nodes = count;
    return 0;
  }
  const uint32_t filled = std::min(count, a->num_of_nodes);
  if (a->kfd_process_device_apertures_ptr == 0) return -EFAULT;
  auto* out = reinterpret_cast<kfd_process_device_apertures*>(a->kfd_process_device_apertures_ptr);
  for (uint32_t i = 0; i < filled; ++i) {
    kfd_process_device_apertures ap{};
    ap.lds_base = uint64_t{1} << 48;  // MAKE_LDS_APP_BASE_V9
    ap.lds_limit = (ap.lds_base & 0xFFFFFFFF00000000ull) | 0xFFFFFFFFull;  // MAKE_LDS_APP_LIMIT
    ap.scratch_base = uint64_t{2} << 48;  // MAKE_SCRATCH_APP_BASE_V9
    ap.scratch_limit = (ap.scratch_base & 0xFFFFFFFF00000000ull) | 0xFFFFFFFFull;
    ap.gpuvm_base = 4 * kPageBytes;  // SVM_USER_BASE: the CWSR TBA/TMA pages and two guard pages below
    ap.gpuvm_limit = kGmcHoleStart - 1;
    ap.gpu_id = options_.gpus[i].gpu_id;
    std::memcpy(&out[i], &ap, sizeof ap);
  }
  a->num_of_nodes = filled;
  return 0;
}

int MockKfd::get_clock_counters(Process& p, void* args) {
  // kfd_ioctl_get_clock_counters: an unknown gpu_id reads a GPU counter of 0, not an error (§K10).
  auto* a = static_cast<kfd_ioctl_get_clock_counters_args*>(args);
  (void)p;
  a->gpu_clock_counter = gpu_index(a->gpu_id) >= 0 ? options_.clock() : 0;
  a->cpu_clock_counter = clock_ns(CLOCK_MONOTONIC_RAW);
  a->system_clock_counter = clock_ns(CLOCK_BOOTTIME);
  a->system_clock_freq = 1000000000;
  return 0;
}

int MockKfd::set_xnack_mode(Process& p, void* args) {
  // kfd_ioctl_set_xnack_mode: a negative value reads the mode; changing it needs a queue-less process, and only
  // gfx9 parts (before gfx10.1) retry faults per process (kfd_process_xnack_mode).
  auto* a = static_cast<kfd_ioctl_set_xnack_mode_args*>(args);
  if (a->xnack_enabled < 0) {
    a->xnack_enabled = p.xnack ? 1 : 0;
    return 0;
  }
  if (!p.queues.empty()) return -EBUSY;
  const bool enable = a->xnack_enabled != 0;
  if (enable == p.xnack) return 0;
  if (enable) {
    for (const MockAmdGpuConfig& gpu : options_.gpus)
      if (gpu.gfx_target_version >= 100100) return -EPERM;
  }
  p.xnack = enable;
  return 0;
}

int MockKfd::render_ioctl(OpenFile& file, unsigned long request, void* arg) {
  // amdgpu_info_ioctl, query AMDGPU_INFO_DEV_INFO only (firmware-notes/amd-kfd.md §K11).
  if (request != kDrmIoctlAmdgpuInfo) return -EINVAL;
  if (arg == nullptr) return -EFAULT;
  uint8_t info[kInfoBytes];
  std::memcpy(info, arg, sizeof info);
  uint64_t return_pointer = 0;
  uint32_t return_size = 0, query = 0;
  std::memcpy(&return_pointer, info + kInfoReturnPointer, 8);
  std::memcpy(&return_size, info + kInfoReturnSize, 4);
  std::memcpy(&query, info + kInfoQuery, 4);
  if (return_pointer == 0 || return_size == 0) return -EINVAL;
  if (query != kAmdgpuInfoDevInfo) return -EINVAL;
  const MockAmdGpuConfig& g = options_.gpus[static_cast<std::size_t>(file.gpu)];
  uint8_t dev[kDevInfoBytes] = {};
  put<uint32_t>(dev, kDevDeviceId, g.device_id);
  put<uint32_t>(dev, kDevChipRev, g.chip_rev);
  put<uint32_t>(dev, kDevExternalRev, g.external_rev);
  put<uint32_t>(dev, kDevPciRev, g.pci_rev);
  put<uint32_t>(dev, kDevFamily, g.family);
  put<uint32_t>(dev, kDevNumShaderEngines, g.shader_engines());
  put<uint32_t>(dev, kDevNumShaderArraysPerEngine, g.simd_arrays_per_engine);
  put<uint32_t>(dev, kDevGpuCounterFreq, 100000);  // kHz: the 100 MHz counter (§K10)
  put<uint64_t>(dev, kDevMaxEngineClock, uint64_t{g.max_engine_clk_fcompute} * 1000);  // kHz
  put<uint32_t>(dev, kDevCuActiveNumber, g.cu_count());
  // cu_bitmap[4][4]: per shader engine and array, one bit per active CU (first 4 SEs, 4 arrays).
  const uint32_t cus_per_array = g.cu_count() / std::max<uint32_t>(1, g.array_count);
  const uint32_t array_bits = cus_per_array >= 32 ? 0xFFFFFFFFu : (1u << cus_per_array) - 1;
  for (uint32_t se = 0; se < std::min<uint32_t>(4, g.shader_engines()); ++se)
    for (uint32_t sh = 0; sh < std::min<uint32_t>(4, g.simd_arrays_per_engine); ++sh)
      put<uint32_t>(dev, kDevCuBitmap + (se * 4 + sh) * 4, array_bits);
  put<uint64_t>(dev, kDevVirtualAddressOffset, kVaReservedBottom);
  put<uint64_t>(dev, kDevVirtualAddressMax, kGmcHoleStart);
  put<uint32_t>(dev, kDevVirtualAddressAlignment, static_cast<uint32_t>(kPageBytes));
  put<uint32_t>(dev, kDevGartPageSize, static_cast<uint32_t>(kPageBytes));
  put<uint32_t>(dev, kDevWaveFrontSize, g.wave_front_size);
  put<uint32_t>(dev, kDevNumCuPerSh, g.cu_per_simd_array);
  std::memcpy(reinterpret_cast<void*>(return_pointer), dev, std::min<std::size_t>(return_size, sizeof dev));
  return 0;
}

const GpuMemory* MockKfd::process_memory(int kfd_fd, uint32_t gpu_id) const {
  std::lock_guard lock(mutex_);
  auto it = files_.find(kfd_fd);
  const int gpu = gpu_index(gpu_id);
  if (it == files_.end() || it->second.kind != FileKind::kKfd || gpu < 0) return nullptr;
  return it->second.process->gpus[static_cast<std::size_t>(gpu)].memory.get();
}

std::size_t MockKfd::queue_count(int kfd_fd) const {
  std::lock_guard lock(mutex_);
  auto it = files_.find(kfd_fd);
  if (it == files_.end() || it->second.kind != FileKind::kKfd) return 0;
  return it->second.process->queues.size();
}

}  // namespace doorbell::mockgpu::amd
