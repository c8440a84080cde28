#include "kernel-interface/device_probe.h"
#include "tests/common/device_required.h"

namespace doorbell::kernel_interface {
namespace {

TEST(AmdDevice, RealTopologyHasAGpuWithAGfxName) {
  DOORBELL_REQUIRE_DEVICE("amd");
  const AmdInfo amd = probe_amd();
  EXPECT_TRUE(amd.kfd_present);
  ASSERT_FALSE(amd.gpus.empty()) << "/dev/kfd exists but the KFD topology lists no GPU node";
  for (const AmdGpuNode& gpu : amd.gpus) {
    EXPECT_NE(gpu.gpu_id, 0u);
    EXPECT_TRUE(gpu.gfx_name.starts_with("gfx")) << "node " << gpu.node << ": '" << gpu.gfx_name << "'";
  }
}

}  // namespace
}  // namespace doorbell::kernel_interface
