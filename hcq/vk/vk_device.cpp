#include "hcq/vk/vk_device.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <set>
#include <stdexcept>
#include <unordered_set>

#include "compiler/program.h"
#include "compiler/spirv/spirv_kernel_abi.h"
#include "hcq/vk/vk_check.h"
#include "hcq/vk/vk_pipeline_cache_file.h"
#include "hcq/wait_primitives.h"

namespace doorbell::vk {

// ---- shared state between the device and what may outlive it -----------------------------------------------------

// One timestamp query's result as vkCmdCopyQueryPoolResults writes it with VK_QUERY_RESULT_64_BIT |
// VK_QUERY_RESULT_WITH_AVAILABILITY_BIT: the 64-bit value, then a 64-bit availability word.
constexpr uint64_t kStampBytes = 16;

struct PipelineRegistry {
  std::mutex mu;
  VkDevice device = VK_NULL_HANDLE;  // null once the device is gone (it destroyed every pipeline still here)
  std::unordered_set<VkPipeline> live;
};

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

// A Signal of this device: its timeline semaphore and the timestamps read back for it.
struct VkSignalState {
  VulkanDevice* device = nullptr;
  VkSemaphore semaphore = VK_NULL_HANDLE;
  std::string device_name;
  std::atomic<uint64_t> timestamp_ticks{0};
  // Queue signals submitted and not yet reached, and the largest value signalled or scheduled by anyone: the
  // VUID-VkSubmitInfo-pSignalSemaphores-03242 / VUID-VkSemaphoreSignalInfo-value-03259 bookkeeping.
  std::mutex mu;
  std::multiset<uint64_t> pending;
  uint64_t scheduled = 0;
  // Values that submitted batches wait for (those above the counter matter): a host set() steps through them
  // (VulkanDevice::write_semaphore, firmware-notes/vulkan-device.md §3).
  std::set<uint64_t> waited;
};

// A run of commands that Vulkan submits as one VkSubmitInfo: semaphore waits, one command buffer, semaphore signals.
struct VkBatch {
  std::vector<size_t> waits;     // wait commands (their values are read at submit time: patch_value)
  std::vector<size_t> signals;   // signal commands
  size_t first = 0, end = 0;     // the commands recorded into `cb` (waits and signals included: they record nothing or a query)
  VkCommandBuffer cb = VK_NULL_HANDLE;
  std::vector<std::pair<size_t, uint32_t>> queries;  // (signal or timestamp command, its query slot)
};

// What a submission leaves in flight until the progress semaphore reaches `count`.
struct VkSubmission {
  uint64_t count = 0;
  struct Stamp {
    VkSignalState* state;
    const uint8_t* host;  // the query's copied result: {ticks, availability} (kStampBytes)
  };
  std::vector<Stamp> stamps;
  std::vector<VkCommandBuffer> command_buffers;  // recycled once done (unbound submissions)
  std::vector<std::pair<Signal*, uint64_t>> waits;  // for blockage()
};

// ---- bound queues ---------------------------------------------------------------------------------------------------

struct BoundRegistry {
  std::mutex mu;
  VulkanDevice* device = nullptr;  // null once the device is gone
  std::unordered_set<VulkanBoundQueue*> live;
};

class VulkanBoundQueue final : public GpuBoundQueue {
 public:
  std::shared_ptr<BoundRegistry> registry;
  std::vector<VkBatch> batches;
  VkQueryPool pool = VK_NULL_HANDLE;
  uint32_t query_count = 0;
  uint64_t stamps_address = 0;            // a block of the host-visible heap: the queries' copied results (0: none)
  uint8_t* stamps_host = nullptr;
  uint64_t args_address = 0;              // a block of the device's host-visible heap (0: no execs)
  std::vector<uint8_t*> arg_host;         // per command: its argument block (execs)
  std::vector<uint64_t> arg_address;

  ~VulkanBoundQueue() override {
    std::lock_guard lock(registry->mu);
    if (registry->device == nullptr) return;  // the device freed what this queue owned when it went
    registry->live.erase(this);
    registry->device->retire_bound(*this);
  }

  size_t patch_value(size_t command, uint64_t value) override {
    // The value is the submit-time VkTimelineSemaphoreSubmitInfo value: nothing recorded changes.
    return BoundQueue::patch_value(command, value);
  }
  size_t patch_buffer(size_t command, size_t slot, void* buffer) override {
    wait_for_previous_run("patch_buffer");
    device()->check_buffer_address(reinterpret_cast<uintptr_t>(buffer), "patch_buffer");
    BoundQueue::patch_buffer(command, slot, buffer);
    return store_word(arg_host[command] + 8 * slot, reinterpret_cast<uintptr_t>(buffer));
  }
  size_t patch_scalar(size_t command, size_t slot, int64_t value) override {
    wait_for_previous_run("patch_scalar");
    BoundQueue::patch_scalar(command, slot, value);
    return store_word(arg_host[command] + 8 * (uint64_t{commands[command].buffers_count} + slot), static_cast<uint64_t>(value));
  }
  // The addresses are inside the recorded vkCmdCopyBuffer (buffer handles and offsets): the command buffer of the
  // copy's batch is recorded again. Returns the commands re-recorded: 1, or 0 when nothing changed.
  size_t patch_copy(size_t command, void* dst, const void* src) override {
    wait_for_previous_run("patch_copy");
    VulkanDevice* d = device();
    d->locate(reinterpret_cast<uintptr_t>(dst), commands[command].bytes, "patch_copy destination");
    d->locate(reinterpret_cast<uintptr_t>(src), commands[command].bytes, "patch_copy source");
    if (BoundQueue::patch_copy(command, dst, src) == 0) return 0;
    for (VkBatch& b : batches)
      if (command >= b.first && command < b.end) d->rerecord(*this, b);
    return 1;
  }

 private:
  VulkanDevice* device() const {
    if (registry->device == nullptr) throw std::logic_error("HWQueue: the queue was bound to " + device_life->name + ", which has been destroyed");
    return registry->device;
  }
  static size_t store_word(uint8_t* at, uint64_t value) {
    uint64_t old;
    std::memcpy(&old, at, 8);
    if (old == value) return 0;
    std::memcpy(at, &value, 8);
    return 1;
  }
};

namespace {

constexpr VkBufferUsageFlags kBufferUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                            VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
// Chunks are presented to the sub-allocator at this alignment (it wants granule-aligned chunk addresses); each is
// allocated this much larger than asked to make room.
constexpr uint64_t kChunkGranule = 4096;
// A waiter on a signal sleeps in vkWaitSemaphores for at most this long before it looks again.
constexpr uint64_t kSemaphoreSleepNs = 1'000'000;

// A signal's timestamp only moves forward (a stale slot or a late read must not move it back).
void store_later(VkSignalState& s, uint64_t ticks) {
  uint64_t old = s.timestamp_ticks.load(std::memory_order_relaxed);
  while (ticks > old && !s.timestamp_ticks.compare_exchange_weak(old, ticks, std::memory_order_acq_rel)) {
  }
}

// A query result that vkCmdCopyQueryPoolResults wrote (64-bit value, then availability): the ticks once available.
void read_stamp(const VkSubmission::Stamp& st, uint64_t mask) {
  uint64_t words[2];
  std::memcpy(words, st.host, sizeof words);
  if (words[1] != 0) store_later(*st.state, words[0] & mask);
}

bool env_is_one(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, "1") == 0;
}

std::string dims_text(const std::array<uint32_t, 3>& d) {
  return "[" + std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]) + "]";
}

void full_barrier(VkCommandBuffer cb, VkAccessFlags dst_access, VkPipelineStageFlags dst_stage) {
  VkMemoryBarrier b = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  b.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  b.dstAccessMask = dst_access;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, dst_stage, 0, 1, &b, 0, nullptr, 0, nullptr);
}

// HCQ order between work commands: earlier compute/transfer writes before later compute/transfer reads and writes.
void work_barrier(VkCommandBuffer cb) {
  VkMemoryBarrier b = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  vkCmdPipelineBarrier(cb, stages, stages, 0, 1, &b, 0, nullptr, 0, nullptr);
}

}  // namespace

// ---- bring-up -----------------------------------------------------------------------------------------------------

std::unique_ptr<VulkanDevice> VulkanDevice::open(int index) {
  if (index < 0) throw std::invalid_argument("VK: device index " + std::to_string(index) + "; expected 0 or more");
  return std::unique_ptr<VulkanDevice>(new VulkanDevice(index));
}

VulkanDevice::VulkanDevice(int index)
    : Device(index == 0 ? "VK" : "VK:" + std::to_string(index), /*host_signals=*/false),
      pipelines_(std::make_shared<PipelineRegistry>()),
      bound_registry_(std::make_shared<BoundRegistry>()),
      query_slot_space_(kQuerySlots) {
  instance_ = std::make_unique<VulkanInstance>(name(), [this](const std::string& m) {
    {
      std::lock_guard lock(messages_mutex_);
      validation_messages_.push_back(m);
    }
    report_queue_error(m);
  });
  const PhysicalDeviceChoice choice = instance_->choose(index);
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
  vkGetDeviceQueue(device_, queue_family_, 0, &queue_);
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
    vkGetBufferMemoryRequirements(device_, b, &req);
    vkDestroyBuffer(device_, b, nullptr);
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

  PipelineCacheIdentity id{props_.vendorID, props_.deviceID, {}};
  std::memcpy(id.uuid.data(), props_.pipelineCacheUUID, 16);
  pipeline_cache_path_ = pipeline_cache_path(id);
  std::vector<uint8_t> cached = pipeline_cache_path_ ? load_pipeline_cache(*pipeline_cache_path_, id) : std::vector<uint8_t>{};
  pipeline_cache_loaded_bytes_ = cached.size();
  VkPipelineCacheCreateInfo pc = vk_struct<VkPipelineCacheCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO);
  pc.initialDataSize = cached.size();
  pc.pInitialData = cached.empty() ? nullptr : cached.data();
  vk_check(vkCreatePipelineCache(device_, &pc, nullptr, &pipeline_cache_), name(), "vkCreatePipelineCache", "kernels");

  VkCommandPoolCreateInfo pool = vk_struct<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = queue_family_;
  vk_check(vkCreateCommandPool(device_, &pool, nullptr, &command_pool_), name(), "vkCreateCommandPool", "queues");
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
  return pool;
}

VkSemaphore VulkanDevice::new_timeline_semaphore(const std::string& what) {
  VkSemaphoreTypeCreateInfo type = vk_struct<VkSemaphoreTypeCreateInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO);
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  type.initialValue = 0;
  VkSemaphoreCreateInfo info = vk_struct<VkSemaphoreCreateInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO);
  info.pNext = &type;
  VkSemaphore s = VK_NULL_HANDLE;
  vk_check(vkCreateSemaphore(device_, &info, nullptr, &s), name(), "vkCreateSemaphore", what);
  return s;
}

// ---- teardown -----------------------------------------------------------------------------------------------------

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
}

void VulkanDevice::stop_bridge() {
  {
    std::lock_guard lock(bridge_mutex_);
    bridge_stop_ = true;
  }
  bridge_cv_.notify_all();
  if (bridge_thread_.joinable()) bridge_thread_.join();
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

// ---- signals --------------------------------------------------------------------------------------------------------

SignalPlacement VulkanDevice::place_signal() {
  auto state = std::make_unique<VkSignalState>();
  state->device = this;
  state->device_name = name();
  state->semaphore = new_timeline_semaphore("a signal");
  SignalPlacement p;
  p.device_address = reinterpret_cast<uint64_t>(state->semaphore);
  p.device_wakes_waiters = false;
  p.read_value = [](const void* c) {
    auto* s = static_cast<const VkSignalState*>(c);
    return s->device->read_semaphore(*s);
  };
  p.write_value = [](const void* c, uint64_t v) {
    auto* s = const_cast<VkSignalState*>(static_cast<const VkSignalState*>(c));
    s->device->write_semaphore(*s, v);
  };
  p.read_timestamp = [](const void* c) {
    auto* s = static_cast<const VkSignalState*>(c);
    return s->device->read_signal_timestamp(*s);
  };
  p.interrupt_wait = [](const void* c) {
    auto* s = static_cast<const VkSignalState*>(c);
    s->device->sleep_on_semaphore(*s);
  };
  p.fault_report = [](const void* c) { return static_cast<const VkSignalState*>(c)->device->fault(); };
  p.value_context = p.interrupt_context = p.fault_context = state.get();
  // Ticks of timestampPeriod ns (1 on lavapipe), as a fraction in thousandths of a nanosecond.
  const double period = props_.limits.timestampPeriod;
  if (period != 1.0) {
    p.ns_per_tick_num = static_cast<uint64_t>(std::llround(period * 1000.0));
    p.ns_per_tick_den = 1000;
  }
  std::lock_guard lock(signals_mutex_);
  by_semaphore_[p.device_address] = state.get();
  signal_states_.push_back(std::move(state));
  return p;
}

VkSignalState* VulkanDevice::state_of(const Signal& signal) {
  if (signal.device() != name()) return nullptr;
  std::lock_guard lock(signals_mutex_);
  auto it = by_semaphore_.find(signal.device_address());
  return it == by_semaphore_.end() ? nullptr : it->second;
}

VkSemaphore VulkanDevice::semaphore_of(const Signal& signal) {
  VkSignalState* s = state_of(signal);
  return s ? s->semaphore : VK_NULL_HANDLE;
}

uint64_t VulkanDevice::read_semaphore(const VkSignalState& s) {
  uint64_t v = 0;
  const VkResult r = vkGetSemaphoreCounterValue(device_, s.semaphore, &v);
  note_result(r, "vkGetSemaphoreCounterValue");
  return r == VK_SUCCESS ? v : 0;
}

void VulkanDevice::write_semaphore(VkSignalState& s, uint64_t value) {
  {
    std::lock_guard lock(s.mu);
    const uint64_t current = read_semaphore(s);
    s.pending.erase(s.pending.begin(), s.pending.upper_bound(current));
    if (!s.pending.empty() && value >= *s.pending.begin())
      throw std::invalid_argument(name() + ": a signal cannot be set to " + std::to_string(value) + " from the host while a queue's signal to " +
                                  std::to_string(*s.pending.begin()) + " is pending (a Vulkan host signal must stay below pending "
                                  "signal operations: VUID-VkSemaphoreSignalInfo-value-03259)");
    // Through every value a submitted batch waits for between the counter and `value`, in order: the same payloads
    // for every waiter (a timeline only grows), and the 1.3.239 validation layer, which loses track of a host signal
    // that passes a pending wait's value, reports no false VUID-VkSemaphoreSignalInfo-value-03259 at the next one
    // (firmware-notes/vulkan-device.md §3).
    s.waited.erase(s.waited.begin(), s.waited.upper_bound(current));
    std::vector<uint64_t> steps(s.waited.begin(), s.waited.lower_bound(value));
    steps.push_back(value);
    for (const uint64_t step : steps) {
      VkSemaphoreSignalInfo info = vk_struct<VkSemaphoreSignalInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO);
      info.semaphore = s.semaphore;
      info.value = step;
      const VkResult r = vkSignalSemaphore(device_, &info);
      note_result(r, "vkSignalSemaphore");
      vk_check(r, name(), "vkSignalSemaphore", "a host set() to " + std::to_string(value));
    }
    s.waited.erase(s.waited.begin(), s.waited.upper_bound(value));
    s.scheduled = std::max(s.scheduled, value);
  }
  // set()'s time, on the device's clock, in its ticks.
  const ClockCalibration c = clock_calibration();
  const double ns = static_cast<double>(monotonic_ns() + c.offset_ns);
  s.timestamp_ticks.store(static_cast<uint64_t>(ns / props_.limits.timestampPeriod), std::memory_order_release);
}

// The latest query of the signal that completed: from finished submissions (collect) and, since a batch copies its
// queries' results to memory before it signals, from submissions still running whose batch has done so. Only memory
// is read: vkGetQueryPoolResults may wait for the whole device on lavapipe (firmware-notes/vulkan-device.md §8).
uint64_t VulkanDevice::read_signal_timestamp(const VkSignalState& s) {
  std::lock_guard lock(submit_mutex_);
  collect_locked();
  for (const auto& submission : in_flight_)
    for (const VkSubmission::Stamp& st : submission->stamps)
      if (st.state == &s) read_stamp(st, timestamp_mask_);
  return s.timestamp_ticks.load(std::memory_order_acquire);
}

// Sleeps until the semaphore reaches the next value a queue will signal it to (at most kSemaphoreSleepNs). Only
// that exact value is waited for: the 1.3.239 validation layer times out and reports a false
// UNASSIGNED-VkSemaphore-state-timeout when a host wait's value lies between two signal operations' values
// (firmware-notes/vulkan-device.md §3). With no queue signal pending only the host can raise it: a short sleep between looks.
void VulkanDevice::sleep_on_semaphore(const VkSignalState& s) {
  uint64_t next = 0;
  {
    auto& state = const_cast<VkSignalState&>(s);
    std::lock_guard lock(state.mu);
    const uint64_t current = read_semaphore(s);
    state.pending.erase(state.pending.begin(), state.pending.upper_bound(current));
    if (!state.pending.empty()) next = *state.pending.begin();
  }
  if (next == 0) {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    return;
  }
  VkSemaphoreWaitInfo info = vk_struct<VkSemaphoreWaitInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO);
  info.semaphoreCount = 1;
  info.pSemaphores = &s.semaphore;
  info.pValues = &next;
  note_result(vkWaitSemaphores(device_, &info, kSemaphoreSleepNs), "vkWaitSemaphores");
}

// ---- memory ---------------------------------------------------------------------------------------------------------

VulkanDevice::Memory VulkanDevice::allocate_memory(uint64_t bytes, uint32_t type, bool map, const std::string& what) {
  Memory m;
  VkBufferCreateInfo info = vk_struct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  info.size = bytes;
  info.usage = kBufferUsage;
  vk_check(vkCreateBuffer(device_, &info, nullptr, &m.buffer), name(), "vkCreateBuffer", what + " (" + std::to_string(bytes) + " bytes)");
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(device_, m.buffer, &req);
  VkMemoryAllocateFlagsInfo flags = vk_struct<VkMemoryAllocateFlagsInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO);
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo alloc = vk_struct<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
  alloc.pNext = &flags;
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = type;
  VkResult r = vkAllocateMemory(device_, &alloc, nullptr, &m.memory);
  if (r == VK_SUCCESS) r = vkBindBufferMemory(device_, m.buffer, m.memory, 0);
  if (r == VK_SUCCESS && map) r = vkMapMemory(device_, m.memory, 0, VK_WHOLE_SIZE, 0, reinterpret_cast<void**>(&m.host));
  if (r != VK_SUCCESS) {
    free_memory(m);
    if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
      throw std::runtime_error(name() + ": vkAllocateMemory for " + what + " (" + std::to_string(bytes) + " bytes) failed: " + vk_result_name(r));
    vk_check(r, name(), "vkAllocateMemory", what);
  }
  VkBufferDeviceAddressInfo addr = vk_struct<VkBufferDeviceAddressInfo>(VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO);
  addr.buffer = m.buffer;
  m.address = vkGetBufferDeviceAddress(device_, &addr);
  m.size = bytes;
  if (m.host != nullptr) std::memset(m.host, 0, bytes);
  return m;
}

void VulkanDevice::free_memory(const Memory& m) {
  if (m.buffer) vkDestroyBuffer(device_, m.buffer, nullptr);
  if (m.memory) vkFreeMemory(device_, m.memory, nullptr);  // unmaps it too
}

SubAllocator& VulkanDevice::heap_locked(bool host_visible) {
  std::optional<SubAllocator>& heap = host_visible ? host_heap_ : storage_heap_;
  if (heap) return *heap;
  SubAllocatorPolicy policy;
  policy.chunk_granule = kChunkGranule;
  policy.first_chunk = 4 << 20;
  policy.max_chunk = 256 << 20;
  policy.own_chunk_at = 64 << 20;
  policy.min_alignment = 256;
  const uint32_t type = host_visible ? host_type_ : storage_type_;
  const bool map = host_visible || !staging_;
  const std::string what = host_visible ? name() + " host-visible memory" : name() + " storage memory";
  heap.emplace(
      what, policy,
      [this, type, map, what](uint64_t bytes) {
        // kChunkGranule more, so that a granule-aligned chunk of `bytes` lies inside the buffer.
        Memory m = allocate_memory(bytes + kChunkGranule, type, map, what);
        const uint64_t aligned = (m.address + kChunkGranule - 1) / kChunkGranule * kChunkGranule;
        chunks_[m.address] = m;
        return HeapChunk{m.address, aligned, bytes, m.host ? m.host + (aligned - m.address) : nullptr};
      },
      [this](const HeapChunk& c) {
        auto it = chunks_.find(c.handle);
        if (it == chunks_.end()) return;
        free_memory(it->second);
        chunks_.erase(it);
      });
  return *heap;
}

VulkanDevice::Located VulkanDevice::locate(uint64_t address, uint64_t bytes, const char* what) {
  std::lock_guard lock(memory_mutex_);
  auto it = chunks_.upper_bound(address);
  if (it != chunks_.begin()) {
    --it;
    const Memory& m = it->second;
    if (address >= m.address && address < m.address + m.size && bytes <= m.address + m.size - address)
      return Located{m.buffer, address - m.address, m.address + m.size - address};
  }
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(address));
  throw std::invalid_argument(name() + ": " + what + " at " + hex + " (" + std::to_string(bytes) + " bytes) is not in memory this device allocated");
}

void VulkanDevice::check_buffer_address(uint64_t address, const char* what) { locate(address, 1, what); }

VulkanDevice::Storage VulkanDevice::allocate_storage(size_t bytes) {
  SubAllocator::Block b;
  {
    std::lock_guard lock(memory_mutex_);
    b = heap_locked(false).alloc(std::max<size_t>(bytes, 1), 256, "a buffer");
  }
  if (b.host != nullptr) {
    std::memset(b.host, 0, b.size);
  } else {
    const std::vector<uint8_t> zeros(b.size, 0);
    copy_in(Storage{nullptr, b.address, b.address}, 0, zeros.data(), zeros.size());
  }
  return Storage{b.host, b.address, b.address};
}

void VulkanDevice::release_storage(const Storage& storage) { release_block(storage.handle, false); }

VulkanDevice::Storage VulkanDevice::allocate_host_visible(size_t bytes) {
  SubAllocator::Block b;
  {
    std::lock_guard lock(memory_mutex_);
    b = heap_locked(true).alloc(std::max<size_t>(bytes, 1), 256, "host-visible memory");
  }
  std::memset(b.host, 0, b.size);
  return Storage{b.host, b.address, b.address};
}

void VulkanDevice::release_host_visible(const Storage& storage) { release_block(storage.handle, true); }

// Frees a block of a heap once no submission made so far can still use it.
void VulkanDevice::release_block(uint64_t address, bool host_visible) {
  std::lock_guard lock(submit_mutex_);
  {
    std::lock_guard mlock(memory_mutex_);
    SubAllocator& heap = heap_locked(host_visible);
    // A block already released but still kept for running work is no live buffer either (a second release).
    if (heap.find(address) == nullptr || releasing_.count({host_visible, address}) != 0)
      throw std::invalid_argument(name() + ": release of storage at " + std::to_string(address) + ", which is no live buffer of this device");
  }
  const uint64_t after = submissions_.load();
  releasing_.insert({host_visible, address});
  retired_.push_back(Retired{after, [this, address, host_visible] {
                               releasing_.erase({host_visible, address});
                               std::lock_guard mlock(memory_mutex_);
                               heap_locked(host_visible).free(address);
                             }});
  collect_locked();
}

size_t VulkanDevice::retired_count() {
  std::lock_guard lock(submit_mutex_);
  collect_locked();
  return retired_.size();
}

void VulkanDevice::check_transfer(const Storage& storage, uint64_t offset, uint64_t bytes, const char* what) {
  std::lock_guard lock(memory_mutex_);
  const SubAllocator::Block* b = heap_locked(false).find(storage.handle);
  if (b == nullptr || storage.address != storage.handle)
    throw std::invalid_argument(name() + ": " + what + " of storage at " + std::to_string(storage.address) + ", which is no live buffer of this device");
  if (offset > b->size || bytes > b->size - offset)
    throw std::invalid_argument(name() + ": " + what + " of " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                                " of a buffer of " + std::to_string(b->size) + " bytes; expected the range inside it");
}

void VulkanDevice::copy_in(const Storage& storage, uint64_t offset, const void* src, size_t bytes) {
  if (bytes == 0) return;
  check_transfer(storage, offset, bytes, "copy_in");
  if (storage.host != nullptr) return Device::copy_in(storage, offset, src, bytes);
  SubAllocator::Block staging;
  {
    std::lock_guard lock(memory_mutex_);
    staging = heap_locked(true).alloc(bytes, 256, "a staging buffer");
  }
  std::memcpy(staging.host, src, bytes);
  HWQueue q;
  q.copy(reinterpret_cast<void*>(storage.address + offset), reinterpret_cast<const void*>(staging.address), bytes);
  const uint64_t count = submit_counted(q);
  release_block(staging.address, true);
  wait_progress(count, "copy_in");
}

void VulkanDevice::copy_out(void* dst, const Storage& storage, uint64_t offset, size_t bytes) {
  if (bytes == 0) return;
  check_transfer(storage, offset, bytes, "copy_out");
  if (storage.host != nullptr) return Device::copy_out(dst, storage, offset, bytes);
  SubAllocator::Block staging;
  {
    std::lock_guard lock(memory_mutex_);
    staging = heap_locked(true).alloc(bytes, 256, "a staging buffer");
  }
  HWQueue q;
  q.copy(reinterpret_cast<void*>(staging.address), reinterpret_cast<const void*>(storage.address + offset), bytes);
  const uint64_t count = submit_counted(q);
  wait_progress(count, "copy_out");
  std::memcpy(dst, staging.host, bytes);
  release_block(staging.address, true);
}

void VulkanDevice::wait_progress(uint64_t count, const char* what) {
  uint64_t last = 0;
  if (progress_->wait_for(count, kDefaultWaitTimeout, &last)) return;
  throw std::runtime_error(name() + ": " + what + " waited for submission " + std::to_string(count) + ", which did not complete: " +
                           progress_->timeout_message(count, kDefaultWaitTimeout, last) + "; " + blockage());
}

// ---- programs -------------------------------------------------------------------------------------------------------

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
  VkComputePipelineCreateInfo cp = vk_struct<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
  cp.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  cp.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cp.stage.module = module;
  cp.stage.pName = info.name.c_str();
  cp.layout = layout_;
  VkPipeline pipeline = VK_NULL_HANDLE;
  const VkResult r = vkCreateComputePipelines(device_, pipeline_cache_, 1, &cp, nullptr, &pipeline);
  vkDestroyShaderModule(device_, module, nullptr);
  vk_check(r, name(), "vkCreateComputePipelines", kernel);
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

// ---- recording ------------------------------------------------------------------------------------------------------

void VulkanDevice::check_commands(std::span<const Command> commands, std::span<void* const> buffers) {
  for (const Command& c : commands) {
    switch (c.kind) {
      case CommandKind::kExec: {
        if (c.kernel != nullptr || c.program == nullptr)
          throw std::invalid_argument(name() + ": an exec of a host kernel; this device runs SPIR-V programs it loaded");
        const auto* p = dynamic_cast<const VulkanProgram*>(c.program);
        if (p == nullptr || p->device() != name())
          throw std::invalid_argument(name() + ": an exec of program " + c.program->name() + " loaded by " + c.program->device() + ", not by this device");
        if (c.buffers_count != p->buffers() || c.scalars_count != p->vars())
          throw std::invalid_argument(name() + ": exec of " + p->name() + " with " + std::to_string(c.buffers_count) + " buffers and " +
                                      std::to_string(c.scalars_count) + " variables; it takes " + std::to_string(p->buffers()) + " and " +
                                      std::to_string(p->vars()));
        if (c.block != p->local_size())
          throw std::invalid_argument(name() + ": exec of " + p->name() + " with block " + dims_text(c.block) + "; its module's LocalSize is " +
                                      dims_text(p->local_size()) + " (compiler/spirv/spirv_kernel_abi.h)");
        for (int i = 0; i < 3; i++)
          if (c.grid[i] > static_cast<uint64_t>(caps_.max_global[i]))
            throw std::invalid_argument(name() + ": exec of " + p->name() + " with grid " + dims_text(c.grid) + "; the device takes up to " +
                                        std::to_string(caps_.max_global[i]) + " workgroups in dimension " + std::to_string(i));
        for (uint32_t i = 0; i < c.buffers_count; i++)
          check_buffer_address(reinterpret_cast<uintptr_t>(buffers[c.buffers_begin + i]), "an exec's buffer");
        break;
      }
      case CommandKind::kCopy:
        if (c.bytes != 0) {
          locate(reinterpret_cast<uintptr_t>(c.dst), c.bytes, "a copy's destination");
          locate(reinterpret_cast<uintptr_t>(c.src), c.bytes, "a copy's source");
        }
        break;
      case CommandKind::kTimestamp:
        if (state_of(*c.signal) == nullptr)
          throw std::invalid_argument(name() + ": a timestamp command on signal '" + c.signal->name() + "' of " + c.signal->device() +
                                      ": Vulkan writes timestamps only into this device's query pools, for its own signals");
        break;
      default:
        break;
    }
  }
}

// Batches: [waits][commands and signals]; a wait after anything else, or a command after a signal, starts a new one.
std::vector<VkBatch> VulkanDevice::split(std::span<const Command> commands) {
  std::vector<VkBatch> batches(1);
  for (size_t i = 0; i < commands.size(); i++) {
    const Command& c = commands[i];
    VkBatch* b = &batches.back();
    const bool has_body = b->end - b->first > b->waits.size();
    const bool fresh = (c.kind == CommandKind::kWait && has_body) ||
                       (c.kind != CommandKind::kWait && c.kind != CommandKind::kSignal && !b->signals.empty());
    if (fresh) {
      batches.emplace_back();
      b = &batches.back();
      b->first = b->end = i;
    }
    if (c.kind == CommandKind::kWait) b->waits.push_back(i);
    if (c.kind == CommandKind::kSignal) b->signals.push_back(i);
    b->end = i + 1;
  }
  return batches;
}

VkCommandBuffer VulkanDevice::new_command_buffer() {
  if (!free_command_buffers_.empty()) {
    VkCommandBuffer cb = free_command_buffers_.back();
    free_command_buffers_.pop_back();
    return cb;
  }
  VkCommandBufferAllocateInfo info = vk_struct<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  info.commandPool = command_pool_;
  info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  info.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  vk_check(vkAllocateCommandBuffers(device_, &info, &cb), name(), "vkAllocateCommandBuffers", "a queue");
  return cb;
}

// Records one batch's commands into its command buffer (allocated here when it has none). `args_of(i, bytes)` gives
// command i's argument block; query slot k's result is copied to `stamps` + k * kStampBytes.
void VulkanDevice::record_batch(VkBatch& b, std::span<const Command> commands, std::span<void* const> buffers, std::span<const int64_t> scalars,
                                VkQueryPool pool, StampTarget stamps, const std::function<ArgBlock(size_t, uint64_t)>& args_of) {
  if (b.cb == VK_NULL_HANDLE) b.cb = new_command_buffer();
  VkCommandBufferBeginInfo begin = vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  vk_check(vkBeginCommandBuffer(b.cb, &begin), name(), "vkBeginCommandBuffer", "a queue");
  if (!b.queries.empty()) vkCmdResetQueryPool(b.cb, pool, b.queries.front().second, static_cast<uint32_t>(b.queries.size()));
  // Orders this command buffer after everything earlier in submission order (the earlier batches).
  full_barrier(b.cb, VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
  size_t query = 0;
  bool after_work = false;
  for (size_t i = b.first; i < b.end; i++) {
    const Command& c = commands[i];
    switch (c.kind) {
      case CommandKind::kExec: {
        const auto* p = static_cast<const VulkanProgram*>(c.program);
        const uint64_t bytes = std::max<uint64_t>(8, kSpirvArgumentWordBytes * (uint64_t{c.buffers_count} + c.scalars_count));
        ArgBlock a = args_of(i, bytes);
        for (uint32_t k = 0; k < c.buffers_count; k++) {
          const uint64_t address = reinterpret_cast<uintptr_t>(buffers[c.buffers_begin + k]);
          std::memcpy(a.host + 8 * k, &address, 8);
        }
        for (uint32_t k = 0; k < c.scalars_count; k++) std::memcpy(a.host + 8 * (c.buffers_count + k), &scalars[c.scalars_begin + k], 8);
        if (after_work) work_barrier(b.cb);
        vkCmdBindPipeline(b.cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipeline());
        vkCmdPushConstants(b.cb, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, kSpirvPushConstantBytes, &a.address);
        vkCmdDispatch(b.cb, c.grid[0], c.grid[1], c.grid[2]);
        after_work = true;
        break;
      }
      case CommandKind::kCopy: {
        if (c.bytes == 0) break;
        const Located dst = locate(reinterpret_cast<uintptr_t>(c.dst), c.bytes, "a copy's destination");
        const Located src = locate(reinterpret_cast<uintptr_t>(c.src), c.bytes, "a copy's source");
        if (after_work) work_barrier(b.cb);
        VkBufferCopy region{src.offset, dst.offset, c.bytes};
        vkCmdCopyBuffer(b.cb, src.buffer, dst.buffer, 1, &region);
        after_work = true;
        break;
      }
      case CommandKind::kMemoryBarrier:
        full_barrier(b.cb, VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
        after_work = false;
        break;
      case CommandKind::kSignal:
      case CommandKind::kTimestamp:
        if (query < b.queries.size() && b.queries[query].first == i) {
          vkCmdWriteTimestamp(b.cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, b.queries[query].second);
          query++;
        }
        break;
      case CommandKind::kWait:
        break;
    }
  }
  if (!b.queries.empty()) {
    // The batch's queries (consecutive slots) to host-visible memory, so that nothing reads a query pool from the
    // host (firmware-notes/vulkan-device.md §8): after every timestamp write (an execution dependency from all
    // commands to the copy's transfer stage; WAIT_BIT also makes the copy wait for availability), before the batch's
    // semaphore signals.
    vkCmdPipelineBarrier(b.cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr, 0, nullptr, 0, nullptr);
    const uint32_t first = b.queries.front().second;
    vkCmdCopyQueryPoolResults(b.cb, pool, first, static_cast<uint32_t>(b.queries.size()), stamps.buffer, stamps.offset + first * kStampBytes,
                              kStampBytes, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
  }
  // Device writes (the copied queries too) become visible to the host once the batch's signal is seen.
  full_barrier(b.cb, VK_ACCESS_HOST_READ_BIT, VK_PIPELINE_STAGE_HOST_BIT);
  vk_check(vkEndCommandBuffer(b.cb), name(), "vkEndCommandBuffer", "a queue");
}

// Assigns query slots (from `first_slot` on) to the signal and timestamp commands of this device's signals.
uint32_t VulkanDevice::assign_queries(std::vector<VkBatch>& batches, std::span<const Command> commands, uint32_t first_slot) {
  uint32_t slot = first_slot;
  for (VkBatch& b : batches) {
    b.queries.clear();
    for (size_t i = b.first; i < b.end; i++) {
      const Command& c = commands[i];
      if ((c.kind == CommandKind::kSignal || c.kind == CommandKind::kTimestamp) && state_of(*c.signal) != nullptr) b.queries.push_back({i, slot++});
    }
  }
  return slot - first_slot;
}

uint32_t VulkanDevice::count_queries(std::span<const Command> commands) {
  uint32_t n = 0;
  for (const Command& c : commands)
    if ((c.kind == CommandKind::kSignal || c.kind == CommandKind::kTimestamp) && state_of(*c.signal) != nullptr) n++;
  return n;
}

// ---- submission -----------------------------------------------------------------------------------------------------

void VulkanDevice::submit(const HWQueue& queue) { submit_counted(queue); }

uint64_t VulkanDevice::submit_counted(const HWQueue& queue) {
  std::span<const Command> commands = queue.commands();
  check_commands(commands, queue.buffers());
  std::lock_guard lock(submit_mutex_);
  collect_locked();
  auto wait = [this](uint64_t count) {
    wait_progress(count, "a ring's reuse");
    collect_locked();
  };
  std::vector<VkBatch> batches = split(commands);
  const uint32_t queries = count_queries(commands);
  if (queries > kQuerySlots)
    throw std::invalid_argument(name() + ": a queue with " + std::to_string(queries) + " signal and timestamp commands; at most " +
                                std::to_string(kQuerySlots) + " fit one submission");
  const uint32_t first_slot = queries ? static_cast<uint32_t>(query_ring_->take(queries, 1, wait).va) : 0;
  assign_queries(batches, commands, first_slot);
  // No result of an earlier user of the slots reads as this submission's (the ring passed them: nothing writes them).
  std::memset(stamp_memory_.host + uint64_t{first_slot} * kStampBytes, 0, uint64_t{queries} * kStampBytes);
  auto submission = std::make_unique<VkSubmission>();
  try {
    for (VkBatch& b : batches) {
      record_batch(b, commands, queue.buffers(), queue.scalars(), query_pool_, StampTarget{stamp_memory_.buffer, 0}, [&](size_t, uint64_t bytes) {
        UploadRing::Piece piece = args_->take(bytes, kSpirvArgumentBlockAlign, wait);
        return ArgBlock{piece.cpu, piece.va};
      });
      submission->command_buffers.push_back(b.cb);
    }
  } catch (...) {
    for (VkBatch& b : batches)
      if (b.cb) free_command_buffers_.push_back(b.cb);
    args_->close(submissions_.load());
    query_ring_->close(submissions_.load());
    throw;
  }
  const uint64_t count = submit_batches(batches, commands, stamp_memory_.host, std::move(submission));
  args_->close(count);
  query_ring_->close(count);
  return count;
}

uint64_t VulkanDevice::submit_batches(std::vector<VkBatch>& batches, std::span<const Command> commands, uint8_t* stamps_host,
                                      std::unique_ptr<VkSubmission> s) {
  const uint64_t count = submissions_.load() + 1;
  struct Arrays {
    std::vector<VkSemaphore> wait_sems, signal_sems;
    std::vector<uint64_t> wait_values, signal_values;
    std::vector<VkPipelineStageFlags> stages;
    VkTimelineSemaphoreSubmitInfo timeline = vk_struct<VkTimelineSemaphoreSubmitInfo>(VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO);
  };
  std::vector<Arrays> arrays(batches.size());
  std::vector<VkSubmitInfo> infos(batches.size());
  std::vector<BridgeJob> jobs;
  struct Scheduled {
    VkSignalState* state;
    uint64_t value;
  };
  std::vector<Scheduled> scheduled;
  uint64_t bridge_in = bridge_in_next_, bridge_out = bridge_out_next_;
  std::unordered_map<VkSignalState*, uint64_t> batch_max;  // this submission's own signals so far, per semaphore
  std::unordered_set<size_t> skipped;                        // signal commands not submitted
  for (size_t k = 0; k < batches.size(); k++) {
    VkBatch& b = batches[k];
    Arrays& a = arrays[k];
    for (size_t i : b.waits) {
      const Command& c = commands[i];
      s->waits.push_back({c.signal, c.value});
      if (VkSignalState* st = state_of(*c.signal)) {
        a.wait_sems.push_back(st->semaphore);
        a.wait_values.push_back(c.value);
        std::lock_guard slock(st->mu);
        // Values a queue's signals passed no longer matter (pruned now and then: a read of the counter).
        if (st->waited.size() >= 64) st->waited.erase(st->waited.begin(), st->waited.upper_bound(read_semaphore(*st)));
        st->waited.insert(c.value);
      } else {
        jobs.push_back(BridgeJob{c.signal, c.value, true, ++bridge_in});
        a.wait_sems.push_back(bridge_in_);
        a.wait_values.push_back(bridge_in);
      }
      a.stages.push_back(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
    }
    for (size_t i : b.signals) {
      const Command& c = commands[i];
      VkSignalState* st = state_of(*c.signal);
      if (st == nullptr) {
        a.signal_sems.push_back(bridge_out_);
        a.signal_values.push_back(++bridge_out);
        jobs.push_back(BridgeJob{c.signal, c.value, false, bridge_out});
        continue;
      }
      uint64_t already;
      {
        std::lock_guard slock(st->mu);
        already = st->scheduled;
      }
      if (auto it = batch_max.find(st); it != batch_max.end()) already = std::max(already, it->second);
      if (c.value <= already) {
        // VUID-VkSubmitInfo-pSignalSemaphores-03242: a timeline signal must raise the value.
        if (c.value < already)
          report_queue_error(name() + ": a queue signal of '" + c.signal->name() + "' to " + std::to_string(c.value) +
                             " was skipped: the signal was already signalled or scheduled to " + std::to_string(already) +
                             " and a Vulkan timeline semaphore's value must grow (VUID-VkSubmitInfo-pSignalSemaphores-03242)");
        skipped.insert(i);
        continue;
      }
      batch_max[st] = c.value;
      a.signal_sems.push_back(st->semaphore);
      a.signal_values.push_back(c.value);
      scheduled.push_back({st, c.value});
    }
    if (k + 1 == batches.size()) {
      a.signal_sems.push_back(state_of(*progress_)->semaphore);
      a.signal_values.push_back(count);
    }
    for (const auto& [cmd, slot] : b.queries) {
      VkSignalState* st = state_of(*commands[cmd].signal);
      if (skipped.count(cmd) == 0) s->stamps.push_back({st, stamps_host + uint64_t{slot} * kStampBytes});
    }
    a.timeline.waitSemaphoreValueCount = static_cast<uint32_t>(a.wait_values.size());
    a.timeline.pWaitSemaphoreValues = a.wait_values.data();
    a.timeline.signalSemaphoreValueCount = static_cast<uint32_t>(a.signal_values.size());
    a.timeline.pSignalSemaphoreValues = a.signal_values.data();
    VkSubmitInfo& info = infos[k];
    info = vk_struct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
    info.pNext = &a.timeline;
    info.waitSemaphoreCount = static_cast<uint32_t>(a.wait_sems.size());
    info.pWaitSemaphores = a.wait_sems.data();
    info.pWaitDstStageMask = a.stages.data();
    info.commandBufferCount = b.cb != VK_NULL_HANDLE ? 1 : 0;
    info.pCommandBuffers = &b.cb;
    info.signalSemaphoreCount = static_cast<uint32_t>(a.signal_sems.size());
    info.pSignalSemaphores = a.signal_sems.data();
  }
  // Pending before the submit, so that a host set() racing it sees them (VUID-VkSemaphoreSignalInfo-value-03259).
  for (const Scheduled& sc : scheduled) {
    std::lock_guard slock(sc.state->mu);
    sc.state->pending.insert(sc.value);
    sc.state->scheduled = std::max(sc.state->scheduled, sc.value);
  }
  const VkResult r = vkQueueSubmit(queue_, static_cast<uint32_t>(infos.size()), infos.data(), VK_NULL_HANDLE);
  note_result(r, "vkQueueSubmit");
  if (r != VK_SUCCESS) {
    for (const Scheduled& sc : scheduled) {
      std::lock_guard slock(sc.state->mu);
      sc.state->pending.erase(sc.state->pending.find(sc.value));
    }
    for (const VkCommandBuffer cb : s->command_buffers) free_command_buffers_.push_back(cb);
    vk_check(r, name(), "vkQueueSubmit", std::to_string(batches.size()) + " batches");
  }
  bridge_in_next_ = bridge_in;
  bridge_out_next_ = bridge_out;
  s->count = count;
  submissions_.store(count, std::memory_order_release);
  in_flight_.push_back(std::move(s));
  for (BridgeJob& j : jobs) push_bridge(j);
  return count;
}

void VulkanDevice::collect() {
  std::lock_guard lock(submit_mutex_);
  collect_locked();
}

void VulkanDevice::collect_locked() {
  const uint64_t reached = read_semaphore(*state_of(*progress_));
  while (!in_flight_.empty() && in_flight_.front()->count <= reached) {
    VkSubmission& s = *in_flight_.front();
    for (const VkSubmission::Stamp& st : s.stamps) read_stamp(st, timestamp_mask_);
    for (VkCommandBuffer cb : s.command_buffers) free_command_buffers_.push_back(cb);
    in_flight_.pop_front();
  }
  for (size_t i = 0; i < retired_.size();) {
    if (retired_[i].after <= reached) {
      retired_[i].free();
      retired_.erase(retired_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      i++;
    }
  }
}

std::string VulkanDevice::blockage() {
  std::lock_guard lock(submit_mutex_);
  collect_locked();
  if (in_flight_.empty()) return "";
  const VkSubmission& s = *in_flight_.front();
  for (const auto& [signal, value] : s.waits) {
    const uint64_t v = signal->value();
    if (v < value)
      return "its queue (submission " + std::to_string(s.count) + ") waits for signal '" + signal->name() + "' of " + signal->device() +
             " to reach " + std::to_string(value) + " (value " + std::to_string(v) + ")";
  }
  return "its queue runs submission " + std::to_string(s.count);
}

// ---- bound queues ---------------------------------------------------------------------------------------------------

std::shared_ptr<BoundQueue> VulkanDevice::bind(const HWQueue& queue) {
  std::span<const Command> commands = queue.commands();
  check_commands(commands, queue.buffers());
  auto b = std::make_shared<VulkanBoundQueue>();
  b->registry = bound_registry_;
  b->device_life = life();
  b->progress = progress_;
  b->commands.assign(commands.begin(), commands.end());
  b->buffers.assign(queue.buffers().begin(), queue.buffers().end());
  b->scalars.assign(queue.scalars().begin(), queue.scalars().end());
  b->batches = split(b->commands);
  b->query_count = count_queries(b->commands);
  b->arg_host.assign(commands.size(), nullptr);
  b->arg_address.assign(commands.size(), 0);
  uint64_t arg_bytes = 0;
  for (const Command& c : commands)
    if (c.kind == CommandKind::kExec) arg_bytes += (std::max<uint64_t>(8, 8 * (uint64_t{c.buffers_count} + c.scalars_count)) + 15) / 16 * 16;
  {
    // Registered first: the bound queue's destructor takes the registry's lock and then submit_mutex_.
    std::lock_guard rlock(bound_registry_->mu);
    bound_registry_->live.insert(b.get());
  }
  std::lock_guard lock(submit_mutex_);
  if (b->query_count) {
    b->pool = new_query_pool(b->query_count);
    SubAllocator::Block block;
    {
      std::lock_guard mlock(memory_mutex_);
      block = heap_locked(true).alloc(uint64_t{b->query_count} * kStampBytes, 256, "a bound queue's timestamp results");
    }
    b->stamps_address = block.address;
    b->stamps_host = block.host;
  }
  assign_queries(b->batches, b->commands, 0);
  if (arg_bytes) {
    SubAllocator::Block block;
    {
      std::lock_guard mlock(memory_mutex_);
      block = heap_locked(true).alloc(arg_bytes, 256, "a bound queue's argument blocks");
    }
    b->args_address = block.address;
    uint64_t used = 0;
    for (size_t i = 0; i < commands.size(); i++) {
      const Command& c = commands[i];
      if (c.kind != CommandKind::kExec) continue;
      b->arg_host[i] = block.host + used;
      b->arg_address[i] = block.address + used;
      used += (std::max<uint64_t>(8, 8 * (uint64_t{c.buffers_count} + c.scalars_count)) + 15) / 16 * 16;
    }
  }
  for (VkBatch& batch : b->batches) rerecord_locked(*b, batch);
  return b;
}

void VulkanDevice::rerecord_locked(VulkanBoundQueue& b, VkBatch& batch) {
  StampTarget stamps{};
  if (b.stamps_address != 0) {
    const Located at = locate(b.stamps_address, uint64_t{b.query_count} * kStampBytes, "a bound queue's timestamp results");
    stamps = StampTarget{at.buffer, at.offset};
  }
  record_batch(batch, b.commands, b.buffers, b.scalars, b.pool, stamps,
               [&](size_t i, uint64_t) { return ArgBlock{b.arg_host[i], b.arg_address[i]}; });
}

void VulkanDevice::rerecord(VulkanBoundQueue& b, VkBatch& batch) {
  std::lock_guard lock(submit_mutex_);
  rerecord_locked(b, batch);
}

void VulkanDevice::submit_bound(std::shared_ptr<const BoundQueue> queue) {
  auto* b = const_cast<VulkanBoundQueue*>(dynamic_cast<const VulkanBoundQueue*>(queue.get()));
  if (b == nullptr || b->registry != bound_registry_)
    throw std::invalid_argument(name() + ": submit_bound of a queue bound to another device");
  std::lock_guard lock(submit_mutex_);
  collect_locked();
  // The recorded query slots are reset when the command buffer runs again: the previous run's timestamps are read
  // first.
  const uint64_t last = b->last_submission.load(std::memory_order_acquire);
  if (b->query_count != 0 && last > read_semaphore(*state_of(*progress_))) {
    wait_progress(last, "submit_bound (reading the previous run's timestamps)");
    collect_locked();
  }
  // The previous run's results were read (collect): this run's start from "not available".
  if (b->stamps_host != nullptr) std::memset(b->stamps_host, 0, uint64_t{b->query_count} * kStampBytes);
  auto s = std::make_unique<VkSubmission>();
  const uint64_t count = submit_batches(b->batches, b->commands, b->stamps_host, std::move(s));
  b->last_submission.store(count, std::memory_order_release);
}

void VulkanDevice::retire_bound(VulkanBoundQueue& b) {
  std::lock_guard lock(submit_mutex_);
  const uint64_t after = b.last_submission.load();
  std::vector<VkCommandBuffer> cbs;
  for (VkBatch& batch : b.batches)
    if (batch.cb != VK_NULL_HANDLE) cbs.push_back(batch.cb);
  VkQueryPool pool = b.pool;
  const uint64_t args = b.args_address, stamps = b.stamps_address;
  retired_.push_back(Retired{after, [this, cbs, pool, args, stamps] {
                               for (VkCommandBuffer cb : cbs) free_command_buffers_.push_back(cb);
                               if (pool) vkDestroyQueryPool(device_, pool, nullptr);
                               std::lock_guard mlock(memory_mutex_);
                               if (args) heap_locked(true).free(args);
                               if (stamps) heap_locked(true).free(stamps);
                             }});
  collect_locked();
}

// ---- the bridge to foreign signals ---------------------------------------------------------------------------------

void VulkanDevice::push_bridge(BridgeJob job) {
  {
    std::lock_guard lock(bridge_mutex_);
    bridge_jobs_.push_back(job);
  }
  bridge_cv_.notify_all();
}

void VulkanDevice::bridge_loop() {
  constexpr auto kSlice = std::chrono::milliseconds(5);
  while (true) {
    BridgeJob job;
    {
      std::unique_lock lock(bridge_mutex_);
      bridge_cv_.wait(lock, [&] { return bridge_stop_ || !bridge_jobs_.empty(); });
      if (bridge_stop_) return;
      job = bridge_jobs_.front();
    }
    auto stopping = [&] {
      std::lock_guard lock(bridge_mutex_);
      return bridge_stop_;
    };
    if (job.is_wait) {
      try {
        while (!job.foreign->wait_for(job.value, kSlice))
          if (stopping()) return;
      } catch (const std::exception& e) {
        report_queue_error(name() + ": a queue's wait for signal '" + job.foreign->name() + "' of " + job.foreign->device() + " failed: " + e.what());
      }
      VkSemaphoreSignalInfo info = vk_struct<VkSemaphoreSignalInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO);
      info.semaphore = bridge_in_;
      info.value = job.bridge_value;
      note_result(vkSignalSemaphore(device_, &info), "vkSignalSemaphore");
    } else {
      VkSemaphoreWaitInfo info = vk_struct<VkSemaphoreWaitInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO);
      info.semaphoreCount = 1;
      info.pSemaphores = &bridge_out_;
      info.pValues = &job.bridge_value;
      while (true) {
        const VkResult r = vkWaitSemaphores(device_, &info, 5'000'000);
        if (r == VK_SUCCESS) break;
        note_result(r, "vkWaitSemaphores");
        if (r != VK_TIMEOUT || stopping()) return;
      }
      try {
        job.foreign->set(job.value);
      } catch (const std::exception& e) {
        report_queue_error(name() + ": a queue's signal of '" + job.foreign->name() + "' of " + job.foreign->device() + " failed: " + e.what());
      }
    }
    std::lock_guard lock(bridge_mutex_);
    bridge_jobs_.pop_front();
  }
}

// ---- clocks ---------------------------------------------------------------------------------------------------------

ClockCalibration VulkanDevice::clock_calibration() {
  {
    std::lock_guard lock(clock_mutex_);
    if (clock_ && !calibrated_timestamps_) return *clock_;
  }
  if (calibrated_timestamps_) {
    // One call samples both clocks; maxDeviation bounds the error (VK_EXT_calibrated_timestamps).
    auto get = reinterpret_cast<PFN_vkGetCalibratedTimestampsEXT>(vkGetDeviceProcAddr(device_, "vkGetCalibratedTimestampsEXT"));
    VkCalibratedTimestampInfoEXT infos[2] = {{VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, nullptr, VK_TIME_DOMAIN_DEVICE_EXT},
                                             {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, nullptr, VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT}};
    uint64_t stamps[2] = {0, 0}, deviation = 0;
    if (get != nullptr && get(device_, 2, infos, stamps, &deviation) == VK_SUCCESS) {
      ClockCalibration c;
      const auto device_ns = static_cast<int64_t>(static_cast<double>(stamps[0] & timestamp_mask_) * props_.limits.timestampPeriod);
      c.offset_ns = device_ns - static_cast<int64_t>(stamps[1]);
      c.uncertainty_ns = static_cast<int64_t>(deviation);
      c.samples = 1;
      std::lock_guard lock(clock_mutex_);
      clock_ = c;
      return c;
    }
  }
  return calibrate_by_brackets();
}

// Brackets: host clock, a submitted timestamp (a signal's query), host clock once it is seen.
ClockCalibration VulkanDevice::calibrate_by_brackets(int tries) {
  if (tries < 1) throw std::invalid_argument(name() + ": clock calibration with " + std::to_string(tries) + " tries; expected at least 1");
  Signal* clock_signal;
  {
    std::lock_guard lock(clock_mutex_);
    if (clock_signal_ == nullptr) clock_signal_ = &new_signal("clock calibration");
    clock_signal = clock_signal_;
  }
  std::vector<ClockSample> samples;
  for (int i = 0; i < tries; i++) {
    const uint64_t target = clock_signal->value() + 1;
    ClockSample s;
    s.host_before_ns = monotonic_ns();
    HWQueue().signal(*clock_signal, target).submit(*this);
    clock_signal->wait(target);
    s.host_after_ns = monotonic_ns();
    s.device_ns = clock_signal->timestamp();
    samples.push_back(s);
  }
  const ClockCalibration c = calibrate_from(samples, std::max<int64_t>(1, std::llround(props_.limits.timestampPeriod)));
  std::lock_guard lock(clock_mutex_);
  clock_ = c;
  return c;
}

int64_t VulkanDevice::host_time_ns(uint64_t device_ns) { return clock_calibration().host_ns(device_ns); }

}  // namespace doorbell::vk
