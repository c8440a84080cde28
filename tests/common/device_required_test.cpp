#include "tests/common/device_required.h"


#include "tests/common/temp_tree.h"

namespace doorbell::testing {
namespace {

TEST(MissingDevice, NamesTheAbsentNvidiaControlDevice) {
  TempTree tree;
  EXPECT_EQ(missing_device("nv", tree.root()), "no NVIDIA GPU: /dev/nvidiactl absent; this test needs real hardware");
}

TEST(MissingDevice, NamesTheAbsentKfdDevice) {
  TempTree tree;
  EXPECT_EQ(missing_device("amd", tree.root()), "no AMD GPU: /dev/kfd absent; this test needs real hardware");
}

TEST(MissingDevice, NothingIsMissingWhenTheDeviceNodesExist) {
  TempTree tree;
  tree.write("dev/nvidiactl", "");
  tree.write("dev/kfd", "");
  EXPECT_EQ(missing_device("nv", tree.root()), std::nullopt);
  EXPECT_EQ(missing_device("amd", tree.root()), std::nullopt);
}

TEST(MissingDevice, RejectsAnUnknownKind) {
  EXPECT_EQ(missing_device("intel"), "unknown device kind 'intel'; expected \"nv\" or \"amd\"");
  EXPECT_FALSE(is_known_device_kind("intel"));
}

}  // namespace
}  // namespace doorbell::testing
