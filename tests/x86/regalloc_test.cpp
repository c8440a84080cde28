// The register allocator (compiler/x86/regalloc.h): each function is run by a small interpreter
// (tests/x86/mf_interpreter.h) on virtual registers before allocation and on physical registers after, and the
// buffers it writes are compared with each other and with the value the test derives itself; the allocation's
// invariants (no two overlapping intervals share a register, values across calls in callee-saved registers or
// slots, ...) are checked on AllocationStats::assignments. ABI facts: firmware-notes/x86-abi.md.
#include "compiler/x86/regalloc.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "compiler/x86/x86_encoder.h"
#include "tests/common/error_of.h"
#include "tests/x86/mf_builder.h"
#include "tests/x86/regalloc_checks.h"
#include "tests/x86/mf_interpreter.h"

namespace doorbell::x86 {
namespace {

using doorbell::testing::error_of;
using namespace doorbell::x86::testing;
using Where = IntervalAssignment::Where;

struct Allocated {
  MachineFunction mf;
  AllocationStats stats;
  std::vector<Bytes> before, after;
};

// Runs fn before allocation, allocates a copy, runs it with the caller's rsp at four alignments mod 64, and checks
// the results agree, the ABI is kept and the invariants hold.
Allocated allocate_and_run(const MachineFunction& fn, const std::vector<Bytes>& buffers, const AllocationOptions& options) {
  Allocated r;
  MfInterpreter before;
  r.before = before.run(fn, buffers);
  r.mf = fn;
  r.stats = allocate_registers(r.mf, options);
  expect_physical(r.mf);
  expect_invariants(r.stats, options);
  for (uint64_t misalign : {0, 16, 32, 48}) {
    MfInterpreter after;
    r.after = after.run(r.mf, buffers, misalign);
    EXPECT_EQ(r.after, r.before) << "misalign " << misalign;
    EXPECT_FALSE(after.trace.call_misaligned);
    EXPECT_FALSE(after.trace.callee_saved_changed);
    EXPECT_FALSE(after.trace.rsp_changed);
    EXPECT_EQ(after.trace.calls, before.trace.calls);
  }
  return r;
}

const IntervalAssignment& assignment_of(const AllocationStats& stats, Reg r) {
  for (const IntervalAssignment& a : stats.assignments)
    if (a.interval.cls == r.cls && a.interval.vreg == r.num) return a;
  throw std::runtime_error("no interval for the register");
}

// ---- pressure ----

TEST(RegallocPressure, FortyLiveGprValuesSummedWithTenAndThreeRegisters) {
  std::vector<int64_t> in;
  int64_t expected = 0;
  for (int i = 0; i < 40; i++) in.push_back(1000 + 37 * i), expected += 1000 + 37 * i + i;
  MachineFunction mf = forty_gprs();
  for (uint32_t max_gpr : {0u, 10u, 3u}) {
    AllocationOptions options;
    options.max_gpr = max_gpr;
    Allocated r = allocate_and_run(mf, {Bytes(8), int64s(in)}, options);
    EXPECT_EQ(int64_at(r.before[0], 0), expected);
    EXPECT_EQ(int64_at(r.after[0], 0), expected);
    // 40 values live at once, at most 10 registers (13 with all: rax, rcx, rdx too, which nothing here names): at
    // least 30 (27) in slots, each stored once and reloaded once.
    const uint32_t at_least = max_gpr == 0 ? 27u : 30u;
    EXPECT_GE(r.stats.spilled, at_least) << "max_gpr " << max_gpr;
    EXPECT_GE(r.stats.spill_stores, at_least);
    EXPECT_GE(r.stats.reloads, at_least);
    EXPECT_EQ(r.stats.remats, 0u);
    EXPECT_EQ(r.stats.frame_bytes % 64, 0u);
    EXPECT_GE(r.stats.frame_bytes, 40 + 8 * r.stats.spilled);
  }
}

// 40 vector values (ymm or zmm, 8 or 16 lanes) live at once, summed lane by lane.
TEST(RegallocPressure, FortyLiveVectorValuesWithSixteenAndThirtyTwoRegisters) {
  for (uint16_t bits : {256, 512}) {
    const int lanes = bits / 32;
    Fn f;
    std::vector<Reg> v;
    for (int i = 0; i < 40; i++) {
      v.push_back(f.v(bits));
      f.e(Mn::vmovups, {R(v.back()), M(f.in, bits / 8 * i, bits)});
    }
    Reg s = f.v(bits);
    f.e(Mn::vaddps, {R(s), R(v[0]), R(v[1])});
    for (int i = 2; i < 40; i++) f.e(Mn::vaddps, {R(s), R(s), R(v[i])});
    f.e(Mn::vmovups, {M(f.out, 0, bits), R(s)});
    f.e(Mn::ret, {});
    Bytes in(40 * bits / 8);
    std::vector<float> expected(lanes, 0.0f);
    for (int i = 0; i < 40; i++)
      for (int l = 0; l < lanes; l++) {
        float x = 0.25f * i + l;
        std::memcpy(&in[(i * lanes + l) * 4], &x, 4);
      }
    for (int l = 0; l < lanes; l++) {
      float acc = (0.25f * 0 + l) + (0.25f * 1 + l);
      for (int i = 2; i < 40; i++) acc += 0.25f * i + l;
      expected[l] = acc;
    }
    for (uint32_t regs : {16u, 32u}) {
      if (bits == 512 && regs == 16) continue;  // zmm needs AVX-512: 32 registers
      AllocationOptions options;
      options.vec_registers = regs;
      Allocated r = allocate_and_run(f.mf, {Bytes(bits / 8), in}, options);
      for (int l = 0; l < lanes; l++) EXPECT_EQ(float_at(r.after[0], l), expected[l]) << "lane " << l;
      // regs - 2 allocatable for 40 values live at once.
      EXPECT_GE(r.stats.spilled, 40 - (regs - 2)) << bits << " bits, " << regs << " registers";
      EXPECT_LE(r.stats.spilled, 40u);
    }
  }
}

// Exact numbers for a small function, derived by hand with max_gpr = 2 (rsi, rdi):
//   0 bufs = [arg 0]      1 out = [bufs]      2 in = [bufs + 8]   3 a = [in]   4 b = [in + 8]   5 c = [in + 16]
//   6 s = a + b (tied)    7 s = s + c (tied)  8 [out] = s         9 ret
// Intervals: bufs [0,2] out [1,8] in [2,5] a [3,6] b [4,6] c [5,7] s [6,8]; spill weights (reads + writes over
// length, no loops): bufs 3/3, out 2/8, in 4/4, a 2/4, b 2/3, c 2/3. bufs -> rsi, out -> rdi; in takes rsi (bufs
// ends where in starts); at a both are busy: out weighs least (0.25) -> spilled, a takes rdi; at b: a (0.5) weighs
// less than in (1) and b (0.67) -> a is spilled, b takes rdi; c takes rsi (in ended at 5); s takes rdi (b ended at
// 6), and s = a + b, with b in s's register, swaps to s = b + a: no move. Spilled 2 (out, a), each stored once; a
// is stored from r10 at 3 and r10 is not written again before 6, so only out is reloaded (1).
TEST(RegallocStats, ExactCountsOfASmallSpill) {
  Fn f;
  Reg a = f.g(), b = f.g(), c = f.g(), s = f.g();
  f.e(Mn::mov, {R(a), M(f.in, 0, 64)});
  f.e(Mn::mov, {R(b), M(f.in, 8, 64)});
  f.e(Mn::mov, {R(c), M(f.in, 16, 64)});
  f.tied(Mn::add, {R(s), R(a), R(b)});
  f.tied(Mn::add, {R(s), R(s), R(c)});
  f.e(Mn::mov, {M(f.out, 0, 64), R(s)});
  f.e(Mn::ret, {});
  AllocationOptions options;
  options.max_gpr = 2;
  Allocated r = allocate_and_run(f.mf, {Bytes(8), int64s({5, 70, 900})}, options);
  EXPECT_EQ(int64_at(r.after[0], 0), 975);
  EXPECT_EQ(r.stats.intervals, 7u);
  EXPECT_EQ(r.stats.spilled, 2u);
  EXPECT_EQ(r.stats.spill_stores, 2u);
  EXPECT_EQ(r.stats.reloads, 1u);
  EXPECT_EQ(r.stats.remats, 0u);
  EXPECT_EQ(r.stats.moves, 0u);
  EXPECT_EQ(assignment_of(r.stats, f.out).where, Where::SPILL);
  EXPECT_EQ(assignment_of(r.stats, a).where, Where::SPILL);
  EXPECT_EQ(assignment_of(r.stats, f.bufs).reg, static_cast<uint32_t>(RSI));
  EXPECT_EQ(assignment_of(r.stats, f.in).reg, static_cast<uint32_t>(RSI));
  EXPECT_EQ(assignment_of(r.stats, b).reg, static_cast<uint32_t>(RDI));
  EXPECT_EQ(assignment_of(r.stats, c).reg, static_cast<uint32_t>(RSI));
  EXPECT_EQ(assignment_of(r.stats, s).reg, static_cast<uint32_t>(RDI));
  // Frame: 40 bytes of ARG slots and saved rsp, two 8-byte spill slots: 56, rounded up to 64.
  EXPECT_EQ(r.stats.frame_bytes, 64u);
}

// ---- rematerialization ----

TEST(RegallocRemat, ConstantUnderPressureIsRecomputedNotSpilled) {
  Fn f;
  Reg c = f.g();
  f.e(Mn::mov, {R(c), I(12345)}).remat = true;
  std::vector<Reg> w;
  for (int i = 0; i < 12; i++) {
    Reg v = f.g(), x = f.g();
    f.e(Mn::mov, {R(v), M(f.in, 8 * i, 64)});
    f.tied(Mn::add, {R(x), R(v), R(c)});
    w.push_back(x);
  }
  Reg s = f.g();
  f.tied(Mn::add, {R(s), R(w[0]), R(c)});
  for (int i = 1; i < 12; i++) f.tied(Mn::add, {R(s), R(s), R(w[i])});
  f.e(Mn::mov, {M(f.out, 0, 64), R(s)});
  f.e(Mn::ret, {});
  std::vector<int64_t> in;
  int64_t expected = 12345;
  for (int i = 0; i < 12; i++) in.push_back(i * i), expected += i * i + 12345;
  AllocationOptions options;
  options.max_gpr = 3;
  Allocated r = allocate_and_run(f.mf, {Bytes(8), int64s(in)}, options);
  EXPECT_EQ(int64_at(r.after[0], 0), expected);
  const IntervalAssignment& ca = assignment_of(r.stats, c);
  EXPECT_TRUE(ca.interval.remat);
  EXPECT_EQ(ca.where, Where::REMAT);
  EXPECT_EQ(ca.slot, -1);
  EXPECT_GE(r.stats.remats, 13u);  // one per use: 13 uses
  // The constant is never stored: every `mov r, 12345` writes a register, and no store writes 12345 from one.
  int movs_of_constant = 0;
  for (const Inst& inst : r.mf.code)
    if (inst.op == Mn::mov && inst.o[1].kind == Operand::Kind::IMM && inst.o[1].imm == 12345) {
      EXPECT_EQ(inst.o[0].kind, Operand::Kind::REG);
      movs_of_constant++;
    }
  EXPECT_EQ(static_cast<uint32_t>(movs_of_constant), r.stats.remats);
}

TEST(RegallocRemat, PoolConstantVectorUnderPressure) {
  Fn f;
  f.mf.constants.push_back({f.mf.new_label(), 32, std::string(32, '\0')});
  for (int l = 0; l < 8; l++) {
    float x = 0.5f + l;
    std::memcpy(f.mf.constants[0].bytes.data() + 4 * l, &x, 4);
  }
  Mem pool;
  pool.kind = MemBase::RIP;
  pool.has_base = false;
  pool.label = f.mf.constants[0].label;
  pool.bits = 256;
  Reg c = f.v(256);
  f.e(Mn::vmovups, {R(c), op_mem(pool)}).remat = true;
  std::vector<Reg> w;
  for (int i = 0; i < 20; i++) {
    Reg v = f.v(256), x = f.v(256);
    f.e(Mn::vmovups, {R(v), M(f.in, 32 * i, 256)});
    f.e(Mn::vaddps, {R(x), R(v), R(c)});
    w.push_back(x);
  }
  Reg s = f.v(256);
  f.e(Mn::vaddps, {R(s), R(w[0]), R(c)});
  for (int i = 1; i < 20; i++) f.e(Mn::vaddps, {R(s), R(s), R(w[i])});
  f.e(Mn::vmovups, {M(f.out, 0, 256), R(s)});
  f.e(Mn::ret, {});
  Bytes in(20 * 32);
  for (int i = 0; i < 20 * 8; i++) {
    float x = static_cast<float>(i % 7);
    std::memcpy(&in[4 * i], &x, 4);
  }
  AllocationOptions options;
  options.max_vec = 4;
  Allocated r = allocate_and_run(f.mf, {Bytes(32), in}, options);
  EXPECT_EQ(assignment_of(r.stats, c).where, Where::REMAT);
  EXPECT_GT(r.stats.remats, 0u);
  for (int l = 0; l < 8; l++) {
    float acc = float_at(in, l) + (0.5f + l) + (0.5f + l);
    for (int i = 1; i < 20; i++) acc += float_at(in, i * 8 + l) + (0.5f + l);
    EXPECT_EQ(float_at(r.after[0], l), acc) << "lane " << l;
  }
}

// ---- loops ----

// acc += (6 i + 15) * inv + inv2 for i in 0..9, with six temporaries per iteration competing for registers.
TEST(RegallocLoops, AccumulatorAndInvariantsSurviveEveryIteration) {
  Fn f;
  Reg inv = f.g(), inv2 = f.g(), acc = f.g(), i = f.g();
  f.e(Mn::mov, {R(inv), M(f.in, 0, 64)});
  f.e(Mn::mov, {R(inv2), M(f.in, 8, 64)});
  f.e(Mn::mov, {R(acc), I(0)});
  f.e(Mn::mov, {R(i), I(0)});
  int32_t top = f.label();
  const int32_t head = f.pos();
  f.place(top);
  std::vector<Reg> t;
  for (int j = 0; j < 6; j++) {
    t.push_back(f.g());
    Mem m;
    m.base = i;
    m.disp = j;
    f.e(Mn::lea, {R(t.back()), op_mem(m)});
  }
  Reg u = f.g();
  f.e(Mn::mov, {R(u), R(t[0])});
  for (int j = 1; j < 6; j++) f.tied(Mn::add, {R(u), R(u), R(t[j])});
  f.tied(Mn::imul, {R(u), R(u), R(inv)});
  f.tied(Mn::add, {R(acc), R(acc), R(u)});
  f.tied(Mn::add, {R(acc), R(acc), R(inv2)});
  f.tied(Mn::add, {R(i), R(i), I(1)});
  f.e(Mn::cmp, {R(i), I(10)});
  const int32_t back = f.pos();
  f.jump(Mn::jl, top);
  f.e(Mn::mov, {M(f.out, 0, 64), R(acc)});
  f.e(Mn::mov, {M(f.out, 8, 64), R(i)});
  f.e(Mn::ret, {});
  int64_t expected = 0;
  for (int k = 0; k < 10; k++) expected += (6 * k + 15) * 3 + 1000;
  // The invariants are last used inside the loop but live to its backward jump; the counter and accumulator too.
  for (const LiveInterval& iv : live_intervals(f.mf)) {
    if (iv.cls == RegClass::GPR && (iv.vreg == inv.num || iv.vreg == inv2.num)) { EXPECT_EQ(iv.end, back); }
    if (iv.cls == RegClass::GPR && (iv.vreg == acc.num || iv.vreg == i.num)) { EXPECT_GT(iv.end, back); }
    if (iv.cls == RegClass::GPR && iv.vreg == u.num) { EXPECT_TRUE(iv.start > head && iv.end < back); }
  }
  for (uint32_t max_gpr : {10u, 4u, 3u}) {
    AllocationOptions options;
    options.max_gpr = max_gpr;
    Allocated r = allocate_and_run(f.mf, {Bytes(16), int64s({3, 1000})}, options);
    EXPECT_EQ(int64_at(r.after[0], 0), expected) << "max_gpr " << max_gpr;
    EXPECT_EQ(int64_at(r.after[0], 1), 10);
    // No register of an invariant is given to anything else inside the loop.
    for (Reg inv_reg : {inv, inv2}) {
      const IntervalAssignment& ia = assignment_of(r.stats, inv_reg);
      if (ia.where != Where::REG) continue;
      for (const IntervalAssignment& other : r.stats.assignments)
        if (other.interval.cls == RegClass::GPR && other.where == Where::REG && other.interval.vreg != inv_reg.num &&
            other.interval.start < back && other.interval.end > head) {
          EXPECT_NE(other.reg, ia.reg) << "%g" << other.interval.vreg << " shares the invariant's register in the loop";
        }
    }
  }
}

// True when some instruction of the allocated code between the loop's label and its backward jump accesses the
// frame (a reload, a spill store): [rsp + offset].
bool frame_access_in_loop(const MachineFunction& mf) {
  int32_t head = -1;
  for (int32_t p = 0; p < static_cast<int32_t>(mf.code.size()); p++) {
    const Inst& inst = mf.code[p];
    if (inst.op == Mn::LABEL && head < 0) head = p;
    if (inst.op == Mn::jl) return false;
    if (head < 0) continue;
    for (int k = 0; k < inst.n; k++)
      if (inst.o[k].kind == Operand::Kind::MEM && inst.o[k].mem.has_base && inst.o[k].mem.base.num == RSP) return true;
  }
  return false;
}

// once is loaded before the loop and read once after it; inv is read three times in every iteration and once after
// the loop, last. With 3 registers for out, once, inv, acc and i, the two read only outside the loop (out, once) go
// to memory and the loop runs without a reload: spill weights count a read in a loop 10 times one outside (the old
// "spill what ends furthest" spilled inv, which ends last, and reloaded it three times per iteration).
TEST(RegallocSpillWeights, LoopInvariantKeepsItsRegisterValueUsedOnceOutsideIsSpilled) {
  Fn f;
  Reg once = f.g(), inv = f.g(), acc = f.g(), i = f.g();
  f.e(Mn::mov, {R(once), M(f.in, 0, 64)});
  f.e(Mn::mov, {R(inv), M(f.in, 8, 64)});
  f.e(Mn::mov, {R(acc), I(0)});
  f.e(Mn::mov, {R(i), I(0)});
  int32_t top = f.label();
  f.place(top);
  for (int k = 0; k < 3; k++) f.tied(Mn::add, {R(acc), R(acc), R(inv)});
  f.tied(Mn::add, {R(i), R(i), I(1)});
  f.e(Mn::cmp, {R(i), I(10)});
  f.jump(Mn::jl, top);
  f.e(Mn::mov, {M(f.out, 0, 64), R(acc)});
  f.e(Mn::mov, {M(f.out, 8, 64), R(once)});
  f.e(Mn::mov, {M(f.out, 16, 64), R(inv)});
  f.e(Mn::ret, {});
  AllocationOptions options;
  options.max_gpr = 3;
  Allocated r = allocate_and_run(f.mf, {Bytes(24), int64s({77, 5})}, options);
  EXPECT_EQ(int64_at(r.after[0], 0), 150);  // 10 iterations of 3 * 5
  EXPECT_EQ(int64_at(r.after[0], 1), 77);
  EXPECT_EQ(assignment_of(r.stats, inv).where, Where::REG);
  EXPECT_EQ(assignment_of(r.stats, acc).where, Where::REG);
  EXPECT_EQ(assignment_of(r.stats, i).where, Where::REG);
  EXPECT_EQ(assignment_of(r.stats, once).where, Where::SPILL);
  EXPECT_EQ(assignment_of(r.stats, f.out).where, Where::SPILL);
  EXPECT_FALSE(frame_access_in_loop(r.mf)) << print_listing(r.mf);
  EXPECT_EQ(int64_at(r.after[0], 2), 5);
  // Weights: inv is written once and read once outside the loop (2) and read 3 times at depth 1 (30), over its
  // interval.
  for (const LiveInterval& iv : live_intervals(f.mf))
    if (iv.cls == RegClass::GPR && iv.vreg == inv.num) { EXPECT_DOUBLE_EQ(iv.spill_weight, 32.0 / (iv.end - iv.start + 1)); }
}

// ---- copies ----

// The allocated code's register-to-register copies whose two operands are one register.
int self_copies(const MachineFunction& mf) {
  int n = 0;
  for (const Inst& inst : mf.code)
    if ((inst.op == Mn::mov || inst.op == Mn::vmovaps || inst.op == Mn::kmovw) && inst.n == 2 &&
        inst.o[0].kind == Operand::Kind::REG && inst.o[1].kind == Operand::Kind::REG && inst.o[0].reg == inst.o[1].reg &&
        inst.o[0].reg.bits == inst.o[1].reg.bits)
      n++;
  return n;
}

// b = a (a's last use), c = b (b's last use), [out] = c + 1: each copy's destination takes its source's register (the
// hint), and the copies, left as `mov r, r`, are dropped. Before: b and c took the first free register in order, and
// isel's copies of a loop bound showed up as `mov r9, r9` in the listings.
TEST(RegallocCopies, CopyIntoTheSourcesRegisterIsDropped) {
  Fn f;
  Reg a = f.g(), b = f.g(), c = f.g(), d = f.g();
  f.e(Mn::mov, {R(a), M(f.in, 0, 64)});
  f.e(Mn::mov, {R(b), R(a)});
  f.e(Mn::mov, {R(c), R(b)});
  f.tied(Mn::add, {R(d), R(c), I(1)});
  f.e(Mn::mov, {M(f.out, 0, 64), R(d)});
  f.e(Mn::ret, {});
  Allocated r = allocate_and_run(f.mf, {Bytes(8), int64s({41})}, AllocationOptions{});
  EXPECT_EQ(int64_at(r.after[0], 0), 42);
  EXPECT_EQ(assignment_of(r.stats, b).reg, assignment_of(r.stats, a).reg);
  EXPECT_EQ(assignment_of(r.stats, c).reg, assignment_of(r.stats, a).reg);
  EXPECT_EQ(assignment_of(r.stats, d).reg, assignment_of(r.stats, c).reg);  // tied: no mov for the tie either
  EXPECT_EQ(r.stats.copies_dropped, 2u);
  EXPECT_EQ(r.stats.moves, 0u);
  EXPECT_EQ(self_copies(r.mf), 0) << print_listing(r.mf);
  int movs_between_registers = 0;
  for (const Inst& inst : r.mf.code)
    if (inst.op == Mn::mov && inst.o[0].kind == Operand::Kind::REG && inst.o[1].kind == Operand::Kind::REG &&
        inst.o[0].reg.num != RSP && inst.o[1].reg.num != RSP && inst.o[0].reg.num != RAX && inst.o[1].reg.num != RAX)
      movs_between_registers++;
  EXPECT_EQ(movs_between_registers, 0) << print_listing(r.mf);
}

// A 32-bit copy zero-extends: e = mov e32, x32 read back at 64 bits must clear x's upper half even when e takes x's
// register, so that copy stays; a vmovaps xmm of a value later read as ymm clears lanes 4-7 and stays too.
TEST(RegallocCopies, CopiesThatClearUpperBitsTheValueIsReadWithStay) {
  auto at = [](Reg r, uint16_t bits) {
    r.bits = bits;
    return R(r);
  };
  Fn f;
  Reg x = f.g(), e = f.g();
  f.e(Mn::mov, {R(x), M(f.in, 0, 64)});
  f.e(Mn::mov, {at(e, 32), at(x, 32)});
  f.e(Mn::mov, {M(f.out, 0, 64), R(e)});
  Reg v = f.v(256), w = f.v(256);
  f.e(Mn::vmovups, {R(v), M(f.in, 8, 256)});
  f.e(Mn::vmovaps, {at(w, 128), at(v, 128)});
  f.e(Mn::vmovups, {M(f.out, 8, 256), R(w)});
  f.e(Mn::ret, {});
  std::vector<int64_t> in = {static_cast<int64_t>(0xdeadbeef00000007ull), 1, 2, 3, 4};
  Allocated r = allocate_and_run(f.mf, {Bytes(40), int64s(in)}, AllocationOptions{});
  EXPECT_EQ(int64_at(r.after[0], 0), 7);
  EXPECT_EQ(int64_at(r.after[0], 1), 1);
  EXPECT_EQ(int64_at(r.after[0], 2), 2);
  EXPECT_EQ(int64_at(r.after[0], 3), 0);
  EXPECT_EQ(int64_at(r.after[0], 4), 0);
  EXPECT_EQ(assignment_of(r.stats, e).reg, assignment_of(r.stats, x).reg);
  EXPECT_EQ(assignment_of(r.stats, w).reg, assignment_of(r.stats, v).reg);
  EXPECT_EQ(r.stats.copies_dropped, 0u);
}

// A spilled accumulator read by two neighbouring instructions (as max's vcmpps and vmaxps read it) is loaded into
// xmm14 once, not twice; after its store from xmm14 the next read needs no load either; a label (a join) forgets
// what xmm14 held, so the loop's first read loads it.
TEST(RegallocReloads, ScratchStillHoldingTheSlotIsNotReloaded) {
  Fn f;
  constexpr int kAcc = 4;
  std::vector<Reg> acc;
  for (int j = 0; j < kAcc; j++) {
    acc.push_back(f.v(128));
    f.e(Mn::vmovups, {R(acc.back()), M(f.in, 16 * j, 128)});
  }
  Reg i = f.g();
  f.e(Mn::mov, {R(i), I(0)});
  int32_t top = f.label();
  f.place(top);
  for (int j = 0; j < kAcc; j++) {
    Reg t = f.v(128);
    f.e(Mn::vmulps, {R(t), R(acc[j]), R(acc[j])});   // reads acc[j]
    f.e(Mn::vaddps, {R(acc[j]), R(acc[j]), R(t)});       // reads it again, writes it
    f.e(Mn::vaddps, {R(acc[j]), R(acc[j]), R(acc[j])});  // reads what was just stored
  }
  f.tied(Mn::add, {R(i), R(i), I(1)});
  f.e(Mn::cmp, {R(i), I(2)});
  f.jump(Mn::jl, top);
  for (int j = 0; j < kAcc; j++) f.e(Mn::vmovups, {M(f.out, 16 * j, 128), R(acc[j])});
  f.e(Mn::ret, {});
  std::vector<float> in(4 * kAcc);
  for (size_t k = 0; k < in.size(); k++) in[k] = 0.25f * static_cast<float>(k % 5);
  Bytes in_bytes(in.size() * 4);
  std::memcpy(in_bytes.data(), in.data(), in_bytes.size());
  AllocationOptions options;
  options.max_vec = 2;
  Allocated r = allocate_and_run(f.mf, {Bytes(16 * kAcc), in_bytes}, options);
  for (size_t k = 0; k < in.size(); k++) {
    float x = in[k];
    for (int it = 0; it < 2; it++) x = 2 * (x + x * x);
    EXPECT_EQ(float_at(r.after[0], k), x) << k;
  }
  int spilled = 0;
  for (const Reg& a : acc) spilled += assignment_of(r.stats, a).where == Where::SPILL;
  EXPECT_GE(spilled, 2);
  // Per spilled accumulator: a load before vmulps in the loop and one before the store after it; the vaddps reads
  // reuse xmm14/xmm15 (before: 3 in the loop).
  EXPECT_EQ(r.stats.reloads, static_cast<uint32_t>(2 * spilled)) << print_listing(r.mf);
}

// q = x / y through rax and rdx (as instruction selection divides), then 12 values live at once: those after the
// division may take rax, rcx and rdx (13 registers instead of 10, no spill), those alive around it never do.
TEST(RegallocFixedRegisters, RaxRcxRdxHoldValuesOutsideTheDivisionsSpan) {
  Fn f;
  Reg x = f.g(), y = f.g(), q = f.g();
  f.e(Mn::mov, {R(x), M(f.in, 0, 64)});
  f.e(Mn::mov, {R(y), M(f.in, 8, 64)});
  const int32_t lo = f.pos();
  f.e(Mn::mov, {R(gpr(RAX)), R(x)});
  f.e(Mn::cqo, {});
  f.e(Mn::idiv, {R(y)});
  const int32_t hi = f.pos();
  f.e(Mn::mov, {R(q), R(gpr(RAX))});
  std::vector<Reg> v;
  for (int k = 0; k < 9; k++) {
    v.push_back(f.g());
    f.e(Mn::mov, {R(v.back()), M(f.in, 16 + 8 * k, 64)});
  }
  for (int k = 0; k < 9; k++) f.tied(Mn::add, {R(q), R(q), R(v[k])});
  f.e(Mn::mov, {M(f.out, 0, 64), R(q)});
  f.e(Mn::ret, {});
  std::vector<int64_t> in = {1000, 7};
  int64_t expected = 1000 / 7;
  for (int k = 0; k < 9; k++) in.push_back(11 * k + 3), expected += 11 * k + 3;
  Allocated r = allocate_and_run(f.mf, {Bytes(8), int64s(in)}, AllocationOptions{});
  EXPECT_EQ(int64_at(r.after[0], 0), expected);
  EXPECT_EQ(r.stats.spilled, 0u) << print_listing(r.mf);
  int in_fixed = 0;
  for (const IntervalAssignment& a : r.stats.assignments) {
    if (a.interval.cls != RegClass::GPR || a.where != Where::REG) continue;
    const bool fixed = a.reg == RAX || a.reg == RCX || a.reg == RDX;
    in_fixed += fixed;
    if (fixed) { EXPECT_TRUE(a.interval.end < lo || a.interval.start > hi) << "%g" << a.interval.vreg << " in GPR " << a.reg; }
  }
  EXPECT_GT(in_fixed, 0);
  // With max_gpr set, only the first max_gpr of rsi, rdi, r8, r9, rbx, rbp, r12-r15: never rax, rcx, rdx.
  AllocationOptions ten;
  ten.max_gpr = 10;
  Allocated r10 = allocate_and_run(f.mf, {Bytes(8), int64s(in)}, ten);
  EXPECT_EQ(int64_at(r10.after[0], 0), expected);
  EXPECT_GT(r10.stats.spilled, 0u);
}

// acc += i * j + inv (+ inv2 + inv3) for i < 4, j < 5.
TEST(RegallocLoops, NestedLoops) {
  Fn f;
  Reg inv = f.g(), inv2 = f.g(), inv3 = f.g(), acc = f.g(), i = f.g(), j = f.g();
  f.e(Mn::mov, {R(inv), M(f.in, 0, 64)});
  f.e(Mn::mov, {R(inv2), M(f.in, 8, 64)});
  f.e(Mn::mov, {R(inv3), M(f.in, 16, 64)});
  f.e(Mn::mov, {R(acc), I(0)});
  f.e(Mn::mov, {R(i), I(0)});
  int32_t outer = f.label(), inner = f.label();
  f.place(outer);
  f.e(Mn::mov, {R(j), I(0)});
  f.place(inner);
  Reg t = f.g();
  f.tied(Mn::imul, {R(t), R(i), R(j)});
  f.tied(Mn::add, {R(t), R(t), R(inv)});
  f.tied(Mn::add, {R(acc), R(acc), R(t)});
  f.tied(Mn::add, {R(j), R(j), I(1)});
  f.e(Mn::cmp, {R(j), I(5)});
  const int32_t inner_back = f.pos();
  f.jump(Mn::jl, inner);
  f.tied(Mn::add, {R(acc), R(acc), R(inv2)});
  f.tied(Mn::add, {R(i), R(i), I(1)});
  f.e(Mn::cmp, {R(i), I(4)});
  const int32_t outer_back = f.pos();
  f.jump(Mn::jl, outer);
  f.tied(Mn::add, {R(acc), R(acc), R(inv3)});
  f.e(Mn::mov, {M(f.out, 0, 64), R(acc)});
  f.e(Mn::ret, {});
  int64_t expected = 0;
  for (int a = 0; a < 4; a++) {
    for (int b = 0; b < 5; b++) expected += a * b + 7;
    expected += 100;
  }
  expected += 5000;
  for (const LiveInterval& iv : live_intervals(f.mf)) {
    if (iv.cls != RegClass::GPR) continue;
    // inv is used only in the inner loop but must live through the outer one.
    if (iv.vreg == inv.num || iv.vreg == inv2.num || iv.vreg == i.num) { EXPECT_EQ(iv.end, outer_back); }
    // j is reset each outer iteration and read first in the inner loop: it covers the inner loop.
    if (iv.vreg == j.num) { EXPECT_GE(iv.end, inner_back); }
  }
  for (uint32_t max_gpr : {0u, 4u, 3u}) {
    AllocationOptions options;
    options.max_gpr = max_gpr;
    Allocated r = allocate_and_run(f.mf, {Bytes(8), int64s({7, 100, 5000})}, options);
    EXPECT_EQ(int64_at(r.after[0], 0), expected) << "max_gpr " << max_gpr;
  }
}

// Exact intervals of a small loop:
//   0 a = 1 (remat)   1 acc = 0   2 L:   3 t = lea [a + carried]   4 acc = acc + t   5 c = acc   6 carried = 2
//   7 cmp acc, 100    8 jl L      9 d = c   10 ret
TEST(RegallocIntervals, LoopWidening) {
  MachineFunction mf;
  auto g = [&] { return mf.new_vreg(RegClass::GPR, 64); };
  Reg a = g(), acc = g(), t = g(), c = g(), carried = g(), d = g();
  int32_t l = mf.new_label();
  auto e = [&](Mn op, std::initializer_list<Operand> ops) -> Inst& {
    mf.code.push_back(make_inst(op, ops));
    return mf.code.back();
  };
  e(Mn::mov, {R(a), I(1)}).remat = true;
  e(Mn::mov, {R(acc), I(0)});
  e(Mn::LABEL, {op_label(l)});
  e(Mn::lea, {R(t), MI(a, carried, 1, 0, 0)});
  e(Mn::add, {R(acc), R(acc), R(t)}).tied = true;
  e(Mn::mov, {R(c), R(acc)});
  e(Mn::mov, {R(carried), I(2)});
  e(Mn::cmp, {R(acc), I(100)});
  e(Mn::jl, {op_label(l)});
  e(Mn::mov, {R(d), R(c)});
  e(Mn::ret, {});
  std::vector<LiveInterval> ivs = live_intervals(mf);
  auto find = [&](Reg r) {
    for (const LiveInterval& iv : ivs)
      if (iv.vreg == r.num) return iv;
    throw std::runtime_error("missing");
  };
  EXPECT_EQ(find(a).start, 0); EXPECT_EQ(find(a).end, 8);              // live into the loop: to the jump
  EXPECT_EQ(find(acc).start, 1); EXPECT_EQ(find(acc).end, 8);          // the accumulator
  EXPECT_EQ(find(t).start, 3); EXPECT_EQ(find(t).end, 4);              // defined and dead inside: not widened
  EXPECT_EQ(find(c).start, 2); EXPECT_EQ(find(c).end, 9);              // defined inside, live out: from the label
  EXPECT_EQ(find(carried).start, 2); EXPECT_EQ(find(carried).end, 8);  // read (3) before written (6): all the loop
  EXPECT_EQ(find(d).start, 9); EXPECT_EQ(find(d).end, 9);
  EXPECT_TRUE(find(a).remat);     // one definition, a remat mov
  EXPECT_FALSE(find(acc).remat);  // redefined in the loop
  EXPECT_FALSE(find(carried).remat);  // a constant, but not marked remat
  EXPECT_EQ(ivs.size(), 6u);
  EXPECT_EQ(ivs.front().vreg, a.num);  // ordered by start
  for (const LiveInterval& iv : ivs) EXPECT_FALSE(iv.crosses_call);
}

// A value set on two paths around a forward branch (x = a < 10 ? 200 : 100), with eight values live across the
// branch competing for registers; both paths run.
TEST(RegallocBranches, ValueSetOnTwoPathsAroundAForwardBranch) {
  Fn f;
  Reg a = f.g(), x = f.g();
  f.e(Mn::mov, {R(a), M(f.in, 0, 64)});
  std::vector<Reg> live;
  for (int i = 0; i < 8; i++) {
    live.push_back(f.g());
    f.e(Mn::mov, {R(live.back()), M(f.in, 8 + 8 * i, 64)});
  }
  int32_t other = f.label(), join = f.label();
  f.e(Mn::cmp, {R(a), I(10)});
  f.jump(Mn::jl, other);
  f.e(Mn::mov, {R(x), I(100)});
  f.jump(Mn::jmp, join);
  f.place(other);
  f.e(Mn::mov, {R(x), I(200)});
  f.place(join);
  for (Reg v : live) f.tied(Mn::add, {R(x), R(x), R(v)});
  f.tied(Mn::add, {R(x), R(x), R(a)});
  f.e(Mn::mov, {M(f.out, 0, 64), R(x)});
  f.e(Mn::ret, {});
  for (int64_t av : {3, 30}) {
    std::vector<int64_t> in = {av};
    int64_t expected = (av < 10 ? 200 : 100) + av;
    for (int i = 0; i < 8; i++) in.push_back(1 << i), expected += 1 << i;
    for (uint32_t max_gpr : {0u, 3u}) {
      AllocationOptions options;
      options.max_gpr = max_gpr;
      Allocated r = allocate_and_run(f.mf, {Bytes(8), int64s(in)}, options);
      EXPECT_EQ(int64_at(r.after[0], 0), expected) << "a " << av << ", max_gpr " << max_gpr;
      EXPECT_FALSE(assignment_of(r.stats, x).interval.remat);  // two definitions: not a constant
    }
  }
}

// last = the last element >= 50, set only on some iterations of a loop and read after it: its register must
// survive the iterations that skip the definition.
TEST(RegallocBranches, ConditionalDefinitionInALoopReadAfterIt) {
  Fn f;
  Reg last = f.g(), i = f.g(), t = f.g(), n = f.g();
  f.e(Mn::mov, {R(last), I(-1)});
  f.e(Mn::mov, {R(i), I(0)});
  f.e(Mn::mov, {R(n), I(8)});
  int32_t top = f.label(), skip = f.label();
  f.place(top);
  f.e(Mn::mov, {R(t), MI(f.in, i, 8, 0, 64)});
  std::vector<Reg> temps;
  for (int j = 0; j < 4; j++) {  // pressure inside the loop
    temps.push_back(f.g());
    f.tied(Mn::add, {R(temps.back()), R(t), I(j)});
  }
  Reg u = f.g();
  f.e(Mn::mov, {R(u), R(temps[0])});
  for (int j = 1; j < 4; j++) f.tied(Mn::add, {R(u), R(u), R(temps[j])});
  f.e(Mn::cmp, {R(u), I(4 * 50 + 6)});
  f.jump(Mn::jl, skip);
  Reg d = f.g();
  f.e(Mn::mov, {R(d), R(t)});
  f.e(Mn::mov, {R(last), R(d)});
  f.place(skip);
  f.tied(Mn::add, {R(i), R(i), I(1)});
  f.e(Mn::cmp, {R(i), R(n)});
  f.jump(Mn::jl, top);
  f.e(Mn::mov, {M(f.out, 0, 64), R(last)});
  f.e(Mn::ret, {});
  for (uint32_t max_gpr : {0u, 4u, 3u}) {
    AllocationOptions options;
    options.max_gpr = max_gpr;
    // Element 5 is the last >= 50; elements 6 and 7 skip the definition.
    Allocated r = allocate_and_run(f.mf, {Bytes(8), int64s({1, 60, 2, 70, 3, 80, 4, 5})}, options);
    EXPECT_EQ(int64_at(r.after[0], 0), 80) << "max_gpr " << max_gpr;
  }
}

// ---- two-address fixup ----

// d = a - b where b dies at the sub and d gets b's register while a lives on (max_gpr 3: see the derivation in
// ExactCountsOfASmallSpill for how bufs/out/in take rsi and rdi): a non-commutative op copies b aside first.
TEST(RegallocTied, DestinationInSecondSourcesRegisterGoesThroughAScratch) {
  for (Mn op : {Mn::sub, Mn::add}) {
    Fn f;
    Reg a = f.g(), b = f.g(), d = f.g();
    f.e(Mn::mov, {R(a), M(f.in, 0, 64)});
    f.e(Mn::mov, {R(b), M(f.in, 8, 64)});
    f.tied(op, {R(d), R(a), R(b)});
    f.e(Mn::mov, {M(f.out, 0, 64), R(d)});
    f.e(Mn::mov, {M(f.out, 8, 64), R(a)});
    f.e(Mn::ret, {});
    AllocationOptions options;
    options.max_gpr = 3;
    Allocated r = allocate_and_run(f.mf, {Bytes(16), int64s({1000, 1})}, options);
    EXPECT_EQ(int64_at(r.after[0], 0), op == Mn::sub ? 999 : 1001);
    EXPECT_EQ(int64_at(r.after[0], 1), 1000);
    const uint32_t dr = assignment_of(r.stats, d).reg, ar = assignment_of(r.stats, a).reg;
    ASSERT_EQ(assignment_of(r.stats, d).where, Where::REG);
    ASSERT_EQ(dr, assignment_of(r.stats, b).reg) << "the test needs d in b's register";
    ASSERT_NE(dr, ar);
    auto it = std::find_if(r.mf.code.begin(), r.mf.code.end(), [&](const Inst& i) {
      return i.op == op && i.o[0].kind == Operand::Kind::REG && i.o[0].reg.num != RSP;  // not the prologue's
    });
    ASSERT_NE(it, r.mf.code.end());
    EXPECT_EQ(it->n, 2);
    EXPECT_EQ(it->o[0].reg.num, dr);
    if (op == Mn::sub) {
      // mov r10, b; mov d, a; sub d, r10
      EXPECT_EQ(r.stats.moves, 2u);
      EXPECT_EQ(it->o[1].reg.num, static_cast<uint32_t>(R10));
      EXPECT_EQ((it - 1)->op, Mn::mov); EXPECT_EQ((it - 1)->o[0].reg.num, dr); EXPECT_EQ((it - 1)->o[1].reg.num, ar);
      EXPECT_EQ((it - 2)->op, Mn::mov); EXPECT_EQ((it - 2)->o[0].reg.num, static_cast<uint32_t>(R10)); EXPECT_EQ((it - 2)->o[1].reg.num, dr);
    } else {
      // Commutative: add d, a (d already holds b).
      EXPECT_EQ(r.stats.moves, 0u);
      EXPECT_EQ(it->o[1].reg.num, ar);
    }
  }
}

// d = a - d: the destination is also the second source (the same value).
TEST(RegallocTied, DestinationIsTheSecondSourceValue) {
  for (uint32_t max_gpr : {0u, 3u}) {
    Fn f;
    Reg a = f.g(), d = f.g();
    f.e(Mn::mov, {R(a), M(f.in, 0, 64)});
    f.e(Mn::mov, {R(d), M(f.in, 8, 64)});
    f.tied(Mn::sub, {R(d), R(a), R(d)});
    f.tied(Mn::sub, {R(d), R(a), R(d)});  // twice: a - (a - x) = x
    f.tied(Mn::sub, {R(d), R(a), R(d)});
    f.e(Mn::mov, {M(f.out, 0, 64), R(d)});
    f.e(Mn::mov, {M(f.out, 8, 64), R(a)});
    f.e(Mn::ret, {});
    AllocationOptions options;
    options.max_gpr = max_gpr;
    Allocated r = allocate_and_run(f.mf, {Bytes(16), int64s({50, 8})}, options);
    EXPECT_EQ(int64_at(r.after[0], 0), 42);
    EXPECT_EQ(int64_at(r.after[0], 1), 50);
    EXPECT_GE(r.stats.moves, 6u);  // each sub: b copied aside, a moved in
  }
}

// imul has no two-operand form with an immediate: a tied `imul d, a, 7` becomes `imul d, a, 7`, also with a spilled.
TEST(RegallocTied, ImulByAnImmediateTakesTheThreeOperandForm) {
  for (uint32_t max_gpr : {0u, 2u}) {
    Fn f;
    Reg a = f.g(), d = f.g();
    f.e(Mn::mov, {R(a), M(f.in, 0, 64)});
    f.tied(Mn::imul, {R(d), R(a), I(7)});
    f.e(Mn::mov, {M(f.out, 0, 64), R(d)});
    f.e(Mn::mov, {M(f.out, 8, 64), R(a)});
    f.e(Mn::ret, {});
    AllocationOptions options;
    options.max_gpr = max_gpr;
    Allocated r = allocate_and_run(f.mf, {Bytes(16), int64s({-6})}, options);
    EXPECT_EQ(int64_at(r.after[0], 0), -42);
    EXPECT_EQ(int64_at(r.after[0], 1), -6);
    EXPECT_EQ(r.stats.moves, 0u);
    int imuls = 0;
    for (const Inst& i : r.mf.code)
      if (i.op == Mn::imul) {
        imuls++;
        EXPECT_EQ(i.n, 3);
        EXPECT_EQ(i.o[2].imm, 7);
      }
    EXPECT_EQ(imuls, 1);
  }
}

// ---- calls ----

// p, q: doubles; r = twice_plus(q, p) with p in xmm0 and q in xmm1 (the arguments swap); x lives across both calls
// (spilled), three GPR values too (callee-saved registers); z = minus(r, x); h = halve(z).
TEST(RegallocCalls, ValuesAcrossCallsSurviveAndArgumentsSwapSafely) {
  for (uint32_t max_gpr : {0u, 3u}) {
    Fn f;
    f.mf.externs = {"twice_plus", "minus", "halve"};
    Reg p = f.v(128), q = f.v(128), x = f.v(128), r = f.v(128), z = f.v(128), h = f.v(128);
    f.e(Mn::vmovsd, {R(x), M(f.in, 16, 64)});
    std::vector<Reg> gs;
    for (int i = 0; i < 3; i++) {
      gs.push_back(f.g());
      f.e(Mn::mov, {R(gs.back()), M(f.in, 24 + 8 * i, 64)});
    }
    f.e(Mn::vmovsd, {R(p), M(f.in, 0, 64)});
    f.e(Mn::vmovsd, {R(q), M(f.in, 8, 64)});
    f.e(Mn::CALL_EXTERN, {op_symbol(0), R(r), R(q), R(p)});
    f.e(Mn::CALL_EXTERN, {op_symbol(1), R(z), R(r), R(x)});
    f.e(Mn::CALL_EXTERN, {op_symbol(2), R(h), R(z)});
    f.e(Mn::vaddsd, {R(h), R(h), R(x)});
    f.e(Mn::vmovsd, {M(f.out, 0, 64), R(h)});
    Reg s = f.g();
    f.tied(Mn::add, {R(s), R(gs[0]), R(gs[1])});
    f.tied(Mn::add, {R(s), R(s), R(gs[2])});
    f.e(Mn::mov, {M(f.out, 8, 64), R(s)});
    f.e(Mn::ret, {});
    Bytes in(48);
    double dp = 1.5, dq = 10, dx = 0.25;
    std::memcpy(&in[0], &dp, 8), std::memcpy(&in[8], &dq, 8), std::memcpy(&in[16], &dx, 8);
    int64_t g3[3] = {100, 20, 3};
    std::memcpy(&in[24], g3, 24);
    AllocationOptions options;
    options.max_gpr = max_gpr;
    Allocated a = allocate_and_run(f.mf, {Bytes(16), in}, options);
    // twice_plus(10, 1.5) = 21.5; minus(21.5, 0.25) = 21.25; halve = 10.625; + 0.25 = 10.875.
    EXPECT_EQ(double_at(a.after[0], 0), 10.875);
    EXPECT_EQ(int64_at(a.after[0], 1), 123);
    EXPECT_EQ(assignment_of(a.stats, x).where, Where::SPILL);
    EXPECT_TRUE(assignment_of(a.stats, x).interval.crosses_call);
    EXPECT_EQ(assignment_of(a.stats, p).reg, 0u);
    EXPECT_EQ(assignment_of(a.stats, q).reg, 1u);
    for (Reg g : gs) {
      const IntervalAssignment& ga = assignment_of(a.stats, g);
      EXPECT_TRUE(ga.interval.crosses_call);
      if (max_gpr == 0) { EXPECT_EQ(ga.where, Where::REG); }  // rbx, rbp, r12.. are free
    }
    // Each call: vzeroupper right before it.
    int calls = 0;
    for (size_t i = 0; i < a.mf.code.size(); i++)
      if (a.mf.code[i].op == Mn::call) {
        calls++;
        ASSERT_GT(i, 0u);
        EXPECT_EQ(a.mf.code[i - 1].op, Mn::vzeroupper);
      }
    EXPECT_EQ(calls, 3);
  }
}

// ---- masks ----

// Eight mask values live at once (five allocatable): spilled through kmovw.
TEST(RegallocMasks, EightLiveMasksSpill) {
  Fn f;
  std::vector<Reg> ks;
  for (int i = 0; i < 8; i++) {
    Reg g = f.g(32), k = f.k();
    f.e(Mn::mov, {R(g), M(f.in, 4 * i, 32)});
    f.e(Mn::kmovw, {R(k), R(g)});
    ks.push_back(k);
  }
  Reg s = f.g(32);
  f.e(Mn::mov, {R(s), I(0)});
  for (int i = 0; i < 8; i++) {
    Reg g = f.g(32);
    f.e(Mn::kmovw, {R(g), R(ks[i])});
    f.tied(Mn::add, {R(s), R(s), R(g)});
  }
  f.e(Mn::mov, {M(f.out, 0, 32), R(s)});
  f.e(Mn::ret, {});
  Bytes in(32);
  int32_t expected = 0;
  for (int i = 0; i < 8; i++) {
    int32_t x = 0x101 * (i + 1);
    std::memcpy(&in[4 * i], &x, 4);
    expected += x;
  }
  Allocated r = allocate_and_run(f.mf, {Bytes(8), in}, AllocationOptions{});
  int32_t got;
  std::memcpy(&got, r.after[0].data(), 4);
  EXPECT_EQ(got, expected);
  int mask_spills = 0;
  for (const IntervalAssignment& a : r.stats.assignments)
    if (a.interval.cls == RegClass::MASK && a.where == Where::SPILL) mask_spills++;
  EXPECT_EQ(mask_spills, 3);
}

// Masks as EVEX write masks of vaddps under pressure of both classes: seven masks (five allocatable) and 16
// vectors with max_vec 4; merge masking reads the destination, zero masking does not.
TEST(RegallocMasks, WriteMasksUnderPressure) {
  Fn f;
  std::vector<Reg> ks, vs;
  for (int i = 0; i < 7; i++) {
    Reg g = f.g(32);
    ks.push_back(f.k());
    f.e(Mn::mov, {R(g), I(0x5a5a >> i)});
    f.e(Mn::kmovw, {R(ks.back()), R(g)});
  }
  for (int i = 0; i < 16; i++) {
    vs.push_back(f.v(512));
    f.e(Mn::vmovups, {R(vs.back()), M(f.in, 64 * i, 512)});
  }
  Reg acc = f.v(512);
  f.e(Mn::vmovups, {R(acc), M(f.in, 0, 512)});
  for (int i = 0; i < 16; i++) {
    Inst& add = f.e(Mn::vaddps, {R(acc), R(acc), R(vs[i])});
    add.masked = true;
    add.mask = ks[i % 7];
    add.zeroing = i % 5 == 4;
  }
  f.e(Mn::vmovups, {M(f.out, 0, 512), R(acc)});
  f.e(Mn::ret, {});
  Bytes in(16 * 64);
  for (int i = 0; i < 16 * 16; i++) {
    float x = static_cast<float>(i % 11) + 0.5f;
    std::memcpy(&in[4 * i], &x, 4);
  }
  std::vector<float> expected(16);
  for (int l = 0; l < 16; l++) {
    float a = float_at(in, l);
    for (int i = 0; i < 16; i++) {
      bool on = (0x5a5a >> (i % 7)) >> l & 1;
      a = on ? a + float_at(in, 16 * i + l) : i % 5 == 4 ? 0.0f : a;
    }
    expected[l] = a;
  }
  AllocationOptions options;
  options.vec_registers = 32;
  options.max_vec = 4;
  Allocated r = allocate_and_run(f.mf, {Bytes(64), in}, options);
  for (int l = 0; l < 16; l++) EXPECT_EQ(float_at(r.after[0], l), expected[l]) << "lane " << l;
  int mask_spills = 0;
  for (const IntervalAssignment& a : r.stats.assignments)
    if (a.interval.cls == RegClass::MASK && a.where == Where::SPILL) mask_spills++;
  EXPECT_EQ(mask_spills, 2);
}

// ---- borrowing ----

// [p + 8 idx] = s with p, idx and s all spilled (three GPR reloads, two scratch registers): a register the store
// does not name is saved, used and restored.
TEST(RegallocScratch, ThreeSpilledOperandsBorrowARegister) {
  Fn f;
  Reg p = f.g(), idx = f.g(), s = f.g();
  f.e(Mn::mov, {R(p), R(f.out)});
  f.e(Mn::mov, {R(idx), M(f.in, 0, 64)});
  f.e(Mn::mov, {R(s), M(f.in, 8, 64)});
  Reg sum = f.g();
  f.e(Mn::mov, {R(sum), I(0)});
  for (int i = 0; i < 5; i++) {
    Reg x = f.g();
    f.e(Mn::mov, {R(x), M(f.in, 16 + 8 * i, 64)});
    f.tied(Mn::add, {R(sum), R(sum), R(x)});
  }
  f.e(Mn::mov, {M(f.out, 0, 64), R(sum)});
  f.e(Mn::mov, {MI(p, idx, 8, 0, 64), R(s)});
  f.e(Mn::ret, {});
  AllocationOptions options;
  options.max_gpr = 3;
  Allocated r = allocate_and_run(f.mf, {Bytes(32), int64s({2, 777, 1, 2, 3, 4, 5})}, options);
  EXPECT_EQ(int64_at(r.after[0], 0), 15);
  EXPECT_EQ(int64_at(r.after[0], 2), 777);
  for (Reg v : {p, idx, s}) EXPECT_EQ(assignment_of(r.stats, v).where, Where::SPILL);
  // The store names three different registers: r10, r11 and a borrowed one.
  const Inst& store = *std::find_if(r.mf.code.rbegin(), r.mf.code.rend(), [](const Inst& i) {
    return i.op == Mn::mov && i.o[0].kind == Operand::Kind::MEM && i.o[0].mem.has_index;
  });
  std::set<uint32_t> regs = {store.o[0].mem.base.num, store.o[0].mem.index.num, store.o[1].reg.num};
  EXPECT_EQ(regs.size(), 3u);
  EXPECT_TRUE(regs.count(R10) && regs.count(R11));
}

// ---- frame ----

TEST(RegallocFrame, PrologueEpilogueAndSlots) {
  Fn f;
  f.mf.locals = {100};
  f.mf.externs = {"halve"};
  Reg x = f.v(128), h = f.v(128), g = f.g(), core = f.g(32), count = f.g();
  f.e(Mn::vmovsd, {R(x), M(f.in, 0, 64)});
  f.e(Mn::mov, {R(g), M(f.in, 8, 64)});
  f.e(Mn::mov, {R(core), Slot(MemBase::ARG, 2, 32)});
  f.e(Mn::mov, {R(count), Slot(MemBase::ARG, 3, 64)});
  f.e(Mn::mov, {Slot(MemBase::LOCAL, 0, 64), R(g)});
  f.e(Mn::CALL_EXTERN, {op_symbol(0), R(h), R(x)});
  f.e(Mn::vmovsd, {M(f.out, 0, 64), R(h)});
  Reg back = f.g();
  f.e(Mn::mov, {R(back), Slot(MemBase::LOCAL, 0, 64)});
  f.tied(Mn::add, {R(back), R(back), R(count)});
  f.e(Mn::mov, {M(f.out, 8, 64), R(back)});
  f.e(Mn::mov, {M(f.out, 16, 32), R(core)});
  f.e(Mn::ret, {});
  Bytes in(16);
  double dx = 9;
  int64_t gv = 41;
  std::memcpy(&in[0], &dx, 8), std::memcpy(&in[8], &gv, 8);
  Allocated r = allocate_and_run(f.mf, {Bytes(24), in}, AllocationOptions{});
  EXPECT_EQ(double_at(r.after[0], 0), 4.5);
  EXPECT_EQ(int64_at(r.after[0], 1), 42);  // + core_count 1 (the 64-bit read of a sign-extended ecx)
  EXPECT_EQ(int64_at(r.after[0], 2) & 0xffffffff, 0);
  // Pushes of the callee-saved registers used, then mov rax, rsp; and rsp, -64; sub rsp, N; saved rsp; ARG stores.
  const auto& code = r.mf.code;
  std::vector<uint32_t> pushed;
  size_t k = 0;
  while (code[k].op == Mn::push) pushed.push_back(code[k++].o[0].reg.num);
  for (uint32_t p : pushed) EXPECT_TRUE(is_callee_saved(p));
  EXPECT_FALSE(pushed.empty());  // count and core live across the call
  EXPECT_EQ(code[k].op, Mn::mov); EXPECT_EQ(code[k].o[0].reg.num, static_cast<uint32_t>(RAX));
  EXPECT_EQ(code[k + 1].op, Mn::and_); EXPECT_EQ(code[k + 1].o[1].imm, -64);
  EXPECT_EQ(code[k + 2].op, Mn::sub); EXPECT_EQ(code[k + 2].o[1].imm, static_cast<int64_t>(r.stats.frame_bytes));
  // LOCAL slot 0 (100 bytes, 64-byte aligned) after ARG slots and saved rsp (40) and the spill slots.
  EXPECT_EQ(r.stats.frame_bytes % 64, 0u);
  EXPECT_GE(r.stats.frame_bytes, 64u + 100u);
  // The epilogue: saved rsp reloaded, pops in reverse, ret.
  ASSERT_EQ(code.back().op, Mn::ret);
  size_t e = code.size() - 1 - pushed.size();
  for (size_t i = 0; i < pushed.size(); i++) {
    EXPECT_EQ(code[e + i].op, Mn::pop);
    EXPECT_EQ(code[e + i].o[0].reg.num, pushed[pushed.size() - 1 - i]);
  }
  EXPECT_EQ(code[e - 1].op, Mn::mov); EXPECT_EQ(code[e - 1].o[0].reg.num, static_cast<uint32_t>(RSP));
}

// ---- errors ----

TEST(RegallocErrors, NameTheInstructionAndLeaveTheFunctionAsItWas) {
  auto expect_error = [](MachineFunction mf, const AllocationOptions& options, std::initializer_list<std::string> parts) {
    const size_t before = mf.code.size();
    std::string msg = error_of([&] { allocate_registers(mf, options); });
    for (const std::string& part : parts) EXPECT_TRUE(contains(msg, part)) << msg << " lacks " << part;
    EXPECT_FALSE(mf.allocated);
    EXPECT_EQ(mf.code.size(), before);
  };
  {
    Fn f;
    f.e(Mn::mov, {R(gpr(R10)), M(f.in, 0, 64)});
    f.e(Mn::ret, {});
    expect_error(f.mf, {}, {"allocate_registers: mov r10, qword ptr", "r10 is the allocator's reload scratch"});
  }
  {
    Fn f;
    f.e(Mn::mov, {R(gpr(RBX)), I(1)});
    f.e(Mn::ret, {});
    expect_error(f.mf, {}, {"rbx is allocatable"});
  }
  {
    Fn f;
    f.e(Mn::vmovups, {R(vec(3, 256)), M(f.in, 0, 256)});
    f.e(Mn::ret, {});
    expect_error(f.mf, {}, {"physical vector register 3"});
  }
  {
    Fn f;
    f.mf.externs = {"halve"};
    Reg g = f.g(32), k = f.k(), x = f.v(128), h = f.v(128);
    f.e(Mn::mov, {R(g), I(5)});
    f.e(Mn::kmovw, {R(k), R(g)});
    f.e(Mn::vmovsd, {R(x), M(f.in, 0, 64)});
    f.e(Mn::CALL_EXTERN, {op_symbol(0), R(h), R(x)});
    f.e(Mn::kmovw, {R(g), R(k)});
    f.e(Mn::ret, {});
    expect_error(f.mf, {}, {"CALL_EXTERN", "live across the call in a mask register"});
  }
  {
    Fn f;
    Reg a = f.g(), b = f.g();
    f.tied(Mn::add, {R(a), R(b), I(1)});
    f.e(Mn::ret, {});
    expect_error(f.mf, {}, {"is read but never defined"});
  }
  {
    Fn f;
    f.jump(Mn::jmp, f.label());
    expect_error(f.mf, {}, {"jmp", "never placed"});
  }
  {
    Fn f;
    f.e(Mn::ret, {});
    AllocationOptions o;
    o.vec_registers = 20;
    expect_error(f.mf, o, {"vec_registers is 20; expected 16 or 32"});
  }
  {
    Fn f;
    Reg a = f.g(), b = f.g();
    f.e(Mn::mov, {R(b), I(3)});
    f.e(Mn::lea, {R(a), M(b, 4, 0)}).remat = true;
    f.e(Mn::ret, {});
    expect_error(f.mf, {}, {"a remat instruction may read no register"});
  }
  {
    Fn f;
    f.e(Mn::ret, {});
    MachineFunction done = f.mf;
    allocate_registers(done, {});
    std::string msg = error_of([&] { allocate_registers(done, {}); });
    EXPECT_TRUE(contains(msg, "is already allocated")) << msg;
  }
}

}  // namespace
}  // namespace doorbell::x86
