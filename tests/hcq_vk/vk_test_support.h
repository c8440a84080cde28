// What the Vulkan device tests share: the suite's device (skipped when the machine has no Vulkan device), the
// hand-written SPIR-V kernels (kernels/*.spvasm, assembled at build time), and a fixture that fails the test during
// which the validation layer reported anything.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "hcq/vk/vk_device.h"

namespace doorbell::vk::testing {

// The suite's device "VK", opened once; null (with the reason) when there is none.
VulkanDevice* shared_device(std::string* why = nullptr);
// The words of kernels/<name>.spv.
std::vector<uint32_t> kernel_words(const std::string& name);
// add_one (y[i] += 1, LocalSize 64, one buffer) and mul_add (out = a * b + 1 for i < n, LocalSize 128, three
// buffers and one variable), loaded on `d`.
const VulkanProgram& add_one(VulkanDevice& d);
const VulkanProgram& mul_add(VulkanDevice& d);

class VkTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  VulkanDevice& dev() { return *dev_; }
  // A buffer of `bytes` bytes of the suite's device, released at the end of the test.
  Device::Storage buffer(size_t bytes);

 private:
  VulkanDevice* dev_ = nullptr;
  size_t messages_before_ = 0;
  std::vector<Device::Storage> buffers_;
};

}  // namespace doorbell::vk::testing
