// SubAllocator (hcq/suballocator.h) against a fake driver that hands out adjacent chunks of address space: blocks are
// aligned and never overlap, freed blocks are reused and coalesced, chunks grow geometrically and go back when wholly
// free beyond the reserve, and running out names the request, what is free and the driver's answer.
#include "hcq/suballocator.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

namespace doorbell {
namespace {

constexpr uint64_t kMiB = 1 << 20;

// Chunks at adjacent addresses (so coalescing must not cross a chunk's end), with a limit on what is outstanding.
struct FakeDriver {
  uint64_t next_address = 64 * kMiB;
  uint64_t limit = UINT64_MAX;
  uint64_t outstanding = 0;
  uint64_t next_handle = 1;
  std::map<uint64_t, HeapChunk> chunks;  // by address
  std::vector<uint64_t> obtained_sizes;

  HeapChunk obtain(uint64_t bytes) {
    if (bytes > limit - outstanding) throw std::runtime_error("NV_ERR_NO_MEMORY (0x51)");
    HeapChunk c{next_handle++, next_address, bytes, nullptr};
    next_address += bytes;
    outstanding += bytes;
    chunks[c.address] = c;
    obtained_sizes.push_back(bytes);
    return c;
  }
  void release(const HeapChunk& c) {
    ASSERT_EQ(chunks.count(c.address), 1u) << "a chunk given back twice or never obtained";
    outstanding -= c.size;
    chunks.erase(c.address);
  }
  SubAllocator make(SubAllocatorPolicy policy = {}) {
    return SubAllocator("test memory", policy, [this](uint64_t b) { return obtain(b); }, [this](const HeapChunk& c) { release(c); });
  }
};

// The chunk holding [address, address + size), or null when the range is in none (or crosses a chunk's end).
const HeapChunk* chunk_holding(const FakeDriver& d, uint64_t address, uint64_t size) {
  auto it = d.chunks.upper_bound(address);
  if (it == d.chunks.begin()) return nullptr;
  const HeapChunk& c = std::prev(it)->second;
  return address + size <= c.address + c.size ? &c : nullptr;
}

TEST(SubAllocator, ARandomWorkloadLosesNothingAndNeverOverlaps) {
  FakeDriver driver;
  SubAllocator heap = driver.make();
  std::mt19937_64 rng(15);
  std::map<uint64_t, uint64_t> live;  // address -> size
  auto random_size = [&]() -> uint64_t {
    switch (rng() % 4) {
      case 0: return 1 + rng() % 64;              // bytes
      case 1: return 1 + rng() % 8192;            // KiB
      case 2: return 1 + rng() % (1 * kMiB);      // up to a MiB
      default: return 1 + rng() % (5 * kMiB);     // a few MiB: more than the first chunk
    }
  };
  for (int op = 0; op < 6000; op++) {
    if (live.empty() || rng() % 5 < 3) {
      const uint64_t bytes = random_size(), alignment = uint64_t{1} << (rng() % 16);  // 1 B to 32 KiB
      SubAllocator::Block b = heap.alloc(bytes, alignment, "block " + std::to_string(op));
      ASSERT_GE(b.size, bytes);
      ASSERT_EQ(b.address % std::max<uint64_t>(alignment, 256), 0u) << "alignment " << alignment;
      ASSERT_NE(chunk_holding(driver, b.address, b.size), nullptr) << "block outside every chunk";
      auto after = live.upper_bound(b.address);
      if (after != live.end()) {
        ASSERT_LE(b.address + b.size, after->first) << "overlaps the next live block";
      }
      if (after != live.begin()) {
        ASSERT_LE(std::prev(after)->first + std::prev(after)->second, b.address) << "overlaps the previous";
      }
      live[b.address] = b.size;
    } else {
      auto it = live.begin();
      std::advance(it, static_cast<long>(rng() % live.size()));
      heap.free(it->first);
      live.erase(it);
    }
    if (op % 500 == 0) {
      SubAllocator::Stats s = heap.stats();
      uint64_t live_bytes = 0;
      for (auto& [a, size] : live) live_bytes += size;
      ASSERT_EQ(s.live_bytes, live_bytes);
      ASSERT_EQ(s.free_bytes + s.live_bytes, s.chunk_bytes) << "bytes lost at operation " << op;
      ASSERT_EQ(s.chunk_bytes, driver.outstanding);
    }
  }
  for (auto& [address, size] : live) heap.free(address);
  SubAllocator::Stats s = heap.stats();
  EXPECT_EQ(s.live_blocks, 0u);
  EXPECT_EQ(s.free_bytes, s.chunk_bytes) << "after everything is freed, everything is free";
  EXPECT_LE(s.chunks, SubAllocatorPolicy{}.reserve_chunks) << "wholly free chunks beyond the reserve went back";
  EXPECT_EQ(s.free_blocks, s.chunks) << "each kept chunk coalesced into one free block";
  EXPECT_EQ(driver.outstanding, s.chunk_bytes);
  EXPECT_GT(s.chunks_released, 0u);
  EXPECT_EQ(s.chunks_obtained - s.chunks_released, s.chunks);
}

TEST(SubAllocator, ManySmallBuffersShareOneChunk) {
  FakeDriver driver;
  SubAllocator heap = driver.make();
  std::vector<uint64_t> addresses;
  for (int i = 0; i < 1000; i++) addresses.push_back(heap.alloc(4, 1, "a 4-byte buffer").address);
  EXPECT_EQ(driver.obtained_sizes.size(), 1u) << "1000 buffers of 4 bytes fit one 2 MiB chunk (256 bytes each)";
  EXPECT_EQ(addresses[1] - addresses[0], 256u);
}

TEST(SubAllocator, AFreedBlockIsReusedAndNeighboursCoalesce) {
  FakeDriver driver;
  SubAllocator heap = driver.make();
  SubAllocator::Block a = heap.alloc(1000, 256, "a"), b = heap.alloc(1000, 256, "b"), c = heap.alloc(1000, 256, "c");
  heap.free(b.address);
  EXPECT_EQ(heap.alloc(1024, 256, "b again").address, b.address) << "the freed block is the best fit";
  heap.free(b.address);
  heap.free(a.address);
  heap.free(c.address);
  SubAllocator::Stats s = heap.stats();
  EXPECT_EQ(s.free_blocks, 1u) << "a, b, c and the rest of the chunk coalesced";
  EXPECT_EQ(s.largest_free, 2 * kMiB);
  EXPECT_EQ(s.chunks, 1u) << "one wholly free chunk is kept in reserve";
  EXPECT_EQ(heap.alloc(2 * kMiB, 256, "the whole chunk").address, a.address);
  EXPECT_EQ(driver.obtained_sizes.size(), 1u);
}

TEST(SubAllocator, CoalescingStopsAtTheEndOfAChunk) {
  FakeDriver driver;
  SubAllocator heap = driver.make();
  SubAllocator::Block first = heap.alloc(2 * kMiB, 256, "fills the first chunk");
  SubAllocator::Block second = heap.alloc(256, 256, "in the next chunk");  // adjacent address space
  ASSERT_EQ(second.address, first.address + 2 * kMiB);
  SubAllocator::Block keep = heap.alloc(256, 256, "keeps the second chunk busy");
  heap.free(first.address);
  heap.free(second.address);
  // Had the first chunk's free block merged with the second's, this 2 MiB + 256 request would straddle two driver
  // allocations.
  SubAllocator::Block big = heap.alloc(2 * kMiB + 256, 256, "more than a chunk");
  EXPECT_NE(chunk_holding(driver, big.address, big.size), nullptr);
  (void)keep;
}

TEST(SubAllocator, ChunksGrowGeometricallyAndBigRequestsGetTheirOwn) {
  FakeDriver driver;
  SubAllocator heap = driver.make();
  for (int i = 0; i < 15; i++) heap.alloc(1 * kMiB, 256, "a MiB");
  EXPECT_EQ(driver.obtained_sizes, (std::vector<uint64_t>{2 * kMiB, 2 * kMiB, 4 * kMiB, 8 * kMiB}));
  SubAllocator::Block big = heap.alloc(100 * kMiB, 256, "a big buffer");
  EXPECT_EQ(driver.obtained_sizes.back(), 100 * kMiB);
  heap.free(big.address);
  EXPECT_EQ(driver.outstanding, 16 * kMiB) << "a big request's chunk goes back when it is freed";
}

TEST(SubAllocator, OutOfMemoryNamesTheRequestWhatIsFreeAndTheDriversAnswer) {
  FakeDriver driver;
  driver.limit = 4 * kMiB;
  SubAllocator heap = driver.make();
  heap.alloc(1 * kMiB, 256, "first");      // a first chunk of 2 MiB: 1 MiB left
  heap.alloc(1536 * 1024, 256, "second");  // a second of 2 MiB: 512 KiB left, and the driver has nothing more
  try {
    heap.alloc(1280 * 1024, 256, "buffer 7 (327680 x float)");
    FAIL() << "expected OutOfDeviceMemory";
  } catch (const OutOfDeviceMemory& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("test memory: out of memory for buffer 7 (327680 x float) (1310720 bytes)"), std::string::npos) << m;
    EXPECT_NE(m.find("1572864 bytes free in 2 chunks of 4194304 bytes, the largest free block 1048576 bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("NV_ERR_NO_MEMORY (0x51)"), std::string::npos) << m;
  }
  EXPECT_EQ(heap.stats().live_blocks, 2u) << "a failed allocation changes nothing";
}

TEST(SubAllocator, OutOfMemoryGivesBackTheReserveFirst) {
  FakeDriver driver;
  driver.limit = 6 * kMiB;
  SubAllocator heap = driver.make();
  SubAllocator::Block a = heap.alloc(2 * kMiB, 256, "a");
  heap.alloc(2 * kMiB, 256, "b");
  heap.free(a.address);  // kept in reserve: 4 MiB outstanding
  SubAllocator::Block c = heap.alloc(4 * kMiB, 256, "c");  // asks 4 MiB, then gives the reserve back and asks again
  EXPECT_EQ(c.size, 4 * kMiB);
  EXPECT_EQ(driver.outstanding, 6 * kMiB);
}

TEST(SubAllocator, BadRequestsAreErrors) {
  FakeDriver driver;
  SubAllocator heap = driver.make();
  EXPECT_THROW(heap.alloc(0, 256, "empty"), std::invalid_argument);
  EXPECT_THROW(heap.alloc(16, 384, "odd alignment"), std::invalid_argument);
  EXPECT_THROW(heap.alloc(16, 4 * kMiB, "past the granule"), std::invalid_argument);
  SubAllocator::Block b = heap.alloc(16, 256, "ok");
  EXPECT_THROW(heap.free(b.address + 256), std::invalid_argument);
  heap.free(b.address);
  EXPECT_THROW(heap.free(b.address), std::invalid_argument) << "a second free";
}

TEST(SubAllocator, HostAddressesFollowTheChunksMapping) {
  std::vector<uint8_t> backing(4 * kMiB);
  SubAllocator heap("mapped", {}, [&](uint64_t bytes) { return HeapChunk{9, 2 * kMiB, bytes, backing.data()}; }, [](const HeapChunk&) {});
  heap.alloc(300, 256, "first");
  SubAllocator::Block b = heap.alloc(300, 256, "second");
  EXPECT_EQ(b.host, backing.data() + (b.address - 2 * kMiB));
  EXPECT_EQ(b.chunk_handle, 9u);
}

}  // namespace
}  // namespace doorbell
