// Register allocation for the x86 backend: linear scan over live intervals (Poletto & Sarkar; the second-chance
// splitting is left out: a spilled value lives in its slot and is reloaded before each use).
//  - intervals are computed on the linear instruction order; a value live into a loop (defined before the loop's
//    label, used at or after it before the loop's backward jump) is extended to the loop's end, so loop-carried
//    values (accumulators) and loop invariants survive every iteration;
//  - GPR and VEC values are allocated separately, each from its own allocatable set (AllocationOptions);
//  - a value that finds no register is spilled to a stack slot (64 bytes for a zmm, else 8, 16 or 32): reloaded into a
//    scratch register before each use and stored after each definition; a `remat` value (a constant) is
//    re-executed before each use instead of spilled;
//  - values live across a CALL_EXTERN take callee-saved GPRs or are spilled (SysV: every vector register and rax,
//    rcx, rdx, rsi, rdi, r8-r11 are the callee's); the call is expanded (arguments into xmm0/xmm1, vzeroupper, call,
//    result from xmm0);
//  - two-address fixup: a tied instruction (compiler/x86/x86_inst.h) becomes `mov d, a` + `op d, b` when d and a got
//    different registers (b's register equal to d's goes through a scratch register for a non-commutative op);
//  - the frame: callee-saved registers used are pushed, rsp is lowered for the spill and LOCAL slots (64-byte aligned
//    when zmm is spilled) and the incoming arguments (rdi, rsi, edx, ecx stored to their ARG slots), keeping rsp
//    16-byte aligned at calls; every frame operand becomes [rsp + offset]; each `ret` gets the epilogue.
// Registers never allocated: rsp, and the scratch registers instruction selection uses for fixed-register
// instructions (rax, rcx, rdx: division, shifts by cl) and the allocator for reloads (r10, r11; the two highest VEC).
// Flags are never clobbered between instructions: reloads and spills are movs, rematerialized constants mov
// immediates, never xor.
#pragma once
#include <cstdint>

#include "compiler/x86/x86_inst.h"

namespace doorbell::x86 {

struct AllocationOptions {
  // VEC registers that exist: 16 (AVX2) or 32 (AVX-512).
  uint32_t vec_registers = 16;
  // At most this many allocatable registers per class (tests force spills with small budgets); 0: all of them
  // (GPR: rbx rbp rsi rdi r8 r9 r12-r15; VEC: all but the two scratch).
  uint32_t max_gpr = 0, max_vec = 0;
};

struct AllocationStats {
  uint32_t intervals = 0;
  uint32_t spilled = 0;       // values given a stack slot
  uint32_t reloads = 0;       // loads from spill slots inserted
  uint32_t spill_stores = 0;  // stores to spill slots inserted
  uint32_t remats = 0;        // constant definitions re-executed before a use
  uint32_t moves = 0;         // movs the two-address fixup inserted
  uint32_t frame_bytes = 0;   // rsp lowered by, after the pushes
};

// Rewrites `mf` in place to physical registers, with prologue, epilogue and frame (mf.allocated becomes true).
// Throws std::invalid_argument naming the instruction when an operand cannot be allocated (e.g. a physical scratch
// register used by instruction selection across a point where the allocator needs it).
AllocationStats allocate_registers(MachineFunction& mf, const AllocationOptions& options);

}  // namespace doorbell::x86
