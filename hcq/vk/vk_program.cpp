#include "hcq/vk/vk_program.h"

#include <cstring>
#include <stdexcept>
#include <vector>

#include "compiler/program.h"
#include "hcq/vk/vk_check.h"
#include "hcq/vk/vk_device.h"
#include "hcq/vk/vk_pipeline_cache_file.h"

namespace doorbell::vk {

VulkanProgram::VulkanProgram(std::string name, std::string device, VkPipeline pipeline, std::shared_ptr<PipelineRegistry> registry,
                             std::array<uint32_t, 3> local_size, uint32_t buffers, uint32_t vars)
    : name_(std::move(name)), device_(std::move(device)), pipeline_(pipeline), registry_(std::move(registry)), local_size_(local_size),
      buffers_(buffers), vars_(vars) {}

VulkanProgram::~VulkanProgram() {
  std::lock_guard lock(registry_->mu);
  if (registry_->device == VK_NULL_HANDLE || registry_->live.erase(pipeline_) == 0) return;
  // Device::program frees an evicted program only once the timeline passed every submission that could use it.
  vkDestroyPipeline(registry_->device, pipeline_, nullptr);
}

std::unique_ptr<VulkanProgram> VulkanDevice::make_program(std::span<const uint32_t> words, const ProgramInfo& info) {
  const std::string kernel = "kernel " + info.name;
  if (words.size() < 5 || words[0] != 0x07230203u)
    throw std::invalid_argument(name() + ": " + kernel + " is not a SPIR-V module (" + std::to_string(words.size()) +
                                " words; expected the magic number 0x07230203 first)");
  std::array<uint32_t, 3> local{};
  int64_t threads = 1;
  for (int i = 0; i < 3; i++) {
    if (info.local_size[i] < 1 || info.local_size[i] > caps_.max_local[i])
      throw std::invalid_argument(name() + ": " + kernel + " has local size " + std::to_string(info.local_size[i]) + " in dimension " +
                                  std::to_string(i) + "; the device takes 1.." + std::to_string(caps_.max_local[i]));
    local[i] = static_cast<uint32_t>(info.local_size[i]);
    threads *= info.local_size[i];
  }
  if (threads > caps_.max_threads_per_block)
    throw std::invalid_argument(name() + ": " + kernel + " has " + std::to_string(threads) + " threads per workgroup; the device takes " +
                                std::to_string(caps_.max_threads_per_block) + " (maxComputeWorkGroupInvocations)");
  VkShaderModuleCreateInfo sm = vk_struct<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
  sm.codeSize = words.size() * 4;
  sm.pCode = words.data();
  VkShaderModule module = VK_NULL_HANDLE;
  vk_check(vkCreateShaderModule(device_, &sm, nullptr, &module), name(), "vkCreateShaderModule", kernel);
  messenger_->claim(module);
  VkComputePipelineCreateInfo cp = vk_struct<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
  cp.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  cp.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cp.stage.module = module;
  cp.stage.pName = info.name.c_str();
  cp.layout = layout_;
  VkPipeline pipeline = VK_NULL_HANDLE;
  const VkResult r = vkCreateComputePipelines(device_, pipeline_cache_, 1, &cp, nullptr, &pipeline);
  vkDestroyShaderModule(device_, module, nullptr);
  messenger_->disclaim(module);
  vk_check(r, name(), "vkCreateComputePipelines", kernel);
  // Not disclaimed when destroyed (~VulkanProgram may outlive the device): a claimed handle the driver reuses for
  // another device's object at most lets this device hear that object's messages too.
  messenger_->claim(pipeline);
  {
    std::lock_guard lock(pipelines_->mu);
    pipelines_->live.insert(pipeline);
  }
  auto program = std::make_unique<VulkanProgram>(info.name, name(), pipeline, pipelines_, local, static_cast<uint32_t>(info.buffers),
                                                 static_cast<uint32_t>(info.vars.size()));
  bool save = false;
  {
    std::lock_guard lock(programs_mutex_);
    save = ++pipelines_since_save_ >= kPipelinesPerSave;
  }
  if (save) save_pipeline_cache();
  return program;
}

const VulkanProgram& VulkanDevice::load_spirv(std::span<const uint32_t> words, const ProgramInfo& info) {
  std::unique_ptr<VulkanProgram> p = make_program(words, info);
  std::lock_guard lock(programs_mutex_);
  spirv_programs_.push_back(std::move(p));
  return *spirv_programs_.back();
}

std::shared_ptr<const LoadedProgram> VulkanDevice::load(const UOp& program) {
  const ProgramInfo& info = program_info(program);
  const std::string& binary = program_binary(program);
  if (binary.size() % 4 != 0)
    throw std::invalid_argument(name() + ": kernel " + info.name + "'s binary is " + std::to_string(binary.size()) +
                                " bytes; expected SPIR-V words (a multiple of 4 bytes)");
  std::vector<uint32_t> words(binary.size() / 4);
  std::memcpy(words.data(), binary.data(), binary.size());
  return make_program(words, info);
}

void VulkanDevice::save_pipeline_cache() {
  if (!pipeline_cache_path_ || pipeline_cache_ == VK_NULL_HANDLE) return;
  size_t size = 0;
  if (vkGetPipelineCacheData(device_, pipeline_cache_, &size, nullptr) != VK_SUCCESS) return;
  std::vector<uint8_t> data(size);
  if (vkGetPipelineCacheData(device_, pipeline_cache_, &size, data.data()) != VK_SUCCESS) return;
  data.resize(size);
  save_pipeline_cache_file(*pipeline_cache_path_, data);
  std::lock_guard lock(programs_mutex_);
  pipelines_since_save_ = 0;
}

}  // namespace doorbell::vk
