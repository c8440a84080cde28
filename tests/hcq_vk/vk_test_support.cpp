#include "tests/hcq_vk/vk_test_support.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>

namespace doorbell::vk::testing {

VulkanDevice* shared_device(std::string* why) {
  static std::string error;
  static VulkanDevice* dev = [] {
    try {
      return VulkanDevice::open(0).release();  // kept for the process: queued work may run until it ends
    } catch (const std::exception& e) {
      error = e.what();
      return static_cast<VulkanDevice*>(nullptr);
    }
  }();
  if (why != nullptr) *why = error;
  return dev;
}

std::vector<uint32_t> kernel_words(const std::string& name) {
  const std::string path = std::string(DOORBELL_VK_KERNEL_DIR) + "/" + name + ".spv";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read; expected the kernel assembled at build time");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), words.size() * 4);
  return words;
}

const VulkanProgram& add_one(VulkanDevice& d) {
  ProgramInfo info;
  info.name = "add_one";
  info.local_size = {64, 1, 1};
  info.buffers = 1;
  return d.load_spirv(kernel_words("add_one"), info);
}

const VulkanProgram& mul_add(VulkanDevice& d) {
  ProgramInfo info;
  info.name = "mul_add";
  info.local_size = {128, 1, 1};
  info.buffers = 3;
  info.vars = {KernelVariable{"n", 0, 1 << 30}};
  return d.load_spirv(kernel_words("mul_add"), info);
}

void VkTest::SetUp() {
  std::string why;
  dev_ = shared_device(&why);
  if (dev_ == nullptr) GTEST_SKIP() << "no Vulkan device: " << why;
  messages_before_ = dev_->validation_messages().size();
}

void VkTest::TearDown() {
  if (dev_ == nullptr) return;
  for (const Device::Storage& s : buffers_) dev_->release_storage(s);
  const std::vector<std::string> messages = dev_->validation_messages();
  for (size_t i = messages_before_; i < messages.size(); i++) ADD_FAILURE() << "during this test: " << messages[i];
  if (messages.size() > messages_before_) {
    try {
      dev_->synchronize();  // takes the reported errors, so they do not fail the next test too
    } catch (const std::exception&) {
    }
  }
}

Device::Storage VkTest::buffer(size_t bytes) {
  buffers_.push_back(dev_->allocate_storage(bytes));
  return buffers_.back();
}

}  // namespace doorbell::vk::testing
