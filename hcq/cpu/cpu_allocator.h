// Host memory for the CPU device: 64-byte aligned blocks (a cache line, and the widest vector load the C renderer
// emits), with freed blocks kept in a cache by size and handed back on the next allocation of that size, since
// programs allocate the same buffer sizes over and over.
#pragma once
#include <cstddef>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace doorbell {

class CpuAllocator {
 public:
  static constexpr size_t kAlignment = 64;
  static constexpr size_t kHugePage = size_t{2} << 20, kHugeBlock = size_t{4} << 20;

  CpuAllocator() = default;
  CpuAllocator(const CpuAllocator&) = delete;
  CpuAllocator& operator=(const CpuAllocator&) = delete;
  // Frees the cache and every block still allocated.
  ~CpuAllocator();

  // A kAlignment-aligned block of at least `bytes` (size 0 gets a distinct block too); throws std::bad_alloc.
  void* alloc(size_t bytes);
  // Returns a block from alloc() to the cache; throws std::invalid_argument for any other pointer.
  void free(void* block);
  // Releases every cached block to the system.
  void free_cache();

  size_t live_blocks() const;
  size_t cached_blocks() const;
  size_t cached_bytes() const;

 private:
  static size_t rounded(size_t bytes);

  mutable std::mutex mutex_;
  std::unordered_map<void*, size_t> live_;          // block -> rounded size
  std::map<size_t, std::vector<void*>> cache_;      // rounded size -> freed blocks
};

// A block of a CpuAllocator, returned to it on destruction.
class CpuBuffer {
 public:
  CpuBuffer(CpuAllocator& allocator, size_t bytes) : allocator_(&allocator), data_(allocator.alloc(bytes)), size_(bytes) {}
  CpuBuffer(CpuBuffer&& other) noexcept
      : allocator_(other.allocator_), data_(other.data_), size_(other.size_) {
    other.data_ = nullptr;
  }
  CpuBuffer& operator=(CpuBuffer&&) = delete;
  CpuBuffer(const CpuBuffer&) = delete;
  CpuBuffer& operator=(const CpuBuffer&) = delete;
  ~CpuBuffer() {
    if (data_ != nullptr) allocator_->free(data_);
  }

  void* data() const { return data_; }
  size_t size() const { return size_; }
  template <typename T>
  T* as() const { return static_cast<T*>(data_); }

 private:
  CpuAllocator* allocator_;
  void* data_;
  size_t size_;
};

// The CPU device's memory: one allocator for the process, never destroyed (buffers may be freed at exit by
// static tensors after any local object is gone).
CpuAllocator& cpu_device_allocator();

}  // namespace doorbell
