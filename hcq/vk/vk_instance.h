// A Vulkan instance for one VulkanDevice, and the choice of its physical device. API version 1.2: the oldest with
// timeline semaphores and buffer device addresses in core (firmware-notes/vulkan-device.md §1).
//
// Validation: with DOORBELL_VK_VALIDATION=1 the instance enables VK_LAYER_KHRONOS_validation when it is installed
// (else it says once on stderr that it is absent) and a VK_EXT_debug_utils messenger that hands every warning and
// error message to `on_message` (the device keeps them and fails its next synchronize()).
#pragma once
#include <vulkan/vulkan.h>

#include <functional>
#include <string>
#include <vector>

namespace doorbell::vk {

// What the device needs of a physical device, and whether it has it.
struct PhysicalDeviceChoice {
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  std::string name;  // deviceName
  int index = 0;     // among the usable devices, in enumeration order
};

class VulkanInstance {
 public:
  using MessageSink = std::function<void(const std::string& message)>;
  // `device_name` ("VK", "VK:1") names the device in errors. Throws naming what is missing: no loader or driver
  // (vkCreateInstance's answer), the debug-utils extension when validation is asked for.
  VulkanInstance(std::string device_name, MessageSink on_message);
  ~VulkanInstance();
  VulkanInstance(const VulkanInstance&) = delete;
  VulkanInstance& operator=(const VulkanInstance&) = delete;

  VkInstance handle() const { return instance_; }
  bool validation() const { return validation_; }

  // The index-th physical device with Vulkan >= 1.2 and timelineSemaphore, bufferDeviceAddress and shaderInt64, in
  // enumeration order. Throws listing every physical device and what each lacks when there are not that many.
  PhysicalDeviceChoice choose(int index) const;
  // Why `physical` cannot be used ("" when it can): its API version or the features it lacks, by their names.
  static std::string unusable_reason(VkPhysicalDevice physical);

 private:
  static VKAPI_ATTR VkBool32 VKAPI_CALL on_debug_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                         VkDebugUtilsMessageTypeFlagsEXT types,
                                                         const VkDebugUtilsMessengerCallbackDataEXT* data, void* user);
  std::string device_name_;
  MessageSink on_message_;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  bool validation_ = false;
};

// Whether DOORBELL_VK_VALIDATION=1 is set.
bool validation_requested();

}  // namespace doorbell::vk
