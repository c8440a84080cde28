#include <algorithm>

#include "kernel-interface/device_probe.h"
#include "tests/common/device_required.h"

namespace doorbell::kernel_interface {
namespace {

TEST(NvidiaDevice, RealDriverVersionParses) {
  DOORBELL_REQUIRE_DEVICE("nv");
  const NvidiaInfo nvidia = probe_nvidia();
  EXPECT_TRUE(nvidia.control_device_present);
  EXPECT_FALSE(nvidia.gpu_minors.empty()) << "/dev/nvidiactl exists but no /dev/nvidiaN";
  ASSERT_TRUE(nvidia.driver.has_value()) << "/proc/driver/nvidia/version absent while the driver is loaded";
  const std::string& version = nvidia.driver->version;  // dotted decimal, e.g. "580.159"
  EXPECT_NE(version.find('.'), std::string::npos) << version;
  EXPECT_TRUE(std::all_of(version.begin(), version.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; }))
      << version;
}

}  // namespace
}  // namespace doorbell::kernel_interface
