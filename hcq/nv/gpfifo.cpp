#include "hcq/nv/gpfifo.h"

#include <stdexcept>
#include <string>

#include "hcq/nv/bit_field.h"
#include "hcq/nv/nv_classes.h"

namespace doorbell::nv {

uint64_t encode_gpfifo_entry(const GpfifoEntry& entry) {
  require_aligned("GPFIFO entry pushbuffer address", entry.pushbuffer_address, 4);
  if (entry.length_words == 0) {
    throw std::invalid_argument("GPFIFO entry: length 0 would make a control entry; expected at least 1 dword");
  }
  // GET holds VA bits 31:2 in place (so the low word is the address itself), GET_HI VA bits 39:32; Hopper reaches
  // higher pushbuffers only through SET_PB_SEGMENT_EXTENDED_BASE control entries, which are not encoded here.
  const uint64_t va = entry.pushbuffer_address;
  const uint32_t entry0 =
      field_bits(NVC86F_GP_ENTRY0_GET, (va & 0xffffffffu) >> 2) | field_bits(NVC86F_GP_ENTRY0_FETCH, 0);
  const uint32_t entry1 =
      field_bits(NVC86F_GP_ENTRY1_GET_HI, va >> 32) |
      field_bits(NVC86F_GP_ENTRY1_LEVEL,
                 entry.subroutine ? NVC86F_GP_ENTRY1_LEVEL_SUBROUTINE : NVC86F_GP_ENTRY1_LEVEL_MAIN) |
      field_bits(NVC86F_GP_ENTRY1_LENGTH, entry.length_words) |
      field_bits(NVC86F_GP_ENTRY1_SYNC, entry.sync_wait ? NVC86F_GP_ENTRY1_SYNC_WAIT : NVC86F_GP_ENTRY1_SYNC_PROCEED);
  return uint64_t{entry1} << 32 | entry0;
}

GpfifoEntry decode_gpfifo_entry(uint64_t word) {
  const auto entry0 = static_cast<uint32_t>(word);
  const auto entry1 = static_cast<uint32_t>(word >> 32);
  GpfifoEntry entry;
  entry.length_words = field_value(entry1, NVC86F_GP_ENTRY1_LENGTH);
  if (entry.length_words == 0) {
    throw std::invalid_argument("GPFIFO entry " + hex(word) +
                                ": length 0 marks a control entry (NOP, CRC or PB segment base), which is not decoded");
  }
  entry.pushbuffer_address = uint64_t{field_value(entry1, NVC86F_GP_ENTRY1_GET_HI)} << 32 |
                             uint64_t{field_value(entry0, NVC86F_GP_ENTRY0_GET)} << 2;
  entry.subroutine = field_value(entry1, NVC86F_GP_ENTRY1_LEVEL) == NVC86F_GP_ENTRY1_LEVEL_SUBROUTINE;
  entry.sync_wait = field_value(entry1, NVC86F_GP_ENTRY1_SYNC) == NVC86F_GP_ENTRY1_SYNC_WAIT;
  return entry;
}

std::array<SubmitWrite, kSubmitSteps> gpfifo_submit_writes(uint32_t put_index, uint32_t ring_entries,
                                                           uint32_t work_submit_token) {
  if (put_index >= ring_entries) {
    throw std::invalid_argument("GPFIFO submit: put index " + std::to_string(put_index) + " is outside a ring of " +
                                std::to_string(ring_entries) + " entries; expected it wrapped below the ring size");
  }
  return {SubmitWrite{SubmitRegion::kFence, 0, 0}, SubmitWrite{SubmitRegion::kUserd, kUserdGpPutOffset, put_index},
          SubmitWrite{SubmitRegion::kFence, 0, 0},
          SubmitWrite{SubmitRegion::kUsermode, NVC361_NOTIFY_CHANNEL_PENDING, work_submit_token}};
}

}  // namespace doorbell::nv
