// Building machine functions for the register allocator's tests (tests/x86/regalloc_test.cpp, run by the
// interpreter in tests/x86/mf_interpreter.h; tests/x86/regalloc_native_test.cpp, assembled and run natively).
#pragma once
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "compiler/x86/x86_inst.h"

namespace doorbell::x86::testing {

using Bytes = std::vector<uint8_t>;

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

inline Operand R(Reg r) { return op_reg(r); }
inline Operand I(int64_t v) { return op_imm(v); }
inline Operand M(Reg base, int32_t disp, uint16_t bits) {
  Mem m;
  m.base = base;
  m.disp = disp;
  m.bits = bits;
  return op_mem(m);
}
inline Operand MI(Reg base, Reg index, uint8_t scale, int32_t disp, uint16_t bits) {
  Mem m;
  m.base = base;
  m.has_index = true;
  m.index = index;
  m.scale = scale;
  m.disp = disp;
  m.bits = bits;
  return op_mem(m);
}
inline Operand Slot(MemBase kind, int32_t slot, uint16_t bits) { return op_mem(frame_slot(kind, slot, bits)); }

// A kernel under construction: out = buffer 0, in = buffer 1, loaded from the ARG 0 pointer array.
struct Fn {
  MachineFunction mf;
  Reg bufs, out, in;
  Fn() {
    mf.name = "k";
    bufs = g();
    e(Mn::mov, {R(bufs), Slot(MemBase::ARG, 0, 64)});
    out = g();
    e(Mn::mov, {R(out), M(bufs, 0, 64)});
    in = g();
    e(Mn::mov, {R(in), M(bufs, 8, 64)});
  }
  Reg g(uint16_t bits = 64) { return mf.new_vreg(RegClass::GPR, bits); }
  Reg v(uint16_t bits) { return mf.new_vreg(RegClass::VEC, bits); }
  Reg k() { return mf.new_vreg(RegClass::MASK, 16); }
  int32_t pos() const { return static_cast<int32_t>(mf.code.size()); }
  Inst& e(Mn op, std::initializer_list<Operand> ops) {
    mf.code.push_back(make_inst(op, ops));
    return mf.code.back();
  }
  Inst& tied(Mn op, std::initializer_list<Operand> ops) {
    Inst& i = e(op, ops);
    i.tied = true;
    return i;
  }
  int32_t label() { return mf.new_label(); }
  void place(int32_t l) { e(Mn::LABEL, {op_label(l)}); }
  void jump(Mn op, int32_t l) { e(op, {op_label(l)}); }
};

inline Bytes int64s(const std::vector<int64_t>& v) {
  Bytes b(v.size() * 8);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}
inline int64_t int64_at(const Bytes& b, size_t i) {
  int64_t v;
  std::memcpy(&v, &b[8 * i], 8);
  return v;
}
inline float float_at(const Bytes& b, size_t i) {
  float v;
  std::memcpy(&v, &b[4 * i], 4);
  return v;
}
inline double double_at(const Bytes& b, size_t i) {
  double v;
  std::memcpy(&v, &b[8 * i], 8);
  return v;
}

// 40 GPR values, all live at once, then summed: x_i + i with x_i = 1000 + 37 i.
inline MachineFunction forty_gprs() {
  Fn f;
  std::vector<Reg> w;
  for (int i = 0; i < 40; i++) {
    Reg v = f.g(), x = f.g();
    f.e(Mn::mov, {R(v), M(f.in, 8 * i, 64)});
    f.tied(Mn::add, {R(x), R(v), I(i)});
    w.push_back(x);
  }
  Reg s = f.g();
  f.e(Mn::mov, {R(s), R(w[0])});
  for (int i = 1; i < 40; i++) f.tied(Mn::add, {R(s), R(s), R(w[i])});
  f.e(Mn::mov, {M(f.out, 0, 64), R(s)});
  f.e(Mn::ret, {});
  return f.mf;
}

}  // namespace doorbell::x86::testing
