#include "mockgpu/nv/gpu_memory.h"

#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>

namespace doorbell::mockgpu::nv {

namespace {
std::string hex(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}
}  // namespace

bool GpuMemory::overlaps_locked(std::uint64_t va, std::uint64_t size) const {
  auto next = by_va_.lower_bound(va);
  if (next != by_va_.end() && next->first < va + size) return true;
  if (next == by_va_.begin()) return false;
  const Mapping& previous = std::prev(next)->second;
  return previous.va + previous.size > va;
}

bool GpuMemory::map(std::uint64_t va, std::uint8_t* host, std::uint64_t size, std::uint64_t owner) {
  if (size == 0 || va + size < va) return false;
  std::unique_lock lock(mutex_);
  if (auto same = by_va_.find(va); same != by_va_.end() && same->second.size == size && same->second.host == host) {
    return true;
  }
  if (overlaps_locked(va, size)) return false;
  by_va_[va] = Mapping{va, size, host, owner};
  return true;
}

bool GpuMemory::unmap(std::uint64_t va) {
  std::unique_lock lock(mutex_);
  return by_va_.erase(va) != 0;
}

std::size_t GpuMemory::unmap_range(std::uint64_t va, std::uint64_t size) {
  std::unique_lock lock(mutex_);
  std::size_t removed = 0;
  for (auto it = by_va_.lower_bound(va); it != by_va_.end() && it->first < va + size;) {
    if (it->second.va + it->second.size <= va + size) {
      it = by_va_.erase(it);
      ++removed;
    } else {
      ++it;
    }
  }
  return removed;
}

std::size_t GpuMemory::unmap_owner(std::uint64_t owner) {
  std::unique_lock lock(mutex_);
  return std::erase_if(by_va_, [owner](const auto& entry) { return entry.second.owner == owner; });
}

bool GpuMemory::overlaps(std::uint64_t va, std::uint64_t size) const {
  std::shared_lock lock(mutex_);
  return overlaps_locked(va, size);
}

std::uint8_t* GpuMemory::translate(std::uint64_t va, std::size_t bytes) const {
  std::shared_lock lock(mutex_);
  auto next = by_va_.upper_bound(va);
  if (next == by_va_.begin() || std::prev(next)->second.va + std::prev(next)->second.size <= va) {
    throw std::runtime_error("GPU VA " + hex(va) + " (" + std::to_string(bytes) +
                             " bytes) is not mapped in the emulated GPU's address space");
  }
  const Mapping& mapping = std::prev(next)->second;
  const std::uint64_t end = mapping.va + mapping.size;
  if (bytes > end - va) {
    throw std::runtime_error("GPU access of " + std::to_string(bytes) + " bytes at VA " + hex(va) +
                             " crosses the end of its mapping [" + hex(mapping.va) + ", " + hex(end) + ")");
  }
  return mapping.host + (va - mapping.va);
}

std::vector<GpuMemory::Mapping> GpuMemory::mappings() const {
  std::shared_lock lock(mutex_);
  std::vector<Mapping> all;
  for (const auto& [va, mapping] : by_va_) all.push_back(mapping);
  return all;
}

}  // namespace doorbell::mockgpu::nv
