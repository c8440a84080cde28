#include "kernel-interface/nvidia/nv_uvm.h"

#include <memory>
#include <string>

namespace doorbell::kernel_interface::nvidia {

namespace {
std::string range_text(NvU64 base, NvU64 length) { return "[" + hex(base) + ", " + hex(base + length) + ")"; }
}  // namespace

template <class Params>
void NvUvm::call(int fd, unsigned long request, Params& params, const std::string& what) {
  const std::string full = std::string(uvm_ioctl_name(request)) + (what.empty() ? "" : " " + what);
  const int result = seam_.ioctl(fd, request, &params);
  if (result < 0) throw NvIoctlError(full + " (on fd " + std::to_string(fd) + ")", result);
  if (params.rmStatus != NV_OK) throw NvStatusError(full, params.rmStatus);
}

void NvUvm::initialize(NvU64 flags) {
  UVM_INITIALIZE_PARAMS params{};
  params.flags = flags;
  call(uvm_fd_, UVM_INITIALIZE, params, "");
}

void NvUvm::mm_initialize(int second_uvm_fd) {
  UVM_MM_INITIALIZE_PARAMS params{};
  params.uvmFd = uvm_fd_;
  call(second_uvm_fd, UVM_MM_INITIALIZE, params, "of uvm fd " + std::to_string(uvm_fd_));
}

void NvUvm::register_gpu(const NvProcessorUuid& gpu, int rm_ctl_fd, NvHandle client, NvHandle smc_part_ref) {
  UVM_REGISTER_GPU_PARAMS params{};
  params.gpu_uuid = gpu;
  params.rmCtrlFd = rm_ctl_fd;
  params.hClient = client;
  params.hSmcPartRef = smc_part_ref;
  call(uvm_fd_, UVM_REGISTER_GPU, params, "");
}

void NvUvm::register_gpu_vaspace(const NvProcessorUuid& gpu, int rm_ctl_fd, NvHandle client, NvHandle vaspace) {
  UVM_REGISTER_GPU_VASPACE_PARAMS params{};
  params.gpuUuid = gpu;
  params.rmCtrlFd = rm_ctl_fd;
  params.hClient = client;
  params.hVaSpace = vaspace;
  call(uvm_fd_, UVM_REGISTER_GPU_VASPACE, params, "of VA space " + hex(vaspace));
}

void NvUvm::register_channel(const NvProcessorUuid& gpu, int rm_ctl_fd, NvHandle client, NvHandle channel,
                             NvU64 base, NvU64 length) {
  UVM_REGISTER_CHANNEL_PARAMS params{};
  params.gpuUuid = gpu;
  params.rmCtrlFd = rm_ctl_fd;
  params.hClient = client;
  params.hChannel = channel;
  params.base = base;
  params.length = length;
  call(uvm_fd_, UVM_REGISTER_CHANNEL, params, "of channel " + hex(channel));
}

void NvUvm::enable_peer_access(const NvProcessorUuid& a, const NvProcessorUuid& b) {
  UVM_ENABLE_PEER_ACCESS_PARAMS params{};
  params.gpuUuidA = a;
  params.gpuUuidB = b;
  call(uvm_fd_, UVM_ENABLE_PEER_ACCESS, params, "");
}

void NvUvm::create_external_range(NvU64 base, NvU64 length) {
  UVM_CREATE_EXTERNAL_RANGE_PARAMS params{};
  params.base = base;
  params.length = length;
  call(uvm_fd_, UVM_CREATE_EXTERNAL_RANGE, params, "of " + range_text(base, length));
}

void NvUvm::map_external_allocation(NvU64 base, NvU64 length, NvU64 offset,
                                    std::span<const UvmGpuMappingAttributes> per_gpu, int rm_ctl_fd,
                                    NvHandle client, NvHandle memory) {
  if (per_gpu.empty() || per_gpu.size() > UVM_MAX_GPUS) {
    throw std::invalid_argument("UVM_MAP_EXTERNAL_ALLOCATION of memory " + hex(memory) + " got " +
                                std::to_string(per_gpu.size()) + " GPU attributes; expected 1 to " +
                                std::to_string(UVM_MAX_GPUS));
  }
  auto params = std::make_unique<UVM_MAP_EXTERNAL_ALLOCATION_PARAMS>();  // 9 KiB: off the stack
  params->base = base;
  params->length = length;
  params->offset = offset;
  for (std::size_t i = 0; i < per_gpu.size(); ++i) params->perGpuAttributes[i] = per_gpu[i];
  params->gpuAttributesCount = per_gpu.size();
  params->rmCtrlFd = rm_ctl_fd;
  params->hClient = client;
  params->hMemory = memory;
  call(uvm_fd_, UVM_MAP_EXTERNAL_ALLOCATION, *params, "of memory " + hex(memory) + " at " + range_text(base, length));
}

void NvUvm::map_external_allocation(NvU64 base, NvU64 length, const NvProcessorUuid& gpu, int rm_ctl_fd,
                                    NvHandle client, NvHandle memory) {
  UvmGpuMappingAttributes attributes{};
  attributes.gpuUuid = gpu;
  attributes.gpuMappingType = UvmGpuMappingTypeReadWriteAtomic;
  map_external_allocation(base, length, 0, std::span(&attributes, 1), rm_ctl_fd, client, memory);
}

void NvUvm::free(NvU64 base, NvU64 length) {
  UVM_FREE_PARAMS params{};
  params.base = base;
  params.length = length;
  call(uvm_fd_, UVM_FREE, params, "of " + range_text(base, length));
}

}  // namespace doorbell::kernel_interface::nvidia
