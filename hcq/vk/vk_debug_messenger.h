// One device's VK_EXT_debug_utils messenger on the shared instance (vk_instance.h): created and destroyed with the
// device, it hands the validation messages about that device's objects to the device (which keeps them and fails its
// next synchronize()).
//
// A messenger hears every message of its instance, whichever device caused it (spec, "Debugging: Debug Utilities").
// So the device claims the handles it creates, and a message reaches it when one of the message's objects is a
// claimed handle, or when the message names no device-level object (instance or physical device only, or none):
// those concern every device. Handles are unique in a process while they live: dispatchable ones are pointers, and
// non-dispatchable ones are the driver's pointers or the validation layer's unique ids
// (firmware-notes/vulkan-device.md §3).
#pragma once
#include <vulkan/vulkan.h>

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_set>

#include "hcq/vk/vk_instance.h"

namespace doorbell::vk {

class DebugMessenger {
 public:
  using MessageSink = std::function<void(const std::string& message)>;
  // Inactive (no messenger, claims ignored) when the instance has no validation. Throws naming the device when the
  // messenger cannot be created.
  DebugMessenger(const VulkanInstance& instance, std::string device_name, MessageSink sink);
  ~DebugMessenger();
  DebugMessenger(const DebugMessenger&) = delete;
  DebugMessenger& operator=(const DebugMessenger&) = delete;

  bool active() const { return messenger_ != VK_NULL_HANDLE; }
  // A handle the device created (any Vulkan object type), and its destruction.
  template <class Handle>
  void claim(Handle h) {
    if (active()) claim_value(reinterpret_cast<uint64_t>(h));
  }
  template <class Handle>
  void disclaim(Handle h) {
    if (active()) disclaim_value(reinterpret_cast<uint64_t>(h));
  }

 private:
  static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data, void* user);
  bool concerns_this_device(const VkDebugUtilsMessengerCallbackDataEXT& data);
  void claim_value(uint64_t handle);
  void disclaim_value(uint64_t handle);

  VkInstance instance_;
  std::string device_name_;
  MessageSink sink_;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  // Its own lock: the layer calls on_message inside Vulkan calls, which the device may make holding any of its locks.
  std::mutex handles_mutex_;
  std::unordered_set<uint64_t> handles_;
};

}  // namespace doorbell::vk
