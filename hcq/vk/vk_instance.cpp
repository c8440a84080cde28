#include "hcq/vk/vk_instance.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>

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

VulkanInstance::VulkanInstance(std::string device_name, MessageSink on_message)
    : device_name_(std::move(device_name)), on_message_(std::move(on_message)) {
  std::vector<const char*> layers, extensions;
  if (validation_requested()) {
    if (layer_installed(kValidationLayer)) {
      validation_ = true;
      layers.push_back(kValidationLayer);
      extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
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
  // The messenger also covers vkCreateInstance itself when chained here (VK_EXT_debug_utils).
  VkDebugUtilsMessengerCreateInfoEXT messenger = vk_struct<VkDebugUtilsMessengerCreateInfoEXT>(VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT);
  messenger.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger.pfnUserCallback = &VulkanInstance::on_debug_message;
  messenger.pUserData = this;
  if (validation_) info.pNext = &messenger;
  const VkResult r = vkCreateInstance(&info, nullptr, &instance_);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
    throw std::runtime_error(device_name_ + ": no Vulkan 1.2 driver: the loader found no ICD (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER; "
                             "Debian: mesa-vulkan-drivers gives lavapipe)");
  vk_check(r, device_name_, "vkCreateInstance", "API version 1.2");
  if (validation_) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (create == nullptr) {
      vkDestroyInstance(instance_, nullptr);
      throw std::runtime_error(device_name_ + ": the validation layer is on but vkCreateDebugUtilsMessengerEXT is missing");
    }
    const VkResult m = create(instance_, &messenger, nullptr, &messenger_);
    if (m != VK_SUCCESS) {
      vkDestroyInstance(instance_, nullptr);
      vk_check(m, device_name_, "vkCreateDebugUtilsMessengerEXT", "the validation messages");
    }
  }
}

VulkanInstance::~VulkanInstance() {
  if (messenger_ != VK_NULL_HANDLE) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy != nullptr) destroy(instance_, messenger_, nullptr);
  }
  vkDestroyInstance(instance_, nullptr);
}

VKAPI_ATTR VkBool32 VKAPI_CALL VulkanInstance::on_debug_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                                VkDebugUtilsMessageTypeFlagsEXT, const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                                void* user) {
  auto* self = static_cast<VulkanInstance*>(user);
  const char* level = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) ? "error" : "warning";
  std::string text = self->device_name_ + ": validation " + level + ": " + (data->pMessage != nullptr ? data->pMessage : "(no message)");
  if (self->on_message_) self->on_message_(text);
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

PhysicalDeviceChoice VulkanInstance::choose(int index) const {
  uint32_t count = 0;
  vk_check(vkEnumeratePhysicalDevices(instance_, &count, nullptr), device_name_, "vkEnumeratePhysicalDevices", "");
  std::vector<VkPhysicalDevice> all(count);
  vk_check(vkEnumeratePhysicalDevices(instance_, &count, all.data()), device_name_, "vkEnumeratePhysicalDevices", "");
  if (count == 0) throw std::runtime_error(device_name_ + ": the Vulkan loader lists no physical device (no ICD installed or VK_ICD_FILENAMES names none)");
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
  throw std::runtime_error(device_name_ + ": no usable Vulkan device of index " + std::to_string(index) + ": " + std::to_string(usable) +
                           " usable (Vulkan >= 1.2 with timelineSemaphore, bufferDeviceAddress, shaderInt64) among " + listing);
}

}  // namespace doorbell::vk
