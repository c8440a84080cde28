// Request numbers and struct layouts against firmware-notes/nvidia-hopper.md §3-6 (measured by compiling the
// open-gpu-kernel-modules 580.142 headers).
#include <gtest/gtest.h>

#include <cstddef>

#include "kernel-interface/nvidia/rm_classes.h"
#include "kernel-interface/nvidia/rm_controls.h"
#include "kernel-interface/nvidia/rm_ioctl.h"
#include "kernel-interface/nvidia/uvm_ioctl.h"

namespace doorbell::kernel_interface::nvidia {
namespace {

TEST(NvIoctlRequest, EscapeRequestNumbersEqualTheDriver580Values) {
  EXPECT_EQ(kRmAllocMemoryRequest, 0xC0384627ul);
  EXPECT_EQ(kRmFreeRequest, 0xC0104629ul);
  EXPECT_EQ(kRmControlRequest, 0xC020462Aul);
  EXPECT_EQ(kRmAllocRequest, 0xC020462Bul);
  EXPECT_EQ(kRmMapMemoryRequest, 0xC038464Eul);
  EXPECT_EQ(kRmUnmapMemoryRequest, 0xC020464Ful);
  EXPECT_EQ(kRmMapMemoryDmaRequest, 0xC0404657ul);  // 0xC0384657 in 570/575 (NVOS46 was 56 bytes)
  EXPECT_EQ(kRmUnmapMemoryDmaRequest, 0xC0304658ul);
  EXPECT_EQ(kCardInfoRequest, 0xD20046C8ul);
  EXPECT_EQ(kRegisterFdRequest, 0xC00446C9ul);
}

TEST(NvIoctlRequest, EncodingRoundTripsEscapeAndSize) {
  const unsigned long request = nv_ioctl_request(NV_ESC_CHECK_VERSION_STR, 72);
  EXPECT_EQ(request, 0xC04846D2ul);
  EXPECT_EQ(nv_ioctl_nr(request), NV_ESC_CHECK_VERSION_STR);
  EXPECT_EQ(nv_ioctl_size(request), 72u);
  EXPECT_EQ(nv_ioctl_magic(request), 'F');
}

TEST(NvIoctlRequest, UvmRequestsAreTheRawNumbers) {
  EXPECT_EQ(UVM_INITIALIZE, 0x30000001ul);
  EXPECT_EQ(UVM_MM_INITIALIZE, 75ul);
  EXPECT_EQ(UVM_REGISTER_GPU, 37ul);
  EXPECT_EQ(UVM_REGISTER_GPU_VASPACE, 25ul);
  EXPECT_EQ(UVM_REGISTER_CHANNEL, 27ul);
  EXPECT_EQ(UVM_ENABLE_PEER_ACCESS, 29ul);
  EXPECT_EQ(UVM_MAP_EXTERNAL_ALLOCATION, 33ul);
  EXPECT_EQ(UVM_FREE, 34ul);
  EXPECT_EQ(UVM_CREATE_EXTERNAL_RANGE, 73ul);
}

TEST(NvControlCommands, NumbersEqualTheNotes) {
  EXPECT_EQ(NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2, 0x13eu);
  EXPECT_EQ(NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, 0x205u);
  EXPECT_EQ(NV0080_CTRL_CMD_GPU_GET_CLASSLIST, 0x800201u);
  EXPECT_EQ(NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2, 0x800292u);
  EXPECT_EQ(NV2080_CTRL_CMD_GPU_GET_GID_INFO, 0x2080014au);
  EXPECT_EQ(NV2080_CTRL_CMD_GR_GET_INFO, 0x20801201u);
  EXPECT_EQ(NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, 0xa06c0101u);
  EXPECT_EQ(NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN, 0xc36f0108u);
  EXPECT_EQ(NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO, 0x83de0328u);
}

// The headers static_assert every size and key offset; these repeat the ones that changed across driver versions
// (firmware-notes/nvidia-hopper.md §7), so a wrong edit shows up as a named test too.
static_assert(sizeof(NVOS46_PARAMETERS) == 64);
static_assert(sizeof(NV_VASPACE_ALLOCATION_PARAMETERS) == 56);
static_assert(sizeof(NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS) == 3);
static_assert(sizeof(NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS) == 804);
static_assert(sizeof(NV_CHANNEL_ALLOC_PARAMS) == 368);
static_assert(sizeof(UVM_FREE_PARAMS) == 24);

TEST(NvStructLayouts, SizesEqualTheMeasured580Headers) {
  EXPECT_EQ(sizeof(NVOS21_PARAMETERS), 32u);
  EXPECT_EQ(sizeof(NVOS54_PARAMETERS), 32u);
  EXPECT_EQ(sizeof(NVOS00_PARAMETERS), 16u);
  EXPECT_EQ(sizeof(NVOS33_PARAMETERS), 48u);
  EXPECT_EQ(sizeof(nv_ioctl_nvos33_parameters_with_fd), 56u);
  EXPECT_EQ(sizeof(NVOS46_PARAMETERS), 64u);
  EXPECT_EQ(sizeof(NVOS02_PARAMETERS), 48u);
  EXPECT_EQ(sizeof(nv_ioctl_card_info_t), 72u);
  EXPECT_EQ(sizeof(NV0080_ALLOC_PARAMETERS), 56u);
  EXPECT_EQ(sizeof(NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS), 20u);
  EXPECT_EQ(sizeof(NV_CTXSHARE_ALLOCATION_PARAMETERS), 12u);
  EXPECT_EQ(sizeof(NV_MEMORY_ALLOCATION_PARAMS), 128u);
  EXPECT_EQ(sizeof(NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS), 1032u);
  EXPECT_EQ(sizeof(NV2080_CTRL_GPU_GET_GID_INFO_PARAMS), 268u);
  EXPECT_EQ(sizeof(NV2080_CTRL_GR_GET_INFO_PARAMS), 32u);
  EXPECT_EQ(sizeof(UVM_REGISTER_GPU_PARAMS), 40u);
  EXPECT_EQ(sizeof(UVM_REGISTER_CHANNEL_PARAMS), 56u);
  EXPECT_EQ(sizeof(UVM_MAP_EXTERNAL_ALLOCATION_PARAMS), 9264u);
  EXPECT_EQ(sizeof(NV83DE_ALLOC_PARAMETERS), 12u);
  EXPECT_EQ(sizeof(NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_PARAMS), 72u);  // 4 entries of 16, count, padding to 8
}

TEST(NvStructLayouts, ChannelAllocParamsPutUserdAndEngineWhere580HasThem) {
  EXPECT_EQ(offsetof(NV_CHANNEL_ALLOC_PARAMS, hUserdMemory), 32u);  // 36 in 610 (hHandleVASpace at 32)
  EXPECT_EQ(offsetof(NV_CHANNEL_ALLOC_PARAMS, userdOffset), 64u);
  EXPECT_EQ(offsetof(NV_CHANNEL_ALLOC_PARAMS, engineType), 128u);
  EXPECT_EQ(offsetof(NVOS46_PARAMETERS, dmaOffset), 48u);  // 40 in 570
}

}  // namespace
}  // namespace doorbell::kernel_interface::nvidia
