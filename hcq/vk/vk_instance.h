// The process's Vulkan instance, shared by every VulkanDevice (VK, VK:1, ...), and the choice of a physical device.
// API version 1.2: the oldest with timeline semaphores and buffer device addresses in core
// (firmware-notes/vulkan-device.md §1).
//
// One instance per process (per validation setting), created on first use and deliberately never destroyed:
// lavapipe leaks at vkDestroyInstance (LeakSanitizer reports it from an unloaded module, so it cannot be suppressed
// by name; firmware-notes/vulkan-device.md §3), and loading the ICD and the validation layer is paid once per process
// instead of once per device.
//
// Validation: with DOORBELL_VK_VALIDATION=1 the instance enables VK_LAYER_KHRONOS_validation when it is installed
// (else it says once on stderr that it is absent) and VK_EXT_debug_utils; each device hears its own messages through
// its own messenger (vk_debug_messenger.h).
#pragma once
#include <vulkan/vulkan.h>

#include <mutex>
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
  // The instance for the current DOORBELL_VK_VALIDATION setting, created now if it is the first call with that
  // setting. `device_name` ("VK", "VK:1") names the device in errors. Throws naming what is missing: no loader or
  // driver (vkCreateInstance's answer), the debug-utils extension when validation is asked for; the next call tries
  // again.
  static const VulkanInstance& shared(const std::string& device_name);
  VulkanInstance(const VulkanInstance&) = delete;
  VulkanInstance& operator=(const VulkanInstance&) = delete;

  VkInstance handle() const { return instance_; }
  bool validation() const { return validation_; }

  // The index-th physical device with Vulkan >= 1.2 and timelineSemaphore, bufferDeviceAddress and shaderInt64, in
  // enumeration order. Throws listing every physical device and what each lacks when there are not that many.
  PhysicalDeviceChoice choose(int index, const std::string& device_name) const;
  // Why `physical` cannot be used ("" when it can): its API version or the features it lacks, by their names.
  static std::string unusable_reason(VkPhysicalDevice physical);
  // The validation messages of vkCreateInstance itself (no device's messenger existed yet); the first caller gets
  // them, later callers nothing.
  std::vector<std::string> take_creation_messages() const;

 private:
  VulkanInstance(bool validation, const std::string& device_name);
  ~VulkanInstance() = default;  // never called: see the file comment
  static VKAPI_ATTR VkBool32 VKAPI_CALL on_creation_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                            VkDebugUtilsMessageTypeFlagsEXT types,
                                                            const VkDebugUtilsMessengerCallbackDataEXT* data, void* user);
  VkInstance instance_ = VK_NULL_HANDLE;
  bool validation_ = false;
  mutable std::mutex creation_mutex_;
  mutable std::vector<std::string> creation_messages_;
};

// Whether DOORBELL_VK_VALIDATION=1 is set.
bool validation_requested();

// The messenger's create info for warnings and errors of every type, calling `callback` with `user`.
VkDebugUtilsMessengerCreateInfoEXT messenger_info(PFN_vkDebugUtilsMessengerCallbackEXT callback, void* user);
// "error" or "warning" and the message's text, as a device reports it ("VK: validation error: ...").
std::string validation_message_text(const std::string& device_name, VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                    const VkDebugUtilsMessengerCallbackDataEXT* data);

}  // namespace doorbell::vk
