#include "mockgpu/nv/mock_uvm.h"

#include <cerrno>
#include <cstring>

namespace doorbell::mockgpu::nv {

using namespace kernel_interface::nvidia;

namespace {
constexpr NvU64 kPageSize = 0x1000;

// Runs `handler` on the params at `arg` and stores its status in rmStatus.
template <class Params, class Handler>
int answer(void* arg, Handler&& handler) {
  auto& params = *static_cast<Params*>(arg);
  params.rmStatus = handler(params);
  return 0;
}
}  // namespace

MockUvm::MockUvm(const std::vector<MockGpuConfig>& gpus, MockRm& rm, const std::vector<GpuMemory*>& memories,
                 std::function<bool(int)> is_ctl_fd)
    : gpus_(gpus), rm_(rm), memories_(memories), is_ctl_fd_(std::move(is_ctl_fd)) {}

void MockUvm::open_fd(int fd) { files_[fd] = File{}; }

void MockUvm::close_fd(int fd) {
  auto it = files_.find(fd);
  if (it == files_.end()) return;
  for (const auto& [base, length] : it->second.ranges)
    for (const int gpu : it->second.gpus) memories_[static_cast<std::size_t>(gpu)]->unmap_range(base, length);
  files_.erase(it);
}

std::vector<MockUvm::Range> MockUvm::external_ranges(int fd) const {
  std::vector<Range> ranges;
  if (auto it = files_.find(fd); it != files_.end()) {
    for (const auto& [base, length] : it->second.ranges) ranges.push_back({base, length});
  }
  return ranges;
}

int MockUvm::ioctl(int fd, unsigned long request, void* arg) {
  auto it = files_.find(fd);
  if (it == files_.end()) return -EBADF;
  if (arg == nullptr) return -EFAULT;
  File& file = it->second;
  // Everything but UVM_INITIALIZE (and UVM_MM_INITIALIZE, which names another fd) needs an initialized fd.
  if (!file.initialized && request != UVM_INITIALIZE && request != UVM_MM_INITIALIZE) {
    switch (request) {
      case UVM_REGISTER_GPU: case UVM_REGISTER_GPU_VASPACE: case UVM_REGISTER_CHANNEL: case UVM_ENABLE_PEER_ACCESS:
      case UVM_CREATE_EXTERNAL_RANGE: case UVM_MAP_EXTERNAL_ALLOCATION: case UVM_FREE:
        break;
      default:
        return -EINVAL;
    }
    // rmStatus sits at a different offset in each struct; set it through the right type.
    auto illegal = [](auto&) { return NV_ERR_ILLEGAL_ACTION; };
    switch (request) {
      case UVM_REGISTER_GPU: return answer<UVM_REGISTER_GPU_PARAMS>(arg, illegal);
      case UVM_REGISTER_GPU_VASPACE: return answer<UVM_REGISTER_GPU_VASPACE_PARAMS>(arg, illegal);
      case UVM_REGISTER_CHANNEL: return answer<UVM_REGISTER_CHANNEL_PARAMS>(arg, illegal);
      case UVM_ENABLE_PEER_ACCESS: return answer<UVM_ENABLE_PEER_ACCESS_PARAMS>(arg, illegal);
      case UVM_CREATE_EXTERNAL_RANGE: return answer<UVM_CREATE_EXTERNAL_RANGE_PARAMS>(arg, illegal);
      case UVM_MAP_EXTERNAL_ALLOCATION: return answer<UVM_MAP_EXTERNAL_ALLOCATION_PARAMS>(arg, illegal);
      default: return answer<UVM_FREE_PARAMS>(arg, illegal);
    }
  }
  switch (request) {
    case UVM_INITIALIZE:
      return answer<UVM_INITIALIZE_PARAMS>(arg, [&](auto& p) { return initialize(file, p); });
    case UVM_MM_INITIALIZE:
      return answer<UVM_MM_INITIALIZE_PARAMS>(arg, [&](auto& p) { return mm_initialize(file, p); });
    case UVM_REGISTER_GPU:
      return answer<UVM_REGISTER_GPU_PARAMS>(arg, [&](auto& p) { return register_gpu(file, p); });
    case UVM_REGISTER_GPU_VASPACE:
      return answer<UVM_REGISTER_GPU_VASPACE_PARAMS>(arg, [&](auto& p) { return register_gpu_vaspace(file, p); });
    case UVM_REGISTER_CHANNEL:
      return answer<UVM_REGISTER_CHANNEL_PARAMS>(arg, [&](auto& p) { return register_channel(file, p); });
    case UVM_ENABLE_PEER_ACCESS:
      // Peer access between emulated GPUs is not modelled: copies between them go through host memory.
      return answer<UVM_ENABLE_PEER_ACCESS_PARAMS>(arg, [](auto&) { return NV_ERR_INVALID_DEVICE; });
    case UVM_CREATE_EXTERNAL_RANGE:
      return answer<UVM_CREATE_EXTERNAL_RANGE_PARAMS>(arg, [&](auto& p) { return create_external_range(file, p); });
    case UVM_MAP_EXTERNAL_ALLOCATION:
      return answer<UVM_MAP_EXTERNAL_ALLOCATION_PARAMS>(arg,
                                                        [&](auto& p) { return map_external_allocation(file, p); });
    case UVM_FREE:
      return answer<UVM_FREE_PARAMS>(arg, [&](auto& p) { return free(file, p); });
    default:
      return -EINVAL;
  }
}

int MockUvm::gpu_index(const NvProcessorUuid& uuid) const {
  for (std::size_t i = 0; i < gpus_.size(); ++i)
    if (std::memcmp(uuid.uuid, gpus_[i].uuid.data(), gpus_[i].uuid.size()) == 0) return static_cast<int>(i);
  return -1;
}

bool MockUvm::range_in_use(NvU64 base, NvU64 length) const {
  auto overlaps = [&](const std::map<NvU64, NvU64>& ranges) {
    for (const auto& [range_base, range_length] : ranges) {
      if (base < range_base + range_length && range_base < base + length) return true;
    }
    return false;
  };
  for (const auto& [fd, file] : files_) {
    if (overlaps(file.ranges) || overlaps(file.channel_ranges)) return true;
  }
  return false;
}

NV_STATUS MockUvm::check_rm(int rm_ctl_fd, NvHandle client) const {
  if (!is_ctl_fd_(rm_ctl_fd)) return NV_ERR_INVALID_ARGUMENT;
  return rm_.has_client(client) ? NV_OK : NV_ERR_INVALID_CLIENT;
}

NV_STATUS MockUvm::initialize(File& file, UVM_INITIALIZE_PARAMS& p) {
  if ((p.flags & ~(UVM_INIT_FLAGS_DISABLE_HMM | UVM_INIT_FLAGS_MULTI_PROCESS_SHARING_MODE)) != 0) {
    return NV_ERR_INVALID_ARGUMENT;
  }
  if (file.initialized && file.flags != p.flags) return NV_ERR_INVALID_ARGUMENT;
  file.initialized = true;
  file.flags = p.flags;
  return NV_OK;
}

NV_STATUS MockUvm::mm_initialize(File& file, UVM_MM_INITIALIZE_PARAMS& p) {
  auto other = files_.find(p.uvmFd);
  if (other == files_.end() || !other->second.initialized || &other->second == &file) return NV_ERR_INVALID_ARGUMENT;
  if (file.initialized) return NV_ERR_INVALID_STATE;
  return NV_OK;
}

NV_STATUS MockUvm::register_gpu(File& file, UVM_REGISTER_GPU_PARAMS& p) {
  const int gpu = gpu_index(p.gpu_uuid);
  if (gpu < 0) return NV_ERR_GPU_UUID_NOT_FOUND;
  if (p.rmCtrlFd != -1) {
    if (const NV_STATUS status = check_rm(p.rmCtrlFd, p.hClient); status != NV_OK) return status;
  }
  if (file.gpus.contains(gpu)) return NV_ERR_IN_USE;
  file.gpus.insert(gpu);
  p.numaEnabled = 0;
  p.numaNodeId = -1;
  return NV_OK;
}

NV_STATUS MockUvm::register_gpu_vaspace(File& file, UVM_REGISTER_GPU_VASPACE_PARAMS& p) {
  const int gpu = gpu_index(p.gpuUuid);
  if (gpu < 0) return NV_ERR_GPU_UUID_NOT_FOUND;
  if (!file.gpus.contains(gpu)) return NV_ERR_INVALID_DEVICE;
  if (const NV_STATUS status = check_rm(p.rmCtrlFd, p.hClient); status != NV_OK) return status;
  if (!rm_.is_object_of_class(p.hClient, p.hVaSpace, {FERMI_VASPACE_A})) return NV_ERR_OBJECT_NOT_FOUND;
  if (file.vaspaces.contains(gpu)) return NV_ERR_IN_USE;
  file.vaspaces.insert(gpu);
  return NV_OK;
}

NV_STATUS MockUvm::register_channel(File& file, UVM_REGISTER_CHANNEL_PARAMS& p) {
  const int gpu = gpu_index(p.gpuUuid);
  if (gpu < 0) return NV_ERR_GPU_UUID_NOT_FOUND;
  if (!file.vaspaces.contains(gpu)) return NV_ERR_INVALID_DEVICE;
  if (const NV_STATUS status = check_rm(p.rmCtrlFd, p.hClient); status != NV_OK) return status;
  if (!rm_.is_channel(p.hClient, p.hChannel)) return NV_ERR_OBJECT_NOT_FOUND;
  if (p.length == 0 || p.base % kPageSize != 0 || p.length % kPageSize != 0 || p.base + p.length < p.base) {
    return NV_ERR_INVALID_ADDRESS;
  }
  if (range_in_use(p.base, p.length)) return NV_ERR_UVM_ADDRESS_IN_USE;
  file.channels.push_back(p.hChannel);
  file.channel_ranges[p.base] = p.length;
  return NV_OK;
}

NV_STATUS MockUvm::create_external_range(File& file, UVM_CREATE_EXTERNAL_RANGE_PARAMS& p) {
  if (p.length == 0 || p.base % kPageSize != 0 || p.length % kPageSize != 0 || p.base + p.length < p.base) {
    return NV_ERR_INVALID_ADDRESS;
  }
  if (range_in_use(p.base, p.length)) return NV_ERR_UVM_ADDRESS_IN_USE;
  file.ranges[p.base] = p.length;
  return NV_OK;
}

NV_STATUS MockUvm::map_external_allocation(File& file, UVM_MAP_EXTERNAL_ALLOCATION_PARAMS& p) {
  if (p.length == 0 || p.base % kPageSize != 0 || p.length % kPageSize != 0) return NV_ERR_INVALID_ADDRESS;
  auto range = file.ranges.upper_bound(p.base);
  if (range == file.ranges.begin()) return NV_ERR_INVALID_ADDRESS;
  --range;
  if (p.base + p.length > range->first + range->second || p.base + p.length < p.base) return NV_ERR_INVALID_ADDRESS;
  if (p.gpuAttributesCount == 0 || p.gpuAttributesCount > UVM_MAX_GPUS) return NV_ERR_INVALID_ARGUMENT;
  std::vector<GpuMemory*> targets;
  for (NvU64 i = 0; i < p.gpuAttributesCount; ++i) {
    const int gpu = gpu_index(p.perGpuAttributes[i].gpuUuid);
    if (gpu < 0 || !file.gpus.contains(gpu)) return NV_ERR_INVALID_DEVICE;
    targets.push_back(memories_[static_cast<std::size_t>(gpu)]);
  }
  if (const NV_STATUS status = check_rm(p.rmCtrlFd, p.hClient); status != NV_OK) return status;
  std::uint8_t* host = nullptr;
  if (const NV_STATUS status = rm_.memory_bytes(p.hClient, p.hMemory, p.offset, p.length, &host); status != NV_OK) {
    return status;
  }
  const std::uint64_t owner = MockRm::owner_tag(p.hClient, p.hMemory);
  for (GpuMemory* memory : targets) {
    if (!memory->map(p.base, host, p.length, owner)) {
      memory->unmap_range(p.base, p.length);  // a new mapping replaces what the range held
      if (!memory->map(p.base, host, p.length, owner)) return NV_ERR_UVM_ADDRESS_IN_USE;
    }
  }
  return NV_OK;
}

NV_STATUS MockUvm::free(File& file, UVM_FREE_PARAMS& p) {
  auto range = file.ranges.find(p.base);
  if (range == file.ranges.end()) return NV_ERR_INVALID_ADDRESS;
  for (const int gpu : file.gpus) memories_[static_cast<std::size_t>(gpu)]->unmap_range(range->first, range->second);
  file.ranges.erase(range);
  return NV_OK;
}

}  // namespace doorbell::mockgpu::nv
