// What the register allocator's parts (regalloc_intervals.cpp, regalloc.cpp, regalloc_frame.cpp) share. Internal to
// compiler/x86.
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "compiler/x86/regalloc.h"

namespace doorbell::x86::regalloc_detail {

// One register an instruction names, and how it accesses it.
template <class R>
struct RegRef {
  R* reg;
  Role role;
};

// The registers `inst` names: register operands with their roles (a GPR defined at 8 or 16 bits is also read: x86
// keeps its other bits), the base and index of memory operands (read), the write mask (read).
template <class I, class R = std::conditional_t<std::is_const_v<I>, const Reg, Reg>>
std::vector<RegRef<R>> register_refs(I& inst) {
  Role roles[4];
  operand_roles(inst, roles);
  std::vector<RegRef<R>> refs;
  for (int k = 0; k < inst.n; k++) {
    auto& o = inst.o[k];
    if (o.kind == Operand::Kind::REG) {
      Role role = roles[k];
      if (role == Role::DEF && o.reg.cls == RegClass::GPR && o.reg.bits < 32) role = Role::USE_DEF;
      if (role != Role::NONE) refs.push_back({&o.reg, role});
    } else if (o.kind == Operand::Kind::MEM) {
      if (o.mem.kind == MemBase::REG && o.mem.has_base) refs.push_back({&o.mem.base, Role::USE});
      if (o.mem.kind != MemBase::RIP && o.mem.has_index) refs.push_back({&o.mem.index, Role::USE});
    }
  }
  if (inst.masked) refs.push_back({&inst.mask, Role::USE});
  return refs;
}

inline bool reads(Role r) { return r == Role::USE || r == Role::USE_DEF; }
inline bool writes(Role r) { return r == Role::DEF || r == Role::USE_DEF; }

// "allocate_registers: <the instruction>: "; the start of every error message about an instruction.
std::string where(const Inst& inst, const MachineFunction& mf);

// The frame slots regalloc.cpp made, for regalloc_frame.cpp.
struct FrameRequest {
  std::vector<uint32_t> spill_bytes;  // size of each SPILL slot
  std::vector<Gpr> callee_saved;      // callee-saved GPRs the allocation used, to push
};

// Lays out the frame, inserts the prologue at the start and an epilogue before every `ret`, and rewrites every
// ARG/SPILL/LOCAL memory operand to [rsp + offset]. Returns the bytes rsp is lowered by after the alignment.
uint32_t finish_frame(MachineFunction& mf, const FrameRequest& request);

}  // namespace doorbell::x86::regalloc_detail
