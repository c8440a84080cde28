// The storage behind BUFFER UOps, keyed by the buffer's UNIQUE id, allocated on first use and zero-filled
// (Tensor.empty promises nothing, but zeros keep a bug reading uninitialized memory reproducible): on the CPU device
// a block of its allocator (64-byte aligned, freed blocks cached by size); on a GPU device its memory
// (Device::allocate_storage), mapped for the host where the device maps it, so buffer_bytes reads and writes it
// directly; write_buffer and read_buffer move whole ranges through the device (Device::copy_in/copy_out), which may
// use a faster path than the mapping and are the only way into storage the host cannot map (VK with
// DOORBELL_VK_STAGING=1, a GPU without host-visible device-local memory).
// A memory-planned view BUFFER(arena, CONST byte_offset) resolves to its arena's bytes at that offset.
#pragma once
#include <cstddef>
#include <span>

#include "ir/uop.h"

namespace doorbell {

// The host bytes of a BUFFER (count * itemsize of its dtype). Throws std::invalid_argument for a non-buffer and for
// storage the host cannot map.
std::span<std::byte> buffer_bytes(const UOp& buffer);
// The BUFFER's size in bytes (its storage allocated on first use, mapped or not).
size_t buffer_size(const UOp& buffer);
// Copies `src` into the buffer from byte `offset` / the buffer's bytes from `offset` into `dst`: through its device's
// copy_in/copy_out (Device::copy_in: a GPU may use its copy engine; NV does for large transfers), a memcpy for host
// storage. Allocates the buffer on first use. Throws std::invalid_argument when the range lies outside the buffer.
void write_buffer(const UOp& buffer, std::span<const std::byte> src, size_t offset = 0);
void read_buffer(const UOp& buffer, std::span<std::byte> dst, size_t offset = 0);
bool buffer_allocated(const UOp& buffer);
// The address a device's queues use for the buffer (its host address on the CPU device).
uint64_t buffer_device_address(const UOp& buffer);
// Bytes of host storage held by all buffers (storage is released when a buffer's UNIQUE identity dies).
size_t host_storage_bytes();
// Frees the storage of a buffer (no-op when it has none).
void free_buffer(const UOp& buffer);

}  // namespace doorbell
