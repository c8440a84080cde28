// The device probe asks the NVIDIA driver for its GPUs (NV_ESC_CARD_INFO): under MOCKGPU=1 the emulated machine's,
// MOCKGPU_NV_GPUS of them, each on its own PCI bus and node.
#include <gtest/gtest.h>

#include <cstdlib>

#include "kernel-interface/device_probe.h"
#include "kernel-interface/device_summary.h"
#include "mockgpu/install.h"

namespace doorbell::kernel_interface {
namespace {

TEST(NvidiaGpuList, UnderMockgpuTheProbeListsEveryEmulatedGpu) {
  mockgpu::install();
  ASSERT_EQ(setenv("MOCKGPU", "1", 1), 0);
  ASSERT_EQ(setenv("MOCKGPU_NV_GPUS", "2", 1), 0);
  const NvidiaInfo nvidia = probe_nvidia_driver(NvidiaInfo{});
  unsetenv("MOCKGPU_NV_GPUS");
  unsetenv("MOCKGPU");
  EXPECT_TRUE(nvidia.gpus_error.empty()) << nvidia.gpus_error;
  EXPECT_TRUE(nvidia.emulated);
  EXPECT_TRUE(nvidia.control_device_present);
  ASSERT_EQ(nvidia.gpus.size(), 2u);
  EXPECT_EQ(nvidia.gpu_minors, (std::vector<int>{0, 1}));
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(nvidia.gpus[i].index, i);
    EXPECT_EQ(nvidia.gpus[i].minor, i);
    EXPECT_EQ(nvidia.gpus[i].pci_bus, 1 + i);
    EXPECT_EQ(nvidia.gpus[i].gpu_id, static_cast<std::uint32_t>(1 + i) << 8);
  }
  ASSERT_TRUE(nvidia.driver.has_value());
  EXPECT_EQ(nvidia.driver->version, "580.159");
  const std::vector<std::string> lines = summarize_nvidia_gpus(nvidia);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[1].find("NV:1 /dev/nvidia1, PCI 0000:02:00.0"), std::string::npos) << lines[1];
}

TEST(NvidiaGpuList, WithoutMockgpuAndWithoutAControlDeviceTheDriverIsNotAsked) {
  unsetenv("MOCKGPU");
  const NvidiaInfo nvidia = probe_nvidia_driver(NvidiaInfo{});
  EXPECT_TRUE(nvidia.gpus.empty());
  EXPECT_TRUE(nvidia.gpus_error.empty()) << nvidia.gpus_error;
  EXPECT_FALSE(nvidia.emulated);
}

}  // namespace
}  // namespace doorbell::kernel_interface
