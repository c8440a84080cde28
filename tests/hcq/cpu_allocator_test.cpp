// CpuAllocator: alignment, reuse of freed blocks by size, and errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "hcq/cpu/cpu_allocator.h"

namespace doorbell {
namespace {

bool aligned64(const void* p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }

TEST(CpuAllocator, BlocksAre64ByteAlignedAndWritable) {
  CpuAllocator a;
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{1000}, size_t{1} << 20}) {
    void* p = a.alloc(bytes);
    EXPECT_TRUE(aligned64(p)) << bytes;
    std::memset(p, 0xab, bytes);
    a.free(p);
  }
  EXPECT_EQ(a.live_blocks(), 0u);
}

TEST(CpuAllocator, FreedBlockIsReusedForTheSameSize) {
  CpuAllocator a;
  void* p = a.alloc(4096);
  a.free(p);
  EXPECT_EQ(a.cached_blocks(), 1u);
  EXPECT_EQ(a.cached_bytes(), 4096u);
  void* q = a.alloc(4096);
  EXPECT_EQ(q, p);
  EXPECT_EQ(a.cached_blocks(), 0u);
  a.free(q);
}

TEST(CpuAllocator, SizesRoundingToTheSameBlockShareTheCache) {
  CpuAllocator a;
  void* p = a.alloc(100);  // rounds to 128
  a.free(p);
  void* q = a.alloc(128);
  EXPECT_EQ(q, p);
  a.free(q);
}

TEST(CpuAllocator, OtherSizeDoesNotTakeACachedBlock) {
  CpuAllocator a;
  void* p = a.alloc(256);
  a.free(p);
  void* q = a.alloc(512);
  EXPECT_NE(q, p);
  EXPECT_EQ(a.cached_blocks(), 1u);
  EXPECT_EQ(a.live_blocks(), 1u);
  a.free(q);
  a.free_cache();
  EXPECT_EQ(a.cached_blocks(), 0u);
  EXPECT_EQ(a.cached_bytes(), 0u);
}

TEST(CpuAllocator, FreeOfForeignOrDoubleFreedPointerThrows) {
  CpuAllocator a;
  int x = 0;
  EXPECT_THROW(a.free(&x), std::invalid_argument);
  void* p = a.alloc(64);
  a.free(p);
  EXPECT_THROW(a.free(p), std::invalid_argument);
}

TEST(CpuAllocator, CpuBufferReturnsItsBlockOnDestruction) {
  CpuAllocator a;
  void* first = nullptr;
  {
    CpuBuffer b(a, 40);
    first = b.data();
    EXPECT_EQ(b.size(), 40u);
    b.as<float>()[9] = 1.0f;
    EXPECT_EQ(a.live_blocks(), 1u);
    CpuBuffer moved(std::move(b));
    EXPECT_EQ(moved.data(), first);
  }
  EXPECT_EQ(a.live_blocks(), 0u);
  CpuBuffer again(a, 64);
  EXPECT_EQ(again.data(), first);
}

TEST(CpuAllocator, DestructorFreesLiveAndCachedBlocks) {
  // Under ASan a leak here fails the run; the assertion pins the state the destructor must clean up.
  auto* a = new CpuAllocator;
  void* kept = a->alloc(100);
  a->free(a->alloc(200));
  EXPECT_NE(kept, nullptr);
  EXPECT_EQ(a->live_blocks(), 1u);
  EXPECT_EQ(a->cached_blocks(), 1u);
  delete a;
}

}  // namespace
}  // namespace doorbell
