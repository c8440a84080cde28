#pragma once
// RM control commands (NV_ESC_RM_CONTROL) and their driver-580 parameter structs. RM requires paramsSize to equal
// sizeof(params) exactly.
// Sources: NVIDIA/open-gpu-kernel-modules 580.x src/common/sdk/nvidia/inc/ctrl/ctrl0000/ctrl0000system.h,
// ctrl0000gpu.h, ctrl0080/ctrl0080gpu.h, ctrl2080/ctrl2080gpu.h, ctrl2080gr.h, ctrl2080perf.h, ctrla06c.h,
// ctrla06f/ctrla06fgpfifo.h, ctrlc36f.h; sizes as measured in firmware-notes/nvidia-hopper.md §4.

#include <cstddef>

#include "kernel-interface/nvidia/nv_types.h"

namespace doorbell::kernel_interface::nvidia {

// ---- Command numbers
inline constexpr NvU32 NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2 = 0x13e;
inline constexpr NvU32 NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS = 0x201;
inline constexpr NvU32 NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2 = 0x205;
inline constexpr NvU32 NV0080_CTRL_CMD_GPU_GET_CLASSLIST = 0x800201;
inline constexpr NvU32 NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2 = 0x800292;
inline constexpr NvU32 NV2080_CTRL_CMD_GPU_GET_GID_INFO = 0x2080014a;
inline constexpr NvU32 NV2080_CTRL_CMD_GR_GET_INFO = 0x20801201;
inline constexpr NvU32 NV2080_CTRL_CMD_PERF_BOOST = 0x2080200a;
inline constexpr NvU32 NVA06C_CTRL_CMD_GPFIFO_SCHEDULE = 0xa06c0101;
inline constexpr NvU32 NVA06F_CTRL_CMD_GPFIFO_SCHEDULE = 0xa06f0103;
inline constexpr NvU32 NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN = 0xc36f0108;
// On a GT200_DEBUGGER object (open-gpu-kernel-modules 580.95.05 src/common/sdk/nvidia/inc/ctrl/ctrl83de/
// ctrl83dedebug.h:1137).
inline constexpr NvU32 NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO = 0x83de0328;

// ---- Parameters

struct NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS {
  char driverVersionBuffer[256];  // e.g. "580.159"
  char versionBuffer[256];
  char driverBranch[256];
  char titleBuffer[256];
  NvU32 changelistNumber;
  NvU32 officialChangelistNumber;
};
static_assert(sizeof(NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS) == 1032);

inline constexpr std::size_t NV0000_CTRL_GPU_MAX_ATTACHED_GPUS = 32;
inline constexpr NvU32 NV0000_CTRL_GPU_INVALID_ID = 0xffffffff;
struct NV0000_CTRL_GPU_GET_ATTACHED_IDS_PARAMS {
  NvU32 gpuIds[NV0000_CTRL_GPU_MAX_ATTACHED_GPUS];  // ends at the first NV0000_CTRL_GPU_INVALID_ID
};
static_assert(sizeof(NV0000_CTRL_GPU_GET_ATTACHED_IDS_PARAMS) == 128);

struct NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS {
  NvU32 gpuId;  // in: the gpu_id from NV_ESC_CARD_INFO
  NvU32 gpuFlags;
  NvU32 deviceInstance;  // out: NV0080_ALLOC_PARAMETERS.deviceId
  NvU32 subDeviceInstance;
  NvU32 sliStatus;
  NvU32 boardId;
  NvU32 gpuInstance;
  NvS32 numaId;
};
static_assert(sizeof(NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS) == 32);

struct NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS {  // called twice: classList 0 for the count, then with a buffer
  NvU32 numClasses;
  NvP64 classList;
};
static_assert(sizeof(NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS) == 16);

inline constexpr std::size_t NV0080_CTRL_GPU_CLASSLIST_MAX_SIZE = 200;  // 100 in 570
struct NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS {
  NvU32 numClasses;
  NvU32 classList[NV0080_CTRL_GPU_CLASSLIST_MAX_SIZE];
};
static_assert(sizeof(NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS) == 804);

inline constexpr NvU32 NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_ASCII = 0;
inline constexpr NvU32 NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY = 2;
inline constexpr std::size_t NV2080_GPU_MAX_GID_LENGTH = 256;
struct NV2080_CTRL_GPU_GET_GID_INFO_PARAMS {
  NvU32 index;
  NvU32 flags;   // FORMAT in 1:0
  NvU32 length;  // out: 16 for BINARY (the UUID UVM wants)
  NvU8 data[NV2080_GPU_MAX_GID_LENGTH];
};
static_assert(sizeof(NV2080_CTRL_GPU_GET_GID_INFO_PARAMS) == 268);

struct NV2080_CTRL_GR_INFO {
  NvU32 index;
  NvU32 data;
};
static_assert(sizeof(NV2080_CTRL_GR_INFO) == 8);

struct NV2080_CTRL_GR_ROUTE_INFO {
  NvU32 flags;
  NvU64 route;
};
static_assert(sizeof(NV2080_CTRL_GR_ROUTE_INFO) == 16);

struct NV2080_CTRL_GR_GET_INFO_PARAMS {
  NvU32 grInfoListSize;
  NvP64 grInfoList;  // NV2080_CTRL_GR_INFO[grInfoListSize]
  NV2080_CTRL_GR_ROUTE_INFO grRouteInfo;
};
static_assert(sizeof(NV2080_CTRL_GR_GET_INFO_PARAMS) == 32);
static_assert(offsetof(NV2080_CTRL_GR_GET_INFO_PARAMS, grInfoList) == 8 &&
              offsetof(NV2080_CTRL_GR_GET_INFO_PARAMS, grRouteInfo) == 16);

// GR info indices (ctrl2080gr.h NV2080_CTRL_GR_INFO_INDEX_*)
inline constexpr NvU32 NV2080_CTRL_GR_INFO_INDEX_SM_VERSION = 0x0c;
inline constexpr NvU32 NV2080_CTRL_GR_INFO_INDEX_MAX_WARPS_PER_SM = 0x0d;
inline constexpr NvU32 NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCS = 0x14;
inline constexpr NvU32 NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_TPC_PER_GPC = 0x17;
inline constexpr NvU32 NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_SM_PER_TPC = 0x20;
inline constexpr NvU32 NV2080_CTRL_GR_INFO_INDEX_MAX = 0x39;
inline constexpr NvU32 NV2080_CTRL_GR_INFO_SM_VERSION_9_0 = 0x900;

struct NV2080_CTRL_PERF_BOOST_PARAMS {
  NvU32 flags;
  NvU32 duration;
};
static_assert(sizeof(NV2080_CTRL_PERF_BOOST_PARAMS) == 8);

// NVA06C_CTRL_CMD_GPFIFO_SCHEDULE (on the channel group) takes the NVA06F struct; bSkipEnable is new in 575.
struct NVA06F_CTRL_GPFIFO_SCHEDULE_PARAMS {
  NvBool bEnable;
  NvBool bSkipSubmit;
  NvBool bSkipEnable;
};
using NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS = NVA06F_CTRL_GPFIFO_SCHEDULE_PARAMS;
static_assert(sizeof(NVA06F_CTRL_GPFIFO_SCHEDULE_PARAMS) == 3);

struct NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS {
  NvU32 workSubmitToken;  // written to the usermode doorbell (NVC361_NOTIFY_CHANNEL_PENDING) to kick the channel
};
static_assert(sizeof(NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS) == 4);

// NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO: the MMU faults RM recorded for the debugged object's context, oldest
// first (ctrl83dedebug.h:1122-1127 the entry and its 4-entry maximum, :1141-1144 the params). faultType is RM's
// FAULT_TYPE, accessType the fault buffer's ACCESS_TYPE (kernel-interface/nvidia/mmu_fault_info.h names both).
inline constexpr std::size_t NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_MAX_ENTRIES = 4;
struct NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_ENTRY {
  NvU64 faultAddress;
  NvU32 faultType;
  NvU32 accessType;
};
static_assert(sizeof(NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_ENTRY) == 16);
static_assert(offsetof(NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_ENTRY, faultType) == 8 &&
              offsetof(NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_ENTRY, accessType) == 12);

struct NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_PARAMS {
  NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_ENTRY mmuFaultInfoList[NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_MAX_ENTRIES];
  NvU32 count;  // valid entries in mmuFaultInfoList
};
static_assert(sizeof(NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_PARAMS) == 72);
static_assert(offsetof(NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_PARAMS, count) == 64);

}  // namespace doorbell::kernel_interface::nvidia
