// The emulated driver with two GPUs: each is its own device instance with its own address space, usermode region and
// channel tokens, and a /dev/nvidiaN fd maps only GPU N's memory.
#include <gtest/gtest.h>

#include <cstring>

#include "nv_bringup.h"

namespace doorbell::nv_driver_test {
namespace {

using mockgpu::nv::mock_gpu_configs;

// The bring-up of tinygrad on the second GPU the driver lists.
class SecondGpuOnMock : public ::testing::Test {
 protected:
  SecondGpuOnMock() : driver(mock_gpu_configs(2)), nv(driver) {}
  void SetUp() override {
    nv.open_driver();
    const auto cards = nv.rm.card_info();
    ASSERT_EQ(cards.size(), 2u);
    nv.gpu_id = cards.at(1).gpu_id;
    nv.device_path = "/dev/nvidia" + std::to_string(cards.at(1).minor_number);
    nv.dev_fd = SeamFd(driver, nv.device_path, O_RDWR);
    nv.rm.register_fd(nv.dev_fd.get());
    nv.device();
  }
  MockNvDriver driver;
  NvSequence nv;
};

TEST_F(SecondGpuOnMock, ItsDeviceIsInstanceOneWithItsOwnUuid) {
  EXPECT_EQ(nv.rm.device_instance(nv.gpu_id), 1u);
  EXPECT_EQ(std::memcmp(nv.uuid.uuid, driver.gpu_config(1).uuid.data(), 16), 0);
  EXPECT_NE(std::memcmp(nv.uuid.uuid, driver.gpu_config(0).uuid.data(), 16), 0);
}

TEST_F(SecondGpuOnMock, ItsMemoryIsMappedInItsOwnAddressSpaceOnly) {
  const GpuBuffer buffer = nv.alloc(0x200000, 0x2000000000);
  buffer.cpu[16] = 0x5a;
  EXPECT_EQ(*driver.gpu_memory(1).translate(0x2000000010, 1), 0x5a);
  EXPECT_FALSE(driver.gpu_memory(0).overlaps(0x2000000000, 0x200000));
}

TEST_F(SecondGpuOnMock, ItsVideoMemoryDoesNotMapThroughTheFirstGpusNode) {
  const GpuBuffer buffer = nv.alloc(0x200000, 0x2000000000);
  SeamFd first(driver, "/dev/nvidia0", O_RDWR);
  nv.rm.register_fd(first.get());
  try {
    nv.rm.map_memory(nv.nvdevice, buffer.memory, 0x200000, first.get());
    ADD_FAILURE() << "GPU 1's memory mapped through /dev/nvidia0";
  } catch (const NvStatusError& e) {
    EXPECT_EQ(e.status(), NV_ERR_INVALID_ARGUMENT) << e.what();
  }
}

TEST_F(SecondGpuOnMock, ItsChannelsAreItsOwnWithTokensFromZero) {
  nv.channels();
  EXPECT_EQ(nv.compute_token, 0u);
  EXPECT_EQ(nv.copy_token, 1u);
  EXPECT_EQ(driver.channels(1).size(), 2u);
  EXPECT_TRUE(driver.channels(0).empty());
}

TEST(TwoGpusOnMock, ADeviceInstancePastTheLastGpuIsAnInvalidArgument) {
  MockNvDriver driver(mock_gpu_configs(2));
  NvSequence nv(driver);
  nv.open_driver();
  NV0080_ALLOC_PARAMETERS params{};
  params.deviceId = 2;
  params.hClientShare = nv.root;
  try {
    nv.rm.alloc(nv.root, NV01_DEVICE_0, params);
    ADD_FAILURE() << "device instance 2 of two GPUs was allocated";
  } catch (const NvStatusError& e) {
    EXPECT_EQ(e.status(), NV_ERR_INVALID_ARGUMENT) << e.what();
  }
}

}  // namespace
}  // namespace doorbell::nv_driver_test
