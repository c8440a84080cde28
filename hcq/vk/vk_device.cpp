#include "hcq/vk/vk_device.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "compiler/spirv/spirv_kernel_abi.h"
#include "hcq/vk/vk_bound_queue.h"
#include "hcq/vk/vk_check.h"
#include "hcq/vk/vk_memory.h"
#include "hcq/vk/vk_pipeline_cache_file.h"
#include "hcq/vk/vk_program.h"
#include "hcq/vk/vk_recording.h"
#include "hcq/vk/vk_semaphore_signals.h"

namespace doorbell::vk {

namespace {

bool env_is_one(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, "1") == 0;
}

}  // namespace

std::unique_ptr<VulkanDevice> VulkanDevice::open(int index) {
  if (index < 0) throw std::invalid_argument("VK: device index " + std::to_string(index) + "; expected 0 or more");
  return std::unique_ptr<VulkanDevice>(new VulkanDevice(index));
}

VulkanDevice::VulkanDevice(int index)
    : Device(index == 0 ? "VK" : "VK:" + std::to_string(index), /*host_signals=*/false),
      pipelines_(std::make_shared<PipelineRegistry>()),
      bound_registry_(std::make_shared<BoundRegistry>()),
      query_slot_space_(kQuerySlots) {
  instance_ = &VulkanInstance::shared(name());
  messenger_ = std::make_unique<DebugMessenger>(*instance_, name(), [this](const std::string& m) {
    {
      std::lock_guard lock(messages_mutex_);
      validation_messages_.push_back(m);
    }
    report_queue_error(m);
  });
  const PhysicalDeviceChoice choice = instance_->choose(index, name());
  physical_ = choice.physical;
  physical_name_ = choice.name;
  staging_ = env_is_one("DOORBELL_VK_STAGING");
  try {
    create_logical_device();
    fill_caps();
    install_target();
    create_timeline_signal();
    progress_ = &new_signal("progress");
    bridge_thread_ = std::thread([this] { bridge_loop(); });
  } catch (...) {
    teardown();
    throw;
  }
}

void VulkanDevice::create_logical_device() {
  vkGetPhysicalDeviceProperties(physical_, &props_);
  uint32_t families = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, nullptr);
  std::vector<VkQueueFamilyProperties> fam(families);
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, fam.data());
  bool found = false;
  for (uint32_t i = 0; i < families && !found; i++) {
    if ((fam[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && fam[i].timestampValidBits != 0) {
      queue_family_ = i;
      timestamp_mask_ = fam[i].timestampValidBits >= 64 ? ~uint64_t{0} : (uint64_t{1} << fam[i].timestampValidBits) - 1;
      found = true;
    }
  }
  if (!found) throw std::runtime_error(name() + ": " + physical_name_ + " has no compute queue family with timestamps (timestampValidBits 0)");
  if (props_.limits.timestampPeriod <= 0) throw std::runtime_error(name() + ": " + physical_name_ + " reports timestampPeriod 0");

  uint32_t ext_count = 0;
  vkEnumerateDeviceExtensionProperties(physical_, nullptr, &ext_count, nullptr);
  std::vector<VkExtensionProperties> exts(ext_count);
  vkEnumerateDeviceExtensionProperties(physical_, nullptr, &ext_count, exts.data());
  std::vector<const char*> enabled;
  for (const VkExtensionProperties& e : exts)
    if (std::strcmp(e.extensionName, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME) == 0) calibrated_timestamps_ = true;
  if (calibrated_timestamps_) {
    // Both the device's timer and CLOCK_MONOTONIC (monotonic_ns) must be calibrateable.
    auto domains_fn = reinterpret_cast<PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT>(
        vkGetInstanceProcAddr(instance_->handle(), "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT"));
    uint32_t n = 0;
    bool device_domain = false, monotonic = false;
    if (domains_fn != nullptr && domains_fn(physical_, &n, nullptr) == VK_SUCCESS) {
      std::vector<VkTimeDomainEXT> domains(n);
      domains_fn(physical_, &n, domains.data());
      for (VkTimeDomainEXT d : domains) {
        device_domain |= d == VK_TIME_DOMAIN_DEVICE_EXT;
        monotonic |= d == VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
      }
    }
    calibrated_timestamps_ = device_domain && monotonic;
    if (calibrated_timestamps_) enabled.push_back(VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);
  }

  VkPhysicalDeviceVulkan12Features has12 = vk_struct<VkPhysicalDeviceVulkan12Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
  VkPhysicalDeviceFeatures2 has = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  has.pNext = &has12;
  vkGetPhysicalDeviceFeatures2(physical_, &has);
  VkPhysicalDeviceVulkan12Features want12 = vk_struct<VkPhysicalDeviceVulkan12Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
  want12.timelineSemaphore = VK_TRUE;
  want12.bufferDeviceAddress = VK_TRUE;
  want12.shaderInt8 = has12.shaderInt8;
  want12.shaderFloat16 = has12.shaderFloat16;
  want12.storageBuffer8BitAccess = has12.storageBuffer8BitAccess;
  want12.uniformAndStorageBuffer8BitAccess = has12.uniformAndStorageBuffer8BitAccess;
  VkPhysicalDeviceVulkan11Features want11 = vk_struct<VkPhysicalDeviceVulkan11Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES);
  VkPhysicalDeviceVulkan11Features has11 = vk_struct<VkPhysicalDeviceVulkan11Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES);
  VkPhysicalDeviceFeatures2 has_b = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  has_b.pNext = &has11;
  vkGetPhysicalDeviceFeatures2(physical_, &has_b);
  want11.storageBuffer16BitAccess = has11.storageBuffer16BitAccess;
  want11.pNext = &want12;
  VkPhysicalDeviceFeatures2 want = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  want.pNext = &want11;
  want.features.shaderInt64 = VK_TRUE;
  want.features.shaderInt16 = has.features.shaderInt16;
  want.features.shaderFloat64 = has.features.shaderFloat64;
  features_ = {has.features.shaderInt16 != 0, has.features.shaderFloat64 != 0, has12.shaderInt8 != 0, has12.shaderFloat16 != 0,
               has12.storageBuffer8BitAccess != 0, has11.storageBuffer16BitAccess != 0};

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo q = vk_struct<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
  q.queueFamilyIndex = queue_family_;
  q.queueCount = 1;
  q.pQueuePriorities = &priority;
  VkDeviceCreateInfo info = vk_struct<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
  info.pNext = &want;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &q;
  info.enabledExtensionCount = static_cast<uint32_t>(enabled.size());
  info.ppEnabledExtensionNames = enabled.data();
  vk_check(vkCreateDevice(physical_, &info, nullptr, &device_), name(), "vkCreateDevice", physical_name_);
  messenger_->claim(device_);
  vkGetDeviceQueue(device_, queue_family_, 0, &queue_);
  messenger_->claim(queue_);
  pipelines_->device = device_;
  bound_registry_->device = this;

  // Memory types: storage prefers DEVICE_LOCAL|HOST_VISIBLE|HOST_COHERENT (mapped), else DEVICE_LOCAL; the host
  // heap (argument blocks, staging) needs HOST_VISIBLE|HOST_COHERENT.
  VkBufferCreateInfo probe = vk_struct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  probe.size = 4096;
  probe.usage = kBufferUsage;
  VkMemoryRequirements req{};
  {
    VkBuffer b = VK_NULL_HANDLE;
    vk_check(vkCreateBuffer(device_, &probe, nullptr, &b), name(), "vkCreateBuffer", "the memory type probe");
    messenger_->claim(b);
    vkGetBufferMemoryRequirements(device_, b, &req);
    vkDestroyBuffer(device_, b, nullptr);
    messenger_->disclaim(b);
  }
  VkPhysicalDeviceMemoryProperties mem{};
  vkGetPhysicalDeviceMemoryProperties(physical_, &mem);
  auto find_type = [&](VkMemoryPropertyFlags flags) -> std::optional<uint32_t> {
    for (uint32_t i = 0; i < mem.memoryTypeCount; i++)
      if ((req.memoryTypeBits & (1u << i)) && (mem.memoryTypes[i].propertyFlags & flags) == flags) return i;
    return std::nullopt;
  };
  const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  std::optional<uint32_t> mapped = find_type(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | host);
  std::optional<uint32_t> local = find_type(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  std::optional<uint32_t> host_type = find_type(host);
  if (!host_type) throw std::runtime_error(name() + ": " + physical_name_ + " has no HOST_VISIBLE|HOST_COHERENT memory type for storage buffers");
  host_type_ = *host_type;
  if (mapped && !staging_) {
    storage_type_ = *mapped;
  } else {
    staging_ = true;
    storage_type_ = local ? *local : *host_type;
  }

  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, kSpirvPushConstantBytes};
  VkPipelineLayoutCreateInfo layout = vk_struct<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
  layout.pushConstantRangeCount = 1;
  layout.pPushConstantRanges = &range;
  vk_check(vkCreatePipelineLayout(device_, &layout, nullptr, &layout_), name(), "vkCreatePipelineLayout", "kernels");
  messenger_->claim(layout_);

  PipelineCacheIdentity id{props_.vendorID, props_.deviceID, {}};
  std::memcpy(id.uuid.data(), props_.pipelineCacheUUID, 16);
  pipeline_cache_path_ = pipeline_cache_path(id);
  std::vector<uint8_t> cached = pipeline_cache_path_ ? load_pipeline_cache(*pipeline_cache_path_, id) : std::vector<uint8_t>{};
  pipeline_cache_loaded_bytes_ = cached.size();
  VkPipelineCacheCreateInfo pc = vk_struct<VkPipelineCacheCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO);
  pc.initialDataSize = cached.size();
  pc.pInitialData = cached.empty() ? nullptr : cached.data();
  vk_check(vkCreatePipelineCache(device_, &pc, nullptr, &pipeline_cache_), name(), "vkCreatePipelineCache", "kernels");
  messenger_->claim(pipeline_cache_);

  VkCommandPoolCreateInfo pool = vk_struct<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = queue_family_;
  vk_check(vkCreateCommandPool(device_, &pool, nullptr, &command_pool_), name(), "vkCreateCommandPool", "queues");
  messenger_->claim(command_pool_);
  query_pool_ = new_query_pool(kQuerySlots);
  query_ring_.emplace(query_slot_space_.data(), 0, kQuerySlots, name() + ": the timestamp query slots");
  stamp_memory_ = allocate_memory(uint64_t{kQuerySlots} * kStampBytes, host_type_, true, "the timestamp results of the query slots");
  bridge_in_ = new_timeline_semaphore("the host bridge (foreign waits)");
  bridge_out_ = new_timeline_semaphore("the host bridge (foreign signals)");
  arg_memory_ = allocate_memory(kArgRingBytes, host_type_, true, "the argument block ring");
  args_.emplace(arg_memory_.host, arg_memory_.address, kArgRingBytes, name() + ": the argument block ring");
}

void VulkanDevice::fill_caps() {
  VkPhysicalDeviceSubgroupProperties subgroup = vk_struct<VkPhysicalDeviceSubgroupProperties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES);
  VkPhysicalDeviceFloatControlsProperties floats = vk_struct<VkPhysicalDeviceFloatControlsProperties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES);
  VkPhysicalDeviceVulkan12Properties p12 = vk_struct<VkPhysicalDeviceVulkan12Properties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES);
  subgroup.pNext = &floats;
  VkPhysicalDeviceProperties2 p = vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
  p.pNext = &subgroup;
  vkGetPhysicalDeviceProperties2(physical_, &p);
  VkPhysicalDeviceProperties2 q = vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
  q.pNext = &p12;
  vkGetPhysicalDeviceProperties2(physical_, &q);
  const VkPhysicalDeviceLimits& l = props_.limits;
  caps_.device_name = physical_name_;
  caps_.driver = std::string(p12.driverName) + " " + p12.driverInfo;
  const uint32_t v = props_.apiVersion;
  properties_ = VulkanDeviceProperties{physical_name_, v,
                                       std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
                                           std::to_string(VK_API_VERSION_PATCH(v)),
                                       p12.driverName, p12.driverInfo, props_.vendorID, props_.deviceID};
  caps_.subgroup_size = subgroup.subgroupSize;
  caps_.max_threads_per_block = l.maxComputeWorkGroupInvocations;
  caps_.max_local = {l.maxComputeWorkGroupSize[0], l.maxComputeWorkGroupSize[1], l.maxComputeWorkGroupSize[2]};
  caps_.max_global = {l.maxComputeWorkGroupCount[0], l.maxComputeWorkGroupCount[1], l.maxComputeWorkGroupCount[2]};
  caps_.max_shared_bytes = l.maxComputeSharedMemorySize;
  caps_.int64 = true;
  caps_.int16 = features_.int16;
  caps_.float64 = features_.float64;
  caps_.int8 = features_.int8;
  caps_.float16 = features_.float16;
  caps_.storage8 = features_.storage8;
  caps_.storage16 = features_.storage16;
  caps_.preserve_nan16 = floats.shaderSignedZeroInfNanPreserveFloat16;
  caps_.preserve_nan32 = floats.shaderSignedZeroInfNanPreserveFloat32;
  caps_.preserve_nan64 = floats.shaderSignedZeroInfNanPreserveFloat64;
}

// The SPIR-V target for this device's caps (compiler/spirv/spirv_target.h); a device it refuses (a missing feature)
// still runs hand-written modules (load_spirv) and says why it cannot compile.
void VulkanDevice::install_target() {
  try {
    set_target(make_spirv_target(caps_));
  } catch (const std::invalid_argument& e) {
    set_no_target_reason(e.what());
  }
}

VkQueryPool VulkanDevice::new_query_pool(uint32_t slots) {
  VkQueryPoolCreateInfo info = vk_struct<VkQueryPoolCreateInfo>(VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO);
  info.queryType = VK_QUERY_TYPE_TIMESTAMP;
  info.queryCount = std::max<uint32_t>(slots, 1);
  VkQueryPool pool = VK_NULL_HANDLE;
  vk_check(vkCreateQueryPool(device_, &info, nullptr, &pool), name(), "vkCreateQueryPool", std::to_string(slots) + " timestamps");
  messenger_->claim(pool);
  return pool;
}

VulkanDevice::~VulkanDevice() { teardown(); }

void VulkanDevice::teardown() {
  if (device_ != VK_NULL_HANDLE && progress_ != nullptr) {
    const uint64_t target = submissions_.load();
    uint64_t last = 0;
    try {
      if (!progress_->wait_for(target, teardown_wait_, &last)) {
        std::fprintf(stderr, "%s: destroyed with work that made no progress for %lld ms (%s); releasing its waits from the host\n", name().c_str(),
                     static_cast<long long>(teardown_wait_.count()), blockage().c_str());
        stop_bridge();  // it must not signal the bridge semaphore while release_waits does
        release_waits();
        if (!progress_->wait_for(target, teardown_wait_, &last))
          std::fprintf(stderr, "%s: its queue still did not finish (submission %llu of %llu); destroying anyway\n", name().c_str(),
                       static_cast<unsigned long long>(last), static_cast<unsigned long long>(target));
      }
    } catch (const std::exception& e) {  // a lost device: nothing more will complete
      std::fprintf(stderr, "%s: destroyed after a fault: %s\n", name().c_str(), e.what());
    }
  }
  stop_bridge();
  if (device_ == VK_NULL_HANDLE) return;
  try {
    save_pipeline_cache();
  } catch (const std::exception&) {
  }
  {
    std::lock_guard lock(bound_registry_->mu);
    for (VulkanBoundQueue* b : bound_registry_->live) {
      if (b->pool != VK_NULL_HANDLE) vkDestroyQueryPool(device_, b->pool, nullptr);
      b->pool = VK_NULL_HANDLE;
    }
    bound_registry_->live.clear();
    bound_registry_->device = nullptr;
  }
  {
    std::lock_guard lock(pipelines_->mu);
    for (VkPipeline p : pipelines_->live) vkDestroyPipeline(device_, p, nullptr);
    pipelines_->live.clear();
    pipelines_->device = VK_NULL_HANDLE;
  }
  for (auto& s : signal_states_) vkDestroySemaphore(device_, s->semaphore, nullptr);
  if (bridge_in_) vkDestroySemaphore(device_, bridge_in_, nullptr);
  if (bridge_out_) vkDestroySemaphore(device_, bridge_out_, nullptr);
  if (query_pool_) vkDestroyQueryPool(device_, query_pool_, nullptr);
  for (auto& [address, m] : chunks_) free_memory(m);
  if (arg_memory_.buffer) free_memory(arg_memory_);
  if (stamp_memory_.buffer) free_memory(stamp_memory_);
  if (pipeline_cache_) vkDestroyPipelineCache(device_, pipeline_cache_, nullptr);
  if (layout_) vkDestroyPipelineLayout(device_, layout_, nullptr);
  if (command_pool_) vkDestroyCommandPool(device_, command_pool_, nullptr);  // frees every command buffer
  vkDestroyDevice(device_, nullptr);
  device_ = VK_NULL_HANDLE;
  messenger_.reset();  // after vkDestroyDevice, whose messages it still hears
}

// Signals every semaphore the unfinished submissions wait for up to what they wait for, so that the queue drains
// (teardown only; the work then runs on whatever its buffers hold).
void VulkanDevice::release_waits() {
  std::lock_guard lock(submit_mutex_);
  for (const auto& s : in_flight_) {
    for (const auto& [signal, value] : s->waits) {
      VkSignalState* state = state_of(*signal);
      VkSemaphore sem = state ? state->semaphore : VK_NULL_HANDLE;
      if (sem == VK_NULL_HANDLE) continue;
      uint64_t current = 0;
      vkGetSemaphoreCounterValue(device_, sem, &current);
      if (current >= value) continue;
      VkSemaphoreSignalInfo info = vk_struct<VkSemaphoreSignalInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO);
      info.semaphore = sem;
      info.value = value;
      vkSignalSemaphore(device_, &info);
    }
  }
  uint64_t current = 0;
  vkGetSemaphoreCounterValue(device_, bridge_in_, &current);
  if (current < bridge_in_next_) {
    VkSemaphoreSignalInfo info = vk_struct<VkSemaphoreSignalInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO);
    info.semaphore = bridge_in_;
    info.value = bridge_in_next_;
    vkSignalSemaphore(device_, &info);
  }
}

std::vector<std::string> VulkanDevice::validation_messages() const {
  std::lock_guard lock(messages_mutex_);
  return validation_messages_;
}

std::string VulkanDevice::fault() const {
  std::lock_guard lock(fault_mutex_);
  return fault_;
}

void VulkanDevice::note_result(VkResult r, const char* call) {
  if (r != VK_ERROR_DEVICE_LOST) return;
  std::lock_guard lock(fault_mutex_);
  if (fault_.empty()) fault_ = std::string(call) + " returned VK_ERROR_DEVICE_LOST";
}

}  // namespace doorbell::vk
