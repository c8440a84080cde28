// Names for status codes, escapes, classes and UVM ioctls, for error messages.
#include <cstdio>

#include "kernel-interface/nvidia/rm_classes.h"
#include "kernel-interface/nvidia/rm_ioctl.h"
#include "kernel-interface/nvidia/rm_status.h"
#include "kernel-interface/nvidia/uvm_ioctl.h"
#include "kernel-interface/syscall_seam.h"

namespace doorbell::kernel_interface::nvidia {

const char* nv_status_name(NV_STATUS status) {
  switch (status) {
    case NV_OK: return "NV_OK";
    case NV_ERR_BUFFER_TOO_SMALL: return "NV_ERR_BUFFER_TOO_SMALL";
    case NV_ERR_GPU_UUID_NOT_FOUND: return "NV_ERR_GPU_UUID_NOT_FOUND";
    case NV_ERR_ILLEGAL_ACTION: return "NV_ERR_ILLEGAL_ACTION";
    case NV_ERR_IN_USE: return "NV_ERR_IN_USE";
    case NV_ERR_INSERT_DUPLICATE_NAME: return "NV_ERR_INSERT_DUPLICATE_NAME";
    case NV_ERR_INSUFFICIENT_RESOURCES: return "NV_ERR_INSUFFICIENT_RESOURCES";
    case NV_ERR_INVALID_ADDRESS: return "NV_ERR_INVALID_ADDRESS";
    case NV_ERR_INVALID_ARGUMENT: return "NV_ERR_INVALID_ARGUMENT";
    case NV_ERR_INVALID_CLASS: return "NV_ERR_INVALID_CLASS";
    case NV_ERR_INVALID_CLIENT: return "NV_ERR_INVALID_CLIENT";
    case NV_ERR_INVALID_COMMAND: return "NV_ERR_INVALID_COMMAND";
    case NV_ERR_INVALID_DEVICE: return "NV_ERR_INVALID_DEVICE";
    case NV_ERR_INVALID_FLAGS: return "NV_ERR_INVALID_FLAGS";
    case NV_ERR_INVALID_LIMIT: return "NV_ERR_INVALID_LIMIT";
    case NV_ERR_INVALID_OBJECT: return "NV_ERR_INVALID_OBJECT";
    case NV_ERR_INVALID_OBJECT_HANDLE: return "NV_ERR_INVALID_OBJECT_HANDLE";
    case NV_ERR_INVALID_OBJECT_NEW: return "NV_ERR_INVALID_OBJECT_NEW";
    case NV_ERR_INVALID_OBJECT_PARENT: return "NV_ERR_INVALID_OBJECT_PARENT";
    case NV_ERR_INVALID_OFFSET: return "NV_ERR_INVALID_OFFSET";
    case NV_ERR_INVALID_PARAM_STRUCT: return "NV_ERR_INVALID_PARAM_STRUCT";
    case NV_ERR_INVALID_POINTER: return "NV_ERR_INVALID_POINTER";
    case NV_ERR_INVALID_STATE: return "NV_ERR_INVALID_STATE";
    case NV_ERR_NO_MEMORY: return "NV_ERR_NO_MEMORY";
    case NV_ERR_NOT_SUPPORTED: return "NV_ERR_NOT_SUPPORTED";
    case NV_ERR_OBJECT_NOT_FOUND: return "NV_ERR_OBJECT_NOT_FOUND";
    case NV_ERR_OPERATING_SYSTEM: return "NV_ERR_OPERATING_SYSTEM";
    case NV_ERR_STATE_IN_USE: return "NV_ERR_STATE_IN_USE";
    case NV_ERR_UVM_ADDRESS_IN_USE: return "NV_ERR_UVM_ADDRESS_IN_USE";
    default: return "NV_STATUS";
  }
}

std::string hex(NvU64 value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

std::string describe_nv_status(NV_STATUS status) {
  return std::string(nv_status_name(status)) + " (" + hex(status) + ")";
}

NvIoctlError::NvIoctlError(const std::string& what_failed, int error)
    : std::runtime_error(what_failed + " failed in the kernel: " + describe_errno(error)),
      error_(error < 0 ? -error : error) {}

const char* nv_escape_name(unsigned escape) {
  switch (escape) {
    case NV_ESC_RM_ALLOC_MEMORY: return "RM_ALLOC_MEMORY";
    case NV_ESC_RM_FREE: return "RM_FREE";
    case NV_ESC_RM_CONTROL: return "RM_CONTROL";
    case NV_ESC_RM_ALLOC: return "RM_ALLOC";
    case NV_ESC_RM_VID_HEAP_CONTROL: return "RM_VID_HEAP_CONTROL";
    case NV_ESC_RM_MAP_MEMORY: return "RM_MAP_MEMORY";
    case NV_ESC_RM_UNMAP_MEMORY: return "RM_UNMAP_MEMORY";
    case NV_ESC_RM_MAP_MEMORY_DMA: return "RM_MAP_MEMORY_DMA";
    case NV_ESC_RM_UNMAP_MEMORY_DMA: return "RM_UNMAP_MEMORY_DMA";
    case NV_ESC_CARD_INFO: return "CARD_INFO";
    case NV_ESC_REGISTER_FD: return "REGISTER_FD";
    case NV_ESC_ALLOC_OS_EVENT: return "ALLOC_OS_EVENT";
    case NV_ESC_FREE_OS_EVENT: return "FREE_OS_EVENT";
    case NV_ESC_CHECK_VERSION_STR: return "CHECK_VERSION_STR";
    default: return "unknown escape";
  }
}

const char* nv_class_name(NvU32 hclass) {
  switch (hclass) {
    case NV01_ROOT_CLIENT: return "NV01_ROOT_CLIENT";
    case NV1_MEMORY_SYSTEM: return "NV1_MEMORY_SYSTEM";
    case NV1_MEMORY_USER: return "NV1_MEMORY_USER";
    case NV01_MEMORY_VIRTUAL: return "NV01_MEMORY_VIRTUAL";
    case NV01_MEMORY_SYSTEM_OS_DESCRIPTOR: return "NV01_MEMORY_SYSTEM_OS_DESCRIPTOR";
    case NV01_DEVICE_0: return "NV01_DEVICE_0";
    case NV20_SUBDEVICE_0: return "NV20_SUBDEVICE_0";
    case GT200_DEBUGGER: return "GT200_DEBUGGER";
    case FERMI_CONTEXT_SHARE_A: return "FERMI_CONTEXT_SHARE_A";
    case FERMI_VASPACE_A: return "FERMI_VASPACE_A";
    case KEPLER_CHANNEL_GROUP_A: return "KEPLER_CHANNEL_GROUP_A";
    case KEPLER_INLINE_TO_MEMORY_B: return "KEPLER_INLINE_TO_MEMORY_B";
    case VOLTA_USERMODE_A: return "VOLTA_USERMODE_A";
    case TURING_USERMODE_A: return "TURING_USERMODE_A";
    case AMPERE_USERMODE_A: return "AMPERE_USERMODE_A";
    case HOPPER_USERMODE_A: return "HOPPER_USERMODE_A";
    case VOLTA_CHANNEL_GPFIFO_A: return "VOLTA_CHANNEL_GPFIFO_A";
    case TURING_CHANNEL_GPFIFO_A: return "TURING_CHANNEL_GPFIFO_A";
    case AMPERE_CHANNEL_GPFIFO_A: return "AMPERE_CHANNEL_GPFIFO_A";
    case HOPPER_CHANNEL_GPFIFO_A: return "HOPPER_CHANNEL_GPFIFO_A";
    case HOPPER_DMA_COPY_A: return "HOPPER_DMA_COPY_A";
    case HOPPER_A: return "HOPPER_A";
    case HOPPER_COMPUTE_A: return "HOPPER_COMPUTE_A";
    default: return "";
  }
}

const char* uvm_ioctl_name(unsigned long request) {
  switch (request) {
    case UVM_INITIALIZE: return "UVM_INITIALIZE";
    case UVM_REGISTER_GPU_VASPACE: return "UVM_REGISTER_GPU_VASPACE";
    case UVM_REGISTER_CHANNEL: return "UVM_REGISTER_CHANNEL";
    case UVM_ENABLE_PEER_ACCESS: return "UVM_ENABLE_PEER_ACCESS";
    case UVM_MAP_EXTERNAL_ALLOCATION: return "UVM_MAP_EXTERNAL_ALLOCATION";
    case UVM_FREE: return "UVM_FREE";
    case UVM_REGISTER_GPU: return "UVM_REGISTER_GPU";
    case UVM_CREATE_EXTERNAL_RANGE: return "UVM_CREATE_EXTERNAL_RANGE";
    case UVM_MM_INITIALIZE: return "UVM_MM_INITIALIZE";
    default: return "unknown UVM ioctl";
  }
}

}  // namespace doorbell::kernel_interface::nvidia
