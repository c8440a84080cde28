// The emulated MEC: executes the PM4 type-3 packets of one user-mode compute queue (queue_engine.h). Facts and their
// sources: firmware-notes/amd-pm4-cp.md. Pointers are dword counts that only grow; the ring index is the count
// modulo the ring's dwords and a packet may straddle the ring end. The read pointer reported at rptr_va is the same
// monotonic 64-bit dword count (one past the last packet completed; firmware-notes/amd-pm4-cp.md §2).
#include <array>
#include <atomic>
#include <cstring>
#include <vector>

#include "mockgpu/amd/engine_support.h"
#include "mockgpu/amd/engine_thread.h"
#include "mockgpu/amd/pm4_fields.h"
#include "mockgpu/amd/queue_engine.h"

namespace doorbell::mockgpu::amd {
namespace {

using engine::bits;
using engine::hex;
using engine::Ip;
using engine::PacketFault;
using Step = EngineThread::Step;

constexpr int kPacketsPerStep = 1024;  // then the thread re-checks whether it should stop

const char* opcode_name(uint32_t opcode) {
  switch (opcode) {
    case pm4::NOP: return "NOP";
    case pm4::DISPATCH_DIRECT: return "DISPATCH_DIRECT";
    case pm4::WRITE_DATA: return "WRITE_DATA";
    case pm4::WAIT_REG_MEM: return "WAIT_REG_MEM";
    case pm4::INDIRECT_BUFFER: return "INDIRECT_BUFFER";
    case pm4::COPY_DATA: return "COPY_DATA";
    case pm4::EVENT_WRITE: return "EVENT_WRITE";
    case pm4::RELEASE_MEM: return "RELEASE_MEM";
    case pm4::ACQUIRE_MEM: return "ACQUIRE_MEM";
    case pm4::SET_SH_REG: return "SET_SH_REG";
    case pm4::SET_UCONFIG_REG: return "SET_UCONFIG_REG";
    case pm4::WAIT_REG_MEM64: return "WAIT_REG_MEM64";
    default: return nullptr;
  }
}

// The dwords of a packet from its header: count + 2, or 1 for the NOP filler. Faults on anything but type 3.
uint64_t packet_dwords(uint32_t header) {
  const uint32_t type = header >> 30;
  if (type != 3)
    throw PacketFault("header " + hex(header) + " is a type-" + std::to_string(type) +
                      " packet; a compute queue takes type-3 packets only");
  const uint32_t count = bits(header, 29, 16);
  if (bits(header, 15, 8) == pm4::NOP && count == pm4::kNopFillerCount) return 1;
  return uint64_t{count} + 2;
}

class Pm4Engine final : public QueueEngine {
 public:
  Pm4Engine(const QueueDesc& queue, EngineHooks hooks)
      : queue_(queue),
        hooks_(std::move(hooks)),
        ip_(engine::ip_from_target_version(queue.gfx_target_version, "PM4 queue " + std::to_string(queue.queue_id))),
        memory_(*hooks_.memory),
        ring_dwords_(queue.ring_bytes / 4),
        sh_(pm4::kShRegEnd - pm4::kShRegBase + 1, 0),
        uconfig_(pm4::kUconfigRegEnd - pm4::kUconfigRegBase + 1, 0),
        thread_([this] { return step(); }) {}

  uint64_t packets_executed() const override { return packets_.load(); }
  bool faulted() const override { return fault_.faulted(); }

 private:
  enum class Outcome { kDone, kStall, kEnterIb };

  struct Ib {
    bool active = false;
    uint64_t va = 0;
    uint64_t dwords = 0;
    uint64_t pos = 0;          // dwords of the IB executed
    uint64_t ring_length = 0;  // the INDIRECT_BUFFER packet's dwords in the ring
  };

  std::string where() const {
    std::string text = "PM4 queue " + std::to_string(queue_.queue_id) + ": ring dword " + hex(rptr_ % ring_dwords_);
    if (ib_.active) text += ": IB " + hex(ib_.va) + " dword " + hex(ib_.pos);
    return text;
  }

  Step step() { return fault_.step(hooks_, [this] { return run_packets(); }, [this] { return where(); }); }

  Step run_packets() {
    const uint64_t wptr = engine::read_write_pointer(queue_, memory_);
    if (wptr < rptr_)
      throw PacketFault("write pointer " + hex(wptr) + " is behind the read pointer " + hex(rptr_) +
                        "; PM4 write pointers are dword counts that only grow");
    if (wptr - rptr_ > ring_dwords_)
      throw PacketFault("write pointer " + hex(wptr) + " is more than the ring (" + hex(ring_dwords_) +
                        " dwords) ahead of the read pointer " + hex(rptr_));
    bool progressed = false;
    for (int n = 0; n < kPacketsPerStep; ++n) {
      if (ib_.active) {
        if (ib_.pos == ib_.dwords) {  // the IB is done: so is its INDIRECT_BUFFER packet
          ib_.active = false;
          complete_ring_packet(ib_.ring_length);
          progressed = true;
          continue;
        }
        const uint64_t va = ib_.va + ib_.pos * 4;
        const uint32_t header = memory_.load32(va, "IB dword");
        const uint64_t length = packet_dwords(header);
        if (ib_.pos + length > ib_.dwords)
          throw PacketFault(std::string(name_of(header)) + " packet of " + std::to_string(length) +
                            " dwords runs past the IB's end (" + hex(ib_.dwords) + " dwords)");
        std::vector<uint32_t> words(length);
        std::memcpy(words.data(), memory_.at(va, length * 4, "IB"), length * 4);
        const Outcome outcome = execute(words, true);
        if (outcome == Outcome::kStall) return progressed ? Step::kProgressed : Step::kStalled;
        ib_.pos += length;
        packets_.fetch_add(1);
        progressed = true;
        continue;
      }
      if (rptr_ == wptr) return progressed ? Step::kProgressed : Step::kIdle;
      const uint32_t header = ring_dword(0);
      const uint64_t length = packet_dwords(header);
      if (length > wptr - rptr_)
        throw PacketFault(std::string(name_of(header)) + " packet of " + std::to_string(length) +
                          " dwords runs past the write pointer " + hex(wptr));
      std::vector<uint32_t> words(length);
      for (uint64_t i = 0; i < length; ++i) words[i] = ring_dword(i);  // wraps at the ring end, as the CP does
      const Outcome outcome = execute(words, false);
      if (outcome == Outcome::kStall) return progressed ? Step::kProgressed : Step::kStalled;
      if (outcome == Outcome::kEnterIb) {
        ib_.ring_length = length;
        progressed = true;
        continue;
      }
      complete_ring_packet(length);
      progressed = true;
    }
    return Step::kProgressed;
  }

  static const char* name_of(uint32_t header) {
    const char* name = opcode_name(bits(header, 15, 8));
    return name != nullptr ? name : "unknown";
  }

  uint32_t ring_dword(uint64_t i) const {
    const uint64_t index = (rptr_ + i) % ring_dwords_;
    return memory_.load32(queue_.ring_va + index * 4, "ring");
  }

  void complete_ring_packet(uint64_t length) {
    rptr_ += length;
    packets_.fetch_add(1);
    if (queue_.rptr_va != 0) memory_.store64(queue_.rptr_va, rptr_, "read-pointer report");
  }

  uint32_t& sh(uint32_t reg) { return sh_[reg - pm4::kShRegBase]; }
  uint64_t address(uint32_t lo, uint32_t hi) const { return (uint64_t{hi} << 32) | lo; }

  // Runs one packet (its header and body in `w`); a fault throws PacketFault naming the packet and rule.
  Outcome execute(const std::vector<uint32_t>& w, bool in_ib) {
    const uint32_t opcode = bits(w[0], 15, 8);
    const uint32_t count = bits(w[0], 29, 16);
    const char* name = opcode_name(opcode);
    if (name == nullptr) throw PacketFault("unknown opcode " + hex(opcode) + " (header " + hex(w[0]) + ")");
    const auto need_count = [&](uint32_t expected) {
      if (count != expected)
        throw PacketFault(std::string(name) + " count " + std::to_string(count) + "; expected " +
                          std::to_string(expected) + " (" + std::to_string(expected + 2) + " dwords)");
    };
    switch (opcode) {
      case pm4::NOP: return Outcome::kDone;
      case pm4::SET_SH_REG: set_registers(w, name, pm4::kShRegBase, pm4::kShRegEnd, sh_); return Outcome::kDone;
      case pm4::SET_UCONFIG_REG:
        set_registers(w, name, pm4::kUconfigRegBase, pm4::kUconfigRegEnd, uconfig_);
        return Outcome::kDone;
      case pm4::DISPATCH_DIRECT:
        need_count(pm4::kDispatchDirectCount);
        dispatch_direct(w);
        return Outcome::kDone;
      case pm4::EVENT_WRITE:
        if (count != pm4::kEventWriteCount)
          throw PacketFault("EVENT_WRITE count " + std::to_string(count) +
                            "; only the 1-dword-body form of non-timestamp events (count 0) is emulated");
        if (bits(w[1], 5, 0) == pm4::CS_PARTIAL_FLUSH && bits(w[1], 11, 8) != pm4::kPartialFlushEventIndex)
          throw PacketFault("EVENT_WRITE CS_PARTIAL_FLUSH with EVENT_INDEX " + std::to_string(bits(w[1], 11, 8)) +
                            "; expected 4");
        // Dispatches run to completion before the next packet, so a partial flush has nothing left to wait for.
        return Outcome::kDone;
      case pm4::RELEASE_MEM:
        need_count(pm4::kReleaseMemCount);
        release_mem(w);
        return Outcome::kDone;
      case pm4::ACQUIRE_MEM:
        // Cache operations: nothing to do on coherent emulated memory; the size differs per IP.
        need_count(ip_ == Ip::kGc11_0 ? pm4::kAcquireMemCountGc11 : pm4::kAcquireMemCountGc9);
        return Outcome::kDone;
      case pm4::WAIT_REG_MEM:
        need_count(pm4::kWaitRegMemCount);
        return wait_reg_mem(w, false) ? Outcome::kDone : Outcome::kStall;
      case pm4::WAIT_REG_MEM64:
        need_count(pm4::kWaitRegMem64Count);
        return wait_reg_mem(w, true) ? Outcome::kDone : Outcome::kStall;
      case pm4::INDIRECT_BUFFER:
        need_count(pm4::kIndirectBufferCount);
        indirect_buffer(w, in_ib);
        return Outcome::kEnterIb;
      case pm4::WRITE_DATA: write_data(w); return Outcome::kDone;
      case pm4::COPY_DATA:
        need_count(pm4::kCopyDataCount);
        copy_data(w);
        return Outcome::kDone;
      default: break;
    }
    throw PacketFault("unknown opcode " + hex(opcode));
  }

  void set_registers(const std::vector<uint32_t>& w, const char* name, uint32_t base, uint32_t end,
                     std::vector<uint32_t>& file) {
    if (w.size() < 3) throw PacketFault(std::string(name) + " writes no register (count 0); expected count >= 1");
    // Offset 15:0; on gfx10+ SET_SH_REG also has INDEX 31:28 and VMID_SHIFT 27:23, which do not move the target.
    const uint32_t first = base + bits(w[1], 15, 0);
    const uint64_t last = uint64_t{first} + (w.size() - 2) - 1;
    if (last > end)
      throw PacketFault(std::string(name) + " register " + hex(first > end ? first : last) + " is outside " +
                        hex(base) + "-" + hex(end));
    for (size_t i = 2; i < w.size(); ++i) file[first - base + (i - 2)] = w[i];
  }

  void dispatch_direct(const std::vector<uint32_t>& w) {
    const uint32_t initiator = w[4];
    if ((initiator & pm4::COMPUTE_SHADER_EN) == 0)
      throw PacketFault("DISPATCH_DIRECT initiator " + hex(initiator) + " lacks COMPUTE_SHADER_EN (bit 0)");
    if ((initiator & pm4::USE_THREAD_DIMENSIONS) != 0)
      throw PacketFault("DISPATCH_DIRECT initiator " + hex(initiator) +
                        " sets USE_THREAD_DIMENSIONS (bit 5): grids in threads are not emulated; give workgroups");
    if (ip_ == Ip::kGc9_4_3 && (initiator & pm4::CS_W32_EN) != 0)
      throw PacketFault("DISPATCH_DIRECT initiator " + hex(initiator) +
                        " sets bit 15 (CS_W32_EN on gfx10+): gc 9.4.3 has no wave32 dispatch");
    DispatchState s;
    const uint32_t pgm_hi = sh(pm4::COMPUTE_PGM_HI);
    if (pgm_hi > 0xFF) throw PacketFault("DISPATCH_DIRECT: COMPUTE_PGM_HI " + hex(pgm_hi) + " has bits above 7:0");
    s.code_va = address(sh(pm4::COMPUTE_PGM_LO), pgm_hi) << 8;  // >> 8 encoding: 256-byte aligned by construction
    if (s.code_va == 0) throw PacketFault("DISPATCH_DIRECT: COMPUTE_PGM_LO/HI are 0 (no program)");
    memory_.at(s.code_va, 4, "DISPATCH_DIRECT program (COMPUTE_PGM_LO/HI)");
    s.rsrc1 = sh(pm4::COMPUTE_PGM_RSRC1);
    s.rsrc2 = sh(pm4::COMPUTE_PGM_RSRC2);
    s.rsrc3 = sh(ip_ == Ip::kGc11_0 ? pm4::COMPUTE_PGM_RSRC3_GC11 : pm4::COMPUTE_PGM_RSRC3_GC943);
    for (uint32_t i = 0; i < 16; ++i) s.user_data[i] = sh(pm4::COMPUTE_USER_DATA_0 + i);
    static constexpr const char* kAxis[3] = {"X", "Y", "Z"};
    for (uint32_t i = 0; i < 3; ++i) {
      if (sh(pm4::COMPUTE_START_X + i) != 0)
        throw PacketFault(std::string("DISPATCH_DIRECT: COMPUTE_START_") + kAxis[i] + " is " +
                          hex(sh(pm4::COMPUTE_START_X + i)) + "; the emulated CP starts grids at 0");
      s.workgroup_size[i] = bits(sh(pm4::COMPUTE_NUM_THREAD_X + i), 15, 0);  // NUM_THREAD_FULL
      if (s.workgroup_size[i] == 0)
        throw PacketFault(std::string("DISPATCH_DIRECT: COMPUTE_NUM_THREAD_") + kAxis[i] +
                          " is 0; a workgroup has at least 1 thread per dimension");
      s.grid_workgroups[i] = w[1 + i];
    }
    s.wave32 = ip_ == Ip::kGc11_0 && (initiator & pm4::CS_W32_EN) != 0;
    s.lds_bytes = bits(s.rsrc2, 23, 15) * pm4::kLdsGranuleBytes;
    if (s.lds_bytes > pm4::kLdsCapacityBytes)
      throw PacketFault("DISPATCH_DIRECT: COMPUTE_PGM_RSRC2.LDS_SIZE " + std::to_string(bits(s.rsrc2, 23, 15)) + " (" +
                        std::to_string(s.lds_bytes) + " bytes) exceeds the " + std::to_string(pm4::kLdsCapacityBytes) +
                        "-byte LDS");
    const uint32_t scratch_hi = sh(pm4::COMPUTE_DISPATCH_SCRATCH_BASE_HI);
    if (scratch_hi > 0xFF)
      throw PacketFault("DISPATCH_DIRECT: COMPUTE_DISPATCH_SCRATCH_BASE_HI " + hex(scratch_hi) + " has bits above 7:0");
    s.scratch_va = address(sh(pm4::COMPUTE_DISPATCH_SCRATCH_BASE_LO), scratch_hi) << 8;
    // TMPRING_SIZE.WAVESIZE: 26:12 in 256-byte units on gc 11.0, 24:12 in 1024-byte units on gc 9.4.3.
    const uint32_t tmpring = sh(pm4::COMPUTE_TMPRING_SIZE);
    s.scratch_wave_bytes = ip_ == Ip::kGc11_0 ? bits(tmpring, 26, 12) * 256 : bits(tmpring, 24, 12) * 1024;
    if (s.grid_workgroups[0] == 0 || s.grid_workgroups[1] == 0 || s.grid_workgroups[2] == 0) return;  // no waves
    if (!hooks_.dispatch) throw PacketFault("DISPATCH_DIRECT: the emulated GPU has no shader core attached");
    try {
      hooks_.dispatch(s);
    } catch (const ShaderFault& e) {
      throw PacketFault(
          "DISPATCH_DIRECT of the program at " + hex(s.code_va) + ": shader fault at pc " + hex(e.pc) + ": " + e.what(),
          e.address, e.address != 0);
    }
  }

  void release_mem(const std::vector<uint32_t>& w) {
    const uint32_t event_index = bits(w[1], 11, 8);
    if (event_index != pm4::kEventIndexEndOfPipe && event_index != pm4::kEventIndexShaderDone)
      throw PacketFault("RELEASE_MEM EVENT_INDEX " + std::to_string(event_index) +
                        "; expected 5 (end of pipe) or 6 (shader done)");
    const uint32_t dst_sel = bits(w[2], 17, 16), int_sel = bits(w[2], 26, 24), data_sel = bits(w[2], 31, 29);
    if (dst_sel > 1)
      throw PacketFault("RELEASE_MEM DST_SEL " + std::to_string(dst_sel) +
                        " (queue write-pointer register targets) is not emulated; expected 0 or 1 (memory)");
    if (int_sel > 4)
      throw PacketFault("RELEASE_MEM INT_SEL " + std::to_string(int_sel) +
                        " (conditional interrupts) is not emulated; expected 0-4");
    if (int_sel == 1 && data_sel != 0)
      throw PacketFault("RELEASE_MEM INT_SEL 1 (interrupt only) with DATA_SEL " + std::to_string(data_sel) +
                        "; expected DATA_SEL 0");
    const uint64_t va = address(w[3], w[4]);
    // Everything before this packet has completed: dispatches run synchronously, in order.
    switch (data_sel) {
      case 0: break;
      case 1:
        if (va % 4 != 0) throw PacketFault("RELEASE_MEM DATA_SEL 1 address " + hex(va) + " is not 4-byte aligned");
        memory_.store32(va, w[5], "RELEASE_MEM destination");
        break;
      case 2:
      case 3: {
        if (va % 8 != 0)
          throw PacketFault("RELEASE_MEM DATA_SEL " + std::to_string(data_sel) + " address " + hex(va) +
                            " is not 8-byte aligned");
        const uint64_t value = data_sel == 2 ? address(w[5], w[6]) : engine::gpu_clock(hooks_);
        memory_.store64(va, value, "RELEASE_MEM destination");
        break;
      }
      default:
        throw PacketFault("RELEASE_MEM DATA_SEL " + std::to_string(data_sel) +
                          " is not emulated; expected 0 (none), 1 (32-bit), 2 (64-bit) or 3 (GPU clock)");
    }
    if (int_sel != 0 && hooks_.interrupt) hooks_.interrupt(w[7]);
  }

  // True when satisfied; false stalls the queue on this packet.
  bool wait_reg_mem(const std::vector<uint32_t>& w, bool wide) {
    const char* name = wide ? "WAIT_REG_MEM64" : "WAIT_REG_MEM";
    const uint32_t function = bits(w[1], 2, 0), mem_space = bits(w[1], 5, 4), operation = bits(w[1], 7, 6);
    if (mem_space != 1)
      throw PacketFault(std::string(name) + " MEM_SPACE " + std::to_string(mem_space) +
                        ": register waits are not emulated; expected 1 (memory)");
    if (operation != 0 && operation != 3)
      throw PacketFault(std::string(name) + " OPERATION " + std::to_string(operation) +
                        "; expected 0 (wait) or 3 (preemptable memory wait)");
    const uint64_t va = address(w[2], w[3]);
    const uint64_t alignment = wide ? 8 : 4;
    if (va % alignment != 0)
      throw PacketFault(std::string(name) + " address " + hex(va) + " is not " + std::to_string(alignment) +
                        "-byte aligned");
    if (wide) {
      const uint64_t reference = address(w[4], w[5]), mask = address(w[6], w[7]);
      return engine::compare(function, memory_.load64(va, name) & mask, reference, name);
    }
    return engine::compare(function, memory_.load32(va, name) & w[5], w[4], name);
  }

  void indirect_buffer(const std::vector<uint32_t>& w, bool in_ib) {
    if (in_ib) throw PacketFault("INDIRECT_BUFFER inside an IB: nested IBs are not emulated (unverified on MEC)");
    const uint32_t control = w[3];
    if ((control & (1u << 23)) == 0)
      throw PacketFault("INDIRECT_BUFFER control " + hex(control) + " lacks VALID (bit 23)");
    if ((control & (1u << 20)) != 0)
      throw PacketFault("INDIRECT_BUFFER control " + hex(control) + " sets CHAIN (bit 20), which is not emulated");
    if (bits(control, 27, 24) != 0)
      throw PacketFault("INDIRECT_BUFFER VMID " + std::to_string(bits(control, 27, 24)) +
                        "; a user queue's IB has VMID 0");
    const uint64_t va = address(w[1], bits(w[2], 15, 0));
    if (va % 4 != 0) throw PacketFault("INDIRECT_BUFFER base " + hex(va) + " is not dword aligned");
    const uint32_t dwords = bits(control, 19, 0);
    if (dwords == 0) throw PacketFault("INDIRECT_BUFFER IB_SIZE is 0; expected at least 1 dword");
    memory_.at(va, uint64_t{dwords} * 4, "INDIRECT_BUFFER " + std::to_string(dwords) + " dwords");
    ib_ = Ib{true, va, dwords, 0, 0};
  }

  void write_data(const std::vector<uint32_t>& w) {
    if (w.size() < 5)
      throw PacketFault("WRITE_DATA count " + std::to_string(w.size() - 2) + "; expected 3 or more (2 + data dwords)");
    const uint32_t dst_sel = bits(w[1], 11, 8);
    if (dst_sel != pm4::kSelTcL2 && dst_sel != pm4::kSelMemory)
      throw PacketFault("WRITE_DATA DST_SEL " + std::to_string(dst_sel) + " is not emulated; expected 2 or 5 (memory)");
    const bool increment = (w[1] & (1u << 16)) == 0;  // ADDR_INCR: 1 = all data to the same address
    const uint64_t va = address(w[2], w[3]);
    if (va % 4 != 0) throw PacketFault("WRITE_DATA address " + hex(va) + " is not 4-byte aligned");
    for (size_t i = 4; i < w.size(); ++i)
      memory_.store32(increment ? va + (i - 4) * 4 : va, w[i], "WRITE_DATA destination");
  }

  void copy_data(const std::vector<uint32_t>& w) {
    const uint32_t src_sel = bits(w[1], 3, 0), dst_sel = bits(w[1], 11, 8);
    const bool wide = (w[1] & (1u << 16)) != 0;  // COUNT_SEL
    const uint64_t alignment = wide ? 8 : 4;
    const auto check_aligned = [&](uint64_t va, const char* what) {
      if (va % alignment != 0)
        throw PacketFault(std::string("COPY_DATA ") + what + " address " + hex(va) + " is not " +
                          std::to_string(alignment) + "-byte aligned");
    };
    uint64_t value = 0;
    switch (src_sel) {
      case pm4::kSelTcL2: {
        const uint64_t va = address(w[2], w[3]);
        check_aligned(va, "source");
        value = wide ? memory_.load64(va, "COPY_DATA source") : memory_.load32(va, "COPY_DATA source");
        break;
      }
      case pm4::kSelImmediate: value = wide ? address(w[2], w[3]) : w[2]; break;
      case pm4::kSelGpuClockCount:
      case pm4::kSelSystemClockCount: value = engine::gpu_clock(hooks_); break;
      default:
        throw PacketFault("COPY_DATA SRC_SEL " + std::to_string(src_sel) +
                          " is not emulated; expected 2 (memory), 5 (immediate), 9 or 10 (clocks)");
    }
    if (dst_sel != pm4::kSelTcL2 && dst_sel != pm4::kSelMemory)
      throw PacketFault("COPY_DATA DST_SEL " + std::to_string(dst_sel) + " is not emulated; expected 2 or 5 (memory)");
    const uint64_t dst = address(w[4], w[5]);
    check_aligned(dst, "destination");
    if (wide) {
      memory_.store64(dst, value, "COPY_DATA destination");
    } else {
      memory_.store32(dst, static_cast<uint32_t>(value), "COPY_DATA destination");
    }
  }

  const QueueDesc queue_;
  const EngineHooks hooks_;
  const Ip ip_;
  const engine::EngineMemory memory_;
  const uint64_t ring_dwords_;
  uint64_t rptr_ = 0;  // monotonic dword count; the engine thread's alone
  std::vector<uint32_t> sh_, uconfig_;
  Ib ib_;
  std::atomic<uint64_t> packets_{0};
  engine::FaultLatch fault_;
  EngineThread thread_;  // last: starts after, and stops before, everything it uses
};

}  // namespace

std::unique_ptr<QueueEngine> make_pm4_engine(const QueueDesc& queue, EngineHooks hooks) {
  const std::string who = "PM4 queue " + std::to_string(queue.queue_id);
  if (queue.kind != QueueDesc::Kind::kPm4Compute) throw std::invalid_argument(who + ": QueueDesc::kind is not PM4");
  engine::check_queue(queue, hooks, who);
  engine::ip_from_target_version(queue.gfx_target_version, who);
  return std::make_unique<Pm4Engine>(queue, std::move(hooks));
}

}  // namespace doorbell::mockgpu::amd
