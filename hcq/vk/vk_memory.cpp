#include "hcq/vk/vk_memory.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "hcq/vk/vk_check.h"
#include "hcq/vk/vk_device.h"

namespace doorbell::vk {

namespace {

// Chunks are presented to the sub-allocator at this alignment (it wants granule-aligned chunk addresses); each is
// allocated this much larger than asked to make room.
constexpr uint64_t kChunkGranule = 4096;

}  // namespace

VulkanDevice::Memory VulkanDevice::allocate_memory(uint64_t bytes, uint32_t type, bool map, const std::string& what) {
  Memory m;
  VkBufferCreateInfo info = vk_struct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  info.size = bytes;
  info.usage = kBufferUsage;
  vk_check(vkCreateBuffer(device_, &info, nullptr, &m.buffer), name(), "vkCreateBuffer", what + " (" + std::to_string(bytes) + " bytes)");
  messenger_->claim(m.buffer);
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(device_, m.buffer, &req);
  VkMemoryAllocateFlagsInfo flags = vk_struct<VkMemoryAllocateFlagsInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO);
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo alloc = vk_struct<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
  alloc.pNext = &flags;
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = type;
  VkResult r = vkAllocateMemory(device_, &alloc, nullptr, &m.memory);
  if (r == VK_SUCCESS) messenger_->claim(m.memory);
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
  messenger_->disclaim(m.buffer);
  messenger_->disclaim(m.memory);
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

SubAllocator::Block VulkanDevice::alloc_host_block(uint64_t bytes, const char* what) {
  std::lock_guard lock(memory_mutex_);
  return heap_locked(true).alloc(bytes, 256, what);
}

void VulkanDevice::release_storage(const Storage& storage) { release_block(storage.handle, false); }

VulkanDevice::Storage VulkanDevice::allocate_host_visible(size_t bytes) {
  const SubAllocator::Block b = alloc_host_block(std::max<size_t>(bytes, 1), "host-visible memory");
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
  const SubAllocator::Block staging = alloc_host_block(bytes, "a staging buffer");
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
  const SubAllocator::Block staging = alloc_host_block(bytes, "a staging buffer");
  HWQueue q;
  q.copy(reinterpret_cast<void*>(staging.address), reinterpret_cast<const void*>(storage.address + offset), bytes);
  const uint64_t count = submit_counted(q);
  wait_progress(count, "copy_out");
  std::memcpy(dst, staging.host, bytes);
  release_block(staging.address, true);
}

}  // namespace doorbell::vk
