// The same bring-up on real hardware through LinuxSyscalls: skipped where there is no NVIDIA GPU. It needs driver
// 580 (the struct layouts are 580's) and a GPU that offers the Hopper classes (GH100: H100/H200).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "nv_bringup.h"
#include "tests/common/device_required.h"

namespace doorbell::nv_driver_test {
namespace {

TEST(NvDeviceBringUp, TinygradSequenceReachesScheduledChannelsWithTokens) {
  DOORBELL_REQUIRE_DEVICE("nv");
  kernel_interface::LinuxSyscalls linux_calls;
  NvSequence nv(linux_calls);
  nv.open_driver();
  nv.device();
  const std::vector<NvU32> classes = nv.rm.class_list(nv.nvdevice);
  ASSERT_NE(std::find(classes.begin(), classes.end(), HOPPER_COMPUTE_A), classes.end())
      << "this GPU offers no HOPPER_COMPUTE_A; the sequence allocates Hopper classes";
  const std::array<NvU32, 1> sm_index = {NV2080_CTRL_GR_INFO_INDEX_SM_VERSION};
  EXPECT_EQ(nv.rm.gr_info(nv.subdevice, sm_index).at(0), NV2080_CTRL_GR_INFO_SM_VERSION_9_0);
  nv.channels();
  EXPECT_NE(nv.compute_token, nv.copy_token);
}

TEST(NvDeviceBringUp, VideoMemoryWrittenThroughOneCpuMappingReadsBackThroughAnother) {
  DOORBELL_REQUIRE_DEVICE("nv");
  kernel_interface::LinuxSyscalls linux_calls;
  NvSequence nv(linux_calls);
  nv.open_driver();
  nv.device();
  const GpuBuffer buffer = nv.alloc(0x200000, kLowVaBase);
  const std::uint64_t value = 0x0123456789abcdefull;
  std::memcpy(buffer.cpu + 0x100, &value, 8);
  SeamFd map_fd = nv.new_gpu_fd();
  auto* again = static_cast<std::uint8_t*>(nv.rm.map_memory(nv.nvdevice, buffer.memory, 0x200000, map_fd.get()));
  EXPECT_EQ(std::memcmp(again + 0x100, &value, 8), 0);
  nv.rm.unmap_memory(nv.nvdevice, buffer.memory, again, 0x200000);
}

}  // namespace
}  // namespace doorbell::nv_driver_test
