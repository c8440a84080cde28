// Live intervals of virtual registers on the linear order, widened over loops (compiler/x86/regalloc.h).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <unordered_map>

#include "compiler/x86/regalloc.h"
#include "compiler/x86/regalloc_internal.h"
#include "compiler/x86/x86_encoder.h"

namespace doorbell::x86 {
namespace {
using namespace regalloc_detail;

bool is_jump(Mn op) {
  using enum Mn;
  switch (op) {
    case jmp: case je: case jne: case jl: case jle: case jg: case jge: case jb: case jbe: case ja: case jae:
    case jp: case jnp: case js: case jns:
      return true;
    default:
      return false;
  }
}

const char* class_prefix(RegClass c) { return c == RegClass::GPR ? "%g" : c == RegClass::VEC ? "%v" : "%k"; }

struct Mention {
  int32_t pos;
  bool reads;
  bool writes = false;
};

struct Building {
  LiveInterval iv;
  std::vector<Mention> mentions;  // in order
  int defs = 0;
  int32_t def_pos = -1;
};

}  // namespace

std::vector<LiveInterval> live_intervals(const MachineFunction& mf) {
  std::unordered_map<uint64_t, Building> values;  // (class, number)
  std::vector<int32_t> label_pos(static_cast<size_t>(std::max(mf.labels, 0)), -1);
  std::vector<int32_t> calls;
  const auto& code = mf.code;
  for (int32_t i = 0; i < static_cast<int32_t>(code.size()); i++) {
    const Inst& inst = code[i];
    if (inst.op == Mn::LABEL) {
      if (inst.n != 1 || inst.o[0].kind != Operand::Kind::LABEL || inst.o[0].imm < 0 || inst.o[0].imm >= mf.labels)
        throw std::invalid_argument(where(inst, mf) + "expected LABEL with one label operand below MachineFunction::labels (" + std::to_string(mf.labels) + ")");
      if (label_pos[inst.o[0].imm] >= 0) throw std::invalid_argument(where(inst, mf) + "the label is placed twice");
      label_pos[inst.o[0].imm] = i;
      continue;
    }
    if (inst.op == Mn::CALL_EXTERN) calls.push_back(i);
    for (const auto& ref : register_refs(inst)) {
      const Reg& r = *ref.reg;
      if (!r.virt) continue;
      if (r.num >= mf.vregs[static_cast<int>(r.cls)])
        throw std::invalid_argument(where(inst, mf) + class_prefix(r.cls) + std::to_string(r.num) + " was never made (MachineFunction::vregs has " + std::to_string(mf.vregs[static_cast<int>(r.cls)]) + ")");
      uint64_t key = (static_cast<uint64_t>(r.cls) << 32) | r.num;
      auto [it, fresh] = values.try_emplace(key);
      Building& b = it->second;
      if (fresh) {
        b.iv.cls = r.cls;
        b.iv.vreg = r.num;
        b.iv.start = i;
      }
      b.iv.end = i;
      b.iv.bits = std::max(b.iv.bits, r.bits);
      if (r.cls == RegClass::VEC && vex_only_form(inst)) b.iv.low16 = true;
      if (b.mentions.empty() || b.mentions.back().pos != i) b.mentions.push_back({i, false});
      if (reads(ref.role)) b.mentions.back().reads = true;
      if (writes(ref.role)) {
        b.mentions.back().writes = true;
        // Several writes in one instruction (an operand named twice) are one definition.
        if (b.def_pos != i) b.defs++;
        b.def_pos = i;
      }
    }
  }
  // Loops: a jump back to a label placed earlier.
  struct Loop {
    int32_t head, back;
  };
  std::vector<Loop> loops;
  for (int32_t i = 0; i < static_cast<int32_t>(code.size()); i++) {
    const Inst& inst = code[i];
    if (!is_jump(inst.op)) continue;
    if (inst.n != 1 || inst.o[0].kind != Operand::Kind::LABEL || inst.o[0].imm < 0 || inst.o[0].imm >= mf.labels)
      throw std::invalid_argument(where(inst, mf) + "expected a jump to one label below MachineFunction::labels (" + std::to_string(mf.labels) + ")");
    int32_t target = label_pos[inst.o[0].imm];
    if (target < 0) throw std::invalid_argument(where(inst, mf) + "jumps to a label that is never placed");
    if (target < i) loops.push_back({target, i});
  }

  std::vector<Building*> all;
  all.reserve(values.size());
  for (auto& [key, b] : values) all.push_back(&b);
  for (Building* b : all) {
    // A definition is needed before the first read only on the straight path; a read with no definition at all
    // has no value.
    if (b->defs == 0) {
      const Inst& first = code[b->iv.start];
      throw std::invalid_argument(where(first, mf) + class_prefix(b->iv.cls) + std::to_string(b->iv.vreg) + " is read but never defined");
    }
    b->iv.remat = false;
    const Inst& def = code[b->def_pos];
    if (b->defs == 1 && def.remat) {
      for (const auto& ref : register_refs(def))
        if (ref.reg != &def.o[0].reg)
          throw std::invalid_argument(where(def, mf) + "a remat instruction may read no register; expected immediates or constant-pool memory only");
      // A constant is written whole: not a partial GPR write that keeps the register's other bits.
      bool reads_at_def = false;
      for (const Mention& m : b->mentions)
        if (m.pos == b->def_pos) reads_at_def = m.reads;
      b->iv.remat = def.n >= 1 && def.o[0].kind == Operand::Kind::REG && def.o[0].reg.virt &&
                    def.o[0].reg.cls == b->iv.cls && def.o[0].reg.num == b->iv.vreg && !reads_at_def;
    }
  }
  // Widen over loops until nothing changes (an inner loop's widening can reach into the outer loop's edges).
  for (bool changed = true; changed;) {
    changed = false;
    for (const Loop& loop : loops) {
      for (Building* b : all) {
        LiveInterval& iv = b->iv;
        if (iv.end < loop.head || iv.start > loop.back) continue;
        int32_t start = iv.start, end = iv.end;
        if (start < loop.head) end = std::max(end, loop.back);  // live into the loop: every iteration needs it
        if (end > loop.back) start = std::min(start, loop.head);  // live out: a later iteration may not redefine it
        if (start >= loop.head && end <= loop.back) {
          // Inside the loop: carried around the back edge when its first mention in the loop reads it.
          for (const Mention& m : b->mentions) {
            if (m.pos < loop.head) continue;
            if (m.reads) start = loop.head, end = loop.back;
            break;
          }
        }
        if (start != iv.start || end != iv.end) {
          iv.start = start;
          iv.end = end;
          changed = true;
        }
      }
    }
  }
  // Loop depth of each instruction: how many loops' [head, back] hold it (counted on the code, so nested loops add up).
  std::vector<int32_t> depth(code.size() + 1, 0);
  for (const Loop& loop : loops) {
    depth[loop.head]++;
    depth[loop.back + 1]--;
  }
  for (size_t i = 1; i < depth.size(); i++) depth[i] += depth[i - 1];
  std::vector<LiveInterval> out;
  out.reserve(all.size());
  for (Building* b : all) {
    LiveInterval iv = b->iv;
    double cost = 0;
    for (const Mention& m : b->mentions) {
      const double w = std::pow(10.0, std::min(depth[m.pos], 12));
      cost += (m.reads ? w : 0) + (m.writes ? w : 0);  // a reload before, a store after
    }
    iv.spill_weight = cost / static_cast<double>(iv.end - iv.start + 1);
    for (int32_t c : calls)
      if (iv.start < c && c < iv.end) iv.crosses_call = true;
    out.push_back(iv);
  }
  std::sort(out.begin(), out.end(), [](const LiveInterval& a, const LiveInterval& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.cls != b.cls) return a.cls < b.cls;
    return a.vreg < b.vreg;
  });
  return out;
}

}  // namespace doorbell::x86
