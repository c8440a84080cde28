// UVM against the emulated driver: ordering, registration, external ranges and what UVM_FREE does.
#include <gtest/gtest.h>

#include <cerrno>

#include "nv_bringup.h"

namespace doorbell::nv_driver_test {
namespace {

NV_STATUS status_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const NvStatusError& e) {
    return e.status();
  }
  return NV_OK;
}

TEST(NvUvmOnMock, CallsBeforeInitializeAreIllegal) {
  MockNvDriver driver;
  SeamFd fd(driver, "/dev/nvidia-uvm", O_RDWR);
  NvUvm uvm(driver, fd.get());
  EXPECT_EQ(status_of([&] { uvm.create_external_range(0x1000000000, 0x1000); }), NV_ERR_ILLEGAL_ACTION);
  uvm.initialize();
  EXPECT_EQ(status_of([&] { uvm.create_external_range(0x1000000000, 0x1000); }), NV_OK);
}

TEST(NvUvmOnMock, MmInitializeNeedsAnInitializedFirstFd) {
  MockNvDriver driver;
  SeamFd first(driver, "/dev/nvidia-uvm", O_RDWR);
  SeamFd second(driver, "/dev/nvidia-uvm", O_RDWR);
  NvUvm uvm(driver, first.get());
  EXPECT_EQ(status_of([&] { uvm.mm_initialize(second.get()); }), NV_ERR_INVALID_ARGUMENT);
  uvm.initialize();
  EXPECT_EQ(status_of([&] { uvm.mm_initialize(second.get()); }), NV_OK);
}

TEST(NvUvmOnMock, RegisteringAnUnknownGpuUuidFails) {
  MockNvDriver driver;
  SeamFd fd(driver, "/dev/nvidia-uvm", O_RDWR);
  NvUvm uvm(driver, fd.get());
  uvm.initialize();
  NvProcessorUuid stranger{};
  stranger.uuid[0] = 0x42;
  try {
    uvm.register_gpu(stranger);
    ADD_FAILURE() << "registered a GPU that does not exist";
  } catch (const NvStatusError& e) {
    EXPECT_EQ(e.status(), NV_ERR_GPU_UUID_NOT_FOUND);
    EXPECT_NE(std::string(e.what()).find("UVM_REGISTER_GPU failed: NV_ERR_GPU_UUID_NOT_FOUND (0x12)"),
              std::string::npos)
        << e.what();
  }
}

TEST(NvUvmOnMock, UnknownUvmIoctlIsEinval) {
  MockNvDriver driver;
  SeamFd fd(driver, "/dev/nvidia-uvm", O_RDWR);
  std::uint8_t args[64] = {};
  EXPECT_EQ(driver.ioctl(fd.get(), 12345, args), -EINVAL);
}

class NvUvmRangesOnMock : public ::testing::Test {
 protected:
  void SetUp() override {
    nv.open_driver();
    nv.device();
  }
  NvBringUp nv;
};

TEST_F(NvUvmRangesOnMock, OverlappingExternalRangeIsAddressInUse) {
  nv.uvm.create_external_range(0x4000000000, 0x10000);
  EXPECT_EQ(status_of([&] { nv.uvm.create_external_range(0x4000008000, 0x10000); }), NV_ERR_UVM_ADDRESS_IN_USE);
  EXPECT_EQ(status_of([&] { nv.uvm.create_external_range(0x4000000800, 0x1000); }), NV_ERR_INVALID_ADDRESS);
}

TEST_F(NvUvmRangesOnMock, MappingOutsideAnExternalRangeIsInvalidAddress) {
  NV_MEMORY_ALLOCATION_PARAMS params{};
  params.owner = nv.root;
  params.size = 0x2000;
  const NvHandle memory = nv.rm.alloc(nv.nvdevice, NV1_MEMORY_USER, params);
  EXPECT_EQ(status_of([&] { nv.uvm.map_external_allocation(0x5000000000, 0x2000, nv.uuid, nv.ctl.get(), nv.root,
                                                           memory); }),
            NV_ERR_INVALID_ADDRESS);
  nv.uvm.create_external_range(0x5000000000, 0x1000);
  EXPECT_EQ(status_of([&] { nv.uvm.map_external_allocation(0x5000000000, 0x2000, nv.uuid, nv.ctl.get(), nv.root,
                                                           memory); }),
            NV_ERR_INVALID_ADDRESS);
}

TEST_F(NvUvmRangesOnMock, UvmMappingAloneMakesMemoryReachableAndUvmFreeUnmapsIt) {
  NV_MEMORY_ALLOCATION_PARAMS params{};
  params.owner = nv.root;
  params.size = 0x2000;
  const NvHandle memory = nv.rm.alloc(nv.nvdevice, NV1_MEMORY_USER, params);
  const NvU64 va = 0x6000000000;
  nv.uvm.create_external_range(va, 0x2000);
  nv.uvm.map_external_allocation(va, 0x2000, nv.uuid, nv.ctl.get(), nv.root, memory);
  EXPECT_NO_THROW(nv.driver.gpu_memory().translate(va + 0x1ff8, 8));
  nv.uvm.free(va, 0x2000);
  EXPECT_THROW(nv.driver.gpu_memory().translate(va, 8), std::runtime_error);
  EXPECT_TRUE(nv.driver.uvm_external_ranges(nv.uvm_fd.get()).empty());
  EXPECT_EQ(status_of([&] { nv.uvm.free(va, 0x2000); }), NV_ERR_INVALID_ADDRESS);
}

TEST_F(NvUvmRangesOnMock, MappingAnUnknownMemoryHandleFails) {
  nv.uvm.create_external_range(0x7000000000, 0x1000);
  EXPECT_EQ(status_of([&] { nv.uvm.map_external_allocation(0x7000000000, 0x1000, nv.uuid, nv.ctl.get(), nv.root,
                                                           0xdead0004); }),
            NV_ERR_OBJECT_NOT_FOUND);
}

TEST_F(NvUvmRangesOnMock, RegisteringAChannelThatIsNotOneFails) {
  EXPECT_EQ(status_of([&] { nv.uvm.register_channel(nv.uuid, nv.ctl.get(), nv.root, nv.subdevice, 0, 0x1000); }),
            NV_ERR_OBJECT_NOT_FOUND);
}

TEST_F(NvUvmRangesOnMock, ChannelRegistrationReservesItsVaRange) {
  nv.channels();
  EXPECT_EQ(status_of([&] { nv.uvm.create_external_range(kUvmChannelVaBase, 0x1000); }), NV_ERR_UVM_ADDRESS_IN_USE);
  EXPECT_EQ(status_of([&] { nv.uvm.register_channel(nv.uuid, nv.ctl.get(), nv.root, nv.compute_channel, kLowVaBase,
                                                    0x1000); }),
            NV_ERR_UVM_ADDRESS_IN_USE);  // the gpfifo area's external range
}

TEST_F(NvUvmRangesOnMock, PeerAccessIsRefusedWithOneGpu) {
  EXPECT_EQ(status_of([&] { nv.uvm.enable_peer_access(nv.uuid, nv.uuid); }), NV_ERR_INVALID_DEVICE);
}

}  // namespace
}  // namespace doorbell::nv_driver_test
