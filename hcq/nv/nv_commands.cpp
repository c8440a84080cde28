#include "hcq/nv/nv_commands.h"

#include <algorithm>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include "hcq/nv/bit_field.h"
#include "hcq/nv/pushbuffer.h"

namespace doorbell::nv {
namespace {

[[noreturn]] void unknown_class(const char* role, uint32_t class_id, const char* expected) {
  throw std::invalid_argument(std::string(role) + " class " + hex(class_id) + " is not supported; expected " +
                              expected);
}

// SEM_ADDR_HI's field: the channel class decides how many address bits a host semaphore has.
const BitField& sem_addr_hi_field(uint32_t channel_class) {
  switch (channel_class) {
    case HOPPER_CHANNEL_GPFIFO_A: return NVC86F_SEM_ADDR_HI_OFFSET;
    case AMPERE_CHANNEL_GPFIFO_A: return NVC56F_SEM_ADDR_HI_OFFSET;
  }
  unknown_class("channel", channel_class, "HOPPER_CHANNEL_GPFIFO_A (0xc86f) or AMPERE_CHANNEL_GPFIFO_A (0xc56f)");
}

struct CopyUpperFields {
  const BitField& semaphore;
  const BitField& offset_in;
  const BitField& offset_out;
};

CopyUpperFields copy_upper_fields(uint32_t copy_class) {
  switch (copy_class) {
    case HOPPER_DMA_COPY_A:
      return {NVC8B5_SET_SEMAPHORE_A_UPPER, NVC8B5_OFFSET_IN_UPPER_UPPER, NVC8B5_OFFSET_OUT_UPPER_UPPER};
    case AMPERE_DMA_COPY_B:
      return {NVC7B5_SET_SEMAPHORE_A_UPPER, NVC7B5_OFFSET_IN_UPPER_UPPER, NVC7B5_OFFSET_OUT_UPPER_UPPER};
  }
  unknown_class("copy", copy_class, "HOPPER_DMA_COPY_A (0xc8b5) or AMPERE_DMA_COPY_B (0xc7b5)");
}

const BitField& local_memory_upper_field(uint32_t compute_class) {
  switch (compute_class) {
    case HOPPER_COMPUTE_A: return NVCBC0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER;
    case AMPERE_COMPUTE_B:
    case ADA_COMPUTE_A: return NVC6C0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER;
  }
  unknown_class("compute", compute_class,
                "HOPPER_COMPUTE_A (0xcbc0), AMPERE_COMPUTE_B (0xc7c0) or ADA_COMPUTE_A (0xc9c0)");
}

uint32_t lo32(uint64_t value) { return static_cast<uint32_t>(value); }

// One INC header and its data, inside the caller's open reservation.
void inc_method(PushBuffer& pb, uint32_t subchannel, uint32_t method, std::initializer_list<uint32_t> data) {
  pb.header(SecOp::kIncMethod, subchannel, method, static_cast<uint32_t>(data.size()));
  for (uint32_t word : data) pb.write(word);
}

// SEM_ADDR_LO, SEM_ADDR_HI, SEM_PAYLOAD_LO, SEM_PAYLOAD_HI, SEM_EXECUTE: five consecutive methods, one header.
void host_semaphore(PushBuffer& pb, uint32_t channel_class, uint64_t address, uint64_t payload, uint32_t execute) {
  const BitField& hi = sem_addr_hi_field(channel_class);
  const uint32_t addr_hi = field_bits(hi, address >> 32);  // checked before anything is reserved
  pb.reserve(kSemaphoreWords);
  inc_method(pb, kSubchannelHost, NVC86F_SEM_ADDR_LO,
             {field_bits(NVC86F_SEM_ADDR_LO_OFFSET, lo32(address) >> 2), addr_hi, lo32(payload), lo32(payload >> 32),
              execute});
  pb.commit();
}

// The words one writer produces, as a vector.
template <class Write>
std::vector<uint32_t> encoded(Write&& write) {
  PushBuffer pb;
  write(pb);
  return pb.take();
}

}  // namespace

size_t copy_linear_words(uint64_t bytes) { return 10 * ((bytes + kMaxCopyChunk - 1) / kMaxCopyChunk); }

void write_semaphore_release(PushBuffer& pb, uint32_t channel_class, uint64_t address, uint64_t value,
                             bool with_timestamp) {
  require_aligned("semaphore release address", address, with_timestamp ? 16 : 8);
  const uint32_t execute =
      field_bits(NVC86F_SEM_EXECUTE_OPERATION, NVC86F_SEM_EXECUTE_OPERATION_RELEASE) |
      field_bits(NVC86F_SEM_EXECUTE_RELEASE_WFI, NVC56F_SEM_EXECUTE_RELEASE_WFI_EN) |
      field_bits(NVC86F_SEM_EXECUTE_PAYLOAD_SIZE, NVC56F_SEM_EXECUTE_PAYLOAD_SIZE_64BIT) |
      field_bits(NVC56F_SEM_EXECUTE_RELEASE_TIMESTAMP,
                 with_timestamp ? NVC56F_SEM_EXECUTE_RELEASE_TIMESTAMP_EN : NVC56F_SEM_EXECUTE_RELEASE_TIMESTAMP_DIS);
  host_semaphore(pb, channel_class, address, value, execute);
}

std::vector<uint32_t> encode_semaphore_release(uint32_t channel_class, uint64_t address, uint64_t value,
                                               bool with_timestamp) {
  return encoded([&](PushBuffer& pb) { write_semaphore_release(pb, channel_class, address, value, with_timestamp); });
}

void write_semaphore_acquire_geq(PushBuffer& pb, uint32_t channel_class, uint64_t address, uint64_t value) {
  require_aligned("semaphore acquire address", address, 8);
  const uint32_t execute = field_bits(NVC86F_SEM_EXECUTE_OPERATION, NVC56F_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ) |
                           field_bits(NVC56F_SEM_EXECUTE_ACQUIRE_SWITCH_TSG, NVC56F_SEM_EXECUTE_ACQUIRE_SWITCH_TSG_EN) |
                           field_bits(NVC86F_SEM_EXECUTE_PAYLOAD_SIZE, NVC56F_SEM_EXECUTE_PAYLOAD_SIZE_64BIT);
  host_semaphore(pb, channel_class, address, value, execute);
}

std::vector<uint32_t> encode_semaphore_acquire_geq(uint32_t channel_class, uint64_t address, uint64_t value) {
  return encoded([&](PushBuffer& pb) { write_semaphore_acquire_geq(pb, channel_class, address, value); });
}

void write_non_stall_interrupt(PushBuffer& pb) {
  pb.reserve(kNonStallInterruptWords);
  inc_method(pb, kSubchannelHost, NVC56F_NON_STALL_INTERRUPT, {0});
  pb.commit();
}

std::vector<uint32_t> encode_non_stall_interrupt() { return encoded([](PushBuffer& pb) { write_non_stall_interrupt(pb); }); }

void write_host_sys_membar(PushBuffer& pb) {
  pb.reserve(kHostSysMembarWords);
  inc_method(pb, kSubchannelHost, NVC86F_MEM_OP_A,
             {0, 0, field_bits(NVC86F_MEM_OP_C_MEMBAR_TYPE, NVC86F_MEM_OP_C_MEMBAR_TYPE_SYS_MEMBAR),
              field_bits(NVC86F_MEM_OP_D_OPERATION, NVC86F_MEM_OP_D_OPERATION_MEMBAR)});
  pb.commit();
}

std::vector<uint32_t> encode_host_sys_membar() { return encoded([](PushBuffer& pb) { write_host_sys_membar(pb); }); }

void write_set_object(PushBuffer& pb, uint32_t subchannel, uint32_t class_id) {
  const uint32_t data = field_bits(NVCBC0_SET_OBJECT_CLASS_ID, class_id);
  method_header(SecOp::kIncMethod, subchannel, NVCBC0_SET_OBJECT, 1);  // checks the subchannel before reserving
  pb.reserve(kSetObjectWords);
  inc_method(pb, subchannel, NVCBC0_SET_OBJECT, {data});
  pb.commit();
}

std::vector<uint32_t> encode_set_object(uint32_t subchannel, uint32_t class_id) {
  return encoded([&](PushBuffer& pb) { write_set_object(pb, subchannel, class_id); });
}

void write_compute_launch(PushBuffer& pb, uint64_t qmd_address, PcasAction action) {
  require_aligned("QMD address", qmd_address, 256);
  const uint32_t shifted = field_bits(NVCBC0_SEND_PCAS_A_QMD_ADDRESS_SHIFTED8, qmd_address >> 8);
  const uint32_t pcas_action = field_bits(NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION, static_cast<uint32_t>(action));
  pb.reserve(kComputeLaunchWords);
  inc_method(pb, kSubchannelCompute, NVCBC0_SEND_PCAS_A, {shifted});
  pb.header(SecOp::kImmdDataMethod, kSubchannelCompute, NVCBC0_SEND_SIGNALING_PCAS2_B, pcas_action);
  pb.commit();
}

std::vector<uint32_t> encode_compute_launch(uint64_t qmd_address, PcasAction action) {
  return encoded([&](PushBuffer& pb) { write_compute_launch(pb, qmd_address, action); });
}

void write_wait_for_idle(PushBuffer& pb) {
  pb.reserve(kWaitForIdleWords);
  pb.header(SecOp::kImmdDataMethod, kSubchannelCompute, NVCBC0_WAIT_FOR_IDLE, 0);
  pb.commit();
}

std::vector<uint32_t> encode_wait_for_idle() { return encoded([](PushBuffer& pb) { write_wait_for_idle(pb); }); }

void write_invalidate_sked_caches(PushBuffer& pb) {
  pb.reserve(kInvalidateSkedCachesWords);
  pb.header(SecOp::kImmdDataMethod, kSubchannelCompute, NVCBC0_INVALIDATE_SKED_CACHES, 0);
  pb.commit();
}

std::vector<uint32_t> encode_invalidate_sked_caches() {
  return encoded([](PushBuffer& pb) { write_invalidate_sked_caches(pb); });
}

void write_invalidate_shader_caches(PushBuffer& pb) {
  pb.reserve(kInvalidateShaderCachesWords);
  inc_method(pb, kSubchannelCompute, NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI,
             {field_bits(NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_INSTRUCTION, 1) |
              field_bits(NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_GLOBAL_DATA, 1) |
              field_bits(NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_CONSTANT, 1)});
  pb.commit();
}

std::vector<uint32_t> encode_invalidate_shader_caches() {
  return encoded([](PushBuffer& pb) { write_invalidate_shader_caches(pb); });
}

void write_set_shader_memory_windows(PushBuffer& pb, uint64_t shared_window, uint64_t local_window) {
  const uint32_t shared_upper = field_bits(NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER, shared_window >> 32);
  const uint32_t local_upper = field_bits(NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER, local_window >> 32);
  pb.reserve(kShaderMemoryWindowsWords);
  inc_method(pb, kSubchannelCompute, NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_A, {shared_upper, lo32(shared_window)});
  inc_method(pb, kSubchannelCompute, NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_A, {local_upper, lo32(local_window)});
  pb.commit();
}

std::vector<uint32_t> encode_set_shader_memory_windows(uint64_t shared_window, uint64_t local_window) {
  return encoded([&](PushBuffer& pb) { write_set_shader_memory_windows(pb, shared_window, local_window); });
}

void write_set_shader_local_memory(PushBuffer& pb, uint32_t compute_class, const ShaderLocalMemory& memory) {
  const BitField& upper = local_memory_upper_field(compute_class);
  const uint32_t address_upper = field_bits(upper, memory.address >> 32);
  const uint32_t size_upper = field_bits(NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A_SIZE_UPPER, memory.size_per_tpc >> 32);
  const uint32_t max_sms = field_bits(NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C_MAX_SM_COUNT, memory.max_sm_count);
  pb.reserve(kShaderLocalMemoryWords);
  inc_method(pb, kSubchannelCompute, NVCBC0_SET_SHADER_LOCAL_MEMORY_A, {address_upper, lo32(memory.address)});
  inc_method(pb, kSubchannelCompute, NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A,
             {size_upper, lo32(memory.size_per_tpc), max_sms});
  pb.commit();
}

std::vector<uint32_t> encode_set_shader_local_memory(uint32_t compute_class, const ShaderLocalMemory& memory) {
  return encoded([&](PushBuffer& pb) { write_set_shader_local_memory(pb, compute_class, memory); });
}

void write_copy_linear(PushBuffer& pb, uint32_t copy_class, uint64_t dst, uint64_t src, uint64_t bytes) {
  const CopyUpperFields upper = copy_upper_fields(copy_class);
  if (bytes > 0) {
    // Check the last byte of each range up front, so an oversized copy fails before any chunk is encoded.
    field_bits(upper.offset_in, (src + bytes - 1) >> 32);
    field_bits(upper.offset_out, (dst + bytes - 1) >> 32);
    if (src + bytes < src || dst + bytes < dst) {
      throw std::invalid_argument("copy of " + hex(bytes) + " bytes from " + hex(src) + " to " + hex(dst) +
                                  " wraps around the address space");
    }
  }
  const uint32_t launch =
      field_bits(NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE, NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NON_PIPELINED) |
      field_bits(NVC8B5_LAUNCH_DMA_FLUSH_ENABLE, 1) |
      field_bits(NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT, NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT_PITCH) |
      field_bits(NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT, NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH) |
      field_bits(NVC8B5_LAUNCH_DMA_MULTI_LINE_ENABLE, 0) |
      field_bits(NVC8B5_LAUNCH_DMA_SRC_TYPE, NVC8B5_LAUNCH_DMA_SRC_TYPE_VIRTUAL) |
      field_bits(NVC8B5_LAUNCH_DMA_DST_TYPE, NVC8B5_LAUNCH_DMA_DST_TYPE_VIRTUAL);
  if (bytes == 0) return;
  pb.reserve(copy_linear_words(bytes));
  for (uint64_t done = 0; done < bytes;) {
    const uint64_t chunk = std::min(bytes - done, kMaxCopyChunk);
    const uint64_t from = src + done;
    const uint64_t to = dst + done;
    inc_method(pb, kSubchannelCopy, NVC8B5_OFFSET_IN_UPPER,
               {field_bits(upper.offset_in, from >> 32), lo32(from), field_bits(upper.offset_out, to >> 32), lo32(to)});
    inc_method(pb, kSubchannelCopy, NVC8B5_LINE_LENGTH_IN, {lo32(chunk), 1});
    inc_method(pb, kSubchannelCopy, NVC8B5_LAUNCH_DMA, {launch});
    done += chunk;
  }
  pb.commit();
}

std::vector<uint32_t> encode_copy_linear(uint32_t copy_class, uint64_t dst, uint64_t src, uint64_t bytes) {
  return encoded([&](PushBuffer& pb) { write_copy_linear(pb, copy_class, dst, src, bytes); });
}

void write_copy_semaphore_release(PushBuffer& pb, uint32_t copy_class, uint64_t address, uint64_t value,
                                  bool with_timestamp) {
  const CopyUpperFields upper = copy_upper_fields(copy_class);
  require_aligned("copy semaphore address", address, with_timestamp ? 16 : 8);
  const uint32_t address_upper = field_bits(upper.semaphore, address >> 32);
  const uint32_t launch =
      field_bits(NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE, NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NONE) |
      field_bits(NVC8B5_LAUNCH_DMA_FLUSH_ENABLE, 1) |
      field_bits(NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE, with_timestamp
                                                       ? NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_FOUR_WORD_SEMAPHORE
                                                       : NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_ONE_WORD_SEMAPHORE) |
      field_bits(NVC8B5_LAUNCH_DMA_FLUSH_TYPE, NVC8B5_LAUNCH_DMA_FLUSH_TYPE_SYS) |
      field_bits(NVC8B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE, NVC8B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE_TWO_WORD);
  pb.reserve(kCopySemaphoreWords);
  inc_method(pb, kSubchannelCopy, NVC8B5_SET_SEMAPHORE_A, {address_upper, lo32(address), lo32(value), lo32(value >> 32)});
  inc_method(pb, kSubchannelCopy, NVC8B5_LAUNCH_DMA, {launch});
  pb.commit();
}

std::vector<uint32_t> encode_copy_semaphore_release(uint32_t copy_class, uint64_t address, uint64_t value,
                                                    bool with_timestamp) {
  return encoded([&](PushBuffer& pb) { write_copy_semaphore_release(pb, copy_class, address, value, with_timestamp); });
}

}  // namespace doorbell::nv
