// The GPFIFO: a ring of 8-byte entries, each pointing at a pushbuffer segment, that a channel's host unit fetches
// from. Submitting work is: write the entry into the ring, fence, store the new put index into USERD's GPPut, fence
// again, and write the channel's work-submit token to the usermode region's doorbell. Entry format: clc86f.h
// NVC86F_GP_ENTRY* (identical in clc56f.h).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

namespace doorbell::nv {

struct GpfifoEntry {
  uint64_t pushbuffer_address = 0;  // 4-byte aligned, below 2^40 (GET 31:2 + GET_HI 7:0)
  uint32_t length_words = 0;        // 1 .. 2^21-1 dwords (LENGTH 30:10)
  // LEVEL_SUBROUTINE, as tinygrad submits; false is LEVEL_MAIN.
  bool subroutine = true;
  bool sync_wait = false;  // SYNC_WAIT: the host unit waits for earlier entries' methods to complete first
  bool operator==(const GpfifoEntry&) const = default;
};

// The entry as one little-endian 64-bit word: entry0 (FETCH 0:0, GET 31:2) in the low half, entry1 (GET_HI 7:0,
// LEVEL 9, LENGTH 30:10, SYNC 31) in the high half. Throws std::invalid_argument naming the bad operand.
uint64_t encode_gpfifo_entry(const GpfifoEntry& entry);
// The inverse, for the mock GPU. Control entries (length 0, an opcode in GET_HI) are not decoded: they throw.
GpfifoEntry decode_gpfifo_entry(uint64_t word);

// One step of a submission: a 32-bit store in the region it goes to, or a write barrier (kFence: every store before
// it reaches memory before any store after it; offset and value are 0).
enum class SubmitRegion { kUserd, kUsermode, kFence };
struct SubmitWrite {
  SubmitRegion region;
  uint32_t offset;  // bytes from the start of the region
  uint32_t value;
  bool operator==(const SubmitWrite&) const = default;
};

// The steps that publish ring entries up to (not including) `put_index` and ring the doorbell, in order: a fence (the
// pushbuffer and GP entries before GPPut), USERD + kUserdGpPutOffset (Nvc86fControl.GPPut) = put_index, a fence, then
// usermode + NVC361_NOTIFY_CHANNEL_PENDING = the channel's work-submit token (from
// NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN). The second fence is UVM's `wmb()` between GPPut and the doorbell
// (ogkm kernel-open/nvidia-uvm/uvm_volta_host.c:31-45; tinygrad ops_nv.py:121-125): USERD in video memory is mapped
// write-combined and the usermode page uncached, and nothing else orders a WC store before a UC one, so the doorbell
// could reach the GPU before GPPut and the host unit would read the old put. Throws unless put_index < ring_entries.
inline constexpr size_t kSubmitSteps = 4;
std::array<SubmitWrite, kSubmitSteps> gpfifo_submit_writes(uint32_t put_index, uint32_t ring_entries,
                                                           uint32_t work_submit_token);

}  // namespace doorbell::nv
