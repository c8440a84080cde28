// The memory of a VulkanDevice (vk_memory.cpp): VkBuffers with device addresses, sub-allocated in blocks
// (hcq/suballocator.h) from two heaps: storage (mapped where the device has DEVICE_LOCAL|HOST_VISIBLE|HOST_COHERENT
// memory, else unmapped and reached through staging copies) and host-visible memory (argument blocks, staging). The
// address -> buffer map turns a device address into the buffer and offset vkCmdCopyBuffer needs; a freed block is
// retired until the submissions made before it complete. firmware-notes/vulkan-device.md §6.
#pragma once
#include <vulkan/vulkan.h>

namespace doorbell::vk {

// Every buffer can be a storage buffer, a copy source and destination, and has a device address.
inline constexpr VkBufferUsageFlags kBufferUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                                   VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;

}  // namespace doorbell::vk
