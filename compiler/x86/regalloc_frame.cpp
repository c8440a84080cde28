// The allocated function's stack frame (compiler/x86/regalloc.h): prologue, epilogues, [rsp + offset] slots.
// ABI facts (argument registers, callee-saved registers, alignment at calls, no red zone): firmware-notes/x86-abi.md.
//
//   [rsp + 0 .. 31]   ARG slots 0-3: rdi (buffers), rsi (scalars), edx (core_id), ecx (core_count), 8 bytes each
//   [rsp + 32]        rsp before the alignment (the epilogue reloads it)
//   [rsp + 40 ...]    SPILL slots, each aligned to its size (8, 16, 32, 64)
//   then              LOCAL slots, 64-byte aligned
// rsp itself is 64-byte aligned (`and rsp, -64` after the pushes), so every zmm slot is aligned and rsp is 16-byte
// aligned at every call.
#include <algorithm>
#include <stdexcept>

#include "compiler/x86/regalloc_internal.h"

namespace doorbell::x86::regalloc_detail {
namespace {

constexpr int32_t kSavedRsp = 32;
constexpr uint32_t kFirstSpill = 40;

Inst make(Mn op, std::initializer_list<Operand> ops) { return make_inst(op, ops); }

Operand at_rsp(int32_t disp, uint16_t bits) {
  Mem m;
  m.kind = MemBase::REG;
  m.bits = bits;
  m.base = gpr(RSP);
  m.disp = disp;
  return op_mem(m);
}

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

uint32_t finish_frame(MachineFunction& mf, const FrameRequest& request) {
  std::vector<uint64_t> spill_at(request.spill_bytes.size()), local_at(mf.locals.size());
  uint64_t end = kFirstSpill;
  for (size_t s = 0; s < request.spill_bytes.size(); s++) {
    end = align_up(end, std::min<uint32_t>(request.spill_bytes[s], 64));
    spill_at[s] = end;
    end += request.spill_bytes[s];
  }
  for (size_t s = 0; s < mf.locals.size(); s++) {
    end = align_up(end, 64);
    local_at[s] = end;
    end += mf.locals[s];
  }
  const uint64_t frame = align_up(end, 64);
  if (frame > (1u << 30))
    throw std::invalid_argument("allocate_registers: " + mf.name + ": a frame of " + std::to_string(frame) + " bytes; expected at most 1 GiB");

  for (Inst& inst : mf.code)
    for (int k = 0; k < inst.n; k++) {
      Operand& o = inst.o[k];
      if (o.kind != Operand::Kind::MEM || o.mem.kind == MemBase::REG || o.mem.kind == MemBase::RIP) continue;
      uint64_t offset = 0;
      const int32_t slot = o.mem.slot;
      if (o.mem.kind == MemBase::ARG) {
        if (slot < 0 || slot > 3) throw std::invalid_argument(where(inst, mf) + "ARG slot " + std::to_string(slot) + "; expected 0-3");
        offset = 8 * static_cast<uint64_t>(slot);
      } else if (o.mem.kind == MemBase::SPILL) {
        if (slot < 0 || static_cast<size_t>(slot) >= spill_at.size()) throw std::invalid_argument(where(inst, mf) + "SPILL slot " + std::to_string(slot) + " was never made");
        offset = spill_at[slot];
      } else {
        if (slot < 0 || static_cast<size_t>(slot) >= local_at.size())
          throw std::invalid_argument(where(inst, mf) + "LOCAL slot " + std::to_string(slot) + "; MachineFunction::locals has " + std::to_string(local_at.size()));
        offset = local_at[slot];
      }
      o.mem.kind = MemBase::REG;
      o.mem.has_base = true;
      o.mem.base = gpr(RSP);
      o.mem.disp += static_cast<int32_t>(offset);
      o.mem.slot = -1;
    }

  std::vector<Inst> prologue, epilogue;
  for (Gpr r : request.callee_saved) prologue.push_back(make(Mn::push, {op_reg(gpr(r))}));
  prologue.push_back(make(Mn::mov, {op_reg(gpr(RAX)), op_reg(gpr(RSP))}));
  prologue.push_back(make(Mn::and_, {op_reg(gpr(RSP)), op_imm(-64)}));
  prologue.push_back(make(Mn::sub, {op_reg(gpr(RSP)), op_imm(static_cast<int64_t>(frame))}));
  prologue.push_back(make(Mn::mov, {at_rsp(kSavedRsp, 64), op_reg(gpr(RAX))}));
  prologue.push_back(make(Mn::mov, {at_rsp(0, 64), op_reg(gpr(RDI))}));
  prologue.push_back(make(Mn::mov, {at_rsp(8, 64), op_reg(gpr(RSI))}));
  // core_id and core_count are int32 (the upper halves of rdx and rcx are undefined): stored sign-extended, so a
  // 32- or a 64-bit read of the slot is right.
  prologue.push_back(make(Mn::movsxd, {op_reg(gpr(RDX)), op_reg(gpr(RDX, 32))}));
  prologue.push_back(make(Mn::mov, {at_rsp(16, 64), op_reg(gpr(RDX))}));
  prologue.push_back(make(Mn::movsxd, {op_reg(gpr(RCX)), op_reg(gpr(RCX, 32))}));
  prologue.push_back(make(Mn::mov, {at_rsp(24, 64), op_reg(gpr(RCX))}));
  epilogue.push_back(make(Mn::mov, {op_reg(gpr(RSP)), at_rsp(kSavedRsp, 64)}));
  for (auto it = request.callee_saved.rbegin(); it != request.callee_saved.rend(); ++it)
    epilogue.push_back(make(Mn::pop, {op_reg(gpr(*it))}));

  std::vector<Inst> out = prologue;
  out.reserve(mf.code.size() + prologue.size() + 4 * epilogue.size());
  for (const Inst& inst : mf.code) {
    if (inst.op == Mn::ret) out.insert(out.end(), epilogue.begin(), epilogue.end());
    out.push_back(inst);
  }
  mf.code = std::move(out);
  return static_cast<uint32_t>(frame);
}

}  // namespace doorbell::x86::regalloc_detail
