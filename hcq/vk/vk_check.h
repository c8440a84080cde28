// Vulkan results as errors: every call that can fail is checked, and a failure throws std::runtime_error naming the
// device, the call, what it was for and the VkResult's name ("VK: vkCreateComputePipelines for kernel E_16 failed:
// VK_ERROR_OUT_OF_HOST_MEMORY"). The names are the enumerants of vulkan_core.h's VkResult.
#pragma once
#include <vulkan/vulkan.h>

#include <stdexcept>
#include <string>

namespace doorbell::vk {

const char* vk_result_name(VkResult result);

// A Vulkan structure zero-filled with its sType set (designated or partial braces would leave -Wextra unhappy).
template <class T>
T vk_struct(VkStructureType type) {
  T s{};
  s.sType = type;
  return s;
}

inline void vk_check(VkResult result, const std::string& device, const char* call, const std::string& what) {
  if (result == VK_SUCCESS) return;
  throw std::runtime_error(device + ": " + call + (what.empty() ? "" : " for " + what) + " failed: " + vk_result_name(result));
}

}  // namespace doorbell::vk
