#include "hcq/suballocator.h"

#include <algorithm>
#include <bit>

namespace doorbell {
namespace {

uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

}  // namespace

SubAllocator::SubAllocator(std::string name, SubAllocatorPolicy policy, Obtain obtain, Release release)
    : name_(std::move(name)), policy_(policy), obtain_(std::move(obtain)), release_(std::move(release)) {
  if (!std::has_single_bit(policy_.chunk_granule) || !std::has_single_bit(policy_.min_alignment) ||
      policy_.min_alignment > policy_.chunk_granule || policy_.first_chunk == 0 || policy_.max_chunk < policy_.first_chunk)
    throw std::invalid_argument(name_ + ": a sub-allocator policy needs power-of-two granule and alignment (alignment <= granule) "
                                "and 0 < first_chunk <= max_chunk");
}

SubAllocator::Block SubAllocator::alloc(uint64_t bytes, uint64_t alignment, std::string_view what) {
  if (bytes == 0) throw std::invalid_argument(name_ + ": " + std::string(what) + " asks for 0 bytes; expected at least 1");
  if (!std::has_single_bit(alignment) || alignment > policy_.chunk_granule)
    throw std::invalid_argument(name_ + ": " + std::string(what) + " asks for alignment " + std::to_string(alignment) +
                                "; expected a power of two up to " + std::to_string(policy_.chunk_granule));
  if (bytes > UINT64_MAX - policy_.chunk_granule)
    throw std::invalid_argument(name_ + ": " + std::string(what) + " asks for " + std::to_string(bytes) + " bytes, past the address space");
  alignment = std::max(alignment, policy_.min_alignment);
  const uint64_t size = round_up(bytes, policy_.min_alignment);
  if (size >= policy_.own_chunk_at) {
    auto chunk = add_chunk(round_up(size, policy_.chunk_granule), /*own=*/true, size, what);
    auto block = free_by_address_.find(chunk->first);
    return place(block, size, alignment);
  }
  auto fit = best_fit(size, alignment);
  if (fit == free_by_address_.end()) {
    // Geometric growth: as large as all shared chunks so far, so n bytes take O(log n) driver allocations.
    const uint64_t grown = std::clamp(round_up(shared_chunk_bytes_, policy_.chunk_granule), policy_.first_chunk, policy_.max_chunk);
    auto chunk = add_chunk(std::max(grown, round_up(size, policy_.chunk_granule)), /*own=*/false, size, what);
    fit = free_by_address_.find(chunk->first);
  }
  return place(fit, size, alignment);
}

std::map<uint64_t, SubAllocator::ChunkState>::iterator SubAllocator::add_chunk(uint64_t bytes, bool own, uint64_t size,
                                                                             std::string_view what) {
  const uint64_t smallest = round_up(size, policy_.chunk_granule);
  HeapChunk chunk;
  try {
    chunk = obtain_(bytes);
  } catch (const std::exception& first) {
    // Room for the request alone, after giving back the wholly free chunks kept in reserve (too small for it, or
    // best_fit would have found them).
    std::string answer = first.what();
    const size_t released_before = chunks_released_;
    for (auto it = chunks_.begin(); it != chunks_.end();) {
      auto next = std::next(it);
      if (!it->second.own && it->second.free_bytes == it->second.chunk.size) {
        auto block = free_by_address_.find(it->first);
        erase_free(block);
        shared_chunk_bytes_ -= it->second.chunk.size;
        HeapChunk gone = it->second.chunk;
        chunks_.erase(it);
        chunks_released_++;
        release_(gone);
      }
      it = next;
    }
    try {
      if (smallest == bytes && chunks_released_ == released_before) throw std::runtime_error(answer);  // nothing changed
      chunk = obtain_(smallest);
    } catch (const std::exception& second) {
      if (std::string(second.what()) != answer) answer += "; for " + std::to_string(smallest) + " bytes: " + second.what();
      throw OutOfDeviceMemory(name_ + ": out of memory for " + std::string(what) + " (" + std::to_string(size) + " bytes): " + describe() +
                              "; the driver refused a chunk of " + std::to_string(bytes) + " bytes: " + answer);
    }
  }
  if (chunk.size < smallest || chunk.address % policy_.chunk_granule != 0)
    throw std::logic_error(name_ + ": the driver's chunk of " + std::to_string(chunk.size) + " bytes at " + std::to_string(chunk.address) +
                           " is smaller than the " + std::to_string(smallest) + " bytes asked or not granule-aligned");
  chunks_obtained_++;
  if (!own) shared_chunk_bytes_ += chunk.size;
  auto [it, inserted] = chunks_.emplace(chunk.address, ChunkState{chunk, own, chunk.size});
  if (!inserted) throw std::logic_error(name_ + ": the driver returned a chunk at an address already in use");
  insert_free(chunk.address, chunk.size);
  return it;
}

std::map<uint64_t, uint64_t>::iterator SubAllocator::best_fit(uint64_t size, uint64_t alignment) {
  for (auto it = free_by_size_.lower_bound({size, 0}); it != free_by_size_.end(); ++it) {
    const auto [block_size, address] = *it;
    if (round_up(address, alignment) + size <= address + block_size) return free_by_address_.find(address);
  }
  return free_by_address_.end();
}

SubAllocator::Block SubAllocator::place(std::map<uint64_t, uint64_t>::iterator free_block, uint64_t size, uint64_t alignment) {
  const uint64_t start = free_block->first, length = free_block->second;
  const uint64_t address = round_up(start, alignment);
  erase_free(free_block);
  if (address > start) insert_free(start, address - start);  // never merges: its neighbours were not free
  if (address + size < start + length) insert_free(address + size, start + length - address - size);
  auto chunk = chunk_of(address);
  chunk->second.free_bytes -= size;
  Block b{address, size, chunk->second.chunk.host ? chunk->second.chunk.host + (address - chunk->first) : nullptr,
          chunk->second.chunk.handle};
  live_.emplace(address, b);
  return b;
}

void SubAllocator::free(uint64_t address) {
  auto it = live_.find(address);
  if (it == live_.end())
    throw std::invalid_argument(name_ + ": free of address " + std::to_string(address) + ", which is no live allocation of this allocator");
  const uint64_t size = it->second.size;
  live_.erase(it);
  auto chunk = chunk_of(address);
  chunk->second.free_bytes += size;
  uint64_t start = address, length = size;
  // Coalesce with the free neighbours inside the same chunk (chunks may be adjacent in the address space).
  auto next = free_by_address_.find(address + size);
  if (next != free_by_address_.end() && next->first < chunk->first + chunk->second.chunk.size) {
    length += next->second;
    erase_free(next);
  }
  auto after = free_by_address_.upper_bound(address);
  if (after != free_by_address_.begin()) {
    auto prev = std::prev(after);
    if (prev->first >= chunk->first && prev->first + prev->second == address) {
      start = prev->first;
      length += prev->second;
      erase_free(prev);
    }
  }
  insert_free(start, length);
  maybe_release(chunk);
}

void SubAllocator::maybe_release(std::map<uint64_t, ChunkState>::iterator chunk) {
  ChunkState& c = chunk->second;
  if (c.free_bytes != c.chunk.size) return;
  if (!c.own && wholly_free_shared_chunks() <= policy_.reserve_chunks) return;
  erase_free(free_by_address_.find(chunk->first));
  if (!c.own) shared_chunk_bytes_ -= c.chunk.size;
  const HeapChunk gone = c.chunk;
  chunks_.erase(chunk);
  chunks_released_++;
  release_(gone);
}

size_t SubAllocator::wholly_free_shared_chunks() const {
  return static_cast<size_t>(std::count_if(chunks_.begin(), chunks_.end(), [](const auto& kv) {
    return !kv.second.own && kv.second.free_bytes == kv.second.chunk.size;
  }));
}

const SubAllocator::Block* SubAllocator::find(uint64_t address) const {
  auto it = live_.find(address);
  return it == live_.end() ? nullptr : &it->second;
}

std::map<uint64_t, SubAllocator::ChunkState>::iterator SubAllocator::chunk_of(uint64_t address) {
  auto it = chunks_.upper_bound(address);
  if (it == chunks_.begin()) throw std::logic_error(name_ + ": address " + std::to_string(address) + " lies in no chunk");
  return std::prev(it);
}

void SubAllocator::insert_free(uint64_t address, uint64_t size) {
  free_by_address_.emplace(address, size);
  free_by_size_.emplace(size, address);
}

void SubAllocator::erase_free(std::map<uint64_t, uint64_t>::iterator it) {
  free_by_size_.erase({it->second, it->first});
  free_by_address_.erase(it);
}

SubAllocator::Stats SubAllocator::stats() const {
  Stats s;
  for (const auto& [address, c] : chunks_) s.chunk_bytes += c.chunk.size;
  for (const auto& [address, size] : free_by_address_) s.free_bytes += size;
  s.largest_free = free_by_size_.empty() ? 0 : free_by_size_.rbegin()->first;
  for (const auto& [address, b] : live_) s.live_bytes += b.size;
  s.chunks = chunks_.size();
  s.free_blocks = free_by_address_.size();
  s.live_blocks = live_.size();
  s.chunks_obtained = chunks_obtained_;
  s.chunks_released = chunks_released_;
  return s;
}

std::string SubAllocator::describe() const {
  const Stats s = stats();
  return std::to_string(s.free_bytes) + " bytes free in " + std::to_string(s.chunks) + " chunks of " + std::to_string(s.chunk_bytes) +
         " bytes, the largest free block " + std::to_string(s.largest_free) + " bytes";
}

}  // namespace doorbell
