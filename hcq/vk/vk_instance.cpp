#include "hcq/vk/vk_instance.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "hcq/vk/vk_check.h"

namespace doorbell::vk {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

bool layer_installed(const char* name) {
  uint32_t count = 0;
  if (vkEnumerateInstanceLayerProperties(&count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkLayerProperties> layers(count);
  if (vkEnumerateInstanceLayerProperties(&count, layers.data()) != VK_SUCCESS) return false;
  for (const VkLayerProperties& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

std::string version_text(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." + std::to_string(VK_API_VERSION_PATCH(v));
}

}  // namespace

bool validation_requested() {
  const char* v = std::getenv("DOORBELL_VK_VALIDATION");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

VkDebugUtilsMessengerCreateInfoEXT messenger_info(PFN_vkDebugUtilsMessengerCallbackEXT callback, void* user) {
  VkDebugUtilsMessengerCreateInfoEXT m = vk_struct<VkDebugUtilsMessengerCreateInfoEXT>(VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT);
  m.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  m.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                  VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  m.pfnUserCallback = callback;
  m.pUserData = user;
  return m;
}

std::string validation_message_text(const std::string& device_name, VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                    const VkDebugUtilsMessengerCallbackDataEXT* data) {
  const char* level = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) ? "error" : "warning";
  return device_name + ": validation " + level + ": " + (data->pMessage != nullptr ? data->pMessage : "(no message)");
}

const VulkanInstance& VulkanInstance::shared(const std::string& device_name) {
  // Pointers that live until the process ends (reachable, so LeakSanitizer does not count them).
  static std::mutex mu;
  static VulkanInstance* instances[2] = {nullptr, nullptr};
  const bool validation = validation_requested();
  std::lock_guard lock(mu);
  VulkanInstance*& slot = instances[validation ? 1 : 0];
  if (slot == nullptr) slot = new VulkanInstance(validation, device_name);
  return *slot;
}

VulkanInstance::VulkanInstance(bool validation, const std::string& device_name) {
  std::vector<const char*> layers, extensions;
  if (validation) {
    if (layer_installed(kValidationLayer)) {
      validation_ = true;
      layers.push_back(kValidationLayer);
      extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
      extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
    } else {
      static std::once_flag said;
      std::call_once(said, [] {
        std::fprintf(stderr, "VK: DOORBELL_VK_VALIDATION=1 but %s is not installed (Debian: vulkan-validationlayers); running without it\n",
                     kValidationLayer);
      });
    }
  }
  VkApplicationInfo app = vk_struct<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
  app.pApplicationName = "doorbell";
  app.pEngineName = "doorbell";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo info = vk_struct<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  // A messenger chained here covers vkCreateInstance and vkDestroyInstance only (VK_EXT_debug_utils): its messages are
  // kept for the first device.
  VkDebugUtilsMessengerCreateInfoEXT messenger = messenger_info(&VulkanInstance::on_creation_message, this);
  // The layer's handle wrapping off: the handles a device holds are then the driver's own, so a device still open at
  // exit (the backend registry keeps its devices for the process) keeps the driver's objects reachable; wrapped, they
  // are reachable only through the layer's maps, which its static destructors free first, and LeakSanitizer reports
  // every object of the device (firmware-notes/vulkan-device.md §3).
  const VkValidationFeatureDisableEXT disabled[] = {VK_VALIDATION_FEATURE_DISABLE_UNIQUE_HANDLES_EXT};
  VkValidationFeaturesEXT features = vk_struct<VkValidationFeaturesEXT>(VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT);
  features.disabledValidationFeatureCount = 1;
  features.pDisabledValidationFeatures = disabled;
  if (validation_) {
    info.pNext = &features;
    features.pNext = &messenger;
  }
  const VkResult r = vkCreateInstance(&info, nullptr, &instance_);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
    throw std::runtime_error(device_name + ": no Vulkan 1.2 driver: the loader found no ICD (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER; "
                             "Debian: mesa-vulkan-drivers gives lavapipe)");
  vk_check(r, device_name, "vkCreateInstance", "API version 1.2");
}

std::vector<std::string> VulkanInstance::take_creation_messages() const {
  std::lock_guard lock(creation_mutex_);
  return std::exchange(creation_messages_, {});
}

VKAPI_ATTR VkBool32 VKAPI_CALL VulkanInstance::on_creation_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                                   VkDebugUtilsMessageTypeFlagsEXT,
                                                                   const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  auto* self = static_cast<VulkanInstance*>(user);
  std::lock_guard lock(self->creation_mutex_);
  self->creation_messages_.push_back(validation_message_text("VK (instance creation)", severity, data));
  return VK_FALSE;  // the call goes on (VK_TRUE is reserved for layer development)
}

std::string VulkanInstance::unusable_reason(VkPhysicalDevice physical) {
  VkPhysicalDeviceProperties props{};
  vkGetPhysicalDeviceProperties(physical, &props);
  if (props.apiVersion < VK_API_VERSION_1_2) return "Vulkan " + version_text(props.apiVersion) + " (1.2 needed)";
  VkPhysicalDeviceVulkan12Features f12 = vk_struct<VkPhysicalDeviceVulkan12Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
  VkPhysicalDeviceFeatures2 f = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  f.pNext = &f12;
  vkGetPhysicalDeviceFeatures2(physical, &f);
  std::string missing;
  auto need = [&](VkBool32 has, const char* name) {
    if (!has) missing += (missing.empty() ? "" : ", ") + std::string(name);
  };
  need(f12.timelineSemaphore, "timelineSemaphore");
  need(f12.bufferDeviceAddress, "bufferDeviceAddress");
  need(f.features.shaderInt64, "shaderInt64");
  return missing.empty() ? "" : "lacks " + missing;
}

PhysicalDeviceChoice VulkanInstance::choose(int index, const std::string& device_name) const {
  uint32_t count = 0;
  vk_check(vkEnumeratePhysicalDevices(instance_, &count, nullptr), device_name, "vkEnumeratePhysicalDevices", "");
  std::vector<VkPhysicalDevice> all(count);
  vk_check(vkEnumeratePhysicalDevices(instance_, &count, all.data()), device_name, "vkEnumeratePhysicalDevices", "");
  if (count == 0) throw std::runtime_error(device_name + ": the Vulkan loader lists no physical device (no ICD installed or VK_ICD_FILENAMES names none)");
  std::string listing;
  int usable = 0;
  for (uint32_t i = 0; i < count; i++) {
    VkPhysicalDeviceProperties props{};
    vkGetPhysicalDeviceProperties(all[i], &props);
    const std::string why = unusable_reason(all[i]);
    listing += std::string(listing.empty() ? "" : "; ") + "#" + std::to_string(i) + " " + props.deviceName + (why.empty() ? "" : " (" + why + ")");
    if (!why.empty()) continue;
    if (usable == index) return PhysicalDeviceChoice{all[i], props.deviceName, index};
    usable++;
  }
  throw std::runtime_error(device_name + ": no usable Vulkan device of index " + std::to_string(index) + ": " + std::to_string(usable) +
                           " usable (Vulkan >= 1.2 with timelineSemaphore, bufferDeviceAddress, shaderInt64) among " + listing);
}

}  // namespace doorbell::vk
