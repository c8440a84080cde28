// Checks of an allocation's result shared by the register allocator's tests: the invariants on
// AllocationStats::assignments and the shape of the allocated code.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <set>

#include "compiler/x86/regalloc.h"

namespace doorbell::x86::testing {

using Where = IntervalAssignment::Where;

inline constexpr Gpr kCalleeSaved[] = {RBX, RBP, R12, R13, R14, R15};
inline bool is_callee_saved(uint32_t r) { return std::find(std::begin(kCalleeSaved), std::end(kCalleeSaved), r) != std::end(kCalleeSaved); }

// The allocation's invariants, on its assignments.
inline void expect_invariants(const AllocationStats& stats, const AllocationOptions& options) {
  const auto& as = stats.assignments;
  EXPECT_EQ(as.size(), stats.intervals);
  std::set<int32_t> slots;
  uint32_t spilled = 0;
  std::set<uint32_t> gprs_used, vecs_used;
  for (size_t i = 0; i < as.size(); i++) {
    const IntervalAssignment& a = as[i];
    const LiveInterval& iv = a.interval;
    if (a.where == Where::REG) {
      if (iv.cls == RegClass::GPR) {
        gprs_used.insert(a.reg);
        // rax, rcx, rdx only with all registers allowed, outside instruction selection's fixed-register span
        // (checked by the tests that name them, and by running the code).
        EXPECT_TRUE(a.reg != RSP && a.reg != R10 && a.reg != R11 && a.reg < 16) << "GPR " << a.reg << " is not allocatable";
        if (options.max_gpr != 0) { EXPECT_TRUE(a.reg != RAX && a.reg != RCX && a.reg != RDX) << "GPR " << a.reg << " beyond max_gpr"; }
        if (iv.crosses_call) { EXPECT_TRUE(is_callee_saved(a.reg)) << "%g" << iv.vreg << " lives across a call in GPR " << a.reg; }
      } else if (iv.cls == RegClass::VEC) {
        vecs_used.insert(a.reg);
        EXPECT_LT(a.reg, options.vec_registers) << "vector register " << a.reg << " does not exist";
        EXPECT_TRUE(a.reg != 14 && a.reg != 15) << "a scratch vector register (xmm14/xmm15) allocated";
        if (iv.low16) { EXPECT_LT(a.reg, 16u) << "%v" << iv.vreg << " is named by a VEX-only instruction but got register " << a.reg; }
        EXPECT_FALSE(iv.crosses_call) << "%v" << iv.vreg << " lives across a call in a vector register";
      } else {
        EXPECT_TRUE(a.reg >= 1 && a.reg <= 5) << "k" << a.reg << " allocated";
      }
    } else if (a.where == Where::SPILL) {
      spilled++;
      EXPECT_TRUE(slots.insert(a.slot).second) << "spill slot " << a.slot << " given twice";
    } else {
      EXPECT_TRUE(iv.remat) << "a value that is not a constant rematerialized";
    }
    // No two overlapping intervals of a class share a register (touching ones may: an instruction reads its
    // sources before it writes its destination).
    for (size_t j = i + 1; j < as.size(); j++) {
      const IntervalAssignment& b = as[j];
      if (b.interval.cls != iv.cls || a.where != Where::REG || b.where != Where::REG) continue;
      bool overlap = iv.start < b.interval.end && b.interval.start < iv.end;
      if (overlap) { EXPECT_NE(a.reg, b.reg) << "intervals [" << iv.start << ", " << iv.end << "] and [" << b.interval.start << ", " << b.interval.end << "] share register " << a.reg; }
    }
  }
  EXPECT_EQ(spilled, stats.spilled);
  if (options.max_gpr) { EXPECT_LE(gprs_used.size(), options.max_gpr); }
  if (options.max_vec) { EXPECT_LE(vecs_used.size(), options.max_vec); }
}

// After allocation: physical registers only, every frame slot an [rsp + offset], no tied or pseudo instruction.
inline void expect_physical(const MachineFunction& mf) {
  EXPECT_TRUE(mf.allocated);
  for (const Inst& inst : mf.code) {
    EXPECT_FALSE(inst.tied) << print_inst(inst, mf);
    EXPECT_NE(inst.op, Mn::CALL_EXTERN);
    if (inst.masked) { EXPECT_FALSE(inst.mask.virt); }
    for (int k = 0; k < inst.n; k++) {
      const Operand& o = inst.o[k];
      if (o.kind == Operand::Kind::REG) { EXPECT_FALSE(o.reg.virt) << print_inst(inst, mf); }
      if (o.kind == Operand::Kind::MEM) {
        EXPECT_TRUE(o.mem.kind == MemBase::REG || o.mem.kind == MemBase::RIP) << print_inst(inst, mf);
        EXPECT_FALSE(o.mem.has_base && o.mem.base.virt) << print_inst(inst, mf);
        EXPECT_FALSE(o.mem.has_index && o.mem.index.virt) << print_inst(inst, mf);
        // rsp is 64-byte aligned: a zmm slot is too.
        if (o.mem.bits == 512 && o.mem.base.num == RSP) { EXPECT_EQ(o.mem.disp % 64, 0) << print_inst(inst, mf); }
      }
    }
  }
}

}  // namespace doorbell::x86::testing
