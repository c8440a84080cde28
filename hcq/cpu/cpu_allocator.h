// Host memory for the CPU device: 64-byte aligned blocks (a cache line, and the widest vector load the C renderer
// emits), with freed blocks kept in a cache by size and handed back on the next allocation of that size, since
// programs allocate the same buffer sizes over and over. The cache is bounded (DOORBELL_CPU_CACHE_MB, default 256;
// 0 caches nothing): past the bound the least recently freed blocks go back to the system, and a block larger than
// the bound is never cached. When the system refuses a block, the cache is released and the request retried once.
#pragma once
#include <cstddef>
#include <deque>
#include <list>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <unordered_map>

namespace doorbell {

// No memory for a block even after the cache was released: the message names the request, its size and what was
// released ("CPU: cannot allocate 838860800 bytes for buffer 7 (209715200 x float32) (475 MiB cached and released,
// retried)"). A std::bad_alloc, so code that handles running out of memory still catches it.
class CpuOutOfMemory : public std::bad_alloc {
 public:
  explicit CpuOutOfMemory(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

class CpuAllocator {
 public:
  static constexpr size_t kAlignment = 64;
  static constexpr size_t kHugePage = size_t{2} << 20, kHugeBlock = size_t{4} << 20;

  // Caches at most cache_limit_bytes of freed blocks.
  explicit CpuAllocator(size_t cache_limit_bytes = default_cache_limit());
  CpuAllocator(const CpuAllocator&) = delete;
  CpuAllocator& operator=(const CpuAllocator&) = delete;
  // Frees the cache and every block still allocated.
  virtual ~CpuAllocator();

  // A kAlignment-aligned block of at least `bytes` (size 0 gets a distinct block too). `what` names the request in
  // the error ("buffer 7 (1024 x float32)"). Throws CpuOutOfMemory when the system has no memory for it even after
  // the cache was released.
  void* alloc(size_t bytes, std::string_view what = {});
  // Returns a block from alloc() to the cache (or to the system, past the bound); throws std::invalid_argument for
  // any other pointer.
  void free(void* block);
  // Releases every cached block to the system; returns the bytes released.
  size_t free_cache();

  size_t live_blocks() const;
  size_t cached_blocks() const;
  size_t cached_bytes() const;
  size_t cache_limit() const { return cache_limit_; }

  // DOORBELL_CPU_CACHE_MB (MiB) read once, else 256 MiB; throws std::invalid_argument naming the variable when it
  // is not a whole number.
  static size_t default_cache_limit();
  // The bound a DOORBELL_CPU_CACHE_MB value gives (nullptr or "": the default).
  static size_t parse_cache_limit(const char* mib);

 protected:
  // Where blocks come from and go back to: aligned_alloc and free; nullptr when the system has no memory. Tests make
  // it run out. The destructor returns blocks with CpuAllocator's own system_free (std::free).
  virtual void* system_alloc(size_t alignment, size_t bytes);
  virtual void system_free(void* block);

 private:
  static size_t rounded(size_t bytes);
  void* take_from_system(size_t size);  // nullptr when the system refuses
  void release_all_cached();            // with mutex_ held
  void trim_cache();                    // with mutex_ held: evicts the least recently freed past the bound

  const size_t cache_limit_;
  mutable std::mutex mutex_;
  std::unordered_map<void*, size_t> live_;  // block -> rounded size
  // Freed blocks, least recently freed first, and by size (each size's deque in the same order, so the oldest block
  // of the list is the front of its size's deque).
  struct Cached {
    size_t size;
    void* block;
  };
  std::list<Cached> lru_;
  std::unordered_map<size_t, std::deque<std::list<Cached>::iterator>> by_size_;
  size_t cached_bytes_ = 0;
};

// A block of a CpuAllocator, returned to it on destruction.
class CpuBuffer {
 public:
  CpuBuffer(CpuAllocator& allocator, size_t bytes, std::string_view what = {})
      : allocator_(&allocator), data_(allocator.alloc(bytes, what)), size_(bytes) {}
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
