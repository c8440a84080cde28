// SubAllocator: many small device allocations carved out of few large ones. A driver allocation is expensive (an RM
// allocation, a GPU VA mapping, a CPU mapping: several ioctls) and coarse (video memory comes in 2 MiB pages), so a
// buffer of 4 bytes must not cost one of its own. The allocator obtains chunks from its source, hands out aligned
// blocks of them (best fit by size), coalesces a freed block with its free neighbours of the same chunk, and gives a
// chunk back once it is wholly free and more than `reserve_chunks` such chunks are kept.
//
// Policy (SubAllocatorPolicy): chunks are multiples of `chunk_granule`; each new chunk is as large as all the shared
// chunks so far (geometric growth: 2, 2, 4, 8, ... MiB) up to `max_chunk`, so a growing program makes O(log n) driver
// calls; a request of `own_chunk_at` bytes or more gets a chunk of its own, given back as soon as it is freed (a big
// buffer would otherwise pin a huge chunk that small blocks keep alive).
//
// Not locked: the owner serialises every call (NvDevice: under its memory mutex).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

namespace doorbell {

// Memory obtained from the driver: `size` bytes at device address `address`, mapped for the host at `host` (null when
// it is not mapped).
struct HeapChunk {
  uint64_t handle = 0;
  uint64_t address = 0;
  uint64_t size = 0;
  uint8_t* host = nullptr;
};

struct SubAllocatorPolicy {
  uint64_t chunk_granule = 2 << 20;   // the GPU's large page: chunks are whole pages
  uint64_t first_chunk = 2 << 20;
  uint64_t max_chunk = 256 << 20;     // growth stops here
  uint64_t own_chunk_at = 64 << 20;   // requests this large get a chunk of their own
  uint64_t min_alignment = 256;       // every block (and its size) is a multiple of this: cudaMalloc's guarantee
  size_t reserve_chunks = 1;          // wholly free shared chunks kept for the next allocations
};

// Out of memory: the driver refused a chunk and no free block fits. The message names the request, what is free and
// the driver's answer.
class OutOfDeviceMemory : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SubAllocator {
 public:
  // `obtain(bytes)` returns a chunk of at least `bytes` whose address is a multiple of the granule, or throws with
  // the driver's answer; `release(chunk)` gives one back. `name` says which memory in errors ("NV video memory").
  using Obtain = std::function<HeapChunk(uint64_t bytes)>;
  using Release = std::function<void(const HeapChunk&)>;
  SubAllocator(std::string name, SubAllocatorPolicy policy, Obtain obtain, Release release);
  // Gives nothing back: the chunks belong to the owner's driver session, which frees them with everything else.
  ~SubAllocator() = default;
  SubAllocator(const SubAllocator&) = delete;
  SubAllocator& operator=(const SubAllocator&) = delete;

  struct Block {
    uint64_t address = 0;
    uint64_t size = 0;       // the request rounded up to min_alignment
    uint8_t* host = nullptr;
    uint64_t chunk_handle = 0;
  };
  // `bytes` (at least 1) at an address that is a multiple of `alignment` (a power of two, at most the granule;
  // min_alignment at least). `what` names the request in errors. Throws std::invalid_argument for a bad request,
  // OutOfDeviceMemory when neither a free block nor the driver has room.
  Block alloc(uint64_t bytes, uint64_t alignment, std::string_view what);
  // Frees the block that alloc returned at `address`. Throws std::invalid_argument for any other address.
  void free(uint64_t address);
  // The live block at `address`, or null.
  const Block* find(uint64_t address) const;

  struct Stats {
    uint64_t chunk_bytes = 0;     // obtained from the driver and not given back
    uint64_t free_bytes = 0;
    uint64_t largest_free = 0;
    uint64_t live_bytes = 0;
    size_t chunks = 0, free_blocks = 0, live_blocks = 0;
    size_t chunks_obtained = 0, chunks_released = 0;  // over the allocator's life
  };
  Stats stats() const;
  // "N bytes free in C chunks of T bytes, the largest free block L bytes"
  std::string describe() const;

 private:
  struct ChunkState {
    HeapChunk chunk;
    bool own = false;          // a big request's: given back when freed
    uint64_t free_bytes = 0;
  };
  std::map<uint64_t, ChunkState>::iterator chunk_of(uint64_t address);
  std::map<uint64_t, ChunkState>::iterator add_chunk(uint64_t bytes, bool own, uint64_t size, std::string_view what);
  // The free block where `size` bytes fit at `alignment`, or free_by_address_.end().
  std::map<uint64_t, uint64_t>::iterator best_fit(uint64_t size, uint64_t alignment);
  Block place(std::map<uint64_t, uint64_t>::iterator free_block, uint64_t size, uint64_t alignment);
  void insert_free(uint64_t address, uint64_t size);
  void erase_free(std::map<uint64_t, uint64_t>::iterator it);
  void maybe_release(std::map<uint64_t, ChunkState>::iterator chunk);
  size_t wholly_free_shared_chunks() const;

  std::string name_;
  SubAllocatorPolicy policy_;
  Obtain obtain_;
  Release release_;
  std::map<uint64_t, ChunkState> chunks_;                 // by address
  std::map<uint64_t, uint64_t> free_by_address_;          // address -> size
  std::set<std::pair<uint64_t, uint64_t>> free_by_size_;  // (size, address)
  std::unordered_map<uint64_t, Block> live_;              // by address
  uint64_t shared_chunk_bytes_ = 0;
  size_t chunks_obtained_ = 0, chunks_released_ = 0;
};

}  // namespace doorbell
