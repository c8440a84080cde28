// The GPFIFO and pushbuffer front end (GP entries, method headers, subchannel binding) and the host unit
// (clc86f.h / clc56f.h: semaphores, SET_OBJECT, membars), plus the memory helpers every engine uses.
#include "mockgpu/nv/mock_gpu_channel.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>

namespace doorbell::mockgpu::nv::cp {

using namespace hw;

namespace {
constexpr uint32_t kEntriesPerTurn = 64;  // GP entries one channel runs before the next gets a turn
}  // namespace

[[noreturn]] void fail(const std::string& message) { throw std::runtime_error(message); }

uint8_t* translate(GpuMemory& memory, uint64_t va, size_t bytes, const std::string& what) {
  try {
    return memory.translate(va, bytes);
  } catch (const std::exception& e) {
    fail(what + " at " + hex(va) + " (" + std::to_string(bytes) + " bytes) is not mapped: " + e.what());
  }
}

void require_aligned(const std::string& what, uint64_t va, uint64_t alignment) {
  if (va % alignment != 0) {
    fail(what + " address " + hex(va) + " is not " + std::to_string(alignment) + "-byte aligned");
  }
}

uint32_t load32(const uint8_t* p) {
  return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(const_cast<uint8_t*>(p)))
      .load(std::memory_order_acquire);
}
uint64_t load64(const uint8_t* p) {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(const_cast<uint8_t*>(p)))
      .load(std::memory_order_acquire);
}
void store32(uint8_t* p, uint32_t v) {
  std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(p)).store(v, std::memory_order_release);
}
void store64(uint8_t* p, uint64_t v) {
  std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(p)).store(v, std::memory_order_release);
}

// A semaphore release: the 32- or 64-bit payload at +0 and, for the four-word structure, the timestamp at +8. The
// timestamp is written first so that a waiter that sees the payload also sees its time.
void release_semaphore(GpuMemory& memory, const std::string& what, uint64_t va, uint64_t payload, bool payload64,
                       std::optional<uint64_t> timestamp) {
  const uint64_t bytes = timestamp ? 16 : payload64 ? 8 : 4;
  require_aligned(what, va, bytes);
  uint8_t* p = translate(memory, va, bytes, what);
  if (timestamp) store64(p + 8, *timestamp);
  if (payload64) {
    store64(p, payload);
  } else {
    store32(p, static_cast<uint32_t>(payload));
  }
}

// ---- GPFIFO and pushbuffer ----

ChannelExecutor::Result ChannelExecutor::run() {
  Result result;
  if (ch_.acquire.pending) {
    if (!acquire_passed()) return {false, true};
    ch_.acquire.pending = false;
    gpu_.stats_.semaphore_acquires.fetch_add(1, std::memory_order_relaxed);
    result.progressed = true;
  }
  for (uint32_t turn = 0; turn < kEntriesPerTurn; ++turn) {
    if (!ch_.in_segment && !fetch_entry()) break;
    result.progressed = true;
    if (run_segment()) {
      wait_for_idle();  // the host unit stalls on an acquire; the engine finishes the grid it has
      return {true, true};
    }
    ch_.in_segment = false;
    ch_.gp_get = (ch_.gp_get + 1) % ch_.info.gpfifo_entries;
    store32(ch_.info.userd + kUserdGpGet, ch_.gp_get);
  }
  wait_for_idle();  // the grid deferred behind a next one runs before the channel's turn ends
  return result;
}

// Starts the next GP entry if GPPut is ahead of GPGet; false when the ring is empty.
bool ChannelExecutor::fetch_entry() {
  const uint32_t entries = ch_.info.gpfifo_entries;
  const uint32_t put = load32(ch_.info.userd + kUserdGpPut);
  if (put >= entries) {
    fail("USERD GPPut is " + std::to_string(put) + ", outside the ring of " + std::to_string(entries) +
         " GP entries; expected an index below the ring size");
  }
  if (put == ch_.gp_get) return false;
  const uint64_t entry_va = ch_.info.gpfifo_va + uint64_t{NVC86F_GP_ENTRY__SIZE} * ch_.gp_get;
  uint64_t word = 0;
  std::memcpy(&word, translate(memory_, entry_va, 8, "GP entry " + std::to_string(ch_.gp_get)), 8);
  const GpEntry entry = decode_gp_entry(word);
  const std::string where = "GP entry " + std::to_string(ch_.gp_get) + " at " + hex(entry_va) + " (" + hex(word) + ")";
  if (entry.length_words == 0) {
    fail(where + " is a control entry (NVC86F_GP_ENTRY1_LENGTH 0, OPCODE " + std::to_string(entry.opcode) +
         "); the mock runs pushbuffer entries only, expected LENGTH >= 1");
  }
  if (entry.fetch_conditional) {
    fail(where + " has NVC86F_GP_ENTRY0_FETCH CONDITIONAL, which the mock does not emulate; expected UNCONDITIONAL");
  }
  gpu_.stats_.gpfifo_entries.fetch_add(1, std::memory_order_relaxed);
  ch_.in_segment = true;
  ch_.segment_entry = ch_.gp_get;
  ch_.pb_va = entry.pushbuffer_va;
  ch_.pb_length = entry.length_words;
  ch_.pb_pos = 0;
  ch_.hdr_remaining = 0;
  return true;
}

// Runs the current segment to its end (false) or to an acquire that has not passed yet (true).
bool ChannelExecutor::run_segment() {
  const auto* words = reinterpret_cast<const uint32_t*>(translate(
      memory_, ch_.pb_va, size_t{ch_.pb_length} * 4, "pushbuffer of GP entry " + std::to_string(ch_.segment_entry)));
  while (true) {
    if (ch_.hdr_remaining == 0) {
      if (ch_.pb_pos >= ch_.pb_length) return false;
      const uint64_t word_va = ch_.pb_va + uint64_t{ch_.pb_pos} * 4;
      const uint32_t word = words[ch_.pb_pos++];
      if (word == 0) continue;  // SEC_OP GRP0_USE_TERT with INC and count 0: NVC56F_DMA_NOP
      const MethodHeader h = decode_method_header(word);
      switch (h.sec_op) {
        case NVC56F_DMA_SEC_OP_IMMD_DATA_METHOD:
          if (execute(h.subchannel, h.method, h.count, word_va)) return true;
          continue;
        case NVC56F_DMA_SEC_OP_INC_METHOD:
        case NVC56F_DMA_SEC_OP_NON_INC_METHOD:
        case NVC56F_DMA_SEC_OP_ONE_INC:
          ch_.hdr_remaining = h.count;
          ch_.hdr_index = 0;
          ch_.hdr_method = h.method;
          ch_.hdr_subchannel = h.subchannel;
          ch_.hdr_sec_op = h.sec_op;
          ch_.hdr_va = word_va;
          continue;
        default:
          fail("pushbuffer word " + hex(word) + " at " + hex(word_va) + " has NVC56F_DMA_SEC_OP " +
               std::to_string(h.sec_op) +
               "; expected INC_METHOD (1), NON_INC_METHOD (3), IMMD_DATA_METHOD (4) or ONE_INC (5)");
      }
    }
    if (ch_.pb_pos >= ch_.pb_length) {
      fail("method header at " + hex(ch_.hdr_va) + " announces " + std::to_string(ch_.hdr_index + ch_.hdr_remaining) +
           " data words but GP entry " + std::to_string(ch_.segment_entry) + " (" + std::to_string(ch_.pb_length) +
           " words at " + hex(ch_.pb_va) + ") ends after " + std::to_string(ch_.hdr_index));
    }
    const uint32_t data = words[ch_.pb_pos++];
    uint32_t method = ch_.hdr_method;
    if (ch_.hdr_sec_op == NVC56F_DMA_SEC_OP_INC_METHOD) method += 4 * ch_.hdr_index;
    if (ch_.hdr_sec_op == NVC56F_DMA_SEC_OP_ONE_INC && ch_.hdr_index > 0) method += 4;
    ++ch_.hdr_index;
    --ch_.hdr_remaining;
    if (execute(ch_.hdr_subchannel, method, data, ch_.hdr_va)) return true;
  }
}

// One method with its data word; true when it is an acquire that has not passed.
bool ChannelExecutor::execute(uint32_t subchannel, uint32_t method, uint32_t data, uint64_t header_va) {
  gpu_.stats_.methods.fetch_add(1, std::memory_order_relaxed);
  const uint32_t bound = ch_.bound[subchannel];
  try {
    if (method >= kMethodSlots * 4) fail("method offset out of range");
    if (method < kHostMethodEnd) return host_method(subchannel, method, data);
    if (bound == 0) {
      fail("subchannel " + std::to_string(subchannel) + " has no class bound; expected SET_OBJECT on it first");
    }
    const ClassKind kind = class_kind(bound);
    if (kind == ClassKind::kHost || !implements(kind, method)) {
      const std::string name = method_name(bound, method);
      fail(name.empty()
               ? "method " + hex(method) + " is not a method of " + class_name(bound)
               : "method " + name + " (" + hex(method) + ") of " + class_name(bound) + " is not emulated by the mock");
    }
    ch_.regs[subchannel * kMethodSlots + method / 4] = data;
    if (kind == ClassKind::kCompute) compute_method(subchannel, bound, method, data);
    if (kind == ClassKind::kCopy) copy_method(subchannel, bound, method, data);
    return false;
  } catch (const std::exception& e) {
    const bool host = method < kHostMethodEnd;
    std::string name = method_name(host ? ch_.info.hclass : bound, method);
    if (name.empty()) name = "method " + hex(method);
    const std::string engine = host         ? "host " + class_name(ch_.info.hclass)
                               : bound == 0 ? std::string("unbound")
                                            : class_name(bound);
    const std::string message = name + " = " + hex(data) + " on subchannel " + std::to_string(subchannel) + " (" +
                                engine + "), header at pushbuffer address " + hex(header_va) + ": " + e.what();
    if (const auto* mmu = dynamic_cast<const SmMmuFault*>(&e)) throw SmMmuFault(message, mmu->fault);
    fail(message);
  }
}

// ---- Host unit (clc86f.h / clc56f.h) ----

bool ChannelExecutor::host_method(uint32_t subchannel, uint32_t method, uint32_t data) {
  ch_.host_regs[method / 4] = data;
  switch (method) {
    case NVC86F_SET_OBJECT: set_object(subchannel, data); return false;
    case NVC56F_NOP:
    case NVC56F_FB_FLUSH:
    case NVC86F_MEM_OP_A:
    case NVC86F_MEM_OP_B:
    case NVC86F_MEM_OP_C:
    case NVC86F_MEM_OP_D:  // membar / TLB / L2 operations: memory is coherent and translation is immediate
    case NVC56F_YIELD: return false;
    case NVC86F_WFI: wait_for_idle(); return false;
    case NVC56F_NON_STALL_INTERRUPT:
      gpu_.stats_.non_stall_interrupts.fetch_add(1, std::memory_order_relaxed);
      return false;
    case NVC56F_SET_REFERENCE: store32(ch_.info.userd + kUserdReference, data); return false;
    case NVC86F_SEM_ADDR_LO:
      if (data & 3) {
        fail("address bits 1:0 are set; NVC86F_SEM_ADDR_LO_OFFSET is 31:2, so semaphores are 4-byte aligned");
      }
      return false;
    case NVC86F_SEM_ADDR_HI: {
      const Field f =
          ch_.info.hclass == AMPERE_CHANNEL_GPFIFO_A ? NVC56F_SEM_ADDR_HI_OFFSET : NVC86F_SEM_ADDR_HI_OFFSET;
      if (!fits(data, f)) {
        fail(std::string("bits above ") + f.name + " " + std::to_string(f.hi) + ":" + std::to_string(f.lo) +
             " are set");
      }
      return false;
    }
    case NVC86F_SEM_PAYLOAD_LO:
    case NVC86F_SEM_PAYLOAD_HI: return false;
    case NVC86F_SEM_EXECUTE: return sem_execute(data);
  }
  fail("method " + hex(method) + " is not a host method of " + class_name(ch_.info.hclass) + " known to the mock");
}

void ChannelExecutor::set_object(uint32_t subchannel, uint32_t data) {
  const uint32_t cls = get(data, NVC86F_SET_OBJECT_NVCLASS);
  const ClassKind kind = class_kind(cls);
  if (kind == ClassKind::kNone) fail("class " + hex(cls) + " is not a host, compute or copy class the mock knows");
  if (kind == ClassKind::kHost) {
    if (cls != ch_.info.hclass) fail(class_name(cls) + " is not the channel's class " + class_name(ch_.info.hclass));
  } else if (std::find(ch_.info.engine_classes.begin(), ch_.info.engine_classes.end(), cls) ==
             ch_.info.engine_classes.end()) {
    std::string allocated;
    for (uint32_t c : ch_.info.engine_classes) allocated += (allocated.empty() ? "" : ", ") + class_name(c);
    fail(class_name(cls) +
         " has no object on this channel (allocated: " + (allocated.empty() ? std::string("none") : allocated) + ")");
  }
  ch_.bound[subchannel] = cls;
}

bool ChannelExecutor::sem_execute(uint32_t data) {
  const uint64_t va = uint64_t{ch_.host_regs[NVC86F_SEM_ADDR_HI / 4]} << 32 | ch_.host_regs[NVC86F_SEM_ADDR_LO / 4];
  const bool payload64 = get(data, NVC86F_SEM_EXECUTE_PAYLOAD_SIZE) != 0;
  const uint64_t payload = (payload64 ? uint64_t{ch_.host_regs[NVC86F_SEM_PAYLOAD_HI / 4]} << 32 : 0) |
                           ch_.host_regs[NVC86F_SEM_PAYLOAD_LO / 4];
  const uint32_t op = get(data, NVC86F_SEM_EXECUTE_OPERATION);
  switch (op) {
    case NVC56F_SEM_EXECUTE_OPERATION_RELEASE:
      if (get(data, NVC86F_SEM_EXECUTE_RELEASE_WFI) != 0) wait_for_idle();  // RELEASE_WFI: after the engines idle
      release_semaphore(memory_, "semaphore release", va, payload, payload64,
                        get(data, NVC56F_SEM_EXECUTE_RELEASE_TIMESTAMP) != 0 ? std::optional(gpu_.ptimer_.now_ns()) : std::nullopt);
      gpu_.stats_.semaphore_releases.fetch_add(1, std::memory_order_relaxed);
      return false;
    case NVC56F_SEM_EXECUTE_OPERATION_ACQUIRE:
    case NVC56F_SEM_EXECUTE_OPERATION_ACQ_STRICT_GEQ:
    case NVC56F_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ:
    case NVC56F_SEM_EXECUTE_OPERATION_ACQ_AND:
    case NVC56F_SEM_EXECUTE_OPERATION_ACQ_NOR:
      require_aligned("semaphore acquire", va, payload64 ? 8 : 4);
      ch_.acquire = {true, op, payload64, va, payload};
      if (!acquire_passed()) return true;
      ch_.acquire.pending = false;
      gpu_.stats_.semaphore_acquires.fetch_add(1, std::memory_order_relaxed);
      return false;
    case NVC56F_SEM_EXECUTE_OPERATION_REDUCTION: fail("SEM_EXECUTE OPERATION_REDUCTION is not emulated by the mock");
  }
  fail("NVC86F_SEM_EXECUTE_OPERATION " + std::to_string(op) + " is not an operation; expected 0..6");
}

bool ChannelExecutor::acquire_passed() {
  const auto& a = ch_.acquire;
  const uint8_t* p = translate(memory_, a.address, a.payload64 ? 8 : 4, "semaphore acquire");
  const uint64_t value = a.payload64 ? load64(p) : load32(p);
  const uint64_t mask = a.payload64 ? ~0ull : 0xffffffffull;
  switch (a.operation) {
    case NVC56F_SEM_EXECUTE_OPERATION_ACQUIRE: return value == a.payload;
    case NVC56F_SEM_EXECUTE_OPERATION_ACQ_STRICT_GEQ: return value >= a.payload;
    case NVC56F_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ:
      // Circular: value is at or after payload when their difference, as a signed number of the payload's width,
      // is not negative (so the compare survives wrap-around).
      return a.payload64 ? static_cast<int64_t>(value - a.payload) >= 0
                         : static_cast<int32_t>(static_cast<uint32_t>(value - a.payload)) >= 0;
    case NVC56F_SEM_EXECUTE_OPERATION_ACQ_AND: return (value & a.payload) != 0;
    case NVC56F_SEM_EXECUTE_OPERATION_ACQ_NOR: return (~(value | a.payload) & mask) != 0;
  }
  return false;
}

}  // namespace doorbell::mockgpu::nv::cp
