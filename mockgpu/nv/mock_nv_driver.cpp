#include "mockgpu/nv/mock_nv_driver.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "kernel-interface/nvidia/rm_ioctl.h"

namespace doorbell::mockgpu::nv {

using namespace kernel_interface::nvidia;

namespace {
constexpr std::size_t kPageSize = 0x1000;
constexpr char kNvidiaDevicePrefix[] = "/dev/nvidia";

std::size_t page_align(std::size_t value) { return (value + kPageSize - 1) / kPageSize * kPageSize; }

std::vector<std::unique_ptr<GpuMemory>> address_spaces(std::size_t count) {
  std::vector<std::unique_ptr<GpuMemory>> memories;
  for (std::size_t i = 0; i < count; ++i) memories.push_back(std::make_unique<GpuMemory>());
  return memories;
}

std::vector<GpuMemory*> pointers(const std::vector<std::unique_ptr<GpuMemory>>& memories) {
  std::vector<GpuMemory*> out;
  for (const auto& m : memories) out.push_back(m.get());
  return out;
}

// N of "/dev/nvidiaN" (digits only), or -1.
int device_minor(const std::string& path) {
  const std::string prefix = kNvidiaDevicePrefix;
  if (path.size() <= prefix.size() || path.compare(0, prefix.size(), prefix) != 0) return -1;
  int minor = 0;
  for (std::size_t i = prefix.size(); i < path.size(); ++i) {
    if (path[i] < '0' || path[i] > '9' || minor > 1000) return -1;
    minor = minor * 10 + (path[i] - '0');
  }
  return minor;
}
}  // namespace

MockNvDriver::MockNvDriver(MockGpuConfig config) : MockNvDriver(std::vector<MockGpuConfig>{std::move(config)}) {}

MockNvDriver::MockNvDriver(std::vector<MockGpuConfig> gpus)
    : gpus_(gpus.empty() ? throw std::invalid_argument("MockNvDriver: no GPU; expected at least one MockGpuConfig")
                         : std::move(gpus)),
      preempt_hooks_(gpus_.size()),
      gpu_memories_(address_spaces(gpus_.size())),
      rm_(gpus_, pointers(gpu_memories_)),
      uvm_(gpus_, rm_, pointers(gpu_memories_), [this](int fd) { return is_ctl_fd_locked(fd); }) {}

MockNvDriver::~MockNvDriver() = default;

std::string MockNvDriver::version_file_text() const {
  const char* module = config().open_kernel_module ? "NVIDIA UNIX Open Kernel Module for x86_64"
                                                   : "NVIDIA UNIX x86_64 Kernel Module";
  return std::string("NVRM version: ") + module + "  " + config().driver_version +
         "  Release Build  (doorbell-mockgpu)  \nGCC version:  gcc version 12.2.0 (doorbell mockgpu) \n";
}

bool MockNvDriver::is_ctl_fd_locked(int fd) const {
  auto it = files_.find(fd);
  return it != files_.end() && it->second.kind == FileKind::kControl;
}

int MockNvDriver::open(const std::string& path, int flags) {
  (void)flags;
  std::lock_guard lock(mutex_);
  FileKind kind;
  const int minor = device_minor(path);
  if (path == kNvidiaCtlPath) {
    kind = FileKind::kControl;
  } else if (minor >= 0 && minor < gpu_count()) {
    kind = FileKind::kDevice;
  } else if (path == kNvidiaUvmPath) {
    kind = FileKind::kUvm;
  } else if (path == kNvidiaVersionPath) {
    kind = FileKind::kVersionText;
  } else {
    return -ENOENT;
  }
  const int fd = next_fd_++;
  OpenFile file;
  file.kind = kind;
  file.gpu = kind == FileKind::kDevice ? minor : 0;
  files_.emplace(fd, file);
  if (kind == FileKind::kUvm) uvm_.open_fd(fd);
  return fd;
}

void MockNvDriver::set_preempt_hook(PreemptHook hook, int gpu) {
  std::lock_guard lock(preempt_mutex_);
  preempt_hooks_.at(static_cast<std::size_t>(gpu)) = std::move(hook);
}

void MockNvDriver::preempt(const std::vector<MockChannel>& channels, bool stopping) {
  if (channels.empty()) return;
  std::lock_guard lock(preempt_mutex_);
  for (std::size_t gpu = 0; gpu < preempt_hooks_.size(); ++gpu) {
    std::vector<MockChannel> its;
    for (const MockChannel& c : channels)
      if (c.gpu == static_cast<int>(gpu)) its.push_back(c);
    if (!its.empty() && preempt_hooks_[gpu]) preempt_hooks_[gpu](its, stopping);
  }
}

int MockNvDriver::close(int fd) {
  {
    // A file whose close frees nothing (a CPU mapping's fd, a /dev/nvidiaN fd, a control fd without clients) goes
    // without waiting for the GPU: each CPU mapping closes a fresh fd.
    std::lock_guard lock(mutex_);
    auto it = files_.find(fd);
    if (it == files_.end()) return -EBADF;
    const FileKind kind = it->second.kind;
    if (kind != FileKind::kUvm && !(kind == FileKind::kControl && rm_.has_clients_of_fd(fd))) {
      files_.erase(it);
      return 0;
    }
  }
  std::vector<MockChannel> going;
  {
    std::lock_guard lock(mutex_);
    if (is_ctl_fd_locked(fd)) going = rm_.channels_of_fd(fd);
  }
  preempt(going, true);
  int result = 0;
  {
    std::lock_guard execution(execution_mutex_);  // closing a control fd frees its clients
    std::lock_guard lock(mutex_);
    auto it = files_.find(fd);
    if (it == files_.end()) {
      result = -EBADF;
    } else {
      if (it->second.kind == FileKind::kControl) rm_.free_clients_of_fd(fd);  // RM frees a closed fd's clients
      if (it->second.kind == FileKind::kUvm) uvm_.close_fd(fd);
      files_.erase(it);
    }
  }
  preempt(going, false);
  return result;
}

ssize_t MockNvDriver::read(int fd, void* buffer, std::size_t length) {
  std::lock_guard lock(mutex_);
  auto it = files_.find(fd);
  if (it == files_.end()) return -EBADF;
  if (it->second.kind != FileKind::kVersionText) return -EINVAL;
  const std::string text = version_file_text();
  const std::size_t position = std::min(it->second.read_position, text.size());
  const std::size_t count = std::min(length, text.size() - position);
  std::memcpy(buffer, text.data() + position, count);
  it->second.read_position = position + count;
  return static_cast<ssize_t>(count);
}

int MockNvDriver::ioctl(int fd, unsigned long request, void* arg) {
  if (nv_ioctl_magic(request) == NV_IOCTL_MAGIC && nv_ioctl_nr(request) == NV_ESC_RM_FREE && arg != nullptr &&
      nv_ioctl_size(request) == sizeof(NVOS00_PARAMETERS)) {
    // RM preempts the channels the free takes down, then frees once the GPU is off them (and, in the mock, once it
    // finished what it runs on the others: the free may unmap memory they read).
    const auto& free = *static_cast<const NVOS00_PARAMETERS*>(arg);
    std::vector<MockChannel> going;
    {
      std::lock_guard lock(mutex_);
      going = rm_.channels_freed_with(free.hRoot, free.hObjectOld);
    }
    preempt(going, true);
    int result = 0;
    {
      std::lock_guard execution(execution_mutex_);
      result = locked_ioctl(fd, request, arg);
    }
    preempt(going, false);
    return result;
  }
  return locked_ioctl(fd, request, arg);
}

int MockNvDriver::locked_ioctl(int fd, unsigned long request, void* arg) {
  std::lock_guard lock(mutex_);
  auto it = files_.find(fd);
  if (it == files_.end()) return -EBADF;
  switch (it->second.kind) {
    case FileKind::kUvm: return uvm_.ioctl(fd, request, arg);
    case FileKind::kControl:
    case FileKind::kDevice: return rm_escape(fd, it->second, request, arg);
    case FileKind::kVersionText: return -ENOTTY;
  }
  return -ENOTTY;
}

// The checks escape.c makes before RM sees a call: the magic, the exact size per escape, the right kind of fd.
int MockNvDriver::rm_escape(int fd, OpenFile& file, unsigned long request, void* arg) {
  if (nv_ioctl_magic(request) != NV_IOCTL_MAGIC) return -ENOTTY;
  if (arg == nullptr) return -EFAULT;
  const unsigned escape = nv_ioctl_nr(request);
  const std::size_t size = nv_ioctl_size(request);
  const bool on_ctl = file.kind == FileKind::kControl;
  auto accept = [&](std::size_t expected_size, bool needs_ctl) {
    return size == expected_size && on_ctl == needs_ctl;
  };
  switch (escape) {
    case NV_ESC_RM_ALLOC:
      if (!accept(sizeof(NVOS21_PARAMETERS), true)) return -EINVAL;
      rm_.alloc(*static_cast<NVOS21_PARAMETERS*>(arg), fd);
      return 0;
    case NV_ESC_RM_CONTROL:
      if (!accept(sizeof(NVOS54_PARAMETERS), true)) return -EINVAL;
      rm_.control(*static_cast<NVOS54_PARAMETERS*>(arg));
      return 0;
    case NV_ESC_RM_FREE:
      if (!accept(sizeof(NVOS00_PARAMETERS), true)) return -EINVAL;
      rm_.free(*static_cast<NVOS00_PARAMETERS*>(arg));
      return 0;
    case NV_ESC_RM_MAP_MEMORY: {
      if (!accept(sizeof(nv_ioctl_nvos33_parameters_with_fd), true)) return -EINVAL;
      auto& args = *static_cast<nv_ioctl_nvos33_parameters_with_fd*>(arg);
      auto target = files_.find(args.fd);
      if (target == files_.end() ||
          (target->second.kind != FileKind::kControl && target->second.kind != FileKind::kDevice)) {
        args.params.status = NV_ERR_INVALID_ARGUMENT;  // the fd to mmap must be an NVIDIA fd
        return 0;
      }
      std::optional<CpuMapContext> context = rm_.map_memory(args.params);
      if (!context) return 0;
      // System memory's mmap context goes to a /dev/nvidiactl fd, video memory's and the usermode region's to a
      // /dev/nvidiaN fd (ogkm osapi.c:2277, :2341); nv_get_file_private finds no file of the other kind.
      if ((target->second.kind == FileKind::kControl) != context->system_memory) {
        args.params.status = NV_ERR_INVALID_ARGUMENT;
        return 0;
      }
      // A /dev/nvidiaN fd maps only GPU N's memory (ogkm nv-usermap.c:66-70: NV_ERR_INVALID_ARGUMENT otherwise).
      if (target->second.kind == FileKind::kDevice && target->second.gpu != context->gpu) {
        args.params.status = NV_ERR_INVALID_ARGUMENT;
        return 0;
      }
      // An fd carries one mmap context for its whole life: valid from the first RM_MAP_MEMORY naming it until the
      // fd is closed, never consumed by mmap (ogkm kernel-open/nvidia/nv-usermap.c:53-57, :97; nv.c:1053).
      if (target->second.map_context) {
        args.params.status = NV_ERR_STATE_IN_USE;
        return 0;
      }
      target->second.map_context = context;
      return 0;
    }
    case NV_ESC_RM_UNMAP_MEMORY:
      if (!accept(sizeof(NVOS34_PARAMETERS), true)) return -EINVAL;
      rm_.unmap_memory(*static_cast<NVOS34_PARAMETERS*>(arg));
      return 0;
    case NV_ESC_RM_MAP_MEMORY_DMA:
      if (!accept(sizeof(NVOS46_PARAMETERS), true)) return -EINVAL;
      rm_.map_memory_dma(*static_cast<NVOS46_PARAMETERS*>(arg));
      return 0;
    case NV_ESC_RM_UNMAP_MEMORY_DMA:
      if (!accept(sizeof(NVOS47_PARAMETERS), true)) return -EINVAL;
      rm_.unmap_memory_dma(*static_cast<NVOS47_PARAMETERS*>(arg));
      return 0;
    case NV_ESC_RM_ALLOC_MEMORY:
      if (!accept(sizeof(nv_ioctl_nvos02_parameters_with_fd), false)) return -EINVAL;
      rm_.alloc_memory(static_cast<nv_ioctl_nvos02_parameters_with_fd*>(arg)->params);
      return 0;
    case NV_ESC_CARD_INFO: {
      if (!on_ctl || size == 0 || size % sizeof(nv_ioctl_card_info_t) != 0) return -EINVAL;
      // One valid entry per GPU, in minor-number order, as many as the caller's table holds.
      auto* cards = static_cast<nv_ioctl_card_info_t*>(arg);
      std::memset(cards, 0, size);
      const std::size_t entries = size / sizeof(nv_ioctl_card_info_t);
      for (std::size_t i = 0; i < gpus_.size() && i < entries; ++i) {
        const MockGpuConfig& gpu = gpus_[i];
        nv_ioctl_card_info_t& card = cards[i];
        card.valid = 1;
        card.pci_info.domain = gpu.pci_domain;
        card.pci_info.bus = gpu.pci_bus;
        card.pci_info.vendor_id = gpu.pci_vendor_id;
        card.pci_info.device_id = gpu.pci_device_id;
        card.gpu_id = gpu.gpu_id;
        card.fb_size = gpu.vram_bytes;
        card.minor_number = static_cast<NvU32>(i);
        const std::string name = "nvidia" + std::to_string(i);
        std::memcpy(card.dev_name, name.c_str(), std::min(name.size() + 1, sizeof card.dev_name));
      }
      return 0;
    }
    case NV_ESC_REGISTER_FD: {
      if (!accept(sizeof(nv_ioctl_register_fd_t), false)) return -EINVAL;
      const int ctl_fd = static_cast<nv_ioctl_register_fd_t*>(arg)->ctl_fd;
      if (!is_ctl_fd_locked(ctl_fd) || file.registered) return -EINVAL;
      file.registered = true;
      return 0;
    }
    default:
      return -EINVAL;
  }
}

void* MockNvDriver::mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset, int* error) {
  auto fail = [error](int code) {
    if (error != nullptr) *error = code;
    return MAP_FAILED;
  };
  if (fd == -1 && (flags & MAP_ANONYMOUS) != 0) {
    void* result = ::mmap(addr, length, prot, flags, -1, offset);
    return result == MAP_FAILED ? fail(errno) : result;
  }
  std::lock_guard lock(mutex_);
  auto it = files_.find(fd);
  if (it == files_.end()) return fail(EBADF);
  if (it->second.kind != FileKind::kControl && it->second.kind != FileKind::kDevice) return fail(ENODEV);
  if (!it->second.map_context) return fail(EINVAL);  // no RM_MAP_MEMORY named this fd
  const CpuMapContext context = *it->second.map_context;
  const auto start = static_cast<std::size_t>(offset);
  if (offset < 0 || start % kPageSize != 0 || length == 0 || start > page_align(context.length) ||
      length > page_align(context.length) - start) {
    return fail(EINVAL);
  }
  const int map_flags = MAP_SHARED | (flags & MAP_FIXED);
  void* result = ::mmap(addr, length, prot, map_flags, context.memfd, static_cast<off_t>(context.offset + start));
  if (result == MAP_FAILED) return fail(errno);
  return result;
}

int MockNvDriver::munmap(void* addr, std::size_t length) { return ::munmap(addr, length) == 0 ? 0 : -errno; }

std::vector<MockChannel> MockNvDriver::channels() const {
  std::lock_guard lock(mutex_);
  return rm_.channels();
}

std::vector<MockChannel> MockNvDriver::channels(int gpu) const {
  std::lock_guard lock(mutex_);
  return rm_.channels(gpu);
}

std::optional<MockChannel> MockNvDriver::channel_by_token(std::uint32_t token, int gpu) const {
  std::lock_guard lock(mutex_);
  return rm_.channel_by_token(token, gpu);
}

std::uint32_t* MockNvDriver::doorbell_register(int gpu) { return rm_.usermode(gpu).doorbell_register(); }
std::optional<std::uint32_t> MockNvDriver::take_doorbell(int gpu) { return rm_.usermode(gpu).take_doorbell(); }
std::optional<std::uint32_t> MockNvDriver::wait_doorbell(std::chrono::nanoseconds timeout, int gpu) {
  return rm_.usermode(gpu).wait_doorbell(timeout);
}

void MockNvDriver::record_mmu_fault(NvHandle client, NvHandle channel,
                                    const NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_ENTRY& fault) {
  std::lock_guard lock(mutex_);
  rm_.record_mmu_fault(client, channel, fault);
}

std::size_t MockNvDriver::rm_object_count() const {
  std::lock_guard lock(mutex_);
  return rm_.object_count();
}

bool MockNvDriver::rm_has_object(NvHandle client, NvHandle handle) const {
  std::lock_guard lock(mutex_);
  return rm_.has_object(client, handle);
}

std::vector<MockUvm::Range> MockNvDriver::uvm_external_ranges(int uvm_fd) const {
  std::lock_guard lock(mutex_);
  return uvm_.external_ranges(uvm_fd);
}

}  // namespace doorbell::mockgpu::nv
