// The device probe (`doorbell devices`) asks the AMD driver's seam for its topology: under MOCKGPU=1 the emulated
// KFD's, MOCKGPU_AMD_GPUS GPUs of it, as it asks the NVIDIA driver for its GPUs.
#include <gtest/gtest.h>

#include <cstdlib>

#include "kernel-interface/device_probe.h"
#include "kernel-interface/device_summary.h"
#include "mockgpu/install.h"

namespace doorbell::kernel_interface {
namespace {

TEST(AmdTopologyProbe, UnderMockgpuTheProbeListsEveryEmulatedGpu) {
  mockgpu::install();
  ASSERT_EQ(setenv("MOCKGPU", "1", 1), 0);
  ASSERT_EQ(setenv("MOCKGPU_AMD_GPUS", "2", 1), 0);
  const AmdInfo amd = probe_amd_driver(AmdInfo{});
  unsetenv("MOCKGPU_AMD_GPUS");
  unsetenv("MOCKGPU");
  EXPECT_TRUE(amd.gpus_error.empty()) << amd.gpus_error;
  EXPECT_TRUE(amd.emulated);
  EXPECT_TRUE(amd.kfd_present);
  ASSERT_EQ(amd.gpus.size(), 2u);
  for (const AmdGpuNode& gpu : amd.gpus) {
    EXPECT_EQ(gpu.gfx_name, "gfx1100");
    EXPECT_EQ(gpu.simd_count / gpu.simd_per_cu, 96u) << "a 7900 XTX's 96 CUs";
    EXPECT_NE(gpu.gpu_id, 0u);
  }
  EXPECT_EQ(amd.gpus[0].node, 1) << "node 0 is the CPU";
  EXPECT_NE(amd.gpus[0].drm_render_minor, amd.gpus[1].drm_render_minor);
  const std::string line = summarize_amd(amd);
  EXPECT_EQ(line.rfind("AMD: 2 GPUs: gfx1100 (node 1, 96 CUs, /dev/dri/renderD", 0), 0u) << line;
  EXPECT_NE(line.find("emulated (MOCKGPU=1)"), std::string::npos) << line;
}

TEST(AmdTopologyProbe, WithoutMockgpuWhatTheFilesShowIsKept) {
  unsetenv("MOCKGPU");
  AmdInfo found;
  found.kfd_present = false;
  const AmdInfo amd = probe_amd_driver(found);
  EXPECT_FALSE(amd.emulated);
  EXPECT_FALSE(amd.kfd_present);
  EXPECT_EQ(summarize_amd(amd), "AMD: none (/dev/kfd absent)");
}

}  // namespace
}  // namespace doorbell::kernel_interface
