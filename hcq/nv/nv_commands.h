// Pure encoders for the NVIDIA commands an HCQ queue records: host semaphores (signal, wait), compute setup and
// launch by QMD address, cache invalidation and waits, and copy-engine copies and semaphores. Each command has a
// declared size in words (k...Words, copy_linear_words) and a writer, write_*(PushBuffer&, ...), that reserves exactly
// that many words in the writer, fills them and commits (the reserve/write/commit of Mesa's nv_push.h), so a device
// encodes straight into its pushbuffer ring; encode_*() returns the same words as a vector, for tests only (the device writes every command through write_*).
// Nothing here touches a device. Invalid input throws std::invalid_argument naming the operand and what was expected,
// before anything is reserved. Class arguments pick address widths and are checked: channel classes
// HOPPER_CHANNEL_GPFIFO_A / AMPERE_CHANNEL_GPFIFO_A, copy classes HOPPER_DMA_COPY_A / AMPERE_DMA_COPY_B, compute
// classes HOPPER_COMPUTE_A / AMPERE_COMPUTE_B / ADA_COMPUTE_A.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "hcq/nv/nv_classes.h"
#include "hcq/nv/pushbuffer.h"

namespace doorbell::nv {

// ---- Declared sizes, in words (headers and data) ----
inline constexpr size_t kSemaphoreWords = 6;  // host release or acquire: one INC header, five methods
// SEM_PAYLOAD_LO's word within a host semaphore (SEM_PAYLOAD_HI follows): what a bound queue patches in place.
inline constexpr size_t kSemaphorePayloadWord = 3;
inline constexpr size_t kNonStallInterruptWords = 2;
inline constexpr size_t kHostSysMembarWords = 5;
inline constexpr size_t kSetObjectWords = 2;
inline constexpr size_t kComputeLaunchWords = 3;
inline constexpr size_t kInvalidateShaderCachesWords = 2;
inline constexpr size_t kWaitForIdleWords = 1;
inline constexpr size_t kInvalidateSkedCachesWords = 1;
inline constexpr size_t kShaderMemoryWindowsWords = 6;
inline constexpr size_t kShaderLocalMemoryWords = 7;
inline constexpr size_t kCopySemaphoreWords = 7;
// A linear copy: 10 words per chunk of at most kMaxCopyChunk bytes (0 for 0 bytes).
size_t copy_linear_words(uint64_t bytes);

// ---- Host semaphores (subchannel 0; NVC86F_SEM_*) ----

// Writes the 64-bit `value` at `address` once all earlier work is idle (RELEASE_WFI); with a timestamp, the
// engine also writes the completion time at address + 8 (the Signal layout), so the address is 16-byte aligned;
// without, 8-byte aligned. SEM_ADDR_HI holds 25 bits on C86F (57-bit VAs) and 8 on C56F (40-bit).
void write_semaphore_release(PushBuffer& pb, uint32_t channel_class, uint64_t address, uint64_t value,
                             bool with_timestamp);
std::vector<uint32_t> encode_semaphore_release(uint32_t channel_class, uint64_t address, uint64_t value,
                                               bool with_timestamp);

// Stalls the channel until the 64-bit value at `address` (8-byte aligned) is >= `value` in circular compare
// (ACQ_CIRC_GEQ), yielding the timeslice to other TSGs while it waits (ACQUIRE_SWITCH_TSG).
void write_semaphore_acquire_geq(PushBuffer& pb, uint32_t channel_class, uint64_t address, uint64_t value);
std::vector<uint32_t> encode_semaphore_acquire_geq(uint32_t channel_class, uint64_t address, uint64_t value);

// NON_STALL_INTERRUPT: lets a host thread sleep on the channel's event instead of polling (tinygrad sends it after
// every signal).
void write_non_stall_interrupt(PushBuffer& pb);
std::vector<uint32_t> encode_non_stall_interrupt();

// MEM_OP_A..D with MEMBAR_TYPE SYS_MEMBAR, OPERATION MEMBAR: a system-scope memory barrier from the host unit (as
// UVM's membar_sys and nouveau's fence do).
void write_host_sys_membar(PushBuffer& pb);
std::vector<uint32_t> encode_host_sys_membar();

// ---- Compute (subchannel 1) ----

// SET_OBJECT: binds `class_id` to `subchannel` (compute on 1, copy on 4); ENGINE_ID is left 0.
void write_set_object(PushBuffer& pb, uint32_t subchannel, uint32_t class_id);
std::vector<uint32_t> encode_set_object(uint32_t subchannel, uint32_t class_id);

// Launches the QMD at `qmd_address` (256-byte aligned, below 2^40): SEND_PCAS_A = address >> 8, then
// SEND_SIGNALING_PCAS2_B = `action` as an immediate. Hopper, Ampere and Ada take the same methods; NVK sends
// PcasAction::kInvalidateCopySchedule on all of them, tinygrad kPrefetchSchedule on Ampere/Ada.
void write_compute_launch(PushBuffer& pb, uint64_t qmd_address, PcasAction action);
std::vector<uint32_t> encode_compute_launch(uint64_t qmd_address, PcasAction action);

// WAIT_FOR_IDLE (open-gpu-doc classes/compute/clcbc0.h:52) as an immediate 0: the engine finishes every grid it
// has started before it takes the next method. INVALIDATE_SHADER_CACHES_NO_WFI does not wait (its name says so), and
// grids launched by separate SEND_PCAS are not ordered otherwise; a memory barrier between unchained grids needs it.
void write_wait_for_idle(PushBuffer& pb);
std::vector<uint32_t> encode_wait_for_idle();

// INVALIDATE_SKED_CACHES (clcbc0.h:386) as an immediate 0: drops the QMDs the scheduler (SKED) cached, so a QMD written
// at a recycled address is read afresh. NVK sends it at the start of every command buffer
// (nvk_cmd_buffer_begin_compute).
void write_invalidate_sked_caches(PushBuffer& pb);
std::vector<uint32_t> encode_invalidate_sked_caches();

// INVALIDATE_SHADER_CACHES_NO_WFI with INSTRUCTION, GLOBAL_DATA and CONSTANT (= 0x1011): what tinygrad sends as its
// memory barrier so that the next kernel sees earlier kernels' and copies' writes through fresh L1/constant caches.
void write_invalidate_shader_caches(PushBuffer& pb);
std::vector<uint32_t> encode_invalidate_shader_caches();

// The windows in the generic address space where shared and local memory appear (17-bit upper halves, so below
// 2^49). tinygrad uses shared 0x729400000000 and local 0x729300000000.
void write_set_shader_memory_windows(PushBuffer& pb, uint64_t shared_window, uint64_t local_window);
std::vector<uint32_t> encode_set_shader_memory_windows(uint64_t shared_window, uint64_t local_window);

struct ShaderLocalMemory {
  uint64_t address = 0;          // backing store VA (SET_SHADER_LOCAL_MEMORY_A/B; 57 bits on CBC0, 49 on C6C0..C9C0)
  uint64_t size_per_tpc = 0;     // bytes per TPC (NON_THROTTLED_A/B; 40 bits); NVK keeps it a multiple of 0x8000
  uint32_t max_sm_count = 0xff;  // NON_THROTTLED_C MAX_SM_COUNT (9 bits); NVK and tinygrad write 0xff
};
// SET_SHADER_LOCAL_MEMORY_A/B then SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A/B/C.
void write_set_shader_local_memory(PushBuffer& pb, uint32_t compute_class, const ShaderLocalMemory& memory);
std::vector<uint32_t> encode_set_shader_local_memory(uint32_t compute_class, const ShaderLocalMemory& memory);

// ---- Copy engine (subchannel 4; NVC8B5_*) ----

// A linear copy of `bytes` from `src` to `dst` (virtual addresses): OFFSET_IN/OUT, LINE_LENGTH_IN, LINE_COUNT 1,
// then LAUNCH_DMA with DATA_TRANSFER_TYPE NON_PIPELINED, FLUSH_ENABLE, SRC/DST_MEMORY_LAYOUT PITCH, SRC/DST_TYPE
// VIRTUAL and MULTI_LINE_ENABLE off (= 0x186). Copies above kMaxCopyChunk bytes are split into chunks (tinygrad's
// 2^31). Zero bytes encode nothing.
inline constexpr uint64_t kMaxCopyChunk = uint64_t{1} << 31;
void write_copy_linear(PushBuffer& pb, uint32_t copy_class, uint64_t dst, uint64_t src, uint64_t bytes);
std::vector<uint32_t> encode_copy_linear(uint32_t copy_class, uint64_t dst, uint64_t src, uint64_t bytes);

// SET_SEMAPHORE_A/B/PAYLOAD/PAYLOAD_UPPER, then LAUNCH_DMA with no transfer, FLUSH_ENABLE (FLUSH_TYPE SYS),
// SEMAPHORE_PAYLOAD_SIZE TWO_WORD and SEMAPHORE_TYPE RELEASE_FOUR_WORD_SEMAPHORE (payload + timestamp at +8, 16-byte
// aligned) or RELEASE_ONE_WORD_SEMAPHORE (the 64-bit payload alone, 8-byte aligned).
void write_copy_semaphore_release(PushBuffer& pb, uint32_t copy_class, uint64_t address, uint64_t value,
                                  bool with_timestamp);
std::vector<uint32_t> encode_copy_semaphore_release(uint32_t copy_class, uint64_t address, uint64_t value,
                                                    bool with_timestamp);

}  // namespace doorbell::nv
