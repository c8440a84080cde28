#pragma once
// UVM ioctls on /dev/nvidia-uvm (driver 580, x86-64). On Linux the request is the raw number (UVM_IOCTL_BASE(i) = i)
// and the driver copies its own struct size, so nothing checks the size: a wrong layout is silently misread. Each
// struct returns its NV_STATUS in rmStatus.
// Sources: NVIDIA/open-gpu-kernel-modules 580.x kernel-open/nvidia-uvm/uvm_ioctl.h, uvm_linux_ioctl.h,
// uvm_types.h (UvmGpuMappingAttributes); sizes and offsets as measured in firmware-notes/nvidia-hopper.md §6.

#include <cstddef>

#include "kernel-interface/nvidia/nv_types.h"

namespace doorbell::kernel_interface::nvidia {

inline constexpr unsigned long UVM_INITIALIZE = 0x30000001;
inline constexpr unsigned long UVM_REGISTER_GPU_VASPACE = 25;
inline constexpr unsigned long UVM_REGISTER_CHANNEL = 27;
inline constexpr unsigned long UVM_ENABLE_PEER_ACCESS = 29;
inline constexpr unsigned long UVM_MAP_EXTERNAL_ALLOCATION = 33;
inline constexpr unsigned long UVM_FREE = 34;
inline constexpr unsigned long UVM_REGISTER_GPU = 37;
inline constexpr unsigned long UVM_CREATE_EXTERNAL_RANGE = 73;
inline constexpr unsigned long UVM_MM_INITIALIZE = 75;

// "UVM_REGISTER_GPU" for 37 etc.; "UVM ioctl <n>" for others.
const char* uvm_ioctl_name(unsigned long request);

struct NvProcessorUuid {
  NvU8 uuid[16];
};
static_assert(sizeof(NvProcessorUuid) == 16);

inline constexpr NvU64 UVM_INIT_FLAGS_DISABLE_HMM = 1;
inline constexpr NvU64 UVM_INIT_FLAGS_MULTI_PROCESS_SHARING_MODE = 2;

struct UVM_INITIALIZE_PARAMS {  // must be the first ioctl on a UVM fd
  NvU64 flags;
  NV_STATUS rmStatus;
};
static_assert(sizeof(UVM_INITIALIZE_PARAMS) == 16);

struct UVM_MM_INITIALIZE_PARAMS {  // on a second UVM fd, naming the first
  NvS32 uvmFd;
  NV_STATUS rmStatus;
};
static_assert(sizeof(UVM_MM_INITIALIZE_PARAMS) == 8);

struct UVM_REGISTER_GPU_PARAMS {
  NvProcessorUuid gpu_uuid;
  NvBool numaEnabled;
  NvS32 numaNodeId;
  NvS32 rmCtrlFd;  // -1: UVM uses its own RM client
  NvHandle hClient;
  NvHandle hSmcPartRef;
  NV_STATUS rmStatus;
};
static_assert(sizeof(UVM_REGISTER_GPU_PARAMS) == 40);
static_assert(offsetof(UVM_REGISTER_GPU_PARAMS, numaNodeId) == 20 && offsetof(UVM_REGISTER_GPU_PARAMS, rmStatus) == 36);

struct UVM_REGISTER_GPU_VASPACE_PARAMS {
  NvProcessorUuid gpuUuid;
  NvS32 rmCtrlFd;
  NvHandle hClient;
  NvHandle hVaSpace;
  NV_STATUS rmStatus;
};
static_assert(sizeof(UVM_REGISTER_GPU_VASPACE_PARAMS) == 32);

struct UVM_REGISTER_CHANNEL_PARAMS {
  NvProcessorUuid gpuUuid;
  NvS32 rmCtrlFd;
  NvHandle hClient;
  NvHandle hChannel;
  NvU64 base;
  NvU64 length;
  NV_STATUS rmStatus;
};
static_assert(sizeof(UVM_REGISTER_CHANNEL_PARAMS) == 56);
static_assert(offsetof(UVM_REGISTER_CHANNEL_PARAMS, base) == 32 &&
              offsetof(UVM_REGISTER_CHANNEL_PARAMS, rmStatus) == 48);

struct UVM_ENABLE_PEER_ACCESS_PARAMS {
  NvProcessorUuid gpuUuidA;
  NvProcessorUuid gpuUuidB;
  NV_STATUS rmStatus;
};
static_assert(sizeof(UVM_ENABLE_PEER_ACCESS_PARAMS) == 36);

struct UVM_CREATE_EXTERNAL_RANGE_PARAMS {
  NvU64 base;
  NvU64 length;
  NV_STATUS rmStatus;
};
static_assert(sizeof(UVM_CREATE_EXTERNAL_RANGE_PARAMS) == 24);

inline constexpr NvU32 UvmGpuMappingTypeDefault = 0;
inline constexpr NvU32 UvmGpuMappingTypeReadWriteAtomic = 1;

struct UvmGpuMappingAttributes {
  NvProcessorUuid gpuUuid;
  NvU32 gpuMappingType;
  NvU32 gpuCachingType;
  NvU32 gpuFormatType;
  NvU32 gpuElementBits;
  NvU32 gpuCompressionType;
};
static_assert(sizeof(UvmGpuMappingAttributes) == 36);

inline constexpr std::size_t UVM_MAX_GPUS = 256;
struct UVM_MAP_EXTERNAL_ALLOCATION_PARAMS {
  NvU64 base;
  NvU64 length;
  NvU64 offset;
  UvmGpuMappingAttributes perGpuAttributes[UVM_MAX_GPUS];
  NvU64 gpuAttributesCount;
  NvS32 rmCtrlFd;
  NvHandle hClient;
  NvHandle hMemory;
  NV_STATUS rmStatus;
};
static_assert(sizeof(UVM_MAP_EXTERNAL_ALLOCATION_PARAMS) == 9264);
static_assert(offsetof(UVM_MAP_EXTERNAL_ALLOCATION_PARAMS, perGpuAttributes) == 24 &&
              offsetof(UVM_MAP_EXTERNAL_ALLOCATION_PARAMS, gpuAttributesCount) == 9240 &&
              offsetof(UVM_MAP_EXTERNAL_ALLOCATION_PARAMS, rmCtrlFd) == 9248 &&
              offsetof(UVM_MAP_EXTERNAL_ALLOCATION_PARAMS, rmStatus) == 9260);

struct UVM_FREE_PARAMS {  // 24 bytes through 580; 590 drops `length` (16 bytes)
  NvU64 base;
  NvU64 length;
  NV_STATUS rmStatus;
};
static_assert(sizeof(UVM_FREE_PARAMS) == 24);

}  // namespace doorbell::kernel_interface::nvidia
