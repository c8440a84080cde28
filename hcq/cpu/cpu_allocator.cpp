#include "hcq/cpu/cpu_allocator.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include <sys/mman.h>

namespace doorbell {
namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kDefaultCacheMiB = 256;
// 2^56: x86-64's virtual address space with 5-level paging (Intel SDM vol. 3A, 4.5).
constexpr size_t kMaxBlockBytes = size_t{1} << 56;

std::string mib_string(size_t bytes) {
  char b[32];
  if (bytes % kMiB == 0 || bytes >= 100 * kMiB) std::snprintf(b, sizeof b, "%zu MiB", (bytes + kMiB / 2) / kMiB);
  else std::snprintf(b, sizeof b, "%.1f MiB", static_cast<double>(bytes) / static_cast<double>(kMiB));
  return b;
}

}  // namespace

CpuAllocator::CpuAllocator(size_t cache_limit_bytes) : cache_limit_(cache_limit_bytes) {}

CpuAllocator::~CpuAllocator() {
  free_cache();
  for (auto& [block, size] : live_) system_free(block);
}

size_t CpuAllocator::parse_cache_limit(const char* mib) {
  if (mib == nullptr || *mib == '\0') return kDefaultCacheMiB * kMiB;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(mib, &end, 10);
  if (*mib == '-' || end == mib || *end != '\0' || errno == ERANGE || v > SIZE_MAX / kMiB)
    throw std::invalid_argument(std::string("DOORBELL_CPU_CACHE_MB: '") + mib +
                                "' is not a whole number of MiB; expected e.g. 256, or 0 to cache no freed blocks");
  return static_cast<size_t>(v) * kMiB;
}

size_t CpuAllocator::default_cache_limit() {
  static const size_t limit = parse_cache_limit(std::getenv("DOORBELL_CPU_CACHE_MB"));
  return limit;
}

size_t CpuAllocator::rounded(size_t bytes) {
  // aligned_alloc wants a multiple of the alignment; a zero-size request still gets its own block.
  if (bytes == 0) return kAlignment;
  if (bytes > kMaxBlockBytes) return 0;  // larger than any address space: refused by alloc without asking the system
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

void* CpuAllocator::system_alloc(size_t alignment, size_t bytes) { return std::aligned_alloc(alignment, bytes); }
void CpuAllocator::system_free(void* block) { std::free(block); }

void* CpuAllocator::take_from_system(size_t size) {
  // Big blocks on 2 MiB boundaries with transparent huge pages asked for: a strided walk (a sum over axis 0, a
  // matmul's column panel) then misses the TLB 512x less often, and the L2 prefetcher is not stopped every 4 KiB.
  const bool huge = size >= kHugeBlock;
  void* block = system_alloc(huge ? kHugePage : kAlignment, huge ? (size + kHugePage - 1) / kHugePage * kHugePage : size);
  if (block != nullptr && huge) ::madvise(block, size, MADV_HUGEPAGE);  // advice only: without THP the pages are 4 KiB
  return block;
}

void* CpuAllocator::alloc(size_t bytes, std::string_view what) {
  const size_t size = rounded(bytes);
  std::lock_guard lock(mutex_);
  void* block = nullptr;
  if (auto it = by_size_.find(size); size != 0 && it != by_size_.end()) {
    auto newest = it->second.back();  // the most recently freed: likeliest still in cache
    block = newest->block;
    it->second.pop_back();
    if (it->second.empty()) by_size_.erase(it);
    lru_.erase(newest);
    cached_bytes_ -= size;
  } else {
    block = size == 0 ? nullptr : take_from_system(size);
    size_t released = 0;
    if (block == nullptr && size != 0 && cached_bytes_ > 0) {  // the cache holds memory the system could give back
      released = cached_bytes_;
      release_all_cached();
      block = take_from_system(size);
    }
    if (block == nullptr)
      throw CpuOutOfMemory("CPU: cannot allocate " + std::to_string(bytes) + " bytes for " +
                           (what.empty() ? std::string("a block") : std::string(what)) + " (" +
                           (released > 0 ? mib_string(released) + " cached and released, retried"
                                         : std::string("nothing cached to release")) +
                           ")");
  }
  try {
    live_.emplace(block, size);
  } catch (...) {
    system_free(block);
    throw;
  }
  return block;
}

void CpuAllocator::free(void* block) {
  std::lock_guard lock(mutex_);
  auto it = live_.find(block);
  if (it == live_.end()) {
    char address[32];
    std::snprintf(address, sizeof address, "%p", block);
    throw std::invalid_argument(std::string("CpuAllocator::free: ") + address +
                                " is not a live block of this allocator");
  }
  const size_t size = it->second;
  live_.erase(it);
  if (size > cache_limit_) {  // would evict everything and still not fit
    system_free(block);
    return;
  }
  lru_.push_back(Cached{size, block});
  by_size_[size].push_back(std::prev(lru_.end()));
  cached_bytes_ += size;
  trim_cache();
}

void CpuAllocator::trim_cache() {
  while (cached_bytes_ > cache_limit_) {
    const Cached oldest = lru_.front();
    auto sized = by_size_.find(oldest.size);
    sized->second.pop_front();  // the oldest of its size too
    if (sized->second.empty()) by_size_.erase(sized);
    lru_.pop_front();
    cached_bytes_ -= oldest.size;
    system_free(oldest.block);
  }
}

void CpuAllocator::release_all_cached() {
  for (const Cached& c : lru_) system_free(c.block);
  lru_.clear();
  by_size_.clear();
  cached_bytes_ = 0;
}

size_t CpuAllocator::free_cache() {
  std::lock_guard lock(mutex_);
  const size_t released = cached_bytes_;
  release_all_cached();
  return released;
}

size_t CpuAllocator::live_blocks() const {
  std::lock_guard lock(mutex_);
  return live_.size();
}

size_t CpuAllocator::cached_blocks() const {
  std::lock_guard lock(mutex_);
  return lru_.size();
}

size_t CpuAllocator::cached_bytes() const {
  std::lock_guard lock(mutex_);
  return cached_bytes_;
}

CpuAllocator& cpu_device_allocator() {
  static CpuAllocator* allocator = new CpuAllocator();
  return *allocator;
}

}  // namespace doorbell
