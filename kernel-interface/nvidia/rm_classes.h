#pragma once
// RM class ids and the driver-580 allocation parameter structs (x86-64).
// Sources: NVIDIA/open-gpu-kernel-modules 580.x src/common/sdk/nvidia/inc/class/*.h (cl0080.h, cl2080.h, cl90f1.h,
// cla06c.h, cl9067.h, cl0070.h, clc36f.h/clc86f.h for NV_CHANNEL_ALLOC_PARAMS via alloc/alloc_channel.h, nvos.h for
// NV_MEMORY_ALLOCATION_PARAMS); sizes and offsets as measured in firmware-notes/nvidia-hopper.md §4-5, §8.

#include <cstddef>

#include "kernel-interface/nvidia/nv_types.h"

namespace doorbell::kernel_interface::nvidia {

// ---- Class ids (firmware-notes/nvidia-hopper.md §4)
inline constexpr NvU32 NV01_ROOT_CLIENT = 0x41;
inline constexpr NvU32 NV1_MEMORY_SYSTEM = 0x3e;
inline constexpr NvU32 NV1_MEMORY_USER = 0x40;
inline constexpr NvU32 NV01_MEMORY_VIRTUAL = 0x70;
inline constexpr NvU32 NV01_MEMORY_SYSTEM_OS_DESCRIPTOR = 0x71;
inline constexpr NvU32 NV01_DEVICE_0 = 0x80;
inline constexpr NvU32 NV20_SUBDEVICE_0 = 0x2080;
inline constexpr NvU32 GT200_DEBUGGER = 0x83de;
inline constexpr NvU32 FERMI_CONTEXT_SHARE_A = 0x9067;
inline constexpr NvU32 FERMI_VASPACE_A = 0x90f1;
inline constexpr NvU32 KEPLER_CHANNEL_GROUP_A = 0xa06c;
inline constexpr NvU32 KEPLER_INLINE_TO_MEMORY_B = 0xa140;
inline constexpr NvU32 VOLTA_USERMODE_A = 0xc361;
inline constexpr NvU32 TURING_USERMODE_A = 0xc461;
inline constexpr NvU32 AMPERE_USERMODE_A = 0xc561;
inline constexpr NvU32 HOPPER_USERMODE_A = 0xc661;
inline constexpr NvU32 VOLTA_CHANNEL_GPFIFO_A = 0xc36f;
inline constexpr NvU32 TURING_CHANNEL_GPFIFO_A = 0xc46f;
inline constexpr NvU32 AMPERE_CHANNEL_GPFIFO_A = 0xc56f;
inline constexpr NvU32 HOPPER_CHANNEL_GPFIFO_A = 0xc86f;
inline constexpr NvU32 HOPPER_DMA_COPY_A = 0xc8b5;
inline constexpr NvU32 HOPPER_A = 0xcb97;
inline constexpr NvU32 HOPPER_COMPUTE_A = 0xcbc0;
// Ampere/Ada fallbacks (class/clc7c0.h, clc9c0.h, clc7b5.h)
inline constexpr NvU32 AMPERE_COMPUTE_B = 0xc7c0;
inline constexpr NvU32 ADA_COMPUTE_A = 0xc9c0;
inline constexpr NvU32 AMPERE_DMA_COPY_B = 0xc7b5;

// The usermode region (doorbell page) is NVC361_NV_USERMODE__SIZE bytes; the doorbell register
// NVC361_NOTIFY_CHANNEL_PENDING is at +0x90 (ogkm 580.142 sdk/class/clc361.h:33; firmware-notes/nvidia-hopper.md §9).
inline constexpr std::size_t NVC361_NV_USERMODE__SIZE = 0x10000;
inline constexpr std::size_t NVC361_NOTIFY_CHANNEL_PENDING = 0x90;
// USERD GPPut offset (Nvc56fControl.GPPut; firmware-notes/nvidia-hopper.md §8).
inline constexpr std::size_t kUserdGpPutOffset = 0x8c;
inline constexpr std::size_t kUserdGpGetOffset = 0x88;

// ---- Engine types (ctrl/ctrl2080/ctrl2080gpu.h NV2080_ENGINE_TYPE_*)
inline constexpr NvU32 NV2080_ENGINE_TYPE_GRAPHICS = 1;
inline constexpr NvU32 NV2080_ENGINE_TYPE_COPY0 = 9;

// ---- Allocation parameters

struct NV0080_ALLOC_PARAMETERS {  // NV01_DEVICE_0
  NvU32 deviceId;
  NvHandle hClientShare;
  NvHandle hTargetClient;
  NvHandle hTargetDevice;
  NvV32 flags;
  NvU64 vaSpaceSize;
  NvU64 vaStartInternal;
  NvU64 vaLimitInternal;
  NvV32 vaMode;
};
static_assert(sizeof(NV0080_ALLOC_PARAMETERS) == 56);
static_assert(offsetof(NV0080_ALLOC_PARAMETERS, vaSpaceSize) == 24 && offsetof(NV0080_ALLOC_PARAMETERS, vaMode) == 48);
inline constexpr NvV32 NV_DEVICE_ALLOCATION_VAMODE_OPTIONAL_MULTIPLE_VASPACES = 0;

struct NV2080_ALLOC_PARAMETERS {  // NV20_SUBDEVICE_0
  NvU32 subDeviceId;
};
static_assert(sizeof(NV2080_ALLOC_PARAMETERS) == 4);

struct NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS {  // NV01_MEMORY_VIRTUAL (class/cl0070.h)
  NvU64 offset;
  NvU64 limit;
  NvHandle hVASpace;
};
static_assert(sizeof(NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS) == 24);

struct NV_VASPACE_ALLOCATION_PARAMETERS {  // FERMI_VASPACE_A; 56 bytes from 580 on (pasid), 48 before
  NvU32 index;
  NvV32 flags;
  NvU64 vaSize;
  NvU64 vaStartInternal;
  NvU64 vaLimitInternal;
  NvU32 bigPageSize;
  NvU64 vaBase;
  NvU32 pasid;
};
static_assert(sizeof(NV_VASPACE_ALLOCATION_PARAMETERS) == 56);
static_assert(offsetof(NV_VASPACE_ALLOCATION_PARAMETERS, vaSize) == 8 &&
              offsetof(NV_VASPACE_ALLOCATION_PARAMETERS, bigPageSize) == 32 &&
              offsetof(NV_VASPACE_ALLOCATION_PARAMETERS, vaBase) == 40 &&
              offsetof(NV_VASPACE_ALLOCATION_PARAMETERS, pasid) == 48);
inline constexpr NvV32 NV_VASPACE_ALLOCATION_FLAGS_IS_EXTERNALLY_OWNED = 1u << 3;
inline constexpr NvV32 NV_VASPACE_ALLOCATION_FLAGS_ENABLE_PAGE_FAULTING = 1u << 6;

struct NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS {  // KEPLER_CHANNEL_GROUP_A
  NvHandle hObjectError;
  NvHandle hObjectEccError;
  NvHandle hVASpace;
  NvU32 engineType;
  NvBool bIsCallingContextVgpuPlugin;
};
static_assert(sizeof(NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS) == 20);

struct NV_CTXSHARE_ALLOCATION_PARAMETERS {  // FERMI_CONTEXT_SHARE_A
  NvHandle hVASpace;
  NvU32 flags;
  NvU32 subctxId;
};
static_assert(sizeof(NV_CTXSHARE_ALLOCATION_PARAMETERS) == 12);
inline constexpr NvU32 NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_SYNC = 0;
inline constexpr NvU32 NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_ASYNC = 1;

struct NV_MEMORY_DESC_PARAMS {
  NvU64 base;
  NvU64 size;
  NvU32 addressSpace;
  NvU32 cacheAttrib;
};
static_assert(sizeof(NV_MEMORY_DESC_PARAMS) == 24);

inline constexpr std::size_t NV_MAX_SUBDEVICES = 8;

// GPFIFO channel classes (NV_CHANNELGPFIFO_ALLOCATION_PARAMETERS); 368 bytes in 570-595, 376 in 610.
struct NV_CHANNEL_ALLOC_PARAMS {
  NvHandle hObjectError;
  NvHandle hObjectBuffer;
  NvU64 gpFifoOffset;
  NvU32 gpFifoEntries;
  NvU32 flags;
  NvHandle hContextShare;
  NvHandle hVASpace;
  NvHandle hUserdMemory[NV_MAX_SUBDEVICES];
  NvU64 userdOffset[NV_MAX_SUBDEVICES];
  NvU32 engineType;
  NvU32 cid;
  NvU32 subDeviceId;
  NvHandle hObjectEccError;
  NV_MEMORY_DESC_PARAMS instanceMem;
  NV_MEMORY_DESC_PARAMS userdMem;
  NV_MEMORY_DESC_PARAMS ramfcMem;
  NV_MEMORY_DESC_PARAMS mthdbufMem;
  NvHandle hPhysChannelGroup;
  NvU32 internalFlags;
  NV_MEMORY_DESC_PARAMS errorNotifierMem;
  NV_MEMORY_DESC_PARAMS eccErrorNotifierMem;
  NvU32 ProcessID;
  NvU32 SubProcessID;
  NvU32 encryptIv[3];
  NvU32 decryptIv[3];
  NvU32 hmacNonce[8];
  NvU32 tpcConfigID;
};
using NV_CHANNELGPFIFO_ALLOCATION_PARAMETERS = NV_CHANNEL_ALLOC_PARAMS;
static_assert(sizeof(NV_CHANNEL_ALLOC_PARAMS) == 368);
static_assert(offsetof(NV_CHANNEL_ALLOC_PARAMS, gpFifoEntries) == 16 &&
              offsetof(NV_CHANNEL_ALLOC_PARAMS, hUserdMemory) == 32 &&
              offsetof(NV_CHANNEL_ALLOC_PARAMS, userdOffset) == 64 &&
              offsetof(NV_CHANNEL_ALLOC_PARAMS, engineType) == 128 &&
              offsetof(NV_CHANNEL_ALLOC_PARAMS, instanceMem) == 144 &&
              offsetof(NV_CHANNEL_ALLOC_PARAMS, hPhysChannelGroup) == 240 &&
              offsetof(NV_CHANNEL_ALLOC_PARAMS, errorNotifierMem) == 248 &&
              offsetof(NV_CHANNEL_ALLOC_PARAMS, ProcessID) == 296 &&
              offsetof(NV_CHANNEL_ALLOC_PARAMS, encryptIv) == 304 &&
              offsetof(NV_CHANNEL_ALLOC_PARAMS, hmacNonce) == 328 &&
              offsetof(NV_CHANNEL_ALLOC_PARAMS, tpcConfigID) == 360);

// NV1_MEMORY_USER (video memory) and NV1_MEMORY_SYSTEM (system memory)
struct NV_MEMORY_ALLOCATION_PARAMS {
  NvU32 owner;
  NvU32 type;
  NvU32 flags;
  NvU32 width;
  NvU32 height;
  NvS32 pitch;
  NvU32 attr;
  NvU32 attr2;
  NvU32 format;
  NvU32 comprCovg;
  NvU32 zcullCovg;
  NvU64 rangeLo;
  NvU64 rangeHi;
  NvU64 size;
  NvU64 alignment;
  NvU64 offset;
  NvU64 limit;
  NvP64 address;
  NvU32 ctagOffset;
  NvHandle hVASpace;
  NvU32 internalflags;
  NvU32 tag;
  NvS32 numaNode;
};
static_assert(sizeof(NV_MEMORY_ALLOCATION_PARAMS) == 128);
static_assert(offsetof(NV_MEMORY_ALLOCATION_PARAMS, rangeLo) == 48 &&
              offsetof(NV_MEMORY_ALLOCATION_PARAMS, size) == 64 &&
              offsetof(NV_MEMORY_ALLOCATION_PARAMS, address) == 96 &&
              offsetof(NV_MEMORY_ALLOCATION_PARAMS, numaNode) == 120);
inline constexpr NvU32 NVOS32_TYPE_IMAGE = 0;
inline constexpr NvU32 NVOS32_TYPE_NOTIFIER = 13;
inline constexpr NvU32 NVOS32_ATTR_PAGE_SIZE_SHIFT = 23;  // 24:23
inline constexpr NvU32 NVOS32_ATTR_PAGE_SIZE_HUGE = 3;
inline constexpr NvU32 NVOS32_ATTR_LOCATION_SHIFT = 25;  // 26:25
inline constexpr NvU32 NVOS32_ATTR_LOCATION_VIDMEM = 0;
inline constexpr NvU32 NVOS32_ATTR_LOCATION_PCI = 1;
inline constexpr NvU32 NVOS32_ATTR_PHYSICALITY_SHIFT = 27;  // 28:27
inline constexpr NvU32 NVOS32_ATTR_PHYSICALITY_CONTIGUOUS = 2;
inline constexpr NvU32 NVOS32_ATTR_PHYSICALITY_ALLOW_NONCONTIGUOUS = 3;
inline constexpr NvU32 NVOS32_ATTR2_GPU_CACHEABLE_SHIFT = 2;  // 3:2
inline constexpr NvU32 NVOS32_ATTR2_GPU_CACHEABLE_YES = 1;
inline constexpr NvU32 NVOS32_ATTR2_GPU_CACHEABLE_NO = 2;
inline constexpr NvU32 NVOS32_ALLOC_FLAGS_IGNORE_BANK_PLACEMENT = 0x1;
inline constexpr NvU32 NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE = 0x100;
inline constexpr NvU32 NVOS32_ALLOC_FLAGS_MEMORY_HANDLE_PROVIDED = 0x4000;
inline constexpr NvU32 NVOS32_ALLOC_FLAGS_MAP_NOT_REQUIRED = 0x8000;
inline constexpr NvU32 NVOS32_ALLOC_FLAGS_PERSISTENT_VIDMEM = 0x10000;

struct NV_HOPPER_USERMODE_A_PARAMS {  // optional for HOPPER_USERMODE_A
  NvBool bBar1Mapping;
  NvBool bPriv;
};
static_assert(sizeof(NV_HOPPER_USERMODE_A_PARAMS) == 2);

// GT200_DEBUGGER, allocated under the device for a compute object (hClass3dObject) of client hAppClient (0: the
// calling client); RM's debugger session then reports that object's context's faults (ctrl83dedebug.h).
// open-gpu-kernel-modules 580.95.05 src/common/sdk/nvidia/inc/class/cl83de.h:51-55.
struct NV83DE_ALLOC_PARAMETERS {
  NvHandle hDebuggerClient_Obsolete;  // must be 0
  NvHandle hAppClient;
  NvHandle hClass3dObject;
};
static_assert(sizeof(NV83DE_ALLOC_PARAMETERS) == 12);
static_assert(offsetof(NV83DE_ALLOC_PARAMETERS, hAppClient) == 4 &&
              offsetof(NV83DE_ALLOC_PARAMETERS, hClass3dObject) == 8);

// "HOPPER_COMPUTE_A" for 0xcbc0 etc.; empty for ids this file does not name. Used in error messages.
const char* nv_class_name(NvU32 hclass);

}  // namespace doorbell::kernel_interface::nvidia
