#include "hcq/vk/vk_debug_messenger.h"

#include <stdexcept>

#include "hcq/vk/vk_check.h"

namespace doorbell::vk {

DebugMessenger::DebugMessenger(const VulkanInstance& instance, std::string device_name, MessageSink sink)
    : instance_(instance.handle()), device_name_(std::move(device_name)), sink_(std::move(sink)) {
  if (!instance.validation()) return;
  auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
  if (create == nullptr) throw std::runtime_error(device_name_ + ": the validation layer is on but vkCreateDebugUtilsMessengerEXT is missing");
  const VkDebugUtilsMessengerCreateInfoEXT info = messenger_info(&DebugMessenger::on_message, this);
  vk_check(create(instance_, &info, nullptr, &messenger_), device_name_, "vkCreateDebugUtilsMessengerEXT", "the validation messages");
  for (const std::string& m : instance.take_creation_messages()) sink_(m);
}

DebugMessenger::~DebugMessenger() {
  if (messenger_ == VK_NULL_HANDLE) return;
  auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
  if (destroy != nullptr) destroy(instance_, messenger_, nullptr);
}

void DebugMessenger::claim_value(uint64_t handle) {
  std::lock_guard lock(handles_mutex_);
  handles_.insert(handle);
}

void DebugMessenger::disclaim_value(uint64_t handle) {
  std::lock_guard lock(handles_mutex_);
  handles_.erase(handle);
}

bool DebugMessenger::concerns_this_device(const VkDebugUtilsMessengerCallbackDataEXT& data) {
  bool device_level = false;
  std::lock_guard lock(handles_mutex_);
  for (uint32_t i = 0; i < data.objectCount; i++) {
    const VkDebugUtilsObjectNameInfoEXT& o = data.pObjects[i];
    if (o.objectType == VK_OBJECT_TYPE_INSTANCE || o.objectType == VK_OBJECT_TYPE_PHYSICAL_DEVICE || o.objectType == VK_OBJECT_TYPE_UNKNOWN ||
        o.objectHandle == 0)
      continue;
    device_level = true;
    if (handles_.count(o.objectHandle) != 0) return true;
  }
  return !device_level;
}

VKAPI_ATTR VkBool32 VKAPI_CALL DebugMessenger::on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
                                                          const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  auto* self = static_cast<DebugMessenger*>(user);
  if (self->concerns_this_device(*data)) self->sink_(validation_message_text(self->device_name_, severity, data));
  return VK_FALSE;  // the call goes on (VK_TRUE is reserved for layer development)
}

}  // namespace doorbell::vk
