// Linear-scan register allocation (Poletto & Sarkar) over live intervals (regalloc_intervals.cpp), spill and
// rematerialization code, the two-address fixup and CALL_EXTERN expansion; the frame is regalloc_frame.cpp's.
// ABI facts: firmware-notes/x86-abi.md.
#include "compiler/x86/regalloc.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include "compiler/x86/regalloc_internal.h"
#include "compiler/x86/x86_encoder.h"

namespace doorbell::x86 {
namespace regalloc_detail {

std::string where(const Inst& inst, const MachineFunction& mf) {
  return "allocate_registers: " + print_inst(inst, mf) + ": ";
}

}  // namespace regalloc_detail

namespace {
using namespace regalloc_detail;
using Where = IntervalAssignment::Where;

// Caller-saved first: values that do not cross a call leave the callee-saved ones (which cost a push) to those
// that do (firmware-notes/x86-abi.md §2).
constexpr Gpr kGprOrder[] = {RSI, RDI, R8, R9, RBX, RBP, R12, R13, R14, R15};
constexpr const char* kGprNames[16] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                                       "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};
constexpr uint32_t kVecScratch0 = 14, kVecScratch1 = 15;
bool callee_saved(uint32_t r) { return r == RBX || r == RBP || (r >= R12 && r <= R15); }

int ci(RegClass c) { return static_cast<int>(c); }
const char* prefix(RegClass c) { return c == RegClass::GPR ? "%g" : c == RegClass::VEC ? "%v" : "%k"; }
uint64_t key(RegClass c, uint32_t num) { return (static_cast<uint64_t>(c) << 32) | num; }

// Two-address ops where `d = a op b` equals `d = b op a` in every bit of the destination.
bool commutative(Mn op) {
  using enum Mn;
  switch (op) {
    case add: case imul: case and_: case or_: case xor_: case vaddps: case vmulps: case vpaddd: case vpmulld:
    case vpand: case vpandd: case vpor: case vpord: case vpxor: case vpxord: case vandps: case vorps: case vxorps:
    case vpmaxsd: case vpmaxud: case vpminsd: case vpminud:
      return true;
    default:
      return false;
  }
}

// A register-to-register copy: mov (GPR), vmovaps/vmovups/vmovdqa/vmovdqu/vmovdqa32/vmovdqu32 (VEC), kmovw
// (MASK), unmasked, both operands registers of one class and width.
bool is_copy(const Inst& inst) {
  using enum Mn;
  if (inst.tied || inst.masked || inst.n != 2 || inst.o[0].kind != Operand::Kind::REG ||
      inst.o[1].kind != Operand::Kind::REG)
    return false;
  const Reg& d = inst.o[0].reg;
  const Reg& s = inst.o[1].reg;
  if (d.cls != s.cls || d.bits != s.bits) return false;
  switch (inst.op) {
    case mov: return d.cls == RegClass::GPR;
    case vmovaps: case vmovups: case vmovdqa: case vmovdqu: case vmovdqa32: case vmovdqu32: return d.cls == RegClass::VEC;
    case kmovw: return d.cls == RegClass::MASK;
    default: return false;
  }
}

Inst make(Mn op, std::initializer_list<Operand> ops) { return make_inst(op, ops); }

Reg phys(RegClass cls, uint32_t num, uint16_t bits) { return Reg{cls, false, bits, num}; }

Operand slot_operand(int32_t slot, uint16_t bits) { return op_mem(frame_slot(MemBase::SPILL, slot, bits)); }

// Whole-register moves between a register and a slot, or two registers: movs only, so flags survive.
Inst load(RegClass cls, uint32_t reg, int32_t slot, uint16_t bits) {
  if (cls == RegClass::GPR) return make(Mn::mov, {op_reg(gpr(reg, 64)), slot_operand(slot, 64)});
  if (cls == RegClass::VEC) return make(Mn::vmovups, {op_reg(vec(reg, bits)), slot_operand(slot, bits)});
  return make(Mn::kmovw, {op_reg(kreg(reg)), slot_operand(slot, 16)});
}
Inst store(RegClass cls, int32_t slot, uint32_t reg, uint16_t bits) {
  if (cls == RegClass::GPR) return make(Mn::mov, {slot_operand(slot, 64), op_reg(gpr(reg, 64))});
  if (cls == RegClass::VEC) return make(Mn::vmovups, {slot_operand(slot, bits), op_reg(vec(reg, bits))});
  return make(Mn::kmovw, {slot_operand(slot, 16), op_reg(kreg(reg))});
}
Inst copy(RegClass cls, uint32_t dst, uint32_t src, uint16_t bits) {
  if (cls == RegClass::GPR) return make(Mn::mov, {op_reg(gpr(dst, 64)), op_reg(gpr(src, 64))});
  if (cls == RegClass::VEC) return make(Mn::vmovaps, {op_reg(vec(dst, bits)), op_reg(vec(src, bits))});
  return make(Mn::kmovw, {op_reg(kreg(dst)), op_reg(kreg(src))});
}

struct Location {
  Where where = Where::REG;
  uint32_t reg = 0;
  int32_t slot = -1;
  uint16_t bits = 64;   // the slot's access width
  int32_t def_pos = -1;  // REMAT: the defining instruction
};

// What one instruction's rewrite emits around it.
struct Around {
  std::vector<Inst> saves, pre, post, restores;
  std::vector<uint32_t> taken[3];  // scratch (and borrowed) registers of this instruction, per class
  std::vector<uint32_t> named[3];  // physical registers the instruction names once rewritten
  bool is_named(RegClass c, uint32_t r) const {
    return std::find(named[ci(c)].begin(), named[ci(c)].end(), r) != named[ci(c)].end();
  }
};

class Allocator {
 public:
  Allocator(MachineFunction& mf, const AllocationOptions& options) : mf_(mf), options_(options) {}

  AllocationStats run() {
    if (mf_.allocated) throw std::invalid_argument("allocate_registers: " + mf_.name + " is already allocated");
    if (options_.vec_registers != 16 && options_.vec_registers != 32)
      throw std::invalid_argument("allocate_registers: AllocationOptions::vec_registers is " + std::to_string(options_.vec_registers) + "; expected 16 or 32");
    check_physical();
    set_up_classes();
    std::vector<LiveInterval> intervals = live_intervals(mf_);
    stats_.intervals = static_cast<uint32_t>(intervals.size());
    stats_.assignments.resize(intervals.size());
    for (size_t k = 0; k < intervals.size(); k++) {
      stats_.assignments[k].interval = intervals[k];
      index_[key(intervals[k].cls, intervals[k].vreg)] = k;
    }
    find_hints();
    for (RegClass cls : {RegClass::GPR, RegClass::VEC, RegClass::MASK}) scan(cls);
    for (const IntervalAssignment& a : stats_.assignments) {
      Location loc;
      loc.where = a.where;
      loc.reg = a.reg;
      loc.slot = a.slot;
      loc.bits = a.interval.cls == RegClass::VEC ? std::max<uint16_t>(a.interval.bits, 128) : 64;
      locations_[key(a.interval.cls, a.interval.vreg)] = loc;
    }
    find_remat_definitions();
    rewrite();
    drop_redundant_reloads();
    FrameRequest request;
    request.spill_bytes = spill_bytes_;
    for (Gpr r : {RBX, RBP, R12, R13, R14, R15})
      for (const IntervalAssignment& a : stats_.assignments)
        if (a.interval.cls == RegClass::GPR && a.where == Where::REG && a.reg == r) {
          request.callee_saved.push_back(r);
          break;
        }
    stats_.frame_bytes = finish_frame(mf_, request);
    mf_.allocated = true;
    return std::move(stats_);
  }

 private:
  MachineFunction& mf_;
  const AllocationOptions& options_;
  AllocationStats stats_;
  std::vector<uint32_t> allocatable_[3];  // in preference order
  std::vector<uint32_t> borrowable_[3];   // registers an instruction may borrow (saved and restored around it)
  uint32_t scratch_[3][2] = {{R10, R11}, {0, 0}, {6, 7}};
  std::unordered_map<uint64_t, Location> locations_;
  std::vector<uint32_t> spill_bytes_;
  std::vector<int32_t> borrow_slots_[3];
  uint16_t widest_vec_ = 128;
  std::vector<Inst> original_;
  // The span of instructions [fixed_lo_, fixed_hi_] that name rax, rcx or rdx (or use them implicitly: division,
  // calls); -1 when none does. Outside it those three registers hold nothing of instruction selection's.
  int32_t fixed_lo_ = -1, fixed_hi_ = -1;

  static bool uses_fixed_registers(const Inst& inst) {
    using enum Mn;
    switch (inst.op) {
      case idiv: case div: case cwd: case cdq: case cqo: case call: case CALL_EXTERN: return true;
      case imul: if (inst.n == 1) return true; break;
      default: break;
    }
    for (const auto& ref : register_refs(inst))
      if (!ref.reg->virt && ref.reg->cls == RegClass::GPR && (ref.reg->num == RAX || ref.reg->num == RCX || ref.reg->num == RDX))
        return true;
    return false;
  }
  std::unordered_map<uint64_t, uint32_t> hints_;  // (class, vreg) -> the vreg it is copied from or tied to
  std::unordered_map<uint64_t, size_t> index_;    // (class, vreg) -> its index in stats_.assignments

  // Register hints: a copy's destination prefers its source's register, a tied destination its tied source's.
  void find_hints() {
    for (const Inst& inst : mf_.code) {
      const bool tied_pair = inst.tied && inst.n >= 2 && inst.o[0].kind == Operand::Kind::REG &&
                             inst.o[1].kind == Operand::Kind::REG && inst.o[0].reg.cls == inst.o[1].reg.cls;
      if (!tied_pair && !is_copy(inst)) continue;
      const Reg& d = inst.o[0].reg;
      const Reg& s = inst.o[1].reg;
      if (d.virt && s.virt && !(d == s)) hints_.try_emplace(key(d.cls, d.num), s.num);
    }
  }

  // Instruction selection names physical registers only for fixed-register instructions (rax, rcx, rdx).
  void check_physical() {
    for (int32_t p = 0; p < static_cast<int32_t>(mf_.code.size()); p++) {
      const Inst& inst = mf_.code[p];
      if (inst.op == Mn::LABEL) continue;
      if (uses_fixed_registers(inst)) {
        if (fixed_lo_ < 0) fixed_lo_ = p;
        fixed_hi_ = p;
      }
      for (const auto& ref : register_refs(inst)) {
        const Reg& r = *ref.reg;
        if (r.cls == RegClass::VEC) widest_vec_ = std::max(widest_vec_, r.bits);
        if (r.virt) continue;
        if (r.cls != RegClass::GPR)
          throw std::invalid_argument(where(inst, mf_) + "names physical " + (r.cls == RegClass::VEC ? "vector register " : "mask register k") + std::to_string(r.num) + "; instruction selection may name only rax, rcx, rdx physically");
        if (r.num == RAX || r.num == RCX || r.num == RDX) continue;
        std::string why = r.num == R10 || r.num == R11 ? " is the allocator's reload scratch" : r.num == RSP ? " holds the frame (use ARG/LOCAL slots)" : r.num < 16 ? " is allocatable" : " does not exist";
        throw std::invalid_argument(where(inst, mf_) + "physical " + (r.num < 16 ? kGprNames[r.num] : "GPR " + std::to_string(r.num)) + why + "; instruction selection may name only rax, rcx, rdx physically");
      }
      for (int k = 0; k < inst.n; k++)
        if (inst.o[k].kind == Operand::Kind::MEM && inst.o[k].mem.kind == MemBase::SPILL)
          throw std::invalid_argument(where(inst, mf_) + "a SPILL slot before allocation; spill slots are the allocator's (instruction selection uses LOCAL slots)");
    }
  }

  void set_up_classes() {
    auto cut = [](std::vector<uint32_t> regs, uint32_t max) {
      if (max != 0 && max < regs.size()) regs.resize(max);
      return regs;
    };
    std::vector<uint32_t> g(std::begin(kGprOrder), std::end(kGprOrder));
    borrowable_[ci(RegClass::GPR)] = g;
    allocatable_[ci(RegClass::GPR)] = cut(g, options_.max_gpr);
    // rax, rcx, rdx last, and only for values outside the span where instruction selection uses them (allowed() in
    // scan): a matmul's inner loop after the prologue's division then has 13 registers instead of 10.
    if (options_.max_gpr == 0)
      for (Gpr r : {RAX, RCX, RDX}) allocatable_[ci(RegClass::GPR)].push_back(r);
    // The scratch pair is 14 and 15 with 16 or 32 registers: a reload for an instruction with only a VEX form
    // (vex_only_form) must land below 16.
    std::vector<uint32_t> v;
    for (uint32_t r = 0; r < options_.vec_registers; r++)
      if (r != kVecScratch0 && r != kVecScratch1) v.push_back(r);
    borrowable_[ci(RegClass::VEC)] = v;
    allocatable_[ci(RegClass::VEC)] = cut(v, options_.max_vec);
    scratch_[ci(RegClass::VEC)][0] = kVecScratch0;
    scratch_[ci(RegClass::VEC)][1] = kVecScratch1;
    allocatable_[ci(RegClass::MASK)] = borrowable_[ci(RegClass::MASK)] = {1, 2, 3, 4, 5};
  }

  int32_t new_slot(uint32_t bytes) {
    spill_bytes_.push_back(bytes);
    return static_cast<int32_t>(spill_bytes_.size() - 1);
  }

  void spill(IntervalAssignment& a) {
    if (a.interval.remat) {
      a.where = Where::REMAT;
      return;
    }
    a.where = Where::SPILL;
    a.slot = new_slot(a.interval.cls == RegClass::VEC ? std::max<uint16_t>(a.interval.bits, 128) / 8 : 8);
    stats_.spilled++;
  }

  // Linear scan over one class's intervals in start order.
  void scan(RegClass cls) {
    const std::vector<uint32_t>& regs = allocatable_[ci(cls)];
    std::vector<bool> busy(32, false);
    std::vector<size_t> active;
    auto& as = stats_.assignments;
    for (size_t k = 0; k < as.size(); k++) {
      IntervalAssignment& cur = as[k];
      if (cur.interval.cls != cls) continue;
      // An interval ending where cur starts frees its register for cur: an instruction reads its sources before it
      // writes its destination (the two-address fixup and the call expansion keep that order).
      std::erase_if(active, [&](size_t j) {
        if (as[j].interval.end > cur.interval.start) return false;
        busy[as[j].reg] = false;
        return true;
      });
      if (cur.interval.crosses_call && cls == RegClass::MASK) {
        for (int32_t c = cur.interval.start + 1; c < cur.interval.end; c++)
          if (mf_.code[c].op == Mn::CALL_EXTERN)
            throw std::invalid_argument(where(mf_.code[c], mf_) + "%k" + std::to_string(cur.interval.vreg) + " is live across the call in a mask register; expected no MASK value live across a CALL_EXTERN (every k register is the callee's)");
      }
      // Across a call: only callee-saved GPRs; every vector register is the callee's (firmware-notes/x86-abi.md §2).
      auto allowed = [&](uint32_t r) {
        if (cur.interval.low16 && r >= 16) return false;
        if (cls == RegClass::GPR && (r == RAX || r == RCX || r == RDX) && fixed_lo_ >= 0 &&
            !(cur.interval.end < fixed_lo_ || cur.interval.start > fixed_hi_))
          return false;
        if (!cur.interval.crosses_call) return true;
        return cls == RegClass::GPR && callee_saved(r);
      };
      bool placed = false;
      // The register of the value it is copied from, or tied to, when that value ended where this one starts: the
      // copy then moves a register to itself and is dropped, the tie needs no mov.
      if (auto h = hints_.find(key(cls, cur.interval.vreg)); h != hints_.end()) {
        auto from = index_.find(key(cls, h->second));
        if (from != index_.end()) {
          const IntervalAssignment& src = as[from->second];
          const uint32_t r = src.reg;
          if (src.where == Where::REG && !busy[r] && allowed(r) &&
              std::find(regs.begin(), regs.end(), r) != regs.end()) {
            cur.where = Where::REG;
            cur.reg = r;
            busy[r] = true;
            active.push_back(k);
            continue;
          }
        }
      }
      for (uint32_t r : regs)
        if (!busy[r] && allowed(r)) {
          cur.where = Where::REG;
          cur.reg = r;
          busy[r] = true;
          active.push_back(k);
          placed = true;
          break;
        }
      if (placed) continue;
      // Spill the cheapest: a rematerializable value first, then the smallest spill weight (a value read in a loop
      // keeps its register before one read once outside it), then the one ending furthest; ties keep what is placed.
      auto cheaper = [&](const IntervalAssignment& x, const IntervalAssignment& y) {
        if (x.interval.remat != y.interval.remat) return x.interval.remat;
        if (x.interval.spill_weight != y.interval.spill_weight) return x.interval.spill_weight < y.interval.spill_weight;
        return x.interval.end > y.interval.end;
      };
      size_t victim = k;
      for (size_t j : active)
        if (allowed(as[j].reg) && cheaper(as[j], as[victim])) victim = j;
      if (victim == k) {
        spill(cur);
        continue;
      }
      cur.where = Where::REG;
      cur.reg = as[victim].reg;
      spill(as[victim]);
      std::erase(active, victim);
      active.push_back(k);
    }
  }

  void find_remat_definitions() {
    for (int32_t i = 0; i < static_cast<int32_t>(mf_.code.size()); i++) {
      const Inst& inst = mf_.code[i];
      if (!inst.remat || inst.n < 1 || inst.o[0].kind != Operand::Kind::REG || !inst.o[0].reg.virt) continue;
      auto it = locations_.find(key(inst.o[0].reg.cls, inst.o[0].reg.num));
      if (it != locations_.end() && it->second.where == Where::REMAT) it->second.def_pos = i;
    }
  }

  const Location& location(const Reg& r) { return locations_.at(key(r.cls, r.num)); }

  // A scratch register of `cls` for this instruction: r10/r11 (xmm14/xmm15; k6/k7), then a borrowed one
  // the instruction does not name, saved to its frame slot before and restored after.
  uint32_t take_scratch(RegClass cls, Around& around, const Inst& inst) {
    auto& taken = around.taken[ci(cls)];
    if (taken.size() < 2) {
      taken.push_back(scratch_[ci(cls)][taken.size()]);
      return taken.back();
    }
    size_t borrowed = taken.size() - 2;
    const bool low16 = cls == RegClass::VEC && vex_only_form(inst);
    for (uint32_t r : borrowable_[ci(cls)]) {
      if (around.is_named(cls, r) || std::find(taken.begin(), taken.end(), r) != taken.end()) continue;
      if (low16 && r >= 16) continue;
      auto& slots = borrow_slots_[ci(cls)];
      while (slots.size() <= borrowed) slots.push_back(new_slot(cls == RegClass::VEC ? widest_vec_ / 8 : 8));
      uint16_t bits = cls == RegClass::VEC ? widest_vec_ : 64;
      around.saves.push_back(store(cls, slots[borrowed], r, bits));
      around.restores.insert(around.restores.begin(), load(cls, r, slots[borrowed], bits));
      taken.push_back(r);
      return r;
    }
    throw std::invalid_argument(where(inst, mf_) + "needs more registers of its class than exist");
  }

  // Re-executes a constant's definition into physical register `reg`.
  Inst remat_into(const Location& loc, uint32_t reg) {
    Inst def = original_[loc.def_pos];
    def.o[0].reg = phys(def.o[0].reg.cls, reg, def.o[0].reg.bits);
    stats_.remats++;
    return def;
  }

  // Brings a spilled or rematerialized value into `reg` before the instruction.
  void fill(const Reg& r, uint32_t reg, std::vector<Inst>& pre) {
    const Location& loc = location(r);
    if (loc.where == Where::REMAT) {
      pre.push_back(remat_into(loc, reg));
    } else {
      pre.push_back(load(r.cls, reg, loc.slot, loc.bits));
      stats_.reloads++;
    }
  }

  void emit(Around& around, const Inst& inst, std::vector<Inst>& out) {
    for (auto* part : {&around.saves, &around.pre}) out.insert(out.end(), part->begin(), part->end());
    out.push_back(inst);
    for (auto* part : {&around.post, &around.restores}) out.insert(out.end(), part->begin(), part->end());
  }

  // The physical registers every register-located or physical operand names.
  template <class Refs>
  void collect_named(const Refs& refs, Around& around) {
    for (const auto& ref : refs) {
      const Reg& r = *ref.reg;
      if (!r.virt) around.named[ci(r.cls)].push_back(r.num);
      else if (location(r).where == Where::REG) around.named[ci(r.cls)].push_back(location(r).reg);
    }
  }

  // Rewrites the given references: register-located ones to their register, the others to one scratch per value
  // (filled before when read, stored after when written).
  template <class Refs>
  void place(const Refs& refs, Around& around, const Inst& inst) {
    struct Value {
      Reg r;
      bool read = false, written = false;
      uint32_t scratch = 0;
    };
    std::vector<Value> values;
    for (const auto& ref : refs) {
      const Reg& r = *ref.reg;
      if (!r.virt || location(r).where == Where::REG) continue;
      auto it = std::find_if(values.begin(), values.end(), [&](const Value& v) { return v.r == r; });
      if (it == values.end()) {
        values.push_back({r});
        it = values.end() - 1;
      }
      it->read |= reads(ref.role);
      it->written |= writes(ref.role);
    }
    for (Value& v : values) {
      v.scratch = take_scratch(v.r.cls, around, inst);
      const Location& loc = location(v.r);
      if (v.read) fill(v.r, v.scratch, around.pre);
      if (v.written) {
        if (loc.where != Where::SPILL)
          throw std::invalid_argument(where(inst, mf_) + prefix(v.r.cls) + std::to_string(v.r.num) + " is rematerialized but written here; expected a remat value to be defined once");
        around.post.push_back(store(v.r.cls, loc.slot, v.scratch, loc.bits));
        stats_.spill_stores++;
      }
    }
    for (const auto& ref : refs) {
      Reg& r = *ref.reg;
      if (!r.virt) continue;
      if (location(r).where == Where::REG) {
        r = phys(r.cls, location(r).reg, r.bits);
        continue;
      }
      for (const Value& v : values)
        if (v.r == r) {
          r = phys(r.cls, v.scratch, r.bits);
          break;
        }
    }
  }

  bool defines_remat(const Inst& inst) {
    for (const auto& ref : register_refs(inst))
      if (ref.reg->virt && writes(ref.role) && location(*ref.reg).where == Where::REMAT) return true;
    return false;
  }

  void rewrite_plain(const Inst& original, std::vector<Inst>& out) {
    if (defines_remat(original)) return;  // re-executed before each use instead
    Inst inst = original;
    auto refs = register_refs(inst);
    Around around;
    collect_named(refs, around);
    place(refs, around, original);
    // A copy whose source and destination got one register: the source's value ends here (they would overlap
    // otherwise), so nothing is lost, unless the copy clears bits above its width that the destination's value is
    // read with (`mov r32, r32` zero-extends, a VEX vmovaps xmm clears the upper lanes): kept then.
    if (is_copy(original) && around.pre.empty() && around.post.empty() && inst.o[0].reg == inst.o[1].reg) {
      const Reg& d = original.o[0].reg;
      const uint16_t value_bits = d.virt ? stats_.assignments[index_.at(key(d.cls, d.num))].interval.bits : 64;
      const bool keeps_other_bits = d.cls == RegClass::GPR && d.bits < 32;  // 8/16-bit writes merge
      if (d.bits >= value_bits || keeps_other_bits) {
        stats_.copies_dropped++;
        return;
      }
    }
    emit(around, inst, out);
  }

  // d = a op b...: `mov d, a` (when they differ) + `op d, b...`.
  void rewrite_tied(const Inst& original, std::vector<Inst>& out) {
    if (defines_remat(original)) return;
    if (original.n < 2 || original.o[0].kind != Operand::Kind::REG)
      throw std::invalid_argument(where(original, mf_) + "a tied instruction needs a register destination and its tied source");
    Inst inst = original;
    const RegClass cls = inst.o[0].reg.cls;
    auto reg_of = [&](const Reg& r) -> int64_t {  // the register a value is in; -1 when spilled or rematerialized
      if (!r.virt) return r.num;
      const Location& loc = location(r);
      return loc.where == Where::REG ? static_cast<int64_t>(loc.reg) : -1;
    };
    // d = a op b with b already in d's register: a commutative op swaps a and b instead of copying b aside.
    if (commutative(inst.op) && inst.n == 3 && inst.o[1].kind == Operand::Kind::REG &&
        inst.o[2].kind == Operand::Kind::REG && inst.o[2].reg.cls == cls && inst.o[1].reg.cls == cls) {
      int64_t d = reg_of(inst.o[0].reg), a = reg_of(inst.o[1].reg), b = reg_of(inst.o[2].reg);
      if (d >= 0 && b == d && a != d) std::swap(inst.o[1], inst.o[2]);
    }
    auto refs = register_refs(inst);
    Around around;
    collect_named(refs, around);
    // The other sources: everything but the destination and the tied source register.
    std::vector<RegRef<Reg>> rest;
    for (const auto& ref : refs)
      if (ref.reg != &inst.o[0].reg && !(inst.o[1].kind == Operand::Kind::REG && ref.reg == &inst.o[1].reg))
        rest.push_back(ref);
    place(rest, around, original);
    // The destination's register: its own, or a scratch stored after.
    Reg d = inst.o[0].reg;
    uint32_t dreg;
    const Location* dloc = nullptr;
    if (!d.virt) {
      dreg = d.num;
    } else if (location(d).where == Where::REG) {
      dreg = location(d).reg;
    } else {
      dloc = &location(d);
      dreg = take_scratch(cls, around, original);
    }
    // A source still in d's register would be overwritten by `mov d, a`: copied to a scratch first.
    std::vector<Reg*> clashes;
    for (const auto& ref : rest)
      if (ref.reg->cls == cls && ref.reg->num == dreg) clashes.push_back(ref.reg);
    if (!clashes.empty()) {
      uint32_t s = take_scratch(cls, around, original);
      around.pre.push_back(copy(cls, s, dreg, cls == RegClass::VEC ? widest_vec_ : 64));
      stats_.moves++;
      for (Reg* r : clashes) r->num = s;
    }
    const Operand& a = inst.o[1];
    const uint16_t dbits = d.bits;
    // imul by an immediate has a three-operand form (imul d, a, imm) and no two-operand one: no tie needed.
    if (inst.op == Mn::imul && inst.n == 3 && inst.o[2].kind == Operand::Kind::IMM && a.kind == Operand::Kind::REG &&
        a.reg.cls == RegClass::GPR) {
      int64_t areg = reg_of(a.reg);
      if (areg < 0) {
        fill(a.reg, dreg, around.pre);
        areg = dreg;
      }
      Inst op = inst;
      op.tied = false;
      op.o[0] = op_reg(gpr(dreg, dbits));
      op.o[1] = op_reg(gpr(static_cast<uint32_t>(areg), dbits));
      if (dloc) {
        around.post.insert(around.post.begin(), store(cls, dloc->slot, dreg, dloc->bits));
        stats_.spill_stores++;
      }
      emit(around, op, out);
      return;
    }
    // a into d.
    if (a.kind == Operand::Kind::REG) {
      if (a.reg.cls != cls)
        throw std::invalid_argument(where(original, mf_) + "the tied source is of another register class than the destination");
      int64_t areg = reg_of(a.reg);
      if (areg < 0) {
        fill(a.reg, dreg, around.pre);
      } else if (areg != dreg) {
        around.pre.push_back(copy(cls, dreg, static_cast<uint32_t>(areg), cls == RegClass::VEC ? std::max<uint16_t>(dbits, a.reg.bits) : 64));
        stats_.moves++;
      }
    } else if (a.kind == Operand::Kind::IMM && cls == RegClass::GPR) {
      bool wide = dbits == 64 && (a.imm < INT32_MIN || a.imm > INT32_MAX);
      around.pre.push_back(make(wide ? Mn::movabs : Mn::mov, {op_reg(gpr(dreg, dbits == 64 ? 64 : std::max<uint16_t>(dbits, 32))), a}));
      stats_.moves++;
    } else if (a.kind == Operand::Kind::MEM) {
      Mn mov = cls == RegClass::GPR ? Mn::mov : cls == RegClass::VEC ? Mn::vmovups : Mn::kmovw;
      around.pre.push_back(make(mov, {op_reg(phys(cls, dreg, dbits)), a}));
      stats_.moves++;
    } else {
      throw std::invalid_argument(where(original, mf_) + "the tied source must be a register, a memory operand or (GPR) an immediate");
    }
    Inst op = inst;
    op.tied = false;
    op.o[0] = op_reg(phys(cls, dreg, dbits));
    for (int k = 1; k + 1 < inst.n; k++) op.o[k] = inst.o[k + 1];
    op.o[inst.n - 1] = Operand{};
    op.n = static_cast<uint8_t>(inst.n - 1);
    if (dloc) {
      around.post.insert(around.post.begin(), store(cls, dloc->slot, dreg, dloc->bits));
      stats_.spill_stores++;
    }
    emit(around, op, out);
  }

  // CALL_EXTERN sym, dst, a[, b]: a, b into xmm0, xmm1; vzeroupper; call sym; dst from xmm0.
  void rewrite_call(const Inst& inst, std::vector<Inst>& out) {
    if (inst.n < 3 || inst.o[0].kind != Operand::Kind::SYMBOL || inst.o[0].imm < 0 ||
        inst.o[0].imm >= static_cast<int64_t>(mf_.externs.size()))
      throw std::invalid_argument(where(inst, mf_) + "expected CALL_EXTERN sym, dst, a[, b] with sym an index of MachineFunction::externs");
    for (int k = 1; k < inst.n; k++)
      if (inst.o[k].kind != Operand::Kind::REG || inst.o[k].reg.cls != RegClass::VEC || !inst.o[k].reg.virt)
        throw std::invalid_argument(where(inst, mf_) + "operand " + std::to_string(k) + " is not a virtual vector register; expected float64 values in VEC registers");
    const uint32_t s0 = scratch_[ci(RegClass::VEC)][0];
    // Register-held arguments first, as a parallel move (a swap goes through a scratch); then the spilled ones,
    // which read only their slots.
    struct Move {
      uint32_t dst, src;
    };
    std::vector<Move> moves;
    for (int k = 2; k < inst.n; k++) {
      const Location& loc = location(inst.o[k].reg);
      if (loc.where == Where::REG && loc.reg != static_cast<uint32_t>(k - 2)) moves.push_back({static_cast<uint32_t>(k - 2), loc.reg});
    }
    if (moves.size() == 2 && moves[0].src == moves[1].dst && moves[1].src == moves[0].dst) {
      out.push_back(copy(RegClass::VEC, s0, moves[0].src, 128));
      out.push_back(copy(RegClass::VEC, moves[1].dst, moves[1].src, 128));
      out.push_back(copy(RegClass::VEC, moves[0].dst, s0, 128));
    } else {
      if (moves.size() == 2 && moves[0].dst == moves[1].src) std::swap(moves[0], moves[1]);
      for (const Move& m : moves) out.push_back(copy(RegClass::VEC, m.dst, m.src, 128));
    }
    for (int k = 2; k < inst.n; k++)
      if (location(inst.o[k].reg).where != Where::REG) fill(inst.o[k].reg, static_cast<uint32_t>(k - 2), out);
    out.push_back(make(Mn::vzeroupper, {}));
    out.push_back(make(Mn::call, {inst.o[0]}));
    const Location& dst = location(inst.o[1].reg);
    if (dst.where == Where::REG) {
      if (dst.reg != 0) out.push_back(copy(RegClass::VEC, dst.reg, 0, 128));
    } else if (dst.where == Where::SPILL) {
      out.push_back(store(RegClass::VEC, dst.slot, 0, dst.bits));
      stats_.spill_stores++;
    }
  }

  // A reload into a scratch register that already holds that slot's value (reloaded or stored from it since, with
  // nothing writing the register or the slot in between) is dropped: two spilled operands of neighbouring
  // instructions (vcmpps then vmaxps of one spilled accumulator) were loaded twice. Straight-line only: a LABEL (a
  // join), a call and vzeroupper forget everything; a jump changes no register, so its fall-through keeps what is known.
  void drop_redundant_reloads() {
    struct Held {
      int32_t slot = -1;
      uint16_t bits = 0;
    };
    Held held[3][2];  // per class, per scratch register
    auto scratch_index = [&](const Reg& r) -> int {
      if (r.virt) return -1;
      for (int j = 0; j < 2; j++)
        if (scratch_[ci(r.cls)][j] == r.num) return j;
      return -1;
    };
    auto forget_all = [&] {
      for (auto& c : held)
        for (Held& h : c) h = Held{};
    };
    auto slot_of = [](const Operand& o) {
      return o.kind == Operand::Kind::MEM && o.mem.kind == MemBase::SPILL ? o.mem.slot : -1;
    };
    std::vector<Inst> out;
    out.reserve(mf_.code.size());
    for (const Inst& inst : mf_.code) {
      if (inst.op == Mn::LABEL || inst.op == Mn::call || inst.op == Mn::vzeroupper) {
        forget_all();
        out.push_back(inst);
        continue;
      }
      const bool two_operands = (inst.op == Mn::mov || inst.op == Mn::vmovups || inst.op == Mn::kmovw) && inst.n == 2 &&
                                !inst.masked && !inst.tied;
      // A reload: mov / vmovups / kmovw scratch, [spill slot] (only the allocator makes SPILL operands).
      if (two_operands && inst.o[0].kind == Operand::Kind::REG && slot_of(inst.o[1]) >= 0) {
        const int j = scratch_index(inst.o[0].reg);
        if (j >= 0) {
          Held& h = held[ci(inst.o[0].reg.cls)][j];
          if (h.slot == inst.o[1].mem.slot && h.bits == inst.o[1].mem.bits) {
            stats_.reloads--;
            continue;
          }
          h = Held{inst.o[1].mem.slot, inst.o[1].mem.bits};
          out.push_back(inst);
          continue;
        }
      }
      // A store to a slot: what scratch registers held of it is stale, and a scratch stored from holds it.
      if (two_operands && slot_of(inst.o[0]) >= 0 && inst.o[1].kind == Operand::Kind::REG) {
        for (auto& c : held)
          for (Held& h : c)
            if (h.slot == inst.o[0].mem.slot) h = Held{};
        const int j = scratch_index(inst.o[1].reg);
        if (j >= 0) held[ci(inst.o[1].reg.cls)][j] = Held{inst.o[0].mem.slot, inst.o[0].mem.bits};
        out.push_back(inst);
        continue;
      }
      for (const auto& ref : register_refs(inst)) {
        const int j = writes(ref.role) ? scratch_index(*ref.reg) : -1;
        if (j >= 0) held[ci(ref.reg->cls)][j] = Held{};
      }
      out.push_back(inst);
    }
    mf_.code = std::move(out);
  }

  void rewrite() {
    original_ = std::move(mf_.code);
    std::vector<Inst> out;
    out.reserve(original_.size() * 2);
    for (const Inst& inst : original_) {
      if (inst.op == Mn::LABEL) out.push_back(inst);
      else if (inst.op == Mn::CALL_EXTERN) rewrite_call(inst, out);
      else if (inst.tied) rewrite_tied(inst, out);
      else rewrite_plain(inst, out);
    }
    mf_.code = std::move(out);
  }
};

}  // namespace

AllocationStats allocate_registers(MachineFunction& mf, const AllocationOptions& options) {
  // On a copy: an error leaves the caller's function as it was.
  MachineFunction work = mf;
  AllocationStats stats = Allocator(work, options).run();
  mf = std::move(work);
  return stats;
}

}  // namespace doorbell::x86
