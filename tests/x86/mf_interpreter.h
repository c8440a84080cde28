// A small interpreter of machine functions (compiler/x86/x86_inst.h) for the register allocator's tests: runs a
// function on virtual registers (before allocation: frame slots are addressed directly, tied instructions compute
// d = a op b, CALL_EXTERN calls the extern) or on physical registers (after: a real stack with rsp, push/pop, the
// prologue's `and rsp, -64`, `call` clobbering every caller-saved register), so the two runs can be compared.
// Only the instructions the tests use: anything else fails the test naming the instruction. Semantics from the
// Intel SDM vol. 2 instruction pages (flags of add/sub/cmp/and, 32-bit writes zero-extend, 8/16-bit writes merge,
// VEX writes zero the bits above the operation's width).
#pragma once
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/x86/x86_inst.h"

namespace doorbell::x86::testing {

struct VecValue {
  std::array<uint8_t, 64> b{};
  float f(int lane) const { float v; std::memcpy(&v, &b[4 * lane], 4); return v; }
  void set_f(int lane, float v) { std::memcpy(&b[4 * lane], &v, 4); }
  double d(int lane) const { double v; std::memcpy(&v, &b[8 * lane], 8); return v; }
  void set_d(int lane, double v) { std::memcpy(&b[8 * lane], &v, 8); }
};

// What an interpreted run saw.
struct RunTrace {
  uint64_t steps = 0;
  int calls = 0;
  bool call_misaligned = false;      // rsp % 16 != 0 at a `call`
  bool callee_saved_changed = false;  // rbx, rbp, r12-r15 differ after `ret`
  bool rsp_changed = false;           // rsp after `ret` is not the caller's
};

class MfInterpreter {
 public:
  static constexpr uint64_t kBase = 0x100000;
  static constexpr uint64_t kBytes = 1 << 20;
  static constexpr uint64_t kBufs = kBase + 0x1000;   // the buffer pointer array (ARG 0)
  static constexpr uint64_t kVars = kBase + 0x1800;   // the scalars (ARG 1)
  static constexpr uint64_t kPool = kBase + 0x2000;   // constants
  static constexpr uint64_t kVFrame = kBase + 0x4000; // before allocation: ARG and LOCAL slots
  static constexpr uint64_t kData = kBase + 0x10000;  // buffers, 64 KiB each
  static constexpr uint64_t kSentinel = 0x5e471e1;    // return address of the caller

  // The extern functions by name (float64): CALL_EXTERN / call.
  static double call_extern(const std::string& name, double a, double b) {
    if (name == "twice_plus") return 2 * a + b;
    if (name == "minus") return a - b;
    if (name == "halve") return a / 2;
    if (name == "pow") return std::pow(a, b);
    if (name == "exp2") return std::exp2(a);
    if (name == "fmax") return std::fmax(a, b);
    ADD_FAILURE() << "no extern " << name;
    return 0;
  }

  // Runs mf with buffers (buffer 0 first) as core `core_id` of `core_count`; returns the buffers after.
  // `entry_misalign` lowers the caller's rsp by a multiple of 16 (the ABI allows any) to check the prologue's alignment.
  std::vector<std::vector<uint8_t>> run(const MachineFunction& mf, std::vector<std::vector<uint8_t>> buffers,
                                        uint64_t entry_misalign = 0, int32_t core_id = 0, int32_t core_count = 1) {
    mf_ = &mf;
    mem_.assign(kBytes, 0);
    labels_.assign(static_cast<size_t>(mf.labels), -1);
    for (size_t i = 0; i < mf.code.size(); i++)
      if (mf.code[i].op == Mn::LABEL) labels_[mf.code[i].o[0].imm] = static_cast<int64_t>(i);
    uint64_t pool = kPool;
    pool_.clear();
    for (const ConstantData& c : mf.constants) {
      pool = (pool + c.align - 1) / c.align * c.align;
      pool_[c.label] = pool;
      std::memcpy(&mem_[pool - kBase], c.bytes.data(), c.bytes.size());
      pool += c.bytes.size();
    }
    for (size_t b = 0; b < buffers.size(); b++) {
      uint64_t at = kData + 0x10000 * b;
      put(kBufs + 8 * b, 8, at);
      std::memcpy(&mem_[at - kBase], buffers[b].data(), buffers[b].size());
    }
    for (int r = 0; r < 16; r++) gpr_[r] = 0xdead000000 + r;
    for (int r = 0; r < 32; r++) vec_[r].b.fill(static_cast<uint8_t>(0xa0 + r));
    for (int r = 0; r < 8; r++) k_[r] = static_cast<uint16_t>(0xbe00 + r);
    vg_.clear(), vv_.clear(), vk_.clear();
    put(kVFrame + 0, 8, kBufs), put(kVFrame + 8, 8, kVars);
    put(kVFrame + 16, 8, static_cast<uint64_t>(static_cast<int64_t>(core_id)));
    put(kVFrame + 24, 8, static_cast<uint64_t>(static_cast<int64_t>(core_count)));
    gpr_[RDI] = kBufs, gpr_[RSI] = kVars;
    // The 32-bit arguments with garbage above (the ABI leaves the upper halves undefined).
    gpr_[RDX] = 0x7777777700000000 | static_cast<uint32_t>(core_id);
    gpr_[RCX] = 0x8888888800000000 | static_cast<uint32_t>(core_count);
    const uint64_t caller_rsp = kBase + kBytes - 0x100 - entry_misalign;
    gpr_[RSP] = caller_rsp - 8;
    put(gpr_[RSP], 8, kSentinel);
    uint64_t saved[16];
    std::memcpy(saved, gpr_, sizeof saved);
    trace = {};
    for (size_t pc = 0;;) {
      if (pc >= mf.code.size()) throw std::runtime_error("ran past the end of the code");
      if (++trace.steps > 2000000) throw std::runtime_error("more than 2000000 steps");
      const Inst& inst = mf.code[pc];
      int64_t next = step(inst);
      if (next == kReturned) break;
      pc = next >= 0 ? static_cast<size_t>(next) : pc + 1;
    }
    if (mf.allocated) {
      for (int r : {RBX, RBP, R12, R13, R14, R15})
        if (gpr_[r] != saved[r]) trace.callee_saved_changed = true;
      if (gpr_[RSP] != caller_rsp) trace.rsp_changed = true;
    }
    for (size_t b = 0; b < buffers.size(); b++)
      std::memcpy(buffers[b].data(), &mem_[kData + 0x10000 * b - kBase], buffers[b].size());
    return buffers;
  }

  RunTrace trace;

 private:
  static constexpr int64_t kReturned = -2;
  const MachineFunction* mf_ = nullptr;
  std::vector<uint8_t> mem_;
  std::vector<int64_t> labels_;
  std::map<int32_t, uint64_t> pool_;
  uint64_t gpr_[16]{};
  VecValue vec_[32];
  uint16_t k_[8]{};
  std::map<uint32_t, uint64_t> vg_;
  std::map<uint32_t, VecValue> vv_;
  std::map<uint32_t, uint16_t> vk_;
  bool zf_ = false, sf_ = false, of_ = false, cf_ = false;

  [[noreturn]] void fail(const Inst& inst, const std::string& why) {
    throw std::runtime_error("interpreter: " + print_inst(inst, *mf_) + ": " + why);
  }
  uint8_t* at(uint64_t addr, uint64_t bytes) {
    if (addr < kBase || addr + bytes > kBase + kBytes) throw std::runtime_error("interpreter: address " + std::to_string(addr) + " outside memory");
    return &mem_[addr - kBase];
  }
  void put(uint64_t addr, int bytes, uint64_t v) { std::memcpy(at(addr, bytes), &v, bytes); }
  uint64_t get(uint64_t addr, int bytes) {
    uint64_t v = 0;
    std::memcpy(&v, at(addr, bytes), bytes);
    return v;
  }
  static uint64_t mask(int bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }

  uint64_t read_gpr(const Reg& r) {
    uint64_t v = r.virt ? vg_[r.num] : gpr_[r.num];
    return v & mask(r.bits);
  }
  void write_gpr(const Reg& r, uint64_t v) {
    uint64_t& dst = r.virt ? vg_[r.num] : gpr_[r.num];
    if (r.bits >= 32) dst = v & mask(r.bits);                    // a 32-bit write zero-extends
    else dst = (dst & ~mask(r.bits)) | (v & mask(r.bits));      // 8/16-bit writes merge
  }
  VecValue& vreg(const Reg& r) { return r.virt ? vv_[r.num] : vec_[r.num]; }
  uint16_t& kreg_of(const Reg& r) { return r.virt ? vk_[r.num] : k_[r.num]; }

  uint64_t address(const Inst& inst, const Mem& m) {
    uint64_t a = 0;
    switch (m.kind) {
      case MemBase::REG:
        if (m.has_base) a = read_gpr(with_bits(m.base, 64));
        break;
      case MemBase::RIP:
        if (!pool_.count(m.label)) fail(inst, "no constant with that label");
        a = pool_[m.label];
        break;
      case MemBase::ARG:
        if (mf_->allocated) fail(inst, "a frame slot after allocation");
        a = kVFrame + 8 * m.slot;
        break;
      case MemBase::LOCAL: {
        if (mf_->allocated) fail(inst, "a frame slot after allocation");
        a = kVFrame + 64;
        for (int32_t s = 0; s < m.slot; s++) a += (mf_->locals[s] + 63) / 64 * 64;
        break;
      }
      case MemBase::SPILL:
        fail(inst, "a SPILL slot: only the allocator makes them, and rewrites them");
    }
    if (m.has_index) a += read_gpr(with_bits(m.index, 64)) * m.scale;
    return a + static_cast<int64_t>(m.disp);
  }

  // An integer source at `bits`.
  uint64_t src(const Inst& inst, const Operand& o, int bits) {
    if (o.kind == Operand::Kind::REG) return read_gpr(with_bits(o.reg, static_cast<uint16_t>(bits)));
    if (o.kind == Operand::Kind::IMM) return static_cast<uint64_t>(o.imm) & mask(bits);
    if (o.kind == Operand::Kind::MEM) return get(address(inst, o.mem), bits / 8);
    fail(inst, "expected a register, immediate or memory source");
  }
  void dst(const Inst& inst, const Operand& o, int bits, uint64_t v) {
    if (o.kind == Operand::Kind::REG) return write_gpr(with_bits(o.reg, static_cast<uint16_t>(bits)), v);
    if (o.kind == Operand::Kind::MEM) return put(address(inst, o.mem), bits / 8, v);
    fail(inst, "expected a register or memory destination");
  }
  int width(const Operand& o) { return o.kind == Operand::Kind::REG ? o.reg.bits : o.mem.bits; }

  void flags_sub(uint64_t a, uint64_t b, int bits) {
    uint64_t m = mask(bits), r = (a - b) & m, top = 1ull << (bits - 1);
    zf_ = r == 0, sf_ = r & top, cf_ = (a & m) < (b & m);
    of_ = ((a ^ b) & top) && ((r ^ a) & top);
  }
  void flags_add(uint64_t a, uint64_t b, int bits) {
    uint64_t m = mask(bits), r = (a + b) & m, top = 1ull << (bits - 1);
    zf_ = r == 0, sf_ = r & top, cf_ = r < (a & m);
    of_ = !((a ^ b) & top) && ((r ^ a) & top);
  }
  bool condition(Mn op) {
    using enum Mn;
    switch (op) {
      case je: return zf_;
      case jne: return !zf_;
      case jl: return sf_ != of_;
      case jle: return zf_ || sf_ != of_;
      case jg: return !zf_ && sf_ == of_;
      case jge: return sf_ == of_;
      case jb: return cf_;
      case jbe: return cf_ || zf_;
      case ja: return !cf_ && !zf_;
      case jae: return !cf_;
      case js: return sf_;
      case jns: return !sf_;
      default: return true;  // jmp
    }
  }

  static Mn jump_of(Mn op) {
    using enum Mn;
    static constexpr Mn kSet[] = {sete, setne, setl, setle, setg, setge, setb, setbe, seta, setae};
    static constexpr Mn kCmov[] = {cmove, cmovne, cmovl, cmovle, cmovg, cmovge, cmovb, cmovbe, cmova, cmovae};
    static constexpr Mn kJump[] = {je, jne, jl, jle, jg, jge, jb, jbe, ja, jae};
    for (int i = 0; i < 10; i++)
      if (kSet[i] == op || kCmov[i] == op) return kJump[i];
    return jmp;
  }

  VecValue vsrc(const Inst& inst, const Operand& o, int bits) {
    VecValue v;
    if (o.kind == Operand::Kind::REG) v = vreg(o.reg);
    else if (o.kind == Operand::Kind::MEM) std::memcpy(v.b.data(), at(address(inst, o.mem), bits / 8), bits / 8);
    else fail(inst, "expected a vector register or memory source");
    return v;
  }
  // VEX: bits from `bits` up are zeroed.
  void vdst(const Reg& r, VecValue v, int bits) {
    for (int i = bits / 8; i < 64; i++) v.b[i] = 0;
    vreg(r) = v;
  }

  // The index of the next instruction, -1 for the following one, kReturned at the end.
  int64_t step(const Inst& inst) {
    using enum Mn;
    const Operand* o = inst.o;
    // Tied (before allocation): d = o[1] op o[2].
    auto binary = [&](auto fn, bool set_flags_add, bool set_flags_sub) -> int64_t {
      int bits = width(o[0]);
      uint64_t a, b;
      if (inst.tied) a = src(inst, o[1], bits), b = src(inst, o[2], bits);
      else if (inst.op == imul && inst.n == 3) a = src(inst, o[1], bits), b = src(inst, o[2], bits);
      else a = src(inst, o[0], bits), b = src(inst, o[1], bits);
      if (set_flags_add) flags_add(a, b, bits);
      if (set_flags_sub) flags_sub(a, b, bits);
      dst(inst, o[0], bits, fn(a, b));
      return -1;
    };
    switch (inst.op) {
      case LABEL: case nop: return -1;
      case mov: case movabs: {
        int bits = width(o[0]);
        uint64_t v = o[1].kind == Operand::Kind::IMM ? static_cast<uint64_t>(o[1].imm) : src(inst, o[1], bits);
        dst(inst, o[0], bits, v);
        return -1;
      }
      case movsxd: dst(inst, o[0], 64, static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(src(inst, o[1], 32))))); return -1;
      case lea: dst(inst, o[0], o[0].reg.bits, address(inst, o[1].mem)); return -1;
      case add: return binary([](uint64_t a, uint64_t b) { return a + b; }, true, false);
      case sub: return binary([](uint64_t a, uint64_t b) { return a - b; }, false, true);
      case imul: return binary([](uint64_t a, uint64_t b) { return a * b; }, false, false);
      case and_: case or_: case xor_: {
        if (inst.op == and_) binary([](uint64_t a, uint64_t b) { return a & b; }, false, false);
        if (inst.op == or_) binary([](uint64_t a, uint64_t b) { return a | b; }, false, false);
        if (inst.op == xor_) binary([](uint64_t a, uint64_t b) { return a ^ b; }, false, false);
        uint64_t r = src(inst, o[0], width(o[0]));
        zf_ = r == 0, sf_ = r >> (width(o[0]) - 1) & 1, cf_ = of_ = false;
        return -1;
      }
      case cmp: flags_sub(src(inst, o[0], width(o[0])), src(inst, o[1], width(o[0])), width(o[0])); return -1;
      case sete: case setne: case setl: case setle: case setg: case setge: case setb: case setbe: case seta:
      case setae:
        write_gpr(with_bits(o[0].reg, 8), condition(jump_of(inst.op)) ? 1 : 0);
        return -1;
      case cmove: case cmovne: case cmovl: case cmovle: case cmovg: case cmovge: case cmovb: case cmovbe:
      case cmova: case cmovae: {
        // A 32-bit cmov writes (zero-extends) its destination whether or not it moves.
        int bits = width(o[0]);
        uint64_t a = src(inst, o[inst.tied ? 1 : 0], bits), b = src(inst, o[inst.tied ? 2 : 1], bits);
        dst(inst, o[0], bits, condition(jump_of(inst.op)) ? b : a);
        return -1;
      }
      case movzx: dst(inst, o[0], width(o[0]), src(inst, o[1], width(o[1]))); return -1;
      case shl: case shr: case sar: {
        int bits = width(o[0]);
        uint64_t a = src(inst, o[inst.tied ? 1 : 0], bits);
        unsigned count = src(inst, o[inst.tied ? 2 : 1], 8) & (bits == 64 ? 63 : 31);
        uint64_t r = inst.op == shl ? a << count : inst.op == shr ? a >> count
                   : static_cast<uint64_t>((static_cast<int64_t>(a << (64 - bits)) >> (64 - bits)) >> count);
        dst(inst, o[0], bits, r);
        return -1;
      }
      case cqo: gpr_[RDX] = static_cast<int64_t>(gpr_[RAX]) < 0 ? ~0ull : 0; return -1;
      case idiv: {  // rdx:rax / o[0], rdx the sign of rax (cqo): quotient to rax, remainder to rdx
        int64_t n = static_cast<int64_t>(gpr_[RAX]), d = static_cast<int64_t>(src(inst, o[0], 64));
        if (o[0].kind == Operand::Kind::REG && o[0].reg.bits != 64) fail(inst, "only the 64-bit form");
        if (d == 0 || gpr_[RDX] != (n < 0 ? ~0ull : 0)) fail(inst, "a zero divisor or rdx not rax's sign");
        gpr_[RAX] = static_cast<uint64_t>(n / d), gpr_[RDX] = static_cast<uint64_t>(n % d);
        return -1;
      }
      case jmp: case je: case jne: case jl: case jle: case jg: case jge: case jb: case jbe: case ja: case jae:
      case js: case jns:
        if (!condition(inst.op)) return -1;
        if (labels_[o[0].imm] < 0) fail(inst, "label never placed");
        return labels_[o[0].imm];
      case push:
        gpr_[RSP] -= 8;
        put(gpr_[RSP], 8, read_gpr(o[0].reg));
        return -1;
      case pop:
        write_gpr(o[0].reg, get(gpr_[RSP], 8));
        gpr_[RSP] += 8;
        return -1;
      case ret:
        if (mf_->allocated) {
          if (get(gpr_[RSP], 8) != kSentinel) fail(inst, "the return address is not the caller's");
          gpr_[RSP] += 8;
        }
        return kReturned;
      case vmovss: case vmovsd: {
        int bytes = inst.op == vmovss ? 4 : 8;
        if (o[0].kind == Operand::Kind::MEM) {
          std::memcpy(at(address(inst, o[0].mem), bytes), vreg(o[1].reg).b.data(), bytes);
        } else {
          if (inst.n != 2 || o[1].kind != Operand::Kind::MEM) fail(inst, "only the load and store forms");
          VecValue v;
          std::memcpy(v.b.data(), at(address(inst, o[1].mem), bytes), bytes);
          vdst(o[0].reg, v, 128);
        }
        return -1;
      }
      case vmovups: case vmovaps: {
        int bits = width(o[0]);
        if (o[0].kind == Operand::Kind::MEM) std::memcpy(at(address(inst, o[0].mem), bits / 8), vreg(o[1].reg).b.data(), bits / 8);
        else vdst(o[0].reg, vsrc(inst, o[1], bits), bits);
        return -1;
      }
      case vaddss: case vaddsd: {
        VecValue a = vsrc(inst, o[1], 128), b = vsrc(inst, o[2], 128);
        if (inst.op == vaddss) a.set_f(0, a.f(0) + b.f(0));
        else a.set_d(0, a.d(0) + b.d(0));
        vdst(o[0].reg, a, 128);
        return -1;
      }
      case vfmadd231ps: {  // d = a * b + d (tied: d = a * b + addend)
        int bits = o[0].reg.bits, k = inst.tied ? 1 : 0;
        VecValue c = inst.tied ? vsrc(inst, o[1], bits) : vreg(o[0].reg);
        VecValue a = vsrc(inst, o[1 + k], bits), b = vsrc(inst, o[2 + k], bits), r;
        for (int l = 0; l < bits / 32; l++) r.set_f(l, std::fma(a.f(l), b.f(l), c.f(l)));
        vdst(o[0].reg, r, bits);
        return -1;
      }
      case vaddps: case vmulps: {
        int bits = o[0].reg.bits;
        VecValue a = vsrc(inst, o[1], bits), b = vsrc(inst, o[2], bits), r;
        const VecValue old = vreg(o[0].reg);
        for (int l = 0; l < bits / 32; l++) {
          // EVEX write mask: unselected lanes are zeroed ({z}) or keep the destination's (merge).
          if (inst.masked && !(kreg_of(inst.mask) >> l & 1)) r.set_f(l, inst.zeroing ? 0.0f : old.f(l));
          else r.set_f(l, inst.op == vaddps ? a.f(l) + b.f(l) : a.f(l) * b.f(l));
        }
        vdst(o[0].reg, r, bits);
        return -1;
      }
      case kmovw: {
        uint16_t v;
        if (o[1].kind == Operand::Kind::MEM) v = static_cast<uint16_t>(get(address(inst, o[1].mem), 2));
        else if (o[1].reg.cls == RegClass::MASK) v = kreg_of(o[1].reg);
        else v = static_cast<uint16_t>(read_gpr(with_bits(o[1].reg, 32)));
        if (o[0].kind == Operand::Kind::MEM) put(address(inst, o[0].mem), 2, v);
        else if (o[0].reg.cls == RegClass::MASK) kreg_of(o[0].reg) = v;
        else write_gpr(with_bits(o[0].reg, 32), v);
        return -1;
      }
      case vzeroupper:
        for (auto& v : vec_) std::fill(v.b.begin() + 16, v.b.end(), 0);
        return -1;
      case call: {
        trace.calls++;
        if (gpr_[RSP] % 16 != 0) trace.call_misaligned = true;
        double r = call_extern(mf_->externs[o[0].imm], vec_[0].d(0), vec_[1].d(0));
        // The callee may change every caller-saved register (firmware-notes/x86-abi.md §2).
        for (int g : {RAX, RCX, RDX, RSI, RDI, R8, R9, R10, R11}) gpr_[g] = 0xc1000000 + g;
        for (int v = 1; v < 32; v++) vec_[v].b.fill(0xcc);
        for (auto& kk : k_) kk = 0xcccc;
        VecValue x;
        x.set_d(0, r);
        vec_[0] = x;
        return -1;
      }
      case CALL_EXTERN: {
        trace.calls++;
        double a = vreg(o[2].reg).d(0), b = inst.n > 3 ? vreg(o[3].reg).d(0) : 0;
        VecValue x;
        x.set_d(0, call_extern(mf_->externs[o[0].imm], a, b));
        vdst(o[1].reg, x, 128);
        return -1;
      }
      default:
        fail(inst, "not interpreted");
    }
  }
};

}  // namespace doorbell::x86::testing
