// tinygrad's whole device bring-up through the real wrappers against the emulated driver.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <thread>

#include "nv_bringup.h"

namespace doorbell::nv_driver_test {
namespace {

bool contains(const std::vector<NvU32>& list, NvU32 value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

TEST(NvBringUpOnMock, RootClientVersionUvmAndCardInfoSucceed) {
  NvBringUp nv;
  nv.open_driver();
  EXPECT_NE(nv.root, 0u);
  EXPECT_EQ(nv.rm.build_version(), "580.159");
  EXPECT_EQ(nv.gpu_id, 0x100u);
  EXPECT_EQ(nv.rm.attached_gpu_ids(), std::vector<NvU32>{0x100});
  const auto cards = nv.rm.card_info();
  ASSERT_EQ(cards.size(), 1u);
  EXPECT_EQ(cards[0].pci_info.vendor_id, 0x10de);
  EXPECT_EQ(cards[0].minor_number, 0u);
}

TEST(NvBringUpOnMock, DeviceOffersTheHopperClassesAndNoAmpereCompute) {
  NvBringUp nv;
  nv.open_driver();
  nv.device();
  const std::vector<NvU32> classes = nv.rm.class_list(nv.nvdevice);
  for (const NvU32 hopper : {HOPPER_COMPUTE_A, HOPPER_DMA_COPY_A, HOPPER_CHANNEL_GPFIFO_A, HOPPER_USERMODE_A,
                             AMPERE_CHANNEL_GPFIFO_A, FERMI_VASPACE_A, KEPLER_CHANNEL_GROUP_A}) {
    EXPECT_TRUE(contains(classes, hopper)) << hex(hopper);
  }
  EXPECT_FALSE(contains(classes, 0xc7c0u));  // AMPERE_COMPUTE_B
  EXPECT_FALSE(contains(classes, 0xc9c0u));  // ADA_COMPUTE_A

  NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS v2{};
  nv.rm.control(nv.nvdevice, NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2, v2);
  EXPECT_EQ(std::vector<NvU32>(v2.classList, v2.classList + v2.numClasses), classes);
}

TEST(NvBringUpOnMock, GrInfoReportsSm90AndTheGh100Floorplan) {
  NvBringUp nv;
  nv.open_driver();
  nv.device();
  const std::array<NvU32, 5> indices = {
      NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCS, NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_TPC_PER_GPC,
      NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_SM_PER_TPC, NV2080_CTRL_GR_INFO_INDEX_MAX_WARPS_PER_SM,
      NV2080_CTRL_GR_INFO_INDEX_SM_VERSION};
  const std::vector<NvU32> values = nv.rm.gr_info(nv.subdevice, indices);
  EXPECT_EQ(values, (std::vector<NvU32>{8, 9, 2, 64, NV2080_CTRL_GR_INFO_SM_VERSION_9_0}));
  const NvU32 sm = values[4];
  EXPECT_EQ(((sm >> 8) & 0xf) * 10 + (sm & 0xf), 90u);  // tinygrad's arch = sm_90
}

TEST(NvBringUpOnMock, GidInfoGivesTheUuidInBinaryAndAscii) {
  NvBringUp nv;
  nv.open_driver();
  nv.device();
  EXPECT_EQ(std::memcmp(nv.uuid.uuid, nv.driver.config().uuid.data(), 16), 0);
  NV2080_CTRL_GPU_GET_GID_INFO_PARAMS ascii{};
  ascii.flags = NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_ASCII;
  nv.rm.control(nv.subdevice, NV2080_CTRL_CMD_GPU_GET_GID_INFO, ascii);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(ascii.data)), "GPU-d00be110-0000-4e5e-9000-000000000001");
}

TEST(NvBringUpOnMock, ChannelsKeepTheirGpfifoAndUserdAndGetDistinctTokens) {
  NvBringUp nv;
  nv.open_driver();
  nv.device();
  nv.channels();
  EXPECT_NE(nv.compute_token, nv.copy_token);
  const auto channels = nv.driver.channels();
  ASSERT_EQ(channels.size(), 2u);
  const auto compute = nv.driver.channel_by_token(nv.compute_token);
  ASSERT_TRUE(compute.has_value());
  EXPECT_EQ(compute->handle, nv.compute_channel);
  EXPECT_EQ(compute->hclass, HOPPER_CHANNEL_GPFIFO_A);
  EXPECT_EQ(compute->gpfifo_va, kLowVaBase);
  EXPECT_EQ(compute->gpfifo_entries, kRingEntries);
  EXPECT_EQ(compute->userd_memory, nv.gpfifo_area.memory);
  EXPECT_EQ(compute->userd_offset, kComputeUserdOffset);
  EXPECT_TRUE(compute->scheduled);
  EXPECT_EQ(compute->engine_classes, std::vector<NvU32>{HOPPER_COMPUTE_A});
  const auto copy = nv.driver.channel_by_token(nv.copy_token);
  ASSERT_TRUE(copy.has_value());
  EXPECT_EQ(copy->gpfifo_va, kLowVaBase + kCopyRingOffset);
  EXPECT_EQ(copy->engine_classes, std::vector<NvU32>{HOPPER_DMA_COPY_A});
}

TEST(NvBringUpOnMock, UserdWrittenByTheCpuIsWhatTheChannelRecordPointsAt) {
  NvBringUp nv;
  nv.open_driver();
  nv.device();
  nv.channels();
  const NvU32 gp_put = 5;
  std::memcpy(nv.gpfifo_area.cpu + kComputeUserdOffset + kUserdGpPutOffset, &gp_put, 4);
  const auto compute = nv.driver.channel_by_token(nv.compute_token);
  ASSERT_TRUE(compute.has_value());
  NvU32 seen = 0;
  std::memcpy(&seen, compute->userd + kUserdGpPutOffset, 4);
  EXPECT_EQ(seen, gp_put);
  // And the GPU reaches the ring through its VA.
  const std::uint64_t entry = 0x0123456789abcdefull;
  std::memcpy(nv.gpfifo_area.cpu + 8, &entry, 8);
  EXPECT_EQ(std::memcmp(nv.driver.gpu_memory().translate(compute->gpfifo_va + 8, 8), &entry, 8), 0);
}

TEST(NvBringUpOnMock, DoorbellWriteIsTakenOnceWithTheChannelsToken) {
  NvBringUp nv;
  nv.open_driver();
  nv.device();
  nv.channels();
  EXPECT_FALSE(nv.driver.take_doorbell().has_value());
  std::atomic_thread_fence(std::memory_order_seq_cst);
  nv.gpu_mmio[NVC361_NOTIFY_CHANNEL_PENDING / 4] = nv.copy_token;  // what tinygrad's submit does
  const auto token = nv.driver.take_doorbell();
  ASSERT_TRUE(token.has_value());
  EXPECT_EQ(*token, nv.copy_token);
  EXPECT_EQ(nv.driver.channel_by_token(*token)->handle, nv.copy_channel);
  EXPECT_FALSE(nv.driver.take_doorbell().has_value());
}

TEST(NvBringUpOnMock, GpuThreadWaitingOnTheDoorbellWakesWithTheToken) {
  NvBringUp nv;
  nv.open_driver();
  nv.device();
  nv.channels();
  std::optional<std::uint32_t> seen;
  std::thread gpu([&] { seen = nv.driver.wait_doorbell(std::chrono::seconds(10)); });
  std::atomic_ref<std::uint32_t>(nv.gpu_mmio[NVC361_NOTIFY_CHANNEL_PENDING / 4]).store(nv.compute_token);
  gpu.join();
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(*seen, nv.compute_token);
  EXPECT_FALSE(nv.driver.wait_doorbell(std::chrono::milliseconds(1)).has_value());
}

TEST(NvBringUpOnMock, ClosingTheCtlFdFreesItsClientAndEverythingUnderIt) {
  NvBringUp nv;
  nv.open_driver();
  nv.device();
  nv.channels();
  EXPECT_GT(nv.driver.rm_object_count(), 10u);
  for (const GpuBuffer& buffer : nv.cpu_mappings) nv.driver.munmap(buffer.cpu, buffer.size);
  nv.cpu_mappings.clear();
  nv.ctl.reset();
  EXPECT_EQ(nv.driver.rm_object_count(), 0u);
  EXPECT_TRUE(nv.driver.channels().empty());
  EXPECT_THROW(nv.driver.gpu_memory().translate(kLowVaBase, 8), std::runtime_error);
}

}  // namespace
}  // namespace doorbell::nv_driver_test
