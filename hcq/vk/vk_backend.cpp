// The VK backend's registration (hcq/backend.h): a Vulkan 1.2 device through the loader (hcq/vk/vk_device.h), with
// SPIR-V kernels (compiler/spirv/). "VK" is the first usable physical device, "VK:1" the second, in enumeration order.
// Built only with DOORBELL_WITH_VULKAN (hcq/CMakeLists.txt).

#include "hcq/backend.h"
#include "hcq/vk/vk_device.h"

namespace doorbell {
namespace {

[[maybe_unused]] const bool kRegistered = register_backend({
    .prefix = "VK",
    .description = "a Vulkan 1.2 device through the loader: SPIR-V kernels with buffer device addresses, timeline semaphores",
    .renderers = {"SPIRV"},
    .open = [](const DeviceName& name) -> std::unique_ptr<Device> { return vk::VulkanDevice::open(name.index); },
});

}  // namespace
}  // namespace doorbell
