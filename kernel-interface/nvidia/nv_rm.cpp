#include "kernel-interface/nvidia/nv_rm.h"

#include <cstring>
#include <stdexcept>

#include "kernel-interface/nvidia/rm_classes.h"
#include "kernel-interface/nvidia/rm_controls.h"

namespace doorbell::kernel_interface::nvidia {

namespace {

std::string class_text(NvU32 hclass) {
  const std::string name = nv_class_name(hclass);
  return hex(hclass) + (name.empty() ? "" : " (" + name + ")");
}

void check_status(NV_STATUS status, const std::string& what) {
  if (status != NV_OK) throw NvStatusError(what, status);
}

}  // namespace

void NvRm::ioctl(int fd, unsigned long request, void* arg, const std::string& what) {
  const int result = seam_.ioctl(fd, request, arg);
  if (result < 0) throw NvIoctlError(what + " (request " + hex(request) + " on fd " + std::to_string(fd) + ")", result);
}

NvHandle NvRm::alloc_root_client() {
  NVOS21_PARAMETERS args{};
  args.hClass = NV01_ROOT_CLIENT;
  const std::string what = "RM_ALLOC of class " + class_text(NV01_ROOT_CLIENT);
  ioctl(ctl_fd_, kRmAllocRequest, &args, what);
  check_status(args.status, what);
  client_ = args.hObjectNew;
  return client_;
}

NvHandle NvRm::alloc(NvHandle parent, NvU32 hclass, void* params, NvU32 params_size, NvHandle new_handle) {
  NVOS21_PARAMETERS args{};
  args.hRoot = client_;
  args.hObjectParent = parent;
  args.hObjectNew = new_handle != 0 ? new_handle : next_handle();
  args.hClass = hclass;
  args.pAllocParms = nv_p64(params);
  args.paramsSize = params_size;
  const std::string what = "RM_ALLOC of class " + class_text(hclass) + " as handle " + hex(args.hObjectNew) +
                           " under handle " + hex(parent);
  ioctl(ctl_fd_, kRmAllocRequest, &args, what);
  check_status(args.status, what);
  return args.hObjectNew;
}

void NvRm::control(NvHandle object, NvU32 cmd, void* params, NvU32 params_size) {
  NVOS54_PARAMETERS args{};
  args.hClient = client_;
  args.hObject = object;
  args.cmd = cmd;
  args.params = nv_p64(params);
  args.paramsSize = params_size;
  const std::string what = "RM_CONTROL " + hex(cmd) + " on handle " + hex(object);
  ioctl(ctl_fd_, kRmControlRequest, &args, what);
  check_status(args.status, what);
}

void NvRm::free(NvHandle object, NvHandle parent) {
  NVOS00_PARAMETERS args{};
  args.hRoot = client_;
  args.hObjectParent = parent;
  args.hObjectOld = object;
  const std::string what = "RM_FREE of handle " + hex(object);
  ioctl(ctl_fd_, kRmFreeRequest, &args, what);
  check_status(args.status, what);
  if (object == client_) client_ = 0;
}

void* NvRm::map_memory(NvHandle device, NvHandle memory, NvU64 length, int mmap_fd, const CpuMapOptions& options) {
  nv_ioctl_nvos33_parameters_with_fd args{};
  args.params.hClient = client_;
  args.params.hDevice = device;
  args.params.hMemory = memory;
  args.params.offset = options.offset;
  args.params.length = length;
  args.params.flags = options.flags;
  args.fd = mmap_fd;
  const std::string what = "RM_MAP_MEMORY of memory " + hex(memory) + " (" + std::to_string(length) + " bytes)";
  ioctl(ctl_fd_, kRmMapMemoryRequest, &args, what);
  check_status(args.params.status, what);
  const int flags = MAP_SHARED | (options.address != nullptr ? MAP_FIXED : 0);
  int error = 0;
  void* address = seam_.mmap(options.address, length, options.prot, flags, mmap_fd, 0, &error);
  if (address == MAP_FAILED) throw NvIoctlError("mmap of fd " + std::to_string(mmap_fd) + " after " + what, error);
  return address;
}

void NvRm::unmap_memory(NvHandle device, NvHandle memory, void* address, NvU64 length) {
  const int unmapped = seam_.munmap(address, length);
  if (unmapped < 0) throw NvIoctlError("munmap of memory " + hex(memory), unmapped);
  NVOS34_PARAMETERS args{};
  args.hClient = client_;
  args.hDevice = device;
  args.hMemory = memory;
  args.pLinearAddress = nv_p64(address);
  const std::string what = "RM_UNMAP_MEMORY of memory " + hex(memory);
  ioctl(ctl_fd_, kRmUnmapMemoryRequest, &args, what);
  check_status(args.status, what);
}

NvU64 NvRm::map_memory_dma(NvHandle device, NvHandle dma, NvHandle memory, NvU64 length, NvU32 flags,
                           NvU64 dma_offset, NvU64 offset) {
  NVOS46_PARAMETERS args{};
  args.hClient = client_;
  args.hDevice = device;
  args.hDma = dma;
  args.hMemory = memory;
  args.offset = offset;
  args.length = length;
  args.flags = flags;
  args.dmaOffset = dma_offset;
  const std::string what = "RM_MAP_MEMORY_DMA of memory " + hex(memory) + " into " + hex(dma);
  ioctl(ctl_fd_, kRmMapMemoryDmaRequest, &args, what);
  check_status(args.status, what);
  return args.dmaOffset;
}

void NvRm::unmap_memory_dma(NvHandle device, NvHandle dma, NvHandle memory, NvU64 dma_offset, NvU64 size) {
  NVOS47_PARAMETERS args{};
  args.hClient = client_;
  args.hDevice = device;
  args.hDma = dma;
  args.hMemory = memory;
  args.dmaOffset = dma_offset;
  args.size = size;
  const std::string what = "RM_UNMAP_MEMORY_DMA of memory " + hex(memory) + " at GPU VA " + hex(dma_offset);
  ioctl(ctl_fd_, kRmUnmapMemoryDmaRequest, &args, what);
  check_status(args.status, what);
}

NvHandle NvRm::alloc_memory(int device_fd, NvHandle parent, NvU32 hclass, NvU32 flags, NvP64 memory, NvU64 limit,
                            NvHandle new_handle) {
  nv_ioctl_nvos02_parameters_with_fd args{};
  args.params.hRoot = client_;
  args.params.hObjectParent = parent;
  args.params.hObjectNew = new_handle != 0 ? new_handle : next_handle();
  args.params.hClass = hclass;
  args.params.flags = flags;
  args.params.pMemory = memory;
  args.params.limit = limit;
  args.fd = device_fd;
  const std::string what = "RM_ALLOC_MEMORY of class " + class_text(hclass) + " as handle " +
                           hex(args.params.hObjectNew) + " under handle " + hex(parent);
  ioctl(device_fd, kRmAllocMemoryRequest, &args, what);
  check_status(args.params.status, what);
  return args.params.hObjectNew;
}

std::vector<nv_ioctl_card_info_t> NvRm::card_info() {
  std::vector<nv_ioctl_card_info_t> table(kCardInfoEntries);
  ioctl(ctl_fd_, kCardInfoRequest, table.data(), "CARD_INFO");
  std::erase_if(table, [](const nv_ioctl_card_info_t& card) { return card.valid == 0; });
  return table;
}

void NvRm::register_fd(int device_fd) {
  nv_ioctl_register_fd_t args{ctl_fd_};
  ioctl(device_fd, kRegisterFdRequest, &args, "REGISTER_FD of ctl fd " + std::to_string(ctl_fd_));
}

std::string NvRm::build_version() {
  NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS params{};
  control(client_, NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2, params);
  const std::size_t length = strnlen(params.driverVersionBuffer, sizeof params.driverVersionBuffer);
  return std::string(params.driverVersionBuffer, length);
}

NvU32 NvRm::device_instance(NvU32 gpu_id) {
  NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS params{};
  params.gpuId = gpu_id;
  control(client_, NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, params);
  return params.deviceInstance;
}

std::vector<NvU32> NvRm::attached_gpu_ids() {
  NV0000_CTRL_GPU_GET_ATTACHED_IDS_PARAMS params{};
  control(client_, NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS, params);
  std::vector<NvU32> ids;
  for (const NvU32 id : params.gpuIds) {
    if (id == NV0000_CTRL_GPU_INVALID_ID) break;
    ids.push_back(id);
  }
  return ids;
}

std::vector<NvU32> NvRm::class_list(NvHandle device) {
  NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS params{};
  control(device, NV0080_CTRL_CMD_GPU_GET_CLASSLIST, params);
  std::vector<NvU32> classes(params.numClasses);
  params.classList = nv_p64(classes.data());
  control(device, NV0080_CTRL_CMD_GPU_GET_CLASSLIST, params);
  classes.resize(params.numClasses);
  return classes;
}

NvProcessorUuid NvRm::gpu_uuid(NvHandle subdevice) {
  NV2080_CTRL_GPU_GET_GID_INFO_PARAMS params{};
  params.flags = NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY;
  params.length = sizeof(NvProcessorUuid);
  control(subdevice, NV2080_CTRL_CMD_GPU_GET_GID_INFO, params);
  if (params.length != sizeof(NvProcessorUuid)) {
    throw std::runtime_error("GPU_GET_GID_INFO on subdevice " + hex(subdevice) + " returned " +
                             std::to_string(params.length) + " bytes; expected a 16-byte binary UUID");
  }
  NvProcessorUuid uuid{};
  std::memcpy(uuid.uuid, params.data, sizeof uuid.uuid);
  return uuid;
}

std::vector<NvU32> NvRm::gr_info(NvHandle subdevice, std::span<const NvU32> indices) {
  std::vector<NV2080_CTRL_GR_INFO> list;
  for (const NvU32 index : indices) list.push_back({index, 0});
  NV2080_CTRL_GR_GET_INFO_PARAMS params{};
  params.grInfoListSize = static_cast<NvU32>(list.size());
  params.grInfoList = nv_p64(list.data());
  control(subdevice, NV2080_CTRL_CMD_GR_GET_INFO, params);
  std::vector<NvU32> values;
  for (const auto& entry : list) values.push_back(entry.data);
  return values;
}

NvU32 NvRm::work_submit_token(NvHandle channel) {
  NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS params{};
  control(channel, NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN, params);
  return params.workSubmitToken;
}

std::vector<NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_ENTRY> NvRm::read_mmu_fault_info(NvHandle debugger) {
  NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_PARAMS params{};
  control(debugger, NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO, params);
  if (params.count > NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_MAX_ENTRIES)
    throw std::runtime_error("RM_CONTROL NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO on handle " + hex(debugger) + " reports " +
                             std::to_string(params.count) + " MMU faults; the list holds at most " +
                             std::to_string(NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_MAX_ENTRIES));
  return {params.mmuFaultInfoList, params.mmuFaultInfoList + params.count};
}

void NvRm::schedule_channel_group(NvHandle channel_group, bool enable) {
  NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS params{};
  params.bEnable = enable ? 1 : 0;
  control(channel_group, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, params);
}

}  // namespace doorbell::kernel_interface::nvidia
