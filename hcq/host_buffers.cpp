#include "hcq/host_buffers.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "hcq/cpu/cpu_allocator.h"
#include "hcq/devices.h"
#include "hcq/suballocator.h"

namespace doorbell {
namespace {

struct Block {
  void* data = nullptr;  // the host's view; null for device storage the host cannot map (copy_in/copy_out reach it)
  size_t size = 0;
  Device* device = nullptr;  // null: the CPU device's allocator
  Device::Storage storage{};
};

void free_block(const Block& b) {
  if (b.device != nullptr) b.device->release_storage(b.storage);
  else if (b.data != nullptr) cpu_device_allocator().free(b.data);
}

// A BUFFER's storage: the memory of the device it names when that device has its own (a GPU; mapped for the host or
// not: Device::Storage), else (a host device: CPU, REF) a block of the CPU device's allocator, zero-filled.
Block allocate(const UOp& b, size_t nbytes) {
  if (b.src().size() > 1 && b.src(1).op() == Ops::DEVICE) {
    Device& d = device(b.src(1).arg_as<std::string>());
    Device::Storage s;
    try {
      s = d.allocate_storage(std::max<size_t>(nbytes, 1));
    } catch (const OutOfDeviceMemory& e) {  // named as the CPU's error names it: the buffer, its count and dtype
      throw OutOfDeviceMemory("buffer " + std::to_string(b.src(0).arg_as<int64_t>()) + " (" + std::to_string(b.arg_as<int64_t>()) + " x " +
                              b.dtype().name() + ") on " + d.name() + ": " + e.what());
    }
    if (s.address != 0) return Block{s.host, nbytes, &d, s};
  }
  // Named in the error when memory runs out: the buffer's identity, element count and dtype.
  void* fresh = cpu_device_allocator().alloc(
      nbytes, "buffer " + std::to_string(b.src(0).arg_as<int64_t>()) + " (" + std::to_string(b.arg_as<int64_t>()) + " x " + b.dtype().name() + ")");
  std::memset(fresh, 0, nbytes);
  return Block{fresh, nbytes, nullptr, {}};
}

// CPU blocks come from the CPU device's allocator, which caches freed blocks by size: programs allocate the same
// sizes over and over, and a warm realize must not pay for fresh pages.
struct Store {
  std::mutex mu;
  std::unordered_map<int64_t, Block> bytes;
  void release(std::unordered_map<int64_t, Block>::iterator it) {
    free_block(it->second);
    bytes.erase(it);
  }
};
Store& store() {
  static Store* s = new Store();  // never destroyed: tensors in static objects may outlive main
  return *s;
}

// A buffer's bytes live as long as its identity: when the last UOp naming UNIQUE(id) goes, so do they.
void release_storage(int64_t id) {
  std::lock_guard lock(store().mu);
  auto it = store().bytes.find(id);
  if (it != store().bytes.end()) store().release(it);
}
[[maybe_unused]] const bool kHookRegistered = (set_unique_freed_hook(release_storage), true);

int64_t count_of(const UOp& b) { return b.arg_as<int64_t>(); }

void check_buffer(const UOp& b) {
  if (!b || b.op() != Ops::BUFFER || b.src().empty())
    throw std::invalid_argument("buffer_bytes: expected a BUFFER, got " + (b ? std::string(op_name(b.op())) : std::string("a null UOp")));
}

}  // namespace

namespace {

std::string buffer_name(const UOp& b) {
  return "buffer " + std::to_string(b.src(0).arg_as<int64_t>()) + " (" + std::to_string(count_of(b)) + " x " + b.dtype().name() + ")";
}

// A grown buffer keeps its bytes: through the host when either side is not mapped.
void move_bytes(const Block& to, const Block& from) {
  if (to.data != nullptr && from.data != nullptr) return void(std::memcpy(to.data, from.data, from.size));
  std::vector<std::byte> through(from.size);
  if (from.data != nullptr) std::memcpy(through.data(), from.data, from.size);
  else from.device->copy_out(through.data(), from.storage, 0, from.size);
  if (to.data != nullptr) std::memcpy(to.data, through.data(), through.size());
  else to.device->copy_in(to.storage, 0, through.data(), through.size());
}

// The root storage of a buffer (through views into an arena), allocated on first use, the byte offset of `b` in it,
// and `b`'s size in bytes.
struct Placed {
  Block block;
  size_t offset;
  size_t size;
};
Placed resolve(const UOp& b) {
  check_buffer(b);
  int64_t nbytes_signed;  // a BUFFER built outside the frontend's size checks must not wrap its byte count
  if (count_of(b) < 0 || __builtin_mul_overflow(count_of(b), int64_t{b.dtype().itemsize()}, &nbytes_signed))
    throw std::invalid_argument("buffer_bytes: " + std::to_string(count_of(b)) + " elements of " + b.dtype().name() +
                                " are over 2^63-1 bytes");
  size_t nbytes = static_cast<size_t>(nbytes_signed);
  if (b.src(0).op() == Ops::BUFFER) {  // a view into an arena
    Placed arena = resolve(b.src(0));
    int64_t offset = std::get<int64_t>(b.src(1).arg());
    if (offset < 0 || static_cast<size_t>(offset) + nbytes > arena.size)
      throw std::invalid_argument("buffer_bytes: view at byte " + std::to_string(offset) + " of " + std::to_string(nbytes) +
                                  " bytes lies outside its arena of " + std::to_string(arena.size) + " bytes");
    return Placed{arena.block, arena.offset + static_cast<size_t>(offset), nbytes};
  }
  if (b.src(0).op() != Ops::UNIQUE) throw std::invalid_argument("buffer_bytes: BUFFER without a UNIQUE identity");
  int64_t id = b.src(0).arg_as<int64_t>();
  std::lock_guard lock(store().mu);
  auto found = store().bytes.find(id);
  if (found == store().bytes.end()) found = store().bytes.emplace(id, allocate(b, nbytes)).first;  // may throw: no entry then
  Block& block = found->second;
  if (block.size < nbytes) {  // new storage reads as zeros; a grown one keeps its bytes
    Block fresh = allocate(b, nbytes);
    try {
      move_bytes(fresh, block);
    } catch (...) {
      free_block(fresh);
      throw;
    }
    free_block(block);
    block = fresh;
  }
  return Placed{block, 0, nbytes};
}

Placed place(const UOp& b, size_t offset, size_t bytes, const char* what) {
  Placed p = resolve(b);  // allocates on first use
  if (offset > p.size || bytes > p.size - offset)
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(bytes) + " bytes at byte " + std::to_string(offset) +
                                " lie outside the buffer of " + std::to_string(p.size) + " bytes");
  p.offset += offset;
  return p;
}

}  // namespace

std::span<std::byte> buffer_bytes(const UOp& b) {
  const Placed p = resolve(b);
  if (p.block.data == nullptr)
    throw std::invalid_argument("buffer_bytes: " + buffer_name(b) + " lives in memory of " + p.block.device->name() +
                                " that the host cannot map; expected read_buffer/write_buffer (the device's copy_in/copy_out)");
  return std::span<std::byte>(static_cast<std::byte*>(p.block.data) + p.offset, p.size);
}

size_t buffer_size(const UOp& b) { return resolve(b).size; }

void write_buffer(const UOp& b, std::span<const std::byte> src, size_t offset) {
  Placed p = place(b, offset, src.size(), "write_buffer");
  if (src.empty()) return;
  if (p.block.device != nullptr) p.block.device->copy_in(p.block.storage, p.offset, src.data(), src.size());
  else std::memcpy(static_cast<std::byte*>(p.block.data) + p.offset, src.data(), src.size());
}

void read_buffer(const UOp& b, std::span<std::byte> dst, size_t offset) {
  Placed p = place(b, offset, dst.size(), "read_buffer");
  if (dst.empty()) return;
  if (p.block.device != nullptr) p.block.device->copy_out(dst.data(), p.block.storage, p.offset, dst.size());
  else std::memcpy(dst.data(), static_cast<const std::byte*>(p.block.data) + p.offset, dst.size());
}

uint64_t buffer_device_address(const UOp& b) {
  const Placed p = resolve(b);  // allocates on first use
  if (p.block.device != nullptr) return p.block.storage.address + p.offset;
  return reinterpret_cast<uintptr_t>(p.block.data) + p.offset;
}

size_t host_storage_bytes() {
  std::lock_guard lock(store().mu);
  size_t total = 0;
  for (auto& [id, block] : store().bytes) total += block.size;
  return total;
}

bool buffer_allocated(const UOp& b) {
  check_buffer(b);
  if (b.src(0).op() == Ops::BUFFER) return buffer_allocated(b.src(0));
  std::lock_guard lock(store().mu);
  return store().bytes.count(b.src(0).arg_as<int64_t>()) != 0;
}

void free_buffer(const UOp& b) {
  check_buffer(b);
  if (b.src(0).op() != Ops::UNIQUE) return;
  std::lock_guard lock(store().mu);
  auto it = store().bytes.find(b.src(0).arg_as<int64_t>());
  if (it != store().bytes.end()) store().release(it);
}

}  // namespace doorbell
