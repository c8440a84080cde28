// Register allocation for the x86 backend: linear scan over live intervals (Poletto & Sarkar; the second-chance
// splitting is left out: a spilled value lives in its slot and is reloaded before each use).
//  - intervals are computed on the linear instruction order; a value live into a loop (defined before the loop's
//    label, used at or after it before the loop's backward jump) is extended to the loop's end, so loop-carried
//    values (accumulators) and loop invariants survive every iteration;
//  - GPR, VEC and MASK values are allocated separately, each from its own allocatable set (AllocationOptions);
//  - when no register is free, the value with the smallest LiveInterval::spill_weight among the current one and those
//    holding a register it may take is spilled (a rematerializable constant first);
//  - a value that finds no register is spilled to a stack slot (64 bytes for a zmm, else 8, 16 or 32): reloaded into a
//    scratch register before each use and stored after each definition; a `remat` value (a constant) is
//    re-executed before each use instead of spilled; a reload into a scratch register that still holds the slot's
//    value (loaded or stored since, in straight-line code) is dropped;
//  - values live across a CALL_EXTERN take callee-saved GPRs or are spilled (SysV: every vector register and rax,
//    rcx, rdx, rsi, rdi, r8-r11 are the callee's); the call is expanded (arguments into xmm0/xmm1, vzeroupper, call,
//    result from xmm0);
//  - a copy's destination (a tied instruction's) prefers its source's register when that is free where it starts
//    (the source's value ended there); a copy left with one register for both is dropped (but not one that clears
//    bits the destination is read with: `mov r32, r32`, vmovaps xmm of a wider value);
//  - two-address fixup: a tied instruction (compiler/x86/x86_inst.h) becomes `mov d, a` + `op d, b` when d and a got
//    different registers (b's register equal to d's goes through a scratch register for a non-commutative op; a
//    commutative one swaps a and b); imul by an immediate becomes the untied three-operand `imul d, a, imm`;
//  - the frame: callee-saved registers used are pushed, rsp (saved in the frame through rax) is aligned down to 64
//    bytes and lowered for the incoming arguments (rdi, rsi, and edx, ecx sign-extended, stored to their ARG slots),
//    the spill and LOCAL slots (each naturally aligned, LOCAL and zmm slots to 64 bytes), so rsp is 16-byte aligned at
//    calls; every frame operand becomes [rsp + offset]; each `ret` gets the epilogue (rsp reloaded, pops).
// Registers never allocated: rsp, and the scratch registers the allocator uses for reloads (r10, r11; xmm14, xmm15, below
// 16 so that a reload for an instruction with only a VEX form (vex_only_form) can be encoded; such an instruction's
// values (LiveInterval::low16) get registers 0-13;
// k6, k7). rax, rcx and rdx, which instruction selection names for fixed-register instructions (division, shifts by
// cl), are allocated last and only to values whose interval lies wholly before the first or after the last
// instruction naming one of them (or dividing, or calling); with max_gpr set, never. Instruction selection may name
// no other physical register. An instruction that needs more reload
// registers of a class than the two scratch registers borrows an allocated register not named by it: saved to a
// frame slot before and restored after. MASK values are allocated to k1-k5 and spilled with kmovw to a 2-byte
// access of an 8-byte slot; a MASK value live across a CALL_EXTERN is an error.
// Facts (SysV argument and callee-saved registers, stack alignment): firmware-notes/x86-abi.md.
// Flags are never clobbered between instructions: reloads and spills are movs, rematerialized constants mov
// immediates, never xor.
#pragma once
#include <cstdint>
#include <vector>

#include "compiler/x86/x86_inst.h"

namespace doorbell::x86 {

struct AllocationOptions {
  // VEC registers that exist: 16 (AVX2) or 32 (AVX-512).
  uint32_t vec_registers = 16;
  // At most this many allocatable registers per class (tests force spills with small budgets); 0: all of them
  // (GPR: rsi rdi r8 r9 rbx rbp r12-r15, then rax rcx rdx outside instruction selection's span of them; VEC: all
  // but the two scratch).
  uint32_t max_gpr = 0, max_vec = 0;
};

// A virtual register's live interval on the linear order: indices into MachineFunction::code. Two intervals of a
// class overlap when a.start < b.end and b.start < a.end; intervals that only touch (one ends at the instruction
// where the other starts) may share a register, since an instruction reads its sources before writing.
struct LiveInterval {
  RegClass cls = RegClass::GPR;
  uint32_t vreg = 0;
  int32_t start = 0, end = 0;  // first and last instruction mentioning it, widened over loops it is live around
  uint16_t bits = 0;           // widest access (a VEC spill slot's size)
  bool remat = false;          // defined exactly once, by a `remat` instruction
  bool crosses_call = false;   // start < a CALL_EXTERN < end: the call's caller-saved registers cannot hold it
  bool low16 = false;          // a VEC value some instruction with only a VEX form names: registers 0-15 only
  // What keeping it in memory would cost per instruction of its interval: each instruction reading it (a reload) and
  // each writing it (a store) counts 10^(loops around that instruction), divided by end - start + 1. Under pressure
  // the allocator spills the active value with the smallest weight, so a loop invariant read every iteration keeps
  // its register while a value used once outside loops goes to memory.
  double spill_weight = 0;
};

// The live intervals of mf's virtual registers (before allocation), ordered by start, then class, then number.
// Loops are found from backward jumps (jmp/jcc to a LABEL placed earlier): an interval that reaches into a loop from
// before it, or out of it to after it, or whose first mention inside the loop reads it (a value carried around the
// back edge), is widened to cover the whole loop; repeated until nothing changes (nested loops). A GPR defined at 8 or
// 16 bits keeps its other bits (x86 merges partial writes), so such a definition also reads it.
// Throws std::invalid_argument naming the instruction for a virtual register read but never defined, a jump to a
// label never placed, a virtual register beyond MachineFunction::vregs, or a `remat` instruction that reads a register.
std::vector<LiveInterval> live_intervals(const MachineFunction& mf);

// Where allocation put one interval.
struct IntervalAssignment {
  LiveInterval interval;
  enum class Where : uint8_t { REG, SPILL, REMAT } where = Where::REG;
  uint32_t reg = 0;   // REG: the physical register's number
  int32_t slot = -1;  // SPILL: the spill slot
};

struct AllocationStats {
  uint32_t intervals = 0;
  uint32_t spilled = 0;       // values given a stack slot
  uint32_t reloads = 0;       // loads from spill slots inserted (after dropping those whose scratch still held the value)
  uint32_t spill_stores = 0;  // stores to spill slots inserted
  uint32_t remats = 0;        // constant definitions re-executed before a use
  uint32_t moves = 0;         // movs the two-address fixup inserted
  uint32_t copies_dropped = 0;  // register copies (mov, vmovaps, ...) whose source and destination got one register
  uint32_t frame_bytes = 0;   // rsp lowered by, after the pushes and the 64-byte alignment
  std::vector<IntervalAssignment> assignments;  // one per interval, in live_intervals' order
};

// Rewrites `mf` in place to physical registers, with prologue, epilogue and frame (mf.allocated becomes true).
// Throws std::invalid_argument naming the instruction when an operand cannot be allocated (e.g. a physical scratch
// register used by instruction selection across a point where the allocator needs it).
AllocationStats allocate_registers(MachineFunction& mf, const AllocationOptions& options);

}  // namespace doorbell::x86
