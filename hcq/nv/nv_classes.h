// NVIDIA class ids, method offsets and method data fields that the NV encoders use, under the vendor's own names.
// Offsets are byte offsets within a class's method space (a pushbuffer header carries offset >> 2). Only what the
// encoders need is here; every value was checked against the header named above its table.
#pragma once
#include <cstdint>

#include "hcq/nv/bit_field.h"

namespace doorbell::nv {

// ---- Class ids ----
// RM src/common/sdk/nvidia/inc/class/clc86f.h, clc56f.h, clc661.h, clc561.h, clc361.h (open-gpu-kernel-modules);
// open-gpu-doc classes/compute/clcbc0.h, clc7c0.h, clc9c0.h; classes/dma-copy/clc8b5.h, clc7b5.h.
inline constexpr uint32_t HOPPER_CHANNEL_GPFIFO_A = 0xc86f;
inline constexpr uint32_t HOPPER_COMPUTE_A = 0xcbc0;
inline constexpr uint32_t HOPPER_DMA_COPY_A = 0xc8b5;
inline constexpr uint32_t HOPPER_USERMODE_A = 0xc661;
inline constexpr uint32_t AMPERE_CHANNEL_GPFIFO_A = 0xc56f;
inline constexpr uint32_t AMPERE_COMPUTE_B = 0xc7c0;
inline constexpr uint32_t ADA_COMPUTE_A = 0xc9c0;
inline constexpr uint32_t AMPERE_DMA_COPY_B = 0xc7b5;
inline constexpr uint32_t AMPERE_USERMODE_A = 0xc561;
inline constexpr uint32_t VOLTA_USERMODE_A = 0xc361;  // its register offsets serve every later usermode class

// ---- Subchannels ----
// cla06fsubch.h (NVA06F_SUBCHANNEL_*); host methods (offsets below 0x100) go on subchannel 0 as UVM and tinygrad do.
inline constexpr uint32_t kSubchannelHost = 0;
inline constexpr uint32_t kSubchannelCompute = 1;
inline constexpr uint32_t kSubchannelCopy = 4;

// ---- Host (channel) methods ----
// clc86f.h (HOPPER_CHANNEL_GPFIFO_A); clc56f.h (AMPERE_CHANNEL_GPFIFO_A) has the same offsets and fields except
// SEM_ADDR_HI, which is 7:0 there (40-bit semaphore VAs) and 24:0 on C86F (57-bit).
inline constexpr uint32_t NVC86F_SET_OBJECT = 0x0000;
inline constexpr uint32_t NVC56F_NON_STALL_INTERRUPT = 0x0020;  // absent from the trimmed clc86f.h; UVM's Hopper HAL
                                                                // inherits it from the older host classes
inline constexpr uint32_t NVC86F_MEM_OP_A = 0x0028;
inline constexpr uint32_t NVC86F_MEM_OP_B = 0x002c;
inline constexpr uint32_t NVC86F_MEM_OP_C = 0x0030;
inline constexpr uint32_t NVC86F_MEM_OP_D = 0x0034;
inline constexpr uint32_t NVC86F_SEM_ADDR_LO = 0x005c;
inline constexpr uint32_t NVC86F_SEM_ADDR_HI = 0x0060;
inline constexpr uint32_t NVC86F_SEM_PAYLOAD_LO = 0x0064;
inline constexpr uint32_t NVC86F_SEM_PAYLOAD_HI = 0x0068;
inline constexpr uint32_t NVC86F_SEM_EXECUTE = 0x006c;
inline constexpr uint32_t NVC86F_WFI = 0x0078;

inline constexpr BitField NVC86F_SEM_ADDR_LO_OFFSET{"NVC86F_SEM_ADDR_LO_OFFSET", 31, 2};
inline constexpr BitField NVC86F_SEM_ADDR_HI_OFFSET{"NVC86F_SEM_ADDR_HI_OFFSET", 24, 0};
inline constexpr BitField NVC56F_SEM_ADDR_HI_OFFSET{"NVC56F_SEM_ADDR_HI_OFFSET", 7, 0};
inline constexpr BitField NVC86F_SEM_EXECUTE_OPERATION{"NVC86F_SEM_EXECUTE_OPERATION", 2, 0};
inline constexpr uint32_t NVC86F_SEM_EXECUTE_OPERATION_ACQUIRE = 0;
inline constexpr uint32_t NVC86F_SEM_EXECUTE_OPERATION_RELEASE = 1;
inline constexpr uint32_t NVC56F_SEM_EXECUTE_OPERATION_ACQ_STRICT_GEQ = 2;
inline constexpr uint32_t NVC56F_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ = 3;  // listed in clc56f.h only
inline constexpr BitField NVC56F_SEM_EXECUTE_ACQUIRE_SWITCH_TSG{"NVC56F_SEM_EXECUTE_ACQUIRE_SWITCH_TSG", 12, 12};
inline constexpr uint32_t NVC56F_SEM_EXECUTE_ACQUIRE_SWITCH_TSG_EN = 1;
inline constexpr BitField NVC86F_SEM_EXECUTE_RELEASE_WFI{"NVC86F_SEM_EXECUTE_RELEASE_WFI", 20, 20};
inline constexpr uint32_t NVC56F_SEM_EXECUTE_RELEASE_WFI_EN = 1;
inline constexpr BitField NVC86F_SEM_EXECUTE_PAYLOAD_SIZE{"NVC86F_SEM_EXECUTE_PAYLOAD_SIZE", 24, 24};
inline constexpr uint32_t NVC86F_SEM_EXECUTE_PAYLOAD_SIZE_32BIT = 0;
inline constexpr uint32_t NVC56F_SEM_EXECUTE_PAYLOAD_SIZE_64BIT = 1;
inline constexpr BitField NVC56F_SEM_EXECUTE_RELEASE_TIMESTAMP{"NVC56F_SEM_EXECUTE_RELEASE_TIMESTAMP", 25, 25};
inline constexpr uint32_t NVC56F_SEM_EXECUTE_RELEASE_TIMESTAMP_DIS = 0;
inline constexpr uint32_t NVC56F_SEM_EXECUTE_RELEASE_TIMESTAMP_EN = 1;

inline constexpr BitField NVC86F_WFI_SCOPE{"NVC86F_WFI_SCOPE", 0, 0};
inline constexpr uint32_t NVC86F_WFI_SCOPE_ALL = 1;

inline constexpr BitField NVC86F_MEM_OP_C_MEMBAR_TYPE{"NVC86F_MEM_OP_C_MEMBAR_TYPE", 2, 0};
inline constexpr uint32_t NVC86F_MEM_OP_C_MEMBAR_TYPE_SYS_MEMBAR = 0;
inline constexpr BitField NVC86F_MEM_OP_D_OPERATION{"NVC86F_MEM_OP_D_OPERATION", 31, 27};
inline constexpr uint32_t NVC86F_MEM_OP_D_OPERATION_MEMBAR = 5;

// ---- Pushbuffer method header (NVC56F_DMA_*; clc86f.h defines none and UVM uses the older, identical format) ----
inline constexpr BitField NVC56F_DMA_METHOD_ADDRESS{"NVC56F_DMA_METHOD_ADDRESS", 11, 0};  // in dwords
inline constexpr BitField NVC56F_DMA_METHOD_SUBCHANNEL{"NVC56F_DMA_METHOD_SUBCHANNEL", 15, 13};
inline constexpr BitField NVC56F_DMA_METHOD_COUNT{"NVC56F_DMA_METHOD_COUNT", 28, 16};
inline constexpr BitField NVC56F_DMA_IMMD_DATA{"NVC56F_DMA_IMMD_DATA", 28, 16};
inline constexpr BitField NVC56F_DMA_SEC_OP{"NVC56F_DMA_SEC_OP", 31, 29};

// ---- GPFIFO entry (clc86f.h NVC86F_GP_ENTRY*, identical to clc56f.h) ----
inline constexpr uint32_t NVC86F_GP_ENTRY__SIZE = 8;
inline constexpr BitField NVC86F_GP_ENTRY0_FETCH{"NVC86F_GP_ENTRY0_FETCH", 0, 0};
inline constexpr BitField NVC86F_GP_ENTRY0_GET{"NVC86F_GP_ENTRY0_GET", 31, 2};       // VA bits 31:2
inline constexpr BitField NVC86F_GP_ENTRY1_GET_HI{"NVC86F_GP_ENTRY1_GET_HI", 7, 0};  // VA bits 39:32
inline constexpr BitField NVC86F_GP_ENTRY1_LEVEL{"NVC86F_GP_ENTRY1_LEVEL", 9, 9};
inline constexpr uint32_t NVC86F_GP_ENTRY1_LEVEL_MAIN = 0;
inline constexpr uint32_t NVC86F_GP_ENTRY1_LEVEL_SUBROUTINE = 1;
inline constexpr BitField NVC86F_GP_ENTRY1_LENGTH{"NVC86F_GP_ENTRY1_LENGTH", 30, 10};  // in dwords
inline constexpr BitField NVC86F_GP_ENTRY1_SYNC{"NVC86F_GP_ENTRY1_SYNC", 31, 31};
inline constexpr uint32_t NVC86F_GP_ENTRY1_SYNC_PROCEED = 0;
inline constexpr uint32_t NVC86F_GP_ENTRY1_SYNC_WAIT = 1;

// ---- USERD (Nvc86fControl in clc86f.h, the same layout as Nvc56fControl) and the usermode region (clc361.h) ----
inline constexpr uint32_t kUserdGpGetOffset = 0x88;  // Nvc86fControl.GPGet, read only
inline constexpr uint32_t kUserdGpPutOffset = 0x8c;  // Nvc86fControl.GPPut
inline constexpr uint32_t NVC361_NV_USERMODE__SIZE = 0x10000;
inline constexpr uint32_t NVC361_NOTIFY_CHANNEL_PENDING = 0x90;  // doorbell: write the channel's work-submit token

// ---- Compute methods ----
// open-gpu-doc classes/compute/clcbc0.h (HOPPER_COMPUTE_A). clc6c0.h/clc7c0.h/clc9c0.h have the same offsets for all
// of these; SET_SHADER_LOCAL_MEMORY_A's address is 24:0 on CBC0 and 16:0 on C6C0..C9C0.
inline constexpr uint32_t NVCBC0_SET_OBJECT = 0x0000;
inline constexpr uint32_t NVCBC0_WAIT_FOR_IDLE = 0x0110;
inline constexpr uint32_t NVCBC0_INVALIDATE_SHADER_CACHES = 0x021c;
inline constexpr uint32_t NVCBC0_INVALIDATE_SKED_CACHES = 0x0298;  // clcbc0.h:386
inline constexpr uint32_t NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_A = 0x02a0;
inline constexpr uint32_t NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_B = 0x02a4;
inline constexpr uint32_t NVCBC0_SEND_PCAS_A = 0x02b4;
inline constexpr uint32_t NVCBC0_SEND_SIGNALING_PCAS2_B = 0x02c0;
inline constexpr uint32_t NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A = 0x02e4;
inline constexpr uint32_t NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B = 0x02e8;
inline constexpr uint32_t NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C = 0x02ec;
inline constexpr uint32_t NVCBC0_SET_INLINE_QMD_ADDRESS_A = 0x0318;
inline constexpr uint32_t NVCBC0_SET_INLINE_QMD_ADDRESS_B = 0x031c;
constexpr uint32_t NVCBC0_LOAD_INLINE_QMD_DATA(uint32_t i) { return 0x0320 + i * 4; }
inline constexpr uint32_t NVCBC0_SET_SHADER_LOCAL_MEMORY_A = 0x0790;
inline constexpr uint32_t NVCBC0_SET_SHADER_LOCAL_MEMORY_B = 0x0794;
inline constexpr uint32_t NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_A = 0x07b0;
inline constexpr uint32_t NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_B = 0x07b4;
inline constexpr uint32_t NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI = 0x1698;

inline constexpr BitField NVCBC0_SET_OBJECT_CLASS_ID{"NVCBC0_SET_OBJECT_CLASS_ID", 15, 0};
inline constexpr BitField NVCBC0_SEND_PCAS_A_QMD_ADDRESS_SHIFTED8{"NVCBC0_SEND_PCAS_A_QMD_ADDRESS_SHIFTED8", 31, 0};
inline constexpr BitField NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION{"NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION", 3, 0};
inline constexpr BitField NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER{
    "NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER", 16, 0};
inline constexpr BitField NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER{
    "NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER", 16, 0};
inline constexpr BitField NVCBC0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER{
    "NVCBC0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER", 24, 0};
inline constexpr BitField NVC6C0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER{
    "NVC6C0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER", 16, 0};
inline constexpr BitField NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A_SIZE_UPPER{
    "NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A_SIZE_UPPER", 7, 0};
inline constexpr BitField NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C_MAX_SM_COUNT{
    "NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C_MAX_SM_COUNT", 8, 0};
inline constexpr BitField NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_INSTRUCTION{
    "NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_INSTRUCTION", 0, 0};
inline constexpr BitField NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_GLOBAL_DATA{
    "NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_GLOBAL_DATA", 4, 4};
inline constexpr BitField NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_CONSTANT{
    "NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_CONSTANT", 12, 12};
inline constexpr BitField NVCBC0_SET_INLINE_QMD_ADDRESS_A_QMD_ADDRESS_SHIFTED8_UPPER{
    "NVCBC0_SET_INLINE_QMD_ADDRESS_A_QMD_ADDRESS_SHIFTED8_UPPER", 8, 0};
inline constexpr BitField NVCBC0_SET_INLINE_QMD_ADDRESS_A_INLINE_SIZE{"NVCBC0_SET_INLINE_QMD_ADDRESS_A_INLINE_SIZE", 30,
                                                                      30};
inline constexpr uint32_t NVCBC0_SET_INLINE_QMD_ADDRESS_A_INLINE_SIZE_INLINE_384 = 1;

// NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION values (the same in clc6c0.h).
enum class PcasAction : uint32_t {
  kNop = 0x0,
  kInvalidate = 0x1,
  kSchedule = 0x2,
  kInvalidateCopySchedule = 0x3,  // NVK's choice on every class after Turing
  kIncrementPut = 0x6,
  kDecrementDependence = 0x7,
  kPrefetch = 0x8,
  kPrefetchSchedule = 0x9,  // tinygrad's choice
  kInvalidatePrefetchCopySchedule = 0xa,
};

// ---- Copy engine methods ----
// open-gpu-doc classes/dma-copy/clc8b5.h (HOPPER_DMA_COPY_A); clc7b5.h (AMPERE_DMA_COPY_B) has the same offsets and
// LAUNCH_DMA fields, with 17-bit instead of 25-bit upper address fields.
inline constexpr uint32_t NVC8B5_SET_SEMAPHORE_A = 0x0240;
inline constexpr uint32_t NVC8B5_SET_SEMAPHORE_B = 0x0244;
inline constexpr uint32_t NVC8B5_SET_SEMAPHORE_PAYLOAD = 0x0248;
inline constexpr uint32_t NVC8B5_SET_SEMAPHORE_PAYLOAD_UPPER = 0x024c;
inline constexpr uint32_t NVC8B5_LAUNCH_DMA = 0x0300;
inline constexpr uint32_t NVC8B5_OFFSET_IN_UPPER = 0x0400;
inline constexpr uint32_t NVC8B5_OFFSET_IN_LOWER = 0x0404;
inline constexpr uint32_t NVC8B5_OFFSET_OUT_UPPER = 0x0408;
inline constexpr uint32_t NVC8B5_OFFSET_OUT_LOWER = 0x040c;
inline constexpr uint32_t NVC8B5_LINE_LENGTH_IN = 0x0418;
inline constexpr uint32_t NVC8B5_LINE_COUNT = 0x041c;

inline constexpr BitField NVC8B5_SET_SEMAPHORE_A_UPPER{"NVC8B5_SET_SEMAPHORE_A_UPPER", 24, 0};
inline constexpr BitField NVC7B5_SET_SEMAPHORE_A_UPPER{"NVC7B5_SET_SEMAPHORE_A_UPPER", 16, 0};
inline constexpr BitField NVC8B5_OFFSET_IN_UPPER_UPPER{"NVC8B5_OFFSET_IN_UPPER_UPPER", 24, 0};
inline constexpr BitField NVC7B5_OFFSET_IN_UPPER_UPPER{"NVC7B5_OFFSET_IN_UPPER_UPPER", 16, 0};
inline constexpr BitField NVC8B5_OFFSET_OUT_UPPER_UPPER{"NVC8B5_OFFSET_OUT_UPPER_UPPER", 24, 0};
inline constexpr BitField NVC7B5_OFFSET_OUT_UPPER_UPPER{"NVC7B5_OFFSET_OUT_UPPER_UPPER", 16, 0};

inline constexpr BitField NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE{"NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE", 1, 0};
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NONE = 0;
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NON_PIPELINED = 2;
inline constexpr BitField NVC8B5_LAUNCH_DMA_FLUSH_ENABLE{"NVC8B5_LAUNCH_DMA_FLUSH_ENABLE", 2, 2};
inline constexpr BitField NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE{"NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE", 4, 3};
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_ONE_WORD_SEMAPHORE = 1;
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_FOUR_WORD_SEMAPHORE = 2;  // payload + timestamp
inline constexpr BitField NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT{"NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT", 7, 7};
inline constexpr BitField NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT{"NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT", 8, 8};
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT_PITCH = 1;
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH = 1;
inline constexpr BitField NVC8B5_LAUNCH_DMA_MULTI_LINE_ENABLE{"NVC8B5_LAUNCH_DMA_MULTI_LINE_ENABLE", 9, 9};
inline constexpr BitField NVC8B5_LAUNCH_DMA_SRC_TYPE{"NVC8B5_LAUNCH_DMA_SRC_TYPE", 12, 12};
inline constexpr BitField NVC8B5_LAUNCH_DMA_DST_TYPE{"NVC8B5_LAUNCH_DMA_DST_TYPE", 13, 13};
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_SRC_TYPE_VIRTUAL = 0;
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_DST_TYPE_VIRTUAL = 0;
inline constexpr BitField NVC8B5_LAUNCH_DMA_FLUSH_TYPE{"NVC8B5_LAUNCH_DMA_FLUSH_TYPE", 25, 25};
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_FLUSH_TYPE_SYS = 0;
inline constexpr BitField NVC8B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE{"NVC8B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE", 27, 27};
inline constexpr uint32_t NVC8B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE_TWO_WORD = 1;

}  // namespace doorbell::nv
