// A stream of command dwords (PM4 packets for a compute queue, SDMA packets for a copy queue) written into memory the
// engine reads: a ring piece or an indirect buffer. As the Linux amdgpu ring helpers do (amdgpu_ring_alloc, write,
// commit), each packet reserves its declared size first, writes exactly that many dwords, and commits; a mistake
// throws std::logic_error naming the packet instead of corrupting the stream (more dwords than reserved, fewer at
// commit, a reservation past the end of the memory).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace doorbell::amd {

class CmdStream {
 public:
  // Writes into `memory`, which must outlive the stream; size() dwords of it are written.
  explicit CmdStream(std::span<uint32_t> memory);
  // Owns a growable vector of up to `capacity` dwords (tests, and encode_* helpers).
  explicit CmdStream(size_t capacity = 1 << 20);

  void reserve(size_t dwords, const char* packet);  // `packet` names the packet in errors ("RELEASE_MEM")
  void write(uint32_t dword);
  void commit();
  // Drops the open packet's dwords (after a writer's error), so the stream holds only whole packets again.
  void rollback();

  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }  // the most dwords the stream can hold
  std::span<const uint32_t> words() const;  // what was written so far
  std::span<uint32_t> memory() { return memory_; }

 private:
  std::vector<uint32_t> owned_;
  std::span<uint32_t> memory_;
  size_t capacity_ = 0;  // memory_.size() for borrowed memory, the owned vector's limit otherwise
  bool owns_ = false;
  size_t size_ = 0;
  size_t packet_start_ = 0;
  size_t reserved_end_ = 0;
  bool open_ = false;
  const char* packet_ = "";
};

}  // namespace doorbell::amd
