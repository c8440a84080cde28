// Storage the host cannot map (DOORBELL_VK_STAGING=1, as on a discrete GPU without DEVICE_LOCAL|HOST_VISIBLE memory):
// host-visible memory with a device address beside it (allocate_host_visible, for tools that fill buffers from the
// host), the device's properties, and the runtime's buffers on such storage (hcq/host_buffers.h through
// copy_in/copy_out, hcq/device.h Storage).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

#include "frontend/tensor.h"
#include "hcq/devices.h"
#include "hcq/host_buffers.h"
#include "hcq/hw_queue.h"
#include "ir/environment.h"
#include "tests/common/error_of.h"
#include "tests/hcq_vk/vk_test_support.h"

namespace doorbell::vk::testing {
namespace {

using doorbell::testing::error_of;

std::unique_ptr<VulkanDevice> open_staged() {
  setenv("DOORBELL_VK_STAGING", "1", 1);
  std::unique_ptr<VulkanDevice> d;
  try {
    d = VulkanDevice::open(0);
  } catch (...) {
    unsetenv("DOORBELL_VK_STAGING");
    throw;
  }
  unsetenv("DOORBELL_VK_STAGING");
  return d;
}

TEST(VkHostVisible, HostVisibleMemoryOfAStagedDeviceIsMappedZeroedAndAnExecWritesItThroughItsAddress) {
  std::string why;
  if (shared_device(&why) == nullptr) GTEST_SKIP() << "no Vulkan device: " << why;
  std::unique_ptr<VulkanDevice> d = open_staged();
  ASSERT_TRUE(d->staging());
  const Device::Storage y = d->allocate_host_visible(256 * 4);
  ASSERT_NE(y.host, nullptr);
  ASSERT_NE(y.address, 0u);
  std::vector<float> values(256, -1.f);
  std::memcpy(values.data(), y.host, 256 * 4);
  EXPECT_EQ(values, std::vector<float>(256, 0.f)) << "zero-filled";
  for (int i = 0; i < 256; i++) values[i] = static_cast<float>(i);
  std::memcpy(y.host, values.data(), 256 * 4);
  const std::vector<uint64_t> args{y.address};
  Signal& done = d->new_signal("host-visible done");
  HWQueue().exec(add_one(*d), args, {4, 1, 1}, {64, 1, 1}).signal(done, 1).submit(*d);
  done.wait(1);
  std::memcpy(values.data(), y.host, 256 * 4);
  for (int i = 0; i < 256; i++) ASSERT_EQ(values[i], static_cast<float>(i) + 1.f) << i;
  d->release_host_visible(y);
  const std::string m = error_of<std::invalid_argument>([&] { d->release_host_visible(y); });
  EXPECT_NE(m.find("no live buffer"), std::string::npos) << m;
}

TEST(VkProperties, NameTheDeviceItsDriverAndTheApiVersion) {
  std::string why;
  VulkanDevice* d = shared_device(&why);
  if (d == nullptr) GTEST_SKIP() << "no Vulkan device: " << why;
  const VulkanDeviceProperties& p = d->properties();
  EXPECT_EQ(p.device_name, d->physical_name());
  EXPECT_FALSE(p.driver_name.empty());
  EXPECT_GE(VK_API_VERSION_MAJOR(p.api_version) * 100 + VK_API_VERSION_MINOR(p.api_version), 102u) << "the device needs Vulkan 1.2";
  EXPECT_EQ(p.api_version_text, std::to_string(VK_API_VERSION_MAJOR(p.api_version)) + "." + std::to_string(VK_API_VERSION_MINOR(p.api_version)) +
                                    "." + std::to_string(VK_API_VERSION_PATCH(p.api_version)));
  EXPECT_EQ(d->spirv_caps().driver, p.driver_name + " " + p.driver_info);
}

// The registry's VK device reads DOORBELL_VK_STAGING when it opens: a fresh process (threadsafe death test).
void tensors_on_staged_vk() {
  setenv("DOORBELL_VK_STAGING", "1", 1);
  set_default_device_name("VK");
  auto fail = [](const std::string& what) {
    std::fprintf(stderr, "%s\n", what.c_str());
    std::exit(1);
  };
  auto* vk = dynamic_cast<VulkanDevice*>(&device("VK"));
  if (vk == nullptr || !vk->staging()) fail("the registry's VK is not staged");
  Tensor x = Tensor({1.f, 2.f, 3.f}).realize();
  Tensor y = ((x + 1) * 2).realize();
  if (y.tolist<float>() != std::vector<float>{4, 6, 8}) fail("(x + 1) * 2 on staged VK is wrong");
  const UOp b = y.uop();
  if (buffer_size(b) != 12) fail("buffer_size " + std::to_string(buffer_size(b)) + ", expected 12");
  if (buffer_device_address(b) == 0) fail("no device address");
  try {
    buffer_bytes(b);
    fail("buffer_bytes of unmapped storage did not throw");
  } catch (const std::invalid_argument& e) {
    if (std::string(e.what()).find("cannot map") == std::string::npos) fail(std::string("buffer_bytes said: ") + e.what());
  }
  std::vector<float> back(3);
  read_buffer(b, std::as_writable_bytes(std::span(back)));
  if (back != std::vector<float>{4, 6, 8}) fail("read_buffer of unmapped storage is wrong");
  const std::vector<float> five{5, 5, 5};
  write_buffer(b, std::as_bytes(std::span(five)));
  if (y.tolist<float>() != five) fail("write_buffer into unmapped storage did not land");
  std::exit(0);
}

TEST(VkStagedBuffers, TensorsOnStagedStorageGoThroughCopyInAndCopyOutAndBufferBytesRefusesThem) {
  std::string why;
  if (shared_device(&why) == nullptr) GTEST_SKIP() << "no Vulkan device: " << why;
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(tensors_on_staged_vk(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace doorbell::vk::testing
