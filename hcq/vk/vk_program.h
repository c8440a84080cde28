// A SPIR-V kernel made launchable on a VulkanDevice: its compute pipeline (one push-constant range of
// kSpirvPushConstantBytes holding the argument block's address, no descriptor sets: compiler/spirv/spirv_kernel_abi.h)
// and what an exec must match. The device makes programs through its pipeline cache (vk_program.cpp,
// firmware-notes/vulkan-device.md §7); a program may outlive its device, so the two share the registry of live
// pipelines and whichever goes first destroys each pipeline once.
#pragma once
#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>

#include "hcq/loaded_program.h"

namespace doorbell::vk {

// The pipelines of one device that are still alive.
struct PipelineRegistry {
  std::mutex mu;
  VkDevice device = VK_NULL_HANDLE;  // null once the device is gone (it destroyed every pipeline still here)
  std::unordered_set<VkPipeline> live;
};

class VulkanProgram final : public LoadedProgram {
 public:
  VulkanProgram(std::string name, std::string device, VkPipeline pipeline, std::shared_ptr<PipelineRegistry> registry,
                std::array<uint32_t, 3> local_size, uint32_t buffers, uint32_t vars);
  ~VulkanProgram() override;
  const std::string& name() const override { return name_; }
  const std::string& device() const override { return device_; }
  VkPipeline pipeline() const { return pipeline_; }
  std::array<uint32_t, 3> local_size() const { return local_size_; }
  uint32_t buffers() const { return buffers_; }
  uint32_t vars() const { return vars_; }

 private:
  std::string name_, device_;
  VkPipeline pipeline_;
  std::shared_ptr<PipelineRegistry> registry_;  // destroys the pipeline once, whichever of program and device goes first
  std::array<uint32_t, 3> local_size_;
  uint32_t buffers_, vars_;
};

}  // namespace doorbell::vk
