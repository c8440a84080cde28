// The emulated SDMA engine: executes the SDMA packets of one user-mode SDMA queue (queue_engine.h). Facts and their
// sources: firmware-notes/amd-sdma-engine.md. Pointers are byte offsets that only grow (the doorbell carries one);
// the ring index is the offset modulo the ring size; no packet may cross the ring end (the runtime pads the tail
// with NOPs, a zero dword being a 1-dword NOP). The engine writes its 64-bit byte read pointer back to rptr_va.
#include <atomic>
#include <cstring>
#include <vector>

#include "mockgpu/amd/engine_support.h"
#include "mockgpu/amd/engine_thread.h"
#include "mockgpu/amd/queue_engine.h"
#include "mockgpu/amd/sdma_fields.h"

namespace doorbell::mockgpu::amd {
namespace {

using engine::bits;
using engine::hex;
using engine::Ip;
using engine::PacketFault;
using Step = EngineThread::Step;

constexpr int kPacketsPerStep = 1024;

std::string packet_name(uint32_t header) {
  const uint32_t op = bits(header, 7, 0), sub_op = bits(header, 15, 8);
  switch (op) {
    case sdma::NOP: return "NOP";
    case sdma::COPY: return sub_op == sdma::kCopyLinear ? "COPY_LINEAR" : "COPY sub-op " + std::to_string(sub_op);
    case sdma::WRITE: return sub_op == sdma::kWriteUntiled ? "WRITE_UNTILED" : "WRITE sub-op " + std::to_string(sub_op);
    case sdma::INDIRECT: return "INDIRECT";
    case sdma::FENCE: return "FENCE";
    case sdma::TRAP: return "TRAP";
    case sdma::POLL_REGMEM: return "POLL_REGMEM";
    case sdma::CONST_FILL: return "CONST_FILL";
    case sdma::TIMESTAMP:
      return sub_op == sdma::kTimestampGetGlobal ? "TIMESTAMP GET_GLOBAL"
                                                 : "TIMESTAMP sub-op " + std::to_string(sub_op);
    default: return "op " + std::to_string(op);
  }
}

class SdmaEngine final : public QueueEngine {
 public:
  SdmaEngine(const QueueDesc& queue, EngineHooks hooks)
      : queue_(queue),
        hooks_(std::move(hooks)),
        ip_(engine::ip_from_target_version(queue.gfx_target_version, "SDMA queue " + std::to_string(queue.queue_id))),
        count_bits_(ip_ == Ip::kGc11_0 ? sdma::kCountBitsSdma6 : sdma::kCountBitsSdma4),
        memory_(*hooks_.memory),
        thread_([this] { return step(); }) {}

  uint64_t packets_executed() const override { return packets_.load(); }
  bool faulted() const override { return fault_.faulted(); }

 private:
  enum class Outcome { kDone, kStall, kEnterIb };

  struct Ib {
    bool active = false;
    uint64_t va = 0;
    uint64_t bytes = 0;
    uint64_t pos = 0;  // bytes of the IB executed
  };

  std::string where() const {
    std::string text =
        "SDMA queue " + std::to_string(queue_.queue_id) + ": ring byte " + hex(rptr_ % queue_.ring_bytes);
    if (ib_.active) text += ": IB " + hex(ib_.va) + " byte " + hex(ib_.pos);
    return text;
  }

  Step step() { return fault_.step(hooks_, [this] { return run_packets(); }, [this] { return where(); }); }

  // The packet's dwords, from its header (and for WRITE its count dword at `count_dword`).
  uint64_t packet_dwords(uint32_t header, uint32_t write_count) const {
    const uint32_t op = bits(header, 7, 0);
    switch (op) {
      case sdma::NOP: return 1 + uint64_t{bits(header, 29, 16)};
      case sdma::COPY: return sdma::kCopyLinearDwords;
      case sdma::WRITE: return sdma::kWriteHeaderDwords + uint64_t{bits(write_count, 19, 0)} + 1;
      case sdma::INDIRECT: return sdma::kIndirectDwords;
      case sdma::FENCE: return sdma::kFenceDwords;
      case sdma::TRAP: return sdma::kTrapDwords;
      case sdma::POLL_REGMEM: return sdma::kPollRegmemDwords;
      case sdma::CONST_FILL: return sdma::kConstFillDwords;
      case sdma::TIMESTAMP: return sdma::kTimestampDwords;
      default:
        throw PacketFault("unknown or unemulated SDMA opcode " + std::to_string(op) + " (header " + hex(header) + ")");
    }
  }

  Step run_packets() {
    const uint64_t wptr = engine::read_write_pointer(queue_, memory_);
    if (wptr % 4 != 0)
      throw PacketFault("write pointer " + hex(wptr) +
                        " is not a multiple of 4; SDMA pointers are dword-aligned byte offsets");
    if (wptr < rptr_)
      throw PacketFault("write pointer " + hex(wptr) + " is behind the read pointer " + hex(rptr_) +
                        "; SDMA write pointers are byte offsets that only grow");
    if (wptr - rptr_ > queue_.ring_bytes)
      throw PacketFault("write pointer " + hex(wptr) + " is more than the ring (" + hex(queue_.ring_bytes) +
                        " bytes) ahead of the read pointer " + hex(rptr_));
    bool progressed = false;
    for (int n = 0; n < kPacketsPerStep; ++n) {
      if (ib_.active) {
        if (ib_.pos == ib_.bytes) {
          ib_.active = false;
          complete_ring_packet(sdma::kIndirectDwords * 4);
          progressed = true;
          continue;
        }
        const uint64_t va = ib_.va + ib_.pos;
        const uint32_t header = memory_.load32(va, "IB dword");
        const uint32_t write_count =
            bits(header, 7, 0) == sdma::WRITE && ib_.pos + 16 <= ib_.bytes ? memory_.load32(va + 12, "IB dword") : 0;
        const uint64_t bytes = packet_dwords(header, write_count) * 4;
        if (ib_.pos + bytes > ib_.bytes)
          throw PacketFault(packet_name(header) + " packet of " + std::to_string(bytes / 4) +
                            " dwords runs past the IB's end (" + hex(ib_.bytes / 4) + " dwords)");
        std::vector<uint32_t> words(bytes / 4);
        std::memcpy(words.data(), memory_.at(va, bytes, "IB"), bytes);
        const Outcome outcome = execute(words, true);
        if (outcome == Outcome::kStall) return progressed ? Step::kProgressed : Step::kStalled;
        ib_.pos += bytes;
        packets_.fetch_add(1);
        progressed = true;
        continue;
      }
      if (rptr_ == wptr) return progressed ? Step::kProgressed : Step::kIdle;
      const uint64_t offset = rptr_ % queue_.ring_bytes;
      const uint32_t header = ring_dword(offset);
      const uint32_t write_count =
          bits(header, 7, 0) == sdma::WRITE && offset + 16 <= queue_.ring_bytes ? ring_dword(offset + 12) : 0;
      const uint64_t bytes = packet_dwords(header, write_count) * 4;
      if (offset + bytes > queue_.ring_bytes)
        throw PacketFault(packet_name(header) + " packet of " + std::to_string(bytes / 4) +
                          " dwords crosses the ring end (" + hex(queue_.ring_bytes) +
                          " bytes); pad the tail with NOPs and continue at 0");
      if (bytes > wptr - rptr_)
        throw PacketFault(packet_name(header) + " packet of " + std::to_string(bytes / 4) +
                          " dwords runs past the write pointer " + hex(wptr));
      std::vector<uint32_t> words(bytes / 4);
      std::memcpy(words.data(), memory_.at(queue_.ring_va + offset, bytes, "ring"), bytes);
      const Outcome outcome = execute(words, false);
      if (outcome == Outcome::kStall) return progressed ? Step::kProgressed : Step::kStalled;
      progressed = true;
      if (outcome == Outcome::kEnterIb) continue;
      complete_ring_packet(bytes);
    }
    return Step::kProgressed;
  }

  uint32_t ring_dword(uint64_t offset) const { return memory_.load32(queue_.ring_va + offset, "ring"); }

  void complete_ring_packet(uint64_t bytes) {
    rptr_ += bytes;
    packets_.fetch_add(1);
    if (queue_.rptr_va != 0) memory_.store64(queue_.rptr_va, rptr_, "read-pointer report");
  }

  static uint64_t address(uint32_t lo, uint32_t hi) { return (uint64_t{hi} << 32) | lo; }

  static void need_aligned(const std::string& what, uint64_t va, uint64_t alignment) {
    if (va % alignment != 0)
      throw PacketFault(what + " address " + hex(va) + " is not " + std::to_string(alignment) + "-byte aligned");
  }

  Outcome execute(const std::vector<uint32_t>& w, bool in_ib) {
    const uint32_t op = bits(w[0], 7, 0), sub_op = bits(w[0], 15, 8);
    const std::string name = packet_name(w[0]);
    switch (op) {
      case sdma::NOP: return Outcome::kDone;
      case sdma::COPY: {
        if (sub_op != sdma::kCopyLinear) throw PacketFault(name + " is not emulated; expected COPY_LINEAR (sub-op 0)");
        if ((w[0] & (1u << 25)) != 0) throw PacketFault("COPY_LINEAR backwards (bit 25) is not emulated");
        if ((w[0] & (1u << 27)) != 0) throw PacketFault("COPY_LINEAR broadcast (bit 27) is not emulated");
        const uint64_t bytes = byte_count(name, w[1]);
        const uint64_t src = address(w[3], w[4]), dst = address(w[5], w[6]);
        const uint8_t* from = memory_.at(src, bytes, "COPY_LINEAR source of " + std::to_string(bytes) + " bytes");
        uint8_t* to = memory_.at(dst, bytes, "COPY_LINEAR destination of " + std::to_string(bytes) + " bytes");
        std::memmove(to, from, bytes);
        return Outcome::kDone;
      }
      case sdma::WRITE: {
        if (sub_op != sdma::kWriteUntiled)
          throw PacketFault(name + " is not emulated; expected WRITE_UNTILED (sub-op 0)");
        const uint64_t dst = address(w[1], w[2]);
        need_aligned("WRITE_UNTILED destination", dst, 4);
        const uint64_t bytes = (w.size() - sdma::kWriteHeaderDwords) * 4;
        std::memcpy(memory_.at(dst, bytes, "WRITE_UNTILED destination of " + std::to_string(bytes) + " bytes"),
                    w.data() + sdma::kWriteHeaderDwords, bytes);
        return Outcome::kDone;
      }
      case sdma::INDIRECT: return indirect(w, in_ib);
      case sdma::FENCE: {
        const uint64_t dst = address(w[1], w[2]);
        need_aligned("FENCE", dst, 4);
        memory_.store32(dst, w[3], "FENCE destination");
        return Outcome::kDone;
      }
      case sdma::TRAP:
        if (hooks_.interrupt) hooks_.interrupt(bits(w[1], 27, 0));  // INT_CONTEXT 27:0
        return Outcome::kDone;
      case sdma::POLL_REGMEM: {
        if ((w[0] & (1u << 31)) == 0)
          throw PacketFault(
              "POLL_REGMEM with MEM_POLL 0 (register polls, HDP flush) is not emulated; expected MEM_POLL 1");
        const uint64_t va = address(w[1], w[2]);
        need_aligned("POLL_REGMEM", va, 4);
        const bool satisfied =
            engine::compare(bits(w[0], 30, 28), memory_.load32(va, "POLL_REGMEM") & w[4], w[3], "POLL_REGMEM");
        return satisfied ? Outcome::kDone : Outcome::kStall;  // re-polled until satisfied; never skipped
      }
      case sdma::CONST_FILL: return const_fill(w, name);
      case sdma::TIMESTAMP: {
        if (sub_op != sdma::kTimestampGetGlobal)
          throw PacketFault(name + " is not emulated; expected GET_GLOBAL (sub-op 2)");
        const uint64_t dst = address(w[1], w[2]);
        need_aligned("TIMESTAMP GET_GLOBAL", dst, 8);
        memory_.store64(dst, engine::gpu_clock(hooks_), "TIMESTAMP GET_GLOBAL destination");
        return Outcome::kDone;
      }
      default: break;
    }
    throw PacketFault("unknown or unemulated SDMA opcode " + std::to_string(op));
  }

  // COUNT = bytes - 1 in 30 bits (SDMA 6.0) or 22 bits (SDMA 4.4.2: at most 4 MiB per packet).
  uint64_t byte_count(const std::string& name, uint32_t count) const {
    if (count_bits_ < 32 && (count >> count_bits_) != 0)
      throw PacketFault(name + " COUNT " + hex(count) + " does not fit the " + std::to_string(count_bits_) +
                        "-bit field of " + (ip_ == Ip::kGc11_0 ? "SDMA 6.0" : "SDMA 4.4.2") + " (at most " +
                        std::to_string((uint64_t{1} << count_bits_) / 1024) + " KiB per packet)");
    return uint64_t{count} + 1;
  }

  Outcome const_fill(const std::vector<uint32_t>& w, const std::string& name) {
    const uint64_t bytes = byte_count(name, w[4]);
    const uint64_t dst = address(w[1], w[2]);
    const uint32_t fill_size = bits(w[0], 31, 30);
    uint8_t* to = memory_.at(dst, bytes, "CONST_FILL destination of " + std::to_string(bytes) + " bytes");
    if (fill_size == 0) {  // bytes of the data's low byte
      std::memset(to, static_cast<int>(w[3] & 0xFF), bytes);
    } else if (fill_size == 2) {  // the 32-bit data, repeated
      need_aligned("CONST_FILL (dword fill)", dst, 4);
      if (bytes % 4 != 0)
        throw PacketFault("CONST_FILL dword fill of " + std::to_string(bytes) + " bytes; expected a multiple of 4");
      for (uint64_t i = 0; i < bytes; i += 4) std::memcpy(to + i, &w[3], 4);
    } else {
      throw PacketFault("CONST_FILL FILLSIZE " + std::to_string(fill_size) +
                        " is not emulated; expected 0 (byte) or 2 (dword)");
    }
    return Outcome::kDone;
  }

  Outcome indirect(const std::vector<uint32_t>& w, bool in_ib) {
    if (in_ib) throw PacketFault("INDIRECT inside an IB: nested IBs are not emulated");
    const uint64_t end_dword = (rptr_ % queue_.ring_bytes) / 4 + sdma::kIndirectDwords;
    if (end_dword % sdma::kIbAlignmentDwords != 0)
      throw PacketFault("INDIRECT packet ends at ring dword " + hex(end_dword) +
                        "; it must end on an 8-dword boundary (pad with NOPs before it)");
    if (bits(w[0], 19, 16) != 0)
      throw PacketFault("INDIRECT VMID " + std::to_string(bits(w[0], 19, 16)) + "; a user queue's IB has VMID 0");
    const uint64_t va = address(w[1], w[2]);
    need_aligned("INDIRECT IB base", va, 32);
    const uint32_t dwords = bits(w[3], 19, 0);
    if (dwords == 0) throw PacketFault("INDIRECT IB_SIZE is 0; expected at least 8 dwords");
    if (dwords % sdma::kIbAlignmentDwords != 0)
      throw PacketFault("INDIRECT IB_SIZE " + std::to_string(dwords) +
                        " dwords; an IB is padded to a multiple of 8 dwords");
    memory_.at(va, uint64_t{dwords} * 4, "INDIRECT IB of " + std::to_string(dwords) + " dwords");
    ib_ = Ib{true, va, uint64_t{dwords} * 4, 0};
    return Outcome::kEnterIb;
  }

  const QueueDesc queue_;
  const EngineHooks hooks_;
  const Ip ip_;
  const unsigned count_bits_;
  const engine::EngineMemory memory_;
  uint64_t rptr_ = 0;  // monotonic byte offset; the engine thread's alone
  Ib ib_;
  std::atomic<uint64_t> packets_{0};
  engine::FaultLatch fault_;
  EngineThread thread_;  // last: starts after, and stops before, everything it uses
};

}  // namespace

std::unique_ptr<QueueEngine> make_sdma_engine(const QueueDesc& queue, EngineHooks hooks) {
  const std::string who = "SDMA queue " + std::to_string(queue.queue_id);
  if (queue.kind != QueueDesc::Kind::kSdma) throw std::invalid_argument(who + ": QueueDesc::kind is not SDMA");
  engine::check_queue(queue, hooks, who);
  engine::ip_from_target_version(queue.gfx_target_version, who);
  return std::make_unique<SdmaEngine>(queue, std::move(hooks));
}

}  // namespace doorbell::mockgpu::amd
