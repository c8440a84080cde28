// The copy class (clc8b5.h HOPPER_DMA_COPY_A; clc7b5.h AMPERE_DMA_COPY_B): single-line virtual copies and the
// semaphore release LAUNCH_DMA asks for.
#include <algorithm>
#include <cstring>

#include "mockgpu/nv/mock_gpu_channel.h"

namespace doorbell::mockgpu::nv::cp {

using namespace hw;

uint64_t ChannelExecutor::copy_address(uint32_t subchannel, uint32_t cls, uint32_t upper_method,
                                       uint32_t lower_method) {
  const Field f = cls == HOPPER_DMA_COPY_A ? NVC8B5_UPPER_ADDRESS : NVC7B5_UPPER_ADDRESS;
  const uint32_t upper = ch_.reg(subchannel, upper_method);
  if (!fits(upper, f)) {
    fail(method_name(cls, upper_method) + " = " + hex(upper) + " has bits above " + f.name + " " +
         std::to_string(f.hi) + ":" + std::to_string(f.lo));
  }
  return uint64_t{upper} << 32 | ch_.reg(subchannel, lower_method);
}

void ChannelExecutor::require_launch_field(uint32_t data, Field f, uint32_t expected, const char* meaning) {
  if (get(data, f) != expected) {
    fail(std::string(f.name) + " is " + std::to_string(get(data, f)) + "; the mock supports only " + meaning);
  }
}

void ChannelExecutor::copy_method(uint32_t subchannel, uint32_t cls, uint32_t method, uint32_t data) {
  if (method != NVC8B5_LAUNCH_DMA) return;  // everything else is recorded state
  const uint32_t transfer = get(data, NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE);
  if (transfer == DATA_TRANSFER_TYPE_PIPELINED || transfer == DATA_TRANSFER_TYPE_NON_PIPELINED) {
    require_launch_field(data, NVC8B5_LAUNCH_DMA_MULTI_LINE_ENABLE, 0, "single-line copies (FALSE)");
    require_launch_field(data, NVC8B5_LAUNCH_DMA_REMAP_ENABLE, 0, "plain copies (FALSE)");
    require_launch_field(data, NVC8B5_LAUNCH_DMA_SRC_TYPE, 0, "VIRTUAL addresses (0)");
    require_launch_field(data, NVC8B5_LAUNCH_DMA_DST_TYPE, 0, "VIRTUAL addresses (0)");
    require_launch_field(data, NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT, 1, "PITCH layout (1)");
    require_launch_field(data, NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT, 1, "PITCH layout (1)");
    require_launch_field(data, NVC8B5_LAUNCH_DMA_MEMORY_SCRUB_ENABLE, 0, "copies (FALSE)");
    if (get(data, NVC8B5_LAUNCH_DMA_COPY_TYPE) == 1 || get(data, NVC8B5_LAUNCH_DMA_COPY_TYPE) == 3) {
      fail("NVC8B5_LAUNCH_DMA_COPY_TYPE " + std::to_string(get(data, NVC8B5_LAUNCH_DMA_COPY_TYPE)) +
           " is not emulated; expected DEFAULT (0) or NONPROT2NONPROT (2)");
    }
    const uint64_t src = copy_address(subchannel, cls, NVC8B5_OFFSET_IN_UPPER, NVC8B5_OFFSET_IN_LOWER);
    const uint64_t dst = copy_address(subchannel, cls, NVC8B5_OFFSET_OUT_UPPER, NVC8B5_OFFSET_OUT_LOWER);
    copy_bytes(dst, src, ch_.reg(subchannel, NVC8B5_LINE_LENGTH_IN));
    gpu_.stats_.copies.fetch_add(1, std::memory_order_relaxed);
  } else if (transfer != DATA_TRANSFER_TYPE_NONE) {
    fail("NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE " + std::to_string(transfer) +
         " is not a transfer type; expected NONE, PIPELINED or NON_PIPELINED");
  }
  const uint32_t semaphore = get(data, NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE);
  if (semaphore == SEMAPHORE_TYPE_NONE) return;
  if (semaphore != SEMAPHORE_TYPE_RELEASE_ONE_WORD_SEMAPHORE &&
      semaphore != SEMAPHORE_TYPE_RELEASE_FOUR_WORD_SEMAPHORE) {
    fail("NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE " + std::to_string(semaphore) +
         " (RELEASE_CONDITIONAL_INTR_SEMAPHORE) is not emulated; expected NONE, ONE_WORD or FOUR_WORD");
  }
  require_launch_field(data, NVC8B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_ENABLE, 0, "plain releases (FALSE)");
  const uint64_t va = copy_address(subchannel, cls, NVC8B5_SET_SEMAPHORE_A, NVC8B5_SET_SEMAPHORE_B);
  const bool payload64 = get(data, NVC8B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE) != 0;
  const uint64_t payload = (payload64 ? uint64_t{ch_.reg(subchannel, NVC8B5_SET_SEMAPHORE_PAYLOAD_UPPER)} << 32 : 0) |
                           ch_.reg(subchannel, NVC8B5_SET_SEMAPHORE_PAYLOAD);
  release_semaphore(memory_, "copy engine semaphore", va, payload, payload64,
                    semaphore == SEMAPHORE_TYPE_RELEASE_FOUR_WORD_SEMAPHORE ? std::optional(gpu_.ptimer_.now_ns()) : std::nullopt);
  gpu_.stats_.semaphore_releases.fetch_add(1, std::memory_order_relaxed);
}

void ChannelExecutor::copy_bytes(uint64_t dst, uint64_t src, uint64_t bytes) {
  if (bytes == 0) return;
  uint8_t* to = nullptr;
  const uint8_t* from = nullptr;
  try {
    from = memory_.translate(src, bytes);
    to = memory_.translate(dst, bytes);
  } catch (const std::exception&) {
    from = nullptr;  // a range spans mappings (or is unmapped): copy page by page, naming the failing page
  }
  if (from != nullptr) {
    std::memmove(to, from, bytes);
    return;
  }
  for (uint64_t done = 0; done < bytes;) {
    const uint64_t s = src + done, d = dst + done;
    const uint64_t chunk = std::min({bytes - done, 0x1000 - (s & 0xfff), 0x1000 - (d & 0xfff)});
    const uint8_t* f = translate(memory_, s, chunk, "copy source");
    std::memmove(translate(memory_, d, chunk, "copy destination"), f, chunk);
    done += chunk;
  }
}

}  // namespace doorbell::mockgpu::nv::cp
