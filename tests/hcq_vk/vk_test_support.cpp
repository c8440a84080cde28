#include "tests/hcq_vk/vk_test_support.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>

namespace doorbell::vk::testing {

namespace {

struct SharedDevice {
  std::unique_ptr<VulkanDevice> device;
  std::string error;
};

SharedDevice& shared() {
  static SharedDevice* s = [] {
    auto* made = new SharedDevice;  // never destroyed; its device is closed by CloseSharedDevice
    try {
      made->device = VulkanDevice::open(0);
    } catch (const std::exception& e) {
      made->error = e.what();
    }
    return made;
  }();
  return *s;
}

// Closes the suite's device after the last test, while the process's statics still live (a device's program cache
// holds UOps, whose interning table is a static). A device still open at exit keeps its pipelines, and lavapipe then
// leaks a block per pipeline that only its JIT-compiled code refers to (firmware-notes/vulkan-device.md §3).
class CloseSharedDevice : public ::testing::Environment {
 public:
  void TearDown() override { shared().device.reset(); }
};
[[maybe_unused]] ::testing::Environment* const kCloseSharedDevice = ::testing::AddGlobalTestEnvironment(new CloseSharedDevice);

}  // namespace

VulkanDevice* shared_device(std::string* why) {
  SharedDevice& s = shared();
  if (why != nullptr) *why = s.error;
  return s.device.get();
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
