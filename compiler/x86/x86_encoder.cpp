// The x86-64 encoder: instructions to bytes (legacy with REX, VEX, EVEX), jump relaxation and RIP-relative fixups.
// Every fact (prefix layouts, ModRM/SIB rules, opcodes, disp8*N) is in firmware-notes/x86-encoding.md with its
// Intel SDM vol. 2 section; the tables below cite the section of that file.
#include "compiler/x86/x86_encoder.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace doorbell::x86 {
namespace {

using K = Operand::Kind;

// ---------------------------------------------------------------------------------------------------------------
// Errors: the instruction's text and what was expected.

std::string inst_text(const Inst& inst, const std::vector<std::string>& externs) {
  MachineFunction mf;
  mf.externs = externs;
  try {
    return print_inst(inst, mf);
  } catch (const std::exception&) {
    return std::string(mnemonic_name(inst.op)) + " (" + std::to_string(inst.n) + " operands)";
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Bytes of one instruction.

struct Buf {
  uint8_t b[32];
  int n = 0;
  int rip_at = -1;       // offset of a RIP-relative disp32
  int32_t rip_label = -1;
  void put(uint8_t v) { b[n++] = v; }
  void put_le(uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) b[n++] = static_cast<uint8_t>(v >> (8 * i));
  }
};

bool fits8(int64_t v) { return v >= -128 && v <= 127; }
bool fits32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

// REX/VEX/EVEX extension bits an r/m operand needs (x86-encoding.md §2): B = bit 3 of the base or register, X = bit 3
// of the index (EVEX: bit 4 of a vector r/m register).
struct RmBits {
  int b = 0, x = 0;
};
RmBits rm_bits(const Operand& rm) {
  RmBits r;
  if (rm.kind == K::REG) {
    r.b = (rm.reg.num >> 3) & 1;
    r.x = (rm.reg.num >> 4) & 1;
  } else if (rm.mem.kind == MemBase::REG) {
    if (rm.mem.has_base) r.b = (rm.mem.base.num >> 3) & 1;
    if (rm.mem.has_index) r.x = (rm.mem.index.num >> 3) & 1;
  }
  return r;
}

// ModRM, SIB and displacement (x86-encoding.md §3). `n` is the EVEX disp8 scale (1 for legacy and VEX).
void put_modrm(Buf& b, int reg, const Operand& rm, int n, const Inst& inst, const std::vector<std::string>& ex) {
  reg &= 7;
  if (rm.kind == K::REG) {
    b.put(static_cast<uint8_t>(0xC0 | reg << 3 | (rm.reg.num & 7)));
    return;
  }
  const Mem& m = rm.mem;
  if (m.kind == MemBase::RIP) {
    b.put(static_cast<uint8_t>(0x05 | reg << 3));
    b.rip_at = b.n;
    b.rip_label = m.label;
    b.put_le(static_cast<uint32_t>(m.disp), 4);
    return;
  }
  if (m.kind != MemBase::REG)
    throw X86EncodeError(inst_text(inst, ex) + ": memory operand is a frame slot; expected [base + scale*index + disp] after register allocation");
  if (m.has_index && (m.index.num & 15) == RSP)
    throw X86EncodeError(inst_text(inst, ex) + ": rsp as an index; expected any other index register");
  if (m.has_index && m.scale != 1 && m.scale != 2 && m.scale != 4 && m.scale != 8)
    throw X86EncodeError(inst_text(inst, ex) + ": scale " + std::to_string(m.scale) + "; expected 1, 2, 4 or 8");
  const int ss = m.scale == 8 ? 3 : m.scale == 4 ? 2 : m.scale == 2 ? 1 : 0;
  if (!m.has_base) {  // [index*scale + disp32] or [disp32]: mod 00, SIB base 101
    b.put(static_cast<uint8_t>(0x04 | reg << 3));
    const int idx = m.has_index ? (m.index.num & 7) : 4;
    b.put(static_cast<uint8_t>((m.has_index ? ss : 0) << 6 | idx << 3 | 5));
    b.put_le(static_cast<uint32_t>(m.disp), 4);
    return;
  }
  const int base = m.base.num & 7;
  int mod;
  int64_t d = m.disp;
  if (d == 0 && base != 5) {
    mod = 0;
  } else if (d % n == 0 && fits8(d / n)) {
    mod = 1;
    d /= n;
  } else {
    mod = 2;
  }
  if (m.has_index || base == 4) {
    b.put(static_cast<uint8_t>(mod << 6 | reg << 3 | 4));
    const int idx = m.has_index ? (m.index.num & 7) : 4;
    b.put(static_cast<uint8_t>((m.has_index ? ss : 0) << 6 | idx << 3 | base));
  } else {
    b.put(static_cast<uint8_t>(mod << 6 | reg << 3 | base));
  }
  if (mod == 1) b.put(static_cast<uint8_t>(d));
  if (mod == 2) b.put_le(static_cast<uint32_t>(d), 4);
}

// ---------------------------------------------------------------------------------------------------------------
// Legacy (non-VEX) instructions: x86-encoding.md §2 (prefixes, REX), §5 (opcodes).

struct Ctx {
  const Inst& inst;
  const std::vector<std::string>& ex;
  [[noreturn]] void fail(const std::string& expected) const {
    throw X86EncodeError(inst_text(inst, ex) + ": " + expected);
  }
};

bool is_gpr(const Operand& o) { return o.kind == K::REG && o.reg.cls == RegClass::GPR; }
bool is_vec(const Operand& o) { return o.kind == K::REG && o.reg.cls == RegClass::VEC; }
bool is_mask(const Operand& o) { return o.kind == K::REG && o.reg.cls == RegClass::MASK; }
bool is_mem(const Operand& o) { return o.kind == K::MEM; }
bool is_imm(const Operand& o) { return o.kind == K::IMM; }
bool is_gm(const Operand& o) { return is_gpr(o) || is_mem(o); }
int width(const Operand& o) { return o.kind == K::REG ? o.reg.bits : o.kind == K::MEM ? o.mem.bits : 0; }
// spl, bpl, sil, dil need a REX prefix (without one, 4-7 are ah..bh).
bool needs_rex_byte(const Operand& o) { return is_gpr(o) && o.reg.bits == 8 && o.reg.num >= 4; }

// prefix66/REX.W from the operand size; `opcode` 1-3 bytes (0F maps included); `reg` the ModRM.reg register or digit.
void legacy(Buf& b, const Ctx& c, int osize, std::initializer_list<uint8_t> opcode, int reg, const Operand& rm,
            bool force_rex = false) {
  if (osize == 16) b.put(0x66);
  const RmBits rb = rm_bits(rm);
  const int w = osize == 64 ? 1 : 0;
  const int r = (reg >> 3) & 1;
  const int x = rm.kind == K::MEM ? rb.x : 0;
  if (w || r || x || rb.b || force_rex || needs_rex_byte(rm)) b.put(static_cast<uint8_t>(0x40 | w << 3 | r << 2 | x << 1 | rb.b));
  for (uint8_t op : opcode) b.put(op);
  put_modrm(b, reg, rm, 1, c.inst, c.ex);
}

void put_imm(Buf& b, int64_t v, int bytes) { b.put_le(static_cast<uint64_t>(v), bytes); }

// The value of an immediate at operand size `bits` (sign-extended), or fail when it does not fit either signed or
// unsigned (llvm-mc accepts both readings of "add eax, 4294967295").
int64_t imm_at(const Ctx& c, int64_t v, int bits) {
  if (bits == 64) {
    if (!fits32(v)) c.fail("immediate " + std::to_string(v) + " does not fit 32 bits sign-extended; expected movabs for 64-bit constants");
    return v;
  }
  const int64_t lo = -(int64_t(1) << (bits - 1)), hi = (int64_t(1) << bits) - 1;
  if (v < lo || v > hi) c.fail("immediate " + std::to_string(v) + " does not fit " + std::to_string(bits) + " bits");
  const uint64_t mask = (uint64_t(1) << bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (u >> (bits - 1)) u |= ~mask;
  return static_cast<int64_t>(u);
}

int gpr_size(const Ctx& c, const Operand& o, int k) {
  const int w = width(o);
  if (w != 8 && w != 16 && w != 32 && w != 64)
    c.fail("operand " + std::to_string(k + 1) + " has width " + std::to_string(w) + "; expected a byte/word/dword/qword register or memory");
  return w;
}

// Condition codes, tttn of Jcc/SETcc/CMOVcc (x86-encoding.md §5.3, SDM vol. 2 appendix B.1.4.7).
struct CcRow {
  Mn j, set, cmov;
  uint8_t cc;
};
constexpr CcRow kCc[] = {
    {Mn::je, Mn::sete, Mn::cmove, 0x4},   {Mn::jne, Mn::setne, Mn::cmovne, 0x5}, {Mn::jl, Mn::setl, Mn::cmovl, 0xC},
    {Mn::jle, Mn::setle, Mn::cmovle, 0xE}, {Mn::jg, Mn::setg, Mn::cmovg, 0xF},   {Mn::jge, Mn::setge, Mn::cmovge, 0xD},
    {Mn::jb, Mn::setb, Mn::cmovb, 0x2},   {Mn::jbe, Mn::setbe, Mn::cmovbe, 0x6}, {Mn::ja, Mn::seta, Mn::cmova, 0x7},
    {Mn::jae, Mn::setae, Mn::cmovae, 0x3}, {Mn::jp, Mn::setp, Mn::cmovp, 0xA},   {Mn::jnp, Mn::setnp, Mn::cmovnp, 0xB},
    {Mn::js, Mn::LABEL, Mn::LABEL, 0x8},  {Mn::jns, Mn::LABEL, Mn::LABEL, 0x9},
};

// add/or/and/sub/xor/cmp: opcode base (r/m8,r8 = base+0; r/m,r = +1; r8,r/m8 = +2; r,r/m = +3; al,imm8 = +4;
// eAX,imm = +5) and the /digit of 80/81/83 (x86-encoding.md §5.1, SDM vol. 2 ch. 3 ADD/OR/AND/SUB/XOR/CMP).
struct AluRow {
  Mn op;
  uint8_t base, digit;
};
constexpr AluRow kAlu[] = {{Mn::add, 0x00, 0}, {Mn::or_, 0x08, 1}, {Mn::and_, 0x20, 4},
                           {Mn::sub, 0x28, 5}, {Mn::xor_, 0x30, 6}, {Mn::cmp, 0x38, 7}};
// F6/F7 group 3 and shift group 2 digits (SDM vol. 2 table A-6).
struct DigitRow {
  Mn op;
  uint8_t digit;
};
constexpr DigitRow kGroup3[] = {{Mn::not_, 2}, {Mn::neg, 3}, {Mn::imul, 5}, {Mn::div, 6}, {Mn::idiv, 7}};
constexpr DigitRow kShift[] = {{Mn::shl, 4}, {Mn::shr, 5}, {Mn::sar, 7}};

// ---------------------------------------------------------------------------------------------------------------
// VEX/EVEX instructions as data (x86-encoding.md §4 for the prefixes, §5.4-5.6 for the opcodes).
//
// kinds, one letter per operand in Intel order: V vector register, K mask register, G GPR, M memory, X vector or
// memory, R GPR or memory, Q mask or memory, I imm8. roles: r ModRM.reg, v VEX/EVEX.vvvv, m ModRM.r/m, i imm8,
// s register in imm8[7:4] (/is4).

enum : uint8_t { P0 = 0, P66 = 1, PF3 = 2, PF2 = 3 };
enum : uint8_t { M0F = 1, M38 = 2, M3A = 3 };
enum : uint8_t { ANY, VEXONLY, EVEXONLY };
enum : int8_t { WG = 2, NOEVEX = -1 };  // W from a 64-bit GPR or memory operand; no EVEX form
enum : uint8_t {
  F_SCALAR = 1,      // VEX.L/EVEX.L'L 0 whatever the registers (LIG, L0, scalar)
  F_COMMUTE = 2,     // llvm-mc swaps the sources to reach a 2-byte VEX (x86-encoding.md §4.4)
  F_CMP_COMMUTE = 4, // the same for vcmpps with a symmetric predicate (0, 3, 4, 7; llvm-mc leaves vcmpss/sd alone)
  F_MOV_REV = 8,     // reg-reg move: llvm-mc uses the store opcode `rev` when that reaches a 2-byte VEX
  F_MIXED = 16,      // operands of different widths (conversions, lane extracts/inserts, broadcasts, shift counts)
};

struct VexRow {
  Mn op;
  const char* kinds;
  const char* roles;
  uint8_t pp, map, opcode;
  int8_t digit;  // ModRM.reg digit (-1: a register operand)
  int8_t w;      // VEX.W: 0, 1, WG
  int8_t ew;     // EVEX.W: 0, 1, WG, NOEVEX
  uint8_t enc;
  uint8_t flags;
  uint8_t rev;   // F_MOV_REV: the opcode of the store form
  uint8_t rev_pp;
};

// clang-format off
constexpr VexRow kVex[] = {
    // Scalar moves and conversions (SDM vol. 2 ch. 5: VMOVSS, VMOVSD, MOVD/MOVQ, VCVT*).
    {Mn::vmovss, "VVV", "rvm", PF3, M0F, 0x10, -1, 0, 0, ANY, F_SCALAR | F_MOV_REV, 0x11, PF3},
    {Mn::vmovss, "VM", "rm", PF3, M0F, 0x10, -1, 0, 0, ANY, F_SCALAR, 0, 0},
    {Mn::vmovss, "MV", "mr", PF3, M0F, 0x11, -1, 0, 0, ANY, F_SCALAR, 0, 0},
    {Mn::vmovsd, "VVV", "rvm", PF2, M0F, 0x10, -1, 0, 1, ANY, F_SCALAR | F_MOV_REV, 0x11, PF2},
    {Mn::vmovsd, "VM", "rm", PF2, M0F, 0x10, -1, 0, 1, ANY, F_SCALAR, 0, 0},
    {Mn::vmovsd, "MV", "mr", PF2, M0F, 0x11, -1, 0, 1, ANY, F_SCALAR, 0, 0},
    {Mn::vmovd, "VR", "rm", P66, M0F, 0x6E, -1, 0, 0, ANY, F_SCALAR, 0, 0},
    {Mn::vmovd, "RV", "mr", P66, M0F, 0x7E, -1, 0, 0, ANY, F_SCALAR, 0, 0},
    {Mn::vmovq, "VG", "rm", P66, M0F, 0x6E, -1, 1, 1, ANY, F_SCALAR, 0, 0},
    {Mn::vmovq, "GV", "mr", P66, M0F, 0x7E, -1, 1, 1, ANY, F_SCALAR, 0, 0},
    {Mn::vmovq, "VX", "rm", PF3, M0F, 0x7E, -1, 0, 1, ANY, F_SCALAR | F_MOV_REV, 0xD6, P66},
    {Mn::vmovq, "MV", "mr", P66, M0F, 0xD6, -1, 0, 1, ANY, F_SCALAR, 0, 0},
    {Mn::vaddss, "VVX", "rvm", PF3, M0F, 0x58, -1, 0, 0, ANY, F_SCALAR, 0, 0},
    {Mn::vaddsd, "VVX", "rvm", PF2, M0F, 0x58, -1, 0, 1, ANY, F_SCALAR, 0, 0},
    {Mn::vsubss, "VVX", "rvm", PF3, M0F, 0x5C, -1, 0, 0, ANY, F_SCALAR, 0, 0},
    {Mn::vsubsd, "VVX", "rvm", PF2, M0F, 0x5C, -1, 0, 1, ANY, F_SCALAR, 0, 0},
    {Mn::vmulss, "VVX", "rvm", PF3, M0F, 0x59, -1, 0, 0, ANY, F_SCALAR, 0, 0},
    {Mn::vmulsd, "VVX", "rvm", PF2, M0F, 0x59, -1, 0, 1, ANY, F_SCALAR, 0, 0},
    {Mn::vdivss, "VVX", "rvm", PF3, M0F, 0x5E, -1, 0, 0, ANY, F_SCALAR, 0, 0},
    {Mn::vdivsd, "VVX", "rvm", PF2, M0F, 0x5E, -1, 0, 1, ANY, F_SCALAR, 0, 0},
    {Mn::vsqrtss, "VVX", "rvm", PF3, M0F, 0x51, -1, 0, 0, ANY, F_SCALAR, 0, 0},
    {Mn::vsqrtsd, "VVX", "rvm", PF2, M0F, 0x51, -1, 0, 1, ANY, F_SCALAR, 0, 0},
    {Mn::vmaxss, "VVX", "rvm", PF3, M0F, 0x5F, -1, 0, 0, ANY, F_SCALAR, 0, 0},
    {Mn::vmaxsd, "VVX", "rvm", PF2, M0F, 0x5F, -1, 0, 1, ANY, F_SCALAR, 0, 0},
    {Mn::vminss, "VVX", "rvm", PF3, M0F, 0x5D, -1, 0, 0, ANY, F_SCALAR, 0, 0},
    {Mn::vminsd, "VVX", "rvm", PF2, M0F, 0x5D, -1, 0, 1, ANY, F_SCALAR, 0, 0},
    {Mn::vucomiss, "VX", "rm", P0, M0F, 0x2E, -1, 0, 0, ANY, F_SCALAR, 0, 0},
    {Mn::vucomisd, "VX", "rm", P66, M0F, 0x2E, -1, 0, 1, ANY, F_SCALAR, 0, 0},
    {Mn::vcmpss, "VVXI", "rvmi", PF3, M0F, 0xC2, -1, 0, NOEVEX, VEXONLY, F_SCALAR, 0, 0},
    {Mn::vcmpss, "KVXI", "rvmi", PF3, M0F, 0xC2, -1, 0, 0, EVEXONLY, F_SCALAR, 0, 0},
    {Mn::vcmpsd, "VVXI", "rvmi", PF2, M0F, 0xC2, -1, 0, NOEVEX, VEXONLY, F_SCALAR, 0, 0},
    {Mn::vcmpsd, "KVXI", "rvmi", PF2, M0F, 0xC2, -1, 0, 1, EVEXONLY, F_SCALAR, 0, 0},
    {Mn::vroundss, "VVXI", "rvmi", P66, M3A, 0x0A, -1, 0, NOEVEX, VEXONLY, F_SCALAR, 0, 0},
    {Mn::vroundsd, "VVXI", "rvmi", P66, M3A, 0x0B, -1, 0, NOEVEX, VEXONLY, F_SCALAR, 0, 0},
    {Mn::vcvtsi2ss, "VVR", "rvm", PF3, M0F, 0x2A, -1, WG, WG, ANY, F_SCALAR, 0, 0},
    {Mn::vcvtsi2sd, "VVR", "rvm", PF2, M0F, 0x2A, -1, WG, WG, ANY, F_SCALAR, 0, 0},
    {Mn::vcvttss2si, "GX", "rm", PF3, M0F, 0x2C, -1, WG, WG, ANY, F_SCALAR, 0, 0},
    {Mn::vcvttsd2si, "GX", "rm", PF2, M0F, 0x2C, -1, WG, WG, ANY, F_SCALAR, 0, 0},
    {Mn::vcvtss2sd, "VVX", "rvm", PF3, M0F, 0x5A, -1, 0, 0, ANY, F_SCALAR, 0, 0},
    {Mn::vcvtsd2ss, "VVX", "rvm", PF2, M0F, 0x5A, -1, 0, 1, ANY, F_SCALAR, 0, 0},
    {Mn::vcvtusi2ss, "VVR", "rvm", PF3, M0F, 0x7B, -1, 0, WG, EVEXONLY, F_SCALAR, 0, 0},
    {Mn::vcvtusi2sd, "VVR", "rvm", PF2, M0F, 0x7B, -1, 0, WG, EVEXONLY, F_SCALAR, 0, 0},
    {Mn::vcvttss2usi, "GX", "rm", PF3, M0F, 0x78, -1, 0, WG, EVEXONLY, F_SCALAR, 0, 0},
    {Mn::vcvttsd2usi, "GX", "rm", PF2, M0F, 0x78, -1, 0, WG, EVEXONLY, F_SCALAR, 0, 0},
    {Mn::vfmadd231ss, "VVX", "rvm", P66, M38, 0xB9, -1, 0, 0, ANY, F_SCALAR, 0, 0},
    {Mn::vfmadd231sd, "VVX", "rvm", P66, M38, 0xB9, -1, 1, 1, ANY, F_SCALAR, 0, 0},
    {Mn::vcvtph2ps, "VX", "rm", P66, M38, 0x13, -1, 0, 0, ANY, F_MIXED, 0, 0},
    {Mn::vcvtps2ph, "XVI", "mri", P66, M3A, 0x1D, -1, 0, 0, ANY, F_MIXED, 0, 0},
    {Mn::vpextrw, "GVI", "rmi", P66, M0F, 0xC5, -1, 0, 0, ANY, F_SCALAR, 0, 0},
    {Mn::vpextrw, "MVI", "mri", P66, M3A, 0x15, -1, 0, 0, ANY, F_SCALAR, 0, 0},
    {Mn::vpinsrw, "VVRI", "rvmi", P66, M0F, 0xC4, -1, 0, 0, ANY, F_SCALAR, 0, 0},
    // Packed moves and broadcasts (SDM vol. 2 ch. 4-5: MOVUPS, MOVAPS, MOVDQU, VBROADCAST, VPBROADCAST).
    {Mn::vmovups, "VX", "rm", P0, M0F, 0x10, -1, 0, 0, ANY, F_MOV_REV, 0x11, P0},
    {Mn::vmovups, "MV", "mr", P0, M0F, 0x11, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vmovaps, "VX", "rm", P0, M0F, 0x28, -1, 0, 0, ANY, F_MOV_REV, 0x29, P0},
    {Mn::vmovaps, "MV", "mr", P0, M0F, 0x29, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vmovdqu, "VX", "rm", PF3, M0F, 0x6F, -1, 0, NOEVEX, VEXONLY, F_MOV_REV, 0x7F, PF3},
    {Mn::vmovdqu, "MV", "mr", PF3, M0F, 0x7F, -1, 0, NOEVEX, VEXONLY, 0, 0, 0},
    {Mn::vmovdqu32, "VX", "rm", PF3, M0F, 0x6F, -1, 0, 0, EVEXONLY, 0, 0, 0},
    {Mn::vmovdqu32, "MV", "mr", PF3, M0F, 0x7F, -1, 0, 0, EVEXONLY, 0, 0, 0},
    {Mn::vmovdqa, "VX", "rm", P66, M0F, 0x6F, -1, 0, NOEVEX, VEXONLY, F_MOV_REV, 0x7F, P66},
    {Mn::vmovdqa, "MV", "mr", P66, M0F, 0x7F, -1, 0, NOEVEX, VEXONLY, 0, 0, 0},
    {Mn::vmovdqa32, "VX", "rm", P66, M0F, 0x6F, -1, 0, 0, EVEXONLY, 0, 0, 0},
    {Mn::vmovdqa32, "MV", "mr", P66, M0F, 0x7F, -1, 0, 0, EVEXONLY, 0, 0, 0},
    {Mn::vbroadcastss, "VX", "rm", P66, M38, 0x18, -1, 0, 0, ANY, F_MIXED, 0, 0},
    {Mn::vbroadcastsd, "VX", "rm", P66, M38, 0x19, -1, 0, 1, ANY, F_MIXED, 0, 0},
    {Mn::vpbroadcastd, "VG", "rm", P66, M38, 0x7C, -1, 0, 0, EVEXONLY, 0, 0, 0},
    {Mn::vpbroadcastd, "VX", "rm", P66, M38, 0x58, -1, 0, 0, ANY, F_MIXED, 0, 0},
    {Mn::vpbroadcastq, "VG", "rm", P66, M38, 0x7C, -1, 0, 1, EVEXONLY, 0, 0, 0},
    {Mn::vpbroadcastq, "VX", "rm", P66, M38, 0x59, -1, 0, 1, ANY, F_MIXED, 0, 0},
    // Packed float arithmetic (SDM vol. 2: ADDPS ... MINPS, ROUNDPS, VRNDSCALEPS, VFMADD*PS, logic).
    {Mn::vaddps, "VVX", "rvm", P0, M0F, 0x58, -1, 0, 0, ANY, F_COMMUTE, 0, 0},
    {Mn::vsubps, "VVX", "rvm", P0, M0F, 0x5C, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vmulps, "VVX", "rvm", P0, M0F, 0x59, -1, 0, 0, ANY, F_COMMUTE, 0, 0},
    {Mn::vdivps, "VVX", "rvm", P0, M0F, 0x5E, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vsqrtps, "VX", "rm", P0, M0F, 0x51, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vmaxps, "VVX", "rvm", P0, M0F, 0x5F, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vminps, "VVX", "rvm", P0, M0F, 0x5D, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vroundps, "VXI", "rmi", P66, M3A, 0x08, -1, 0, NOEVEX, VEXONLY, 0, 0, 0},
    {Mn::vrndscaleps, "VXI", "rmi", P66, M3A, 0x08, -1, 0, 0, EVEXONLY, 0, 0, 0},
    {Mn::vfmadd231ps, "VVX", "rvm", P66, M38, 0xB8, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vfmadd213ps, "VVX", "rvm", P66, M38, 0xA8, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vxorps, "VVX", "rvm", P0, M0F, 0x57, -1, 0, 0, ANY, F_COMMUTE, 0, 0},
    {Mn::vandps, "VVX", "rvm", P0, M0F, 0x54, -1, 0, 0, ANY, F_COMMUTE, 0, 0},
    {Mn::vandnps, "VVX", "rvm", P0, M0F, 0x55, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vorps, "VVX", "rvm", P0, M0F, 0x56, -1, 0, 0, ANY, F_COMMUTE, 0, 0},
    {Mn::vcmpps, "VVXI", "rvmi", P0, M0F, 0xC2, -1, 0, NOEVEX, VEXONLY, F_CMP_COMMUTE, 0, 0},
    {Mn::vcmpps, "KVXI", "rvmi", P0, M0F, 0xC2, -1, 0, 0, EVEXONLY, 0, 0, 0},
    {Mn::vblendvps, "VVXV", "rvms", P66, M3A, 0x4A, -1, 0, NOEVEX, VEXONLY, 0, 0, 0},
    {Mn::vblendmps, "VVX", "rvm", P66, M38, 0x65, -1, 0, 0, EVEXONLY, 0, 0, 0},
    {Mn::vpblendmd, "VVX", "rvm", P66, M38, 0x64, -1, 0, 0, EVEXONLY, 0, 0, 0},
    // Packed integer (SDM vol. 2: PADDD, PSUBD, PMULLD, PAND/N, POR, PXOR, VPTERNLOGD, shifts, compares, min/max).
    {Mn::vpaddd, "VVX", "rvm", P66, M0F, 0xFE, -1, 0, 0, ANY, F_COMMUTE, 0, 0},
    {Mn::vpsubd, "VVX", "rvm", P66, M0F, 0xFA, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vpmulld, "VVX", "rvm", P66, M38, 0x40, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vpand, "VVX", "rvm", P66, M0F, 0xDB, -1, 0, NOEVEX, VEXONLY, F_COMMUTE, 0, 0},
    {Mn::vpandd, "VVX", "rvm", P66, M0F, 0xDB, -1, 0, 0, EVEXONLY, 0, 0, 0},
    {Mn::vpandn, "VVX", "rvm", P66, M0F, 0xDF, -1, 0, NOEVEX, VEXONLY, 0, 0, 0},
    {Mn::vpandnd, "VVX", "rvm", P66, M0F, 0xDF, -1, 0, 0, EVEXONLY, 0, 0, 0},
    {Mn::vpor, "VVX", "rvm", P66, M0F, 0xEB, -1, 0, NOEVEX, VEXONLY, F_COMMUTE, 0, 0},
    {Mn::vpord, "VVX", "rvm", P66, M0F, 0xEB, -1, 0, 0, EVEXONLY, 0, 0, 0},
    {Mn::vpxor, "VVX", "rvm", P66, M0F, 0xEF, -1, 0, NOEVEX, VEXONLY, F_COMMUTE, 0, 0},
    {Mn::vpxord, "VVX", "rvm", P66, M0F, 0xEF, -1, 0, 0, EVEXONLY, 0, 0, 0},
    {Mn::vpternlogd, "VVXI", "rvmi", P66, M3A, 0x25, -1, 0, 0, EVEXONLY, 0, 0, 0},
    {Mn::vpslld, "VXI", "vmi", P66, M0F, 0x72, 6, 0, 0, ANY, 0, 0, 0},
    {Mn::vpslld, "VVX", "rvm", P66, M0F, 0xF2, -1, 0, 0, ANY, F_MIXED, 0, 0},
    {Mn::vpsrld, "VXI", "vmi", P66, M0F, 0x72, 2, 0, 0, ANY, 0, 0, 0},
    {Mn::vpsrld, "VVX", "rvm", P66, M0F, 0xD2, -1, 0, 0, ANY, F_MIXED, 0, 0},
    {Mn::vpsrad, "VXI", "vmi", P66, M0F, 0x72, 4, 0, 0, ANY, 0, 0, 0},
    {Mn::vpsrad, "VVX", "rvm", P66, M0F, 0xE2, -1, 0, 0, ANY, F_MIXED, 0, 0},
    {Mn::vpsllvd, "VVX", "rvm", P66, M38, 0x47, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vpsrlvd, "VVX", "rvm", P66, M38, 0x45, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vpsravd, "VVX", "rvm", P66, M38, 0x46, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vpcmpeqd, "VVX", "rvm", P66, M0F, 0x76, -1, 0, NOEVEX, VEXONLY, F_COMMUTE, 0, 0},
    {Mn::vpcmpeqd, "KVX", "rvm", P66, M0F, 0x76, -1, 0, 0, EVEXONLY, 0, 0, 0},
    {Mn::vpcmpgtd, "VVX", "rvm", P66, M0F, 0x66, -1, 0, NOEVEX, VEXONLY, 0, 0, 0},
    {Mn::vpcmpgtd, "KVX", "rvm", P66, M0F, 0x66, -1, 0, 0, EVEXONLY, 0, 0, 0},
    {Mn::vpcmpd, "KVXI", "rvmi", P66, M3A, 0x1F, -1, 0, 0, EVEXONLY, 0, 0, 0},
    {Mn::vpcmpud, "KVXI", "rvmi", P66, M3A, 0x1E, -1, 0, 0, EVEXONLY, 0, 0, 0},
    {Mn::vpmaxsd, "VVX", "rvm", P66, M38, 0x3D, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vpmaxud, "VVX", "rvm", P66, M38, 0x3F, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vpminsd, "VVX", "rvm", P66, M38, 0x39, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vpminud, "VVX", "rvm", P66, M38, 0x3B, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vpmovm2d, "VK", "rm", PF3, M38, 0x38, -1, 0, 0, EVEXONLY, 0, 0, 0},
    {Mn::vpmovd2m, "KV", "rm", PF3, M38, 0x39, -1, 0, 0, EVEXONLY, 0, 0, 0},
    {Mn::vptestmd, "KVX", "rvm", P66, M38, 0x27, -1, 0, 0, EVEXONLY, 0, 0, 0},
    // Packed conversions (SDM vol. 2: CVTDQ2PS, CVTTPS2DQ, VCVTUDQ2PS, VCVTTPS2UDQ).
    {Mn::vcvtdq2ps, "VX", "rm", P0, M0F, 0x5B, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vcvttps2dq, "VX", "rm", PF3, M0F, 0x5B, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vcvtudq2ps, "VX", "rm", PF2, M0F, 0x7A, -1, 0, 0, EVEXONLY, 0, 0, 0},
    {Mn::vcvttps2udq, "VX", "rm", P0, M0F, 0x78, -1, 0, 0, EVEXONLY, 0, 0, 0},
    // Lane moves and shuffles (SDM vol. 2: VEXTRACT*, VINSERTF128, VPERMILPS, SHUFPS, PSHUFD, MOVSHDUP, MOVHLPS,
    // EXTRACTPS, PEXTRD, PINSRD, INSERTPS, VPERMPS, VPERMD).
    {Mn::vextractf128, "XVI", "mri", P66, M3A, 0x19, -1, 0, NOEVEX, VEXONLY, F_MIXED, 0, 0},
    {Mn::vextracti128, "XVI", "mri", P66, M3A, 0x39, -1, 0, NOEVEX, VEXONLY, F_MIXED, 0, 0},
    {Mn::vextractf32x4, "XVI", "mri", P66, M3A, 0x19, -1, 0, 0, EVEXONLY, F_MIXED, 0, 0},
    {Mn::vextractf32x8, "XVI", "mri", P66, M3A, 0x1B, -1, 0, 0, EVEXONLY, F_MIXED, 0, 0},
    {Mn::vextracti32x8, "XVI", "mri", P66, M3A, 0x3B, -1, 0, 0, EVEXONLY, F_MIXED, 0, 0},
    {Mn::vinsertf128, "VVXI", "rvmi", P66, M3A, 0x18, -1, 0, NOEVEX, VEXONLY, F_MIXED, 0, 0},
    {Mn::vpermilps, "VXI", "rmi", P66, M3A, 0x04, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vpermilps, "VVX", "rvm", P66, M38, 0x0C, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vshufps, "VVXI", "rvmi", P0, M0F, 0xC6, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vpshufd, "VXI", "rmi", P66, M0F, 0x70, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vmovshdup, "VX", "rm", PF3, M0F, 0x16, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vmovhlps, "VVV", "rvm", P0, M0F, 0x12, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vextractps, "RVI", "mri", P66, M3A, 0x17, -1, 0, 0, ANY, F_SCALAR, 0, 0},
    {Mn::vpextrd, "RVI", "mri", P66, M3A, 0x16, -1, 0, 0, ANY, F_SCALAR, 0, 0},
    {Mn::vpinsrd, "VVRI", "rvmi", P66, M3A, 0x22, -1, 0, 0, ANY, F_SCALAR, 0, 0},
    {Mn::vinsertps, "VVXI", "rvmi", P66, M3A, 0x21, -1, 0, 0, ANY, F_SCALAR, 0, 0},
    {Mn::vpermps, "VVX", "rvm", P66, M38, 0x16, -1, 0, 0, ANY, 0, 0, 0},
    {Mn::vpermd, "VVX", "rvm", P66, M38, 0x36, -1, 0, 0, ANY, 0, 0, 0},
    // Mask registers (SDM vol. 2: KMOVW/KMOVB, KNOTW, KORTESTW): VEX.L0 only.
    {Mn::kmovw, "KQ", "rm", P0, M0F, 0x90, -1, 0, NOEVEX, VEXONLY, F_SCALAR, 0, 0},
    {Mn::kmovw, "MK", "mr", P0, M0F, 0x91, -1, 0, NOEVEX, VEXONLY, F_SCALAR, 0, 0},
    {Mn::kmovw, "KG", "rm", P0, M0F, 0x92, -1, 0, NOEVEX, VEXONLY, F_SCALAR, 0, 0},
    {Mn::kmovw, "GK", "rm", P0, M0F, 0x93, -1, 0, NOEVEX, VEXONLY, F_SCALAR, 0, 0},
    {Mn::kmovb, "KQ", "rm", P66, M0F, 0x90, -1, 0, NOEVEX, VEXONLY, F_SCALAR, 0, 0},
    {Mn::kmovb, "MK", "mr", P66, M0F, 0x91, -1, 0, NOEVEX, VEXONLY, F_SCALAR, 0, 0},
    {Mn::kmovb, "KG", "rm", P66, M0F, 0x92, -1, 0, NOEVEX, VEXONLY, F_SCALAR, 0, 0},
    {Mn::kmovb, "GK", "rm", P66, M0F, 0x93, -1, 0, NOEVEX, VEXONLY, F_SCALAR, 0, 0},
    {Mn::knotw, "KK", "rm", P0, M0F, 0x44, -1, 0, NOEVEX, VEXONLY, F_SCALAR, 0, 0},
    {Mn::kortestw, "KK", "rm", P0, M0F, 0x98, -1, 0, NOEVEX, VEXONLY, F_SCALAR, 0, 0},
};
// clang-format on

bool kind_ok(char k, const Operand& o) {
  switch (k) {
    case 'V': return is_vec(o);
    case 'K': return is_mask(o);
    case 'G': return is_gpr(o);
    case 'M': return is_mem(o);
    case 'X': return is_vec(o) || is_mem(o);
    case 'R': return is_gpr(o) || is_mem(o);
    case 'Q': return is_mask(o) || is_mem(o);
    case 'I': return is_imm(o);
    default: return false;
  }
}

std::string kinds_text(const char* kinds) {
  std::string s;
  for (const char* p = kinds; *p; p++) {
    if (!s.empty()) s += ", ";
    switch (*p) {
      case 'V': s += "vector register"; break;
      case 'K': s += "mask register"; break;
      case 'G': s += "GPR"; break;
      case 'M': s += "memory"; break;
      case 'X': s += "vector register or memory"; break;
      case 'R': s += "GPR or memory"; break;
      case 'Q': s += "mask register or memory"; break;
      case 'I': s += "imm8"; break;
    }
  }
  return s;
}

constexpr size_t kMnemonics = static_cast<size_t>(Mn::CALL_EXTERN) + 1;

// kVex's rows of each mnemonic (contiguous in the table): [first, end).
struct RowRange {
  uint16_t first = 0, end = 0;
};
const RowRange& vex_rows(Mn op) {
  static const auto* index = [] {
    auto* t = new RowRange[kMnemonics];
    for (size_t i = std::size(kVex); i-- > 0;) {
      RowRange& r = t[static_cast<size_t>(kVex[i].op)];
      if (r.end == 0) r.end = static_cast<uint16_t>(i + 1);
      r.first = static_cast<uint16_t>(i);
    }
    return t;
  }();
  return index[static_cast<size_t>(op)];
}

}  // namespace

bool vex_only_form(const Inst& inst) {
  const RowRange range = vex_rows(inst.op);
  bool matched = false;
  for (size_t i = range.first; i < range.end; i++) {
    const VexRow& r = kVex[i];
    if (r.op != inst.op || std::strlen(r.kinds) != inst.n) continue;
    bool ok = true;
    for (int k = 0; k < inst.n && ok; k++) ok = kind_ok(r.kinds[k], inst.o[k]);
    if (!ok) continue;
    if (r.enc != VEXONLY) return false;
    matched = true;
  }
  return matched;
}

namespace {

void encode_vex(Buf& b, const Ctx& c) {
  const Inst& inst = c.inst;
  bool need_evex = inst.masked || inst.zeroing;
  for (int k = 0; k < inst.n; k++)
    if (is_vec(inst.o[k]) && (inst.o[k].reg.num >= 16 || inst.o[k].reg.bits == 512)) need_evex = true;
  const VexRow* row = nullptr;
  bool kinds_matched = false;
  const RowRange range = vex_rows(inst.op);
  for (size_t i = range.first; i < range.end; i++) {
    const VexRow& r = kVex[i];
    if (r.op != inst.op || std::strlen(r.kinds) != inst.n) continue;
    bool ok = true;
    for (int k = 0; k < inst.n && ok; k++) ok = kind_ok(r.kinds[k], inst.o[k]);
    if (!ok) continue;
    kinds_matched = true;
    if (r.enc == VEXONLY && need_evex) continue;
    row = &r;
    break;
  }
  if (!row) {
    if (kinds_matched)
      c.fail("needs EVEX (zmm, xmm16-31 or masking) but this form has only a VEX encoding; expected xmm/ymm 0-15 without a mask");
    std::string forms;
    for (size_t i = range.first; i < range.end; i++) forms += std::string(forms.empty() ? "" : " or ") + "(" + kinds_text(kVex[i].kinds) + ")";
    c.fail("operands do not match; expected " + forms);
  }
  const bool evex = row->enc == EVEXONLY || need_evex;
  if ((inst.masked || inst.zeroing) && !evex) c.fail("masking needs EVEX");
  if (inst.zeroing && !inst.masked) c.fail("{z} without a mask; expected {k1}..{k7} {z}");
  if (inst.zeroing && (is_mem(inst.o[0]) || is_mask(inst.o[0])))
    c.fail("{z} on a memory or mask destination; expected merge masking ({k1} alone) there");
  if (inst.masked && (inst.mask.cls != RegClass::MASK || inst.mask.num == 0 || inst.mask.num > 7))
    c.fail("write mask k" + std::to_string(inst.mask.num) + "; expected k1..k7");

  // Operand roles.
  const Operand* reg = nullptr;
  const Operand* vvvv = nullptr;
  const Operand* rm = nullptr;
  const Operand* is4 = nullptr;
  int64_t imm = 0;
  bool has_imm = false;
  for (int k = 0; k < inst.n; k++) {
    switch (row->roles[k]) {
      case 'r': reg = &inst.o[k]; break;
      case 'v': vvvv = &inst.o[k]; break;
      case 'm': rm = &inst.o[k]; break;
      case 's': is4 = &inst.o[k]; break;
      case 'i':
        imm = inst.o[k].imm;
        has_imm = true;
        if (imm < -128 || imm > 255) c.fail("immediate " + std::to_string(imm) + " does not fit 8 bits; expected 0-255");
        break;
    }
  }
  uint8_t opcode = row->opcode;
  uint8_t pp = row->pp;
  Operand swapped_a, swapped_b;
  if (!evex && rm && rm->kind == K::REG && reg) {
    auto ext = [](const Operand* o) { return o->kind == K::REG && o->reg.num >= 8; };
    // x86-encoding.md §4.4: llvm-mc commutes the sources, or uses a move's store opcode, when only ModRM.r/m needs
    // VEX.B: the 2-byte VEX has R but no B.
    if (row->flags & F_COMMUTE || (row->flags & F_CMP_COMMUTE && (imm & 7) != 1 && (imm & 7) != 2 && (imm & 7) != 5 &&
                                   (imm & 7) != 6)) {
      if (vvvv && !ext(vvvv) && ext(rm)) std::swap(vvvv, rm);
    } else if (row->flags & F_MOV_REV) {
      if (!ext(reg) && ext(rm)) {
        std::swap(reg, rm);
        opcode = row->rev;
        pp = row->rev_pp;
      }
    }
  }
  int w = row->w, ew = row->ew;
  if (w == WG || ew == WG) {
    int wide = 0;
    for (int k = 0; k < inst.n; k++)
      if ((is_gpr(inst.o[k]) && inst.o[k].reg.bits == 64) || (row->kinds[k] == 'R' && is_mem(inst.o[k]) && inst.o[k].mem.bits == 64))
        wide = 1;
    if (w == WG) w = wide;
    if (ew == WG) ew = wide;
  }
  int vl = 128;
  for (int k = 0; k < inst.n; k++)
    if (is_vec(inst.o[k])) vl = std::max<int>(vl, inst.o[k].reg.bits);
  // Widths: scalar forms take xmm only; packed forms one vector width, memory included (it sizes disp8*N too).
  if (!(row->flags & F_MIXED)) {
    for (int k = 0; k < inst.n; k++) {
      const Operand& o = inst.o[k];
      if (row->flags & F_SCALAR) {
        if (is_vec(o) && o.reg.bits != 128) c.fail("operand " + std::to_string(k + 1) + " is not xmm; expected xmm registers (a scalar form)");
      } else if ((is_vec(o) && o.reg.bits != vl) || (is_mem(o) && (row->kinds[k] == 'X' || row->kinds[k] == 'M') && o.mem.bits != vl)) {
        c.fail("operand " + std::to_string(k + 1) + " is " + std::to_string(width(o)) + "-bit; expected every vector operand " +
               std::to_string(vl) + "-bit");
      }
    }
  }
  const int L = row->flags & F_SCALAR ? 0 : vl == 512 ? 2 : vl == 256 ? 1 : 0;
  const int regnum = reg ? static_cast<int>(reg->reg.num) : row->digit;
  const int vnum = vvvv ? static_cast<int>(vvvv->reg.num) : 0;
  const RmBits rb = rm_bits(*rm);
  if (evex) {
    if (ew == NOEVEX) c.fail("has no EVEX form; expected xmm/ymm 0-15 without a mask");
    // EVEX P0: R X B R' 0 m m m; P1: W vvvv 1 pp; P2: z L'L b V' aaa (all of R X B R' vvvv V' inverted).
    const int R = (regnum >> 3) & 1, Rp = (regnum >> 4) & 1;
    const int X = rm->kind == K::MEM ? rb.x : (is_vec(*rm) ? (rm->reg.num >> 4) & 1 : 0);
    b.put(0x62);
    b.put(static_cast<uint8_t>((!R) << 7 | (!X) << 6 | (!rb.b) << 5 | (!Rp) << 4 | row->map));
    b.put(static_cast<uint8_t>(ew << 7 | ((~vnum) & 15) << 3 | 4 | pp));
    b.put(static_cast<uint8_t>((inst.zeroing ? 1 : 0) << 7 | L << 5 | (!((vnum >> 4) & 1)) << 3 |
                               (inst.masked ? inst.mask.num & 7 : 0)));
  } else {
    const int R = (regnum >> 3) & 1;
    const int X = rm->kind == K::MEM ? rb.x : 0;
    if (row->map == M0F && w == 0 && X == 0 && rb.b == 0) {
      b.put(0xC5);
      b.put(static_cast<uint8_t>((!R) << 7 | ((~vnum) & 15) << 3 | L << 2 | pp));
    } else {
      b.put(0xC4);
      b.put(static_cast<uint8_t>((!R) << 7 | (!X) << 6 | (!rb.b) << 5 | row->map));
      b.put(static_cast<uint8_t>(w << 7 | ((~vnum) & 15) << 3 | L << 2 | pp));
    }
  }
  b.put(opcode);
  // EVEX disp8*N: N is the memory operand's size for every tuple type this table uses (x86-encoding.md §4.3).
  const int n = evex && rm->kind == K::MEM ? std::max(1, rm->mem.bits / 8) : 1;
  if (rm->kind == K::MEM && rm->mem.bits == 0) c.fail("memory operand without a width; expected dword ptr .. zmmword ptr");
  put_modrm(b, regnum, *rm, n, inst, c.ex);
  if (is4) b.put(static_cast<uint8_t>((is4->reg.num & 15) << 4));
  if (has_imm) b.put(static_cast<uint8_t>(imm));
}

// ---------------------------------------------------------------------------------------------------------------

bool in_table_vex(Mn op) { return vex_rows(op).end != 0; }

}  // namespace

// Legacy instructions, by mnemonic (x86-encoding.md §5).
static void encode_legacy(Buf& b, const Ctx& c) {
  const Inst& inst = c.inst;
  const Operand* o = inst.o;
  const int n = inst.n;
  using enum Mn;
  auto need = [&](int count, const char* form) {
    if (n != count) c.fail(std::to_string(n) + " operands; expected " + form);
  };
  for (const AluRow& a : kAlu) {
    if (a.op != inst.op) continue;
    need(2, "r/m, reg or reg, r/m or r/m, imm");
    if (is_gm(o[0]) && is_gpr(o[1])) {
      const int s = gpr_size(c, o[0], 0);
      if (width(o[1]) != s) c.fail("operand widths differ; expected both " + std::to_string(s) + "-bit");
      legacy(b, c, s, {static_cast<uint8_t>(a.base + (s == 8 ? 0 : 1))}, o[1].reg.num, o[0], needs_rex_byte(o[1]));
      return;
    }
    if (is_gpr(o[0]) && is_mem(o[1])) {
      const int s = gpr_size(c, o[0], 0);
      if (width(o[1]) != s) c.fail("operand widths differ; expected both " + std::to_string(s) + "-bit");
      legacy(b, c, s, {static_cast<uint8_t>(a.base + (s == 8 ? 2 : 3))}, o[0].reg.num, o[1], needs_rex_byte(o[0]));
      return;
    }
    if (is_gm(o[0]) && is_imm(o[1])) {
      const int s = gpr_size(c, o[0], 0);
      const int64_t v = imm_at(c, o[1].imm, s);
      const bool acc = is_gpr(o[0]) && o[0].reg.num == RAX;
      if (s == 8) {
        if (acc) {
          b.put(static_cast<uint8_t>(a.base + 4));
        } else {
          legacy(b, c, 8, {0x80}, a.digit, o[0]);
        }
        put_imm(b, v, 1);
      } else if (fits8(v)) {
        legacy(b, c, s, {0x83}, a.digit, o[0]);
        put_imm(b, v, 1);
      } else if (acc) {  // eAX, imm: llvm-mc's short form (x86-encoding.md §5.1)
        if (s == 16) b.put(0x66);
        if (s == 64) b.put(0x48);
        b.put(static_cast<uint8_t>(a.base + 5));
        put_imm(b, v, s == 16 ? 2 : 4);
      } else {
        legacy(b, c, s, {0x81}, a.digit, o[0]);
        put_imm(b, v, s == 16 ? 2 : 4);
      }
      return;
    }
    c.fail("operands do not match; expected r/m, reg or reg, r/m or r/m, imm");
  }
  for (const DigitRow& d : kShift) {
    if (d.op != inst.op) continue;
    need(2, "r/m, imm8 or r/m, cl");
    if (!is_gm(o[0])) c.fail("operand 1 is not a GPR or memory; expected r/m");
    const int s = gpr_size(c, o[0], 0);
    if (is_gpr(o[1]) && o[1].reg.num == RCX && o[1].reg.bits == 8) {
      legacy(b, c, s, {static_cast<uint8_t>(s == 8 ? 0xD2 : 0xD3)}, d.digit, o[0]);
    } else if (is_imm(o[1])) {
      if (o[1].imm < 0 || o[1].imm > 255) c.fail("shift count " + std::to_string(o[1].imm) + "; expected 0-255");
      if (o[1].imm == 1) {  // llvm-mc's D1 form for a count of 1 (x86-encoding.md §5.2)
        legacy(b, c, s, {static_cast<uint8_t>(s == 8 ? 0xD0 : 0xD1)}, d.digit, o[0]);
      } else {
        legacy(b, c, s, {static_cast<uint8_t>(s == 8 ? 0xC0 : 0xC1)}, d.digit, o[0]);
        put_imm(b, o[1].imm, 1);
      }
    } else {
      c.fail("operand 2 is neither an immediate nor cl; expected r/m, imm8 or r/m, cl");
    }
    return;
  }
  for (const DigitRow& d : kGroup3) {
    if (d.op != inst.op || (inst.op == imul && n != 1)) continue;
    need(1, "r/m");
    if (!is_gm(o[0])) c.fail("operand 1 is not a GPR or memory; expected r/m");
    const int s = gpr_size(c, o[0], 0);
    legacy(b, c, s, {static_cast<uint8_t>(s == 8 ? 0xF6 : 0xF7)}, d.digit, o[0]);
    return;
  }
  for (const CcRow& r : kCc) {
    if (r.set == inst.op) {
      need(1, "r/m8");
      if (!is_gm(o[0]) || width(o[0]) != 8) c.fail("operand 1 is not an 8-bit GPR or byte ptr; expected r/m8");
      legacy(b, c, 32, {0x0F, static_cast<uint8_t>(0x90 | r.cc)}, 0, o[0]);
      return;
    }
    if (r.cmov == inst.op) {
      need(2, "reg, r/m");
      if (!is_gpr(o[0]) || !is_gm(o[1])) c.fail("operands do not match; expected reg, r/m");
      const int s = gpr_size(c, o[0], 0);
      if (s == 8 || width(o[1]) != s) c.fail("operand widths; expected two 16/32/64-bit operands of one width");
      legacy(b, c, s, {0x0F, static_cast<uint8_t>(0x40 | r.cc)}, o[0].reg.num, o[1]);
      return;
    }
  }
  switch (inst.op) {
    case mov: {
      need(2, "r/m, reg or reg, r/m or r/m, imm");
      if (is_gm(o[0]) && is_gpr(o[1])) {
        const int s = gpr_size(c, o[0], 0);
        if (width(o[1]) != s) c.fail("operand widths differ; expected both " + std::to_string(s) + "-bit");
        legacy(b, c, s, {static_cast<uint8_t>(s == 8 ? 0x88 : 0x89)}, o[1].reg.num, o[0], needs_rex_byte(o[1]));
        return;
      }
      if (is_gpr(o[0]) && is_mem(o[1])) {
        const int s = gpr_size(c, o[0], 0);
        if (width(o[1]) != s) c.fail("operand widths differ; expected both " + std::to_string(s) + "-bit");
        legacy(b, c, s, {static_cast<uint8_t>(s == 8 ? 0x8A : 0x8B)}, o[0].reg.num, o[1], needs_rex_byte(o[0]));
        return;
      }
      if (is_gpr(o[0]) && is_imm(o[1])) {
        const int s = gpr_size(c, o[0], 0);
        const int r = o[0].reg.num;
        if (s == 64 && fits32(o[1].imm)) {
          legacy(b, c, 64, {0xC7}, 0, o[0]);
          put_imm(b, o[1].imm, 4);
          return;
        }
        // B8+r: imm64 for a 64-bit register (what llvm-mc makes of "mov rax, 4294967295"), else the operand size.
        if (s == 16) b.put(0x66);
        if (s == 64 || r >= 8 || needs_rex_byte(o[0])) b.put(static_cast<uint8_t>(0x40 | (s == 64) << 3 | (r >> 3)));
        b.put(static_cast<uint8_t>((s == 8 ? 0xB0 : 0xB8) + (r & 7)));
        put_imm(b, s == 64 ? o[1].imm : imm_at(c, o[1].imm, s), s / 8);
        return;
      }
      if (is_mem(o[0]) && is_imm(o[1])) {
        const int s = gpr_size(c, o[0], 0);
        const int64_t v = imm_at(c, o[1].imm, s);
        legacy(b, c, s, {static_cast<uint8_t>(s == 8 ? 0xC6 : 0xC7)}, 0, o[0]);
        put_imm(b, v, s == 8 ? 1 : s == 16 ? 2 : 4);
        return;
      }
      c.fail("operands do not match; expected r/m, reg or reg, r/m or r/m, imm");
    }
    case movabs: {
      need(2, "r64, imm64");
      if (!is_gpr(o[0]) || o[0].reg.bits != 64 || !is_imm(o[1])) c.fail("operands do not match; expected r64, imm64");
      const int r = o[0].reg.num;
      b.put(static_cast<uint8_t>(0x48 | (r >> 3)));
      b.put(static_cast<uint8_t>(0xB8 + (r & 7)));
      put_imm(b, o[1].imm, 8);
      return;
    }
    case movzx:
    case movsx: {
      need(2, "reg, r/m8 or reg, r/m16");
      if (!is_gpr(o[0]) || !is_gm(o[1])) c.fail("operands do not match; expected reg, r/m8 or reg, r/m16");
      const int s = gpr_size(c, o[0], 0), from = width(o[1]);
      if ((from != 8 && from != 16) || s <= from) c.fail("widths " + std::to_string(s) + " from " + std::to_string(from) + "; expected a wider register from 8 or 16 bits");
      const uint8_t op = static_cast<uint8_t>((inst.op == movzx ? 0xB6 : 0xBE) + (from == 16 ? 1 : 0));
      legacy(b, c, s, {0x0F, op}, o[0].reg.num, o[1]);
      return;
    }
    case movsxd: {
      need(2, "r64, r/m32");
      if (!is_gpr(o[0]) || o[0].reg.bits != 64 || !is_gm(o[1]) || width(o[1]) != 32) c.fail("operands do not match; expected r64, r/m32");
      legacy(b, c, 64, {0x63}, o[0].reg.num, o[1]);
      return;
    }
    case lea: {
      need(2, "r32/64, mem");
      if (!is_gpr(o[0]) || !is_mem(o[1]) || o[0].reg.bits < 32) c.fail("operands do not match; expected r32/64, mem");
      legacy(b, c, o[0].reg.bits, {0x8D}, o[0].reg.num, o[1]);
      return;
    }
    case imul: {
      if (n == 2) {
        if (!is_gpr(o[0]) || !is_gm(o[1]) || o[0].reg.bits == 8 || width(o[1]) != o[0].reg.bits)
          c.fail("operands do not match; expected reg, r/m of one width (16/32/64)");
        legacy(b, c, o[0].reg.bits, {0x0F, 0xAF}, o[0].reg.num, o[1]);
        return;
      }
      need(3, "r/m or reg, r/m or reg, r/m, imm");
      if (!is_gpr(o[0]) || !is_gm(o[1]) || !is_imm(o[2]) || o[0].reg.bits == 8 || width(o[1]) != o[0].reg.bits)
        c.fail("operands do not match; expected reg, r/m, imm (16/32/64-bit)");
      const int s = o[0].reg.bits;
      const int64_t v = imm_at(c, o[2].imm, s);
      if (fits8(v)) {
        legacy(b, c, s, {0x6B}, o[0].reg.num, o[1]);
        put_imm(b, v, 1);
      } else {
        legacy(b, c, s, {0x69}, o[0].reg.num, o[1]);
        put_imm(b, v, s == 16 ? 2 : 4);
      }
      return;
    }
    case test: {
      need(2, "r/m, reg or r/m, imm");
      if (is_gm(o[0]) && is_gpr(o[1])) {
        const int s = gpr_size(c, o[0], 0);
        if (width(o[1]) != s) c.fail("operand widths differ; expected both " + std::to_string(s) + "-bit");
        legacy(b, c, s, {static_cast<uint8_t>(s == 8 ? 0x84 : 0x85)}, o[1].reg.num, o[0], needs_rex_byte(o[1]));
        return;
      }
      if (is_gm(o[0]) && is_imm(o[1])) {
        const int s = gpr_size(c, o[0], 0);
        const int64_t v = imm_at(c, o[1].imm, s);
        if (is_gpr(o[0]) && o[0].reg.num == RAX) {  // A8/A9: the accumulator's short form
          if (s == 16) b.put(0x66);
          if (s == 64) b.put(0x48);
          b.put(s == 8 ? 0xA8 : 0xA9);
        } else {
          legacy(b, c, s, {static_cast<uint8_t>(s == 8 ? 0xF6 : 0xF7)}, 0, o[0]);
        }
        put_imm(b, v, s == 8 ? 1 : s == 16 ? 2 : 4);
        return;
      }
      c.fail("operands do not match; expected r/m, reg or r/m, imm");
    }
    case cwd: need(0, "none"); b.put(0x66); b.put(0x99); return;
    case cdq: need(0, "none"); b.put(0x99); return;
    case cqo: need(0, "none"); b.put(0x48); b.put(0x99); return;
    case ret: need(0, "none"); b.put(0xC3); return;
    case nop: need(0, "none"); b.put(0x90); return;
    case vzeroupper: need(0, "none"); b.put(0xC5); b.put(0xF8); b.put(0x77); return;
    case push:
    case pop: {
      need(1, "r64");
      if (!is_gpr(o[0]) || o[0].reg.bits != 64) c.fail("operand 1 is not a 64-bit GPR; expected r64");
      if (o[0].reg.num >= 8) b.put(0x41);
      b.put(static_cast<uint8_t>((inst.op == push ? 0x50 : 0x58) + (o[0].reg.num & 7)));
      return;
    }
    case call:
    case jmp: {
      need(1, inst.op == call ? "an extern symbol or r/m64" : "a label or r/m64");
      if (!is_gm(o[0]) || width(o[0]) != 64) c.fail("operand 1 is not a label, symbol or 64-bit r/m; expected call symbol / jmp .L<id> / r/m64");
      legacy(b, c, 32, {0xFF}, inst.op == call ? 2 : 4, o[0]);
      return;
    }
    default: break;
  }
  c.fail("has no encoding (a pseudo-instruction?); expected an allocated machine instruction");
}

// ---------------------------------------------------------------------------------------------------------------
// Encoder

void Encoder::emit(const Inst& inst) {
  const Ctx c{inst, externs_};
  if (inst.n > 4) c.fail("more than 4 operands");
  if (inst.tied) c.fail("is tied (three-address); expected register allocation's two-address form");
  for (int k = 0; k < inst.n; k++) {
    const Operand& o = inst.o[k];
    if (o.kind == K::REG && o.reg.virt) c.fail("operand " + std::to_string(k + 1) + " is a virtual register; expected a physical one");
    if (o.kind == K::MEM && o.mem.kind == MemBase::REG &&
        ((o.mem.has_base && (o.mem.base.virt || o.mem.base.num > 15)) || (o.mem.has_index && (o.mem.index.virt || o.mem.index.num > 15))))
      c.fail("operand " + std::to_string(k + 1) + " addresses through a virtual or non-GPR register; expected physical GPRs 0-15");
    if (o.kind == K::REG && o.reg.cls == RegClass::GPR && o.reg.bits != 8 && o.reg.bits != 16 && o.reg.bits != 32 && o.reg.bits != 64)
      c.fail("operand " + std::to_string(k + 1) + " is a " + std::to_string(o.reg.bits) + "-bit GPR; expected 8, 16, 32 or 64 bits");
    if (o.kind == K::REG && o.reg.cls == RegClass::VEC && o.reg.bits != 128 && o.reg.bits != 256 && o.reg.bits != 512)
      c.fail("operand " + std::to_string(k + 1) + " is a " + std::to_string(o.reg.bits) + "-bit vector register; expected xmm, ymm or zmm");
    if (o.kind == K::REG && o.reg.cls == RegClass::GPR && o.reg.num > 15) c.fail("GPR number " + std::to_string(o.reg.num) + "; expected 0-15");
    if (o.kind == K::REG && o.reg.cls == RegClass::VEC && o.reg.num > 31) c.fail("vector register number " + std::to_string(o.reg.num) + "; expected 0-31");
    if (o.kind == K::REG && o.reg.cls == RegClass::MASK && o.reg.num > 7) c.fail("mask register number " + std::to_string(o.reg.num) + "; expected 0-7");
  }
  if (inst.op == Mn::LABEL) {
    if (inst.n != 1 || inst.o[0].kind != K::LABEL) c.fail("expected LABEL .L<id>");
    bind(static_cast<int32_t>(inst.o[0].imm));
    return;
  }
  if (inst.op == Mn::CALL_EXTERN) c.fail("is a pseudo-instruction; expected register allocation to lower it to call");
  // Jumps to labels: sized by finish().
  if (inst.n == 1 && inst.o[0].kind == K::LABEL) {
    uint8_t cc = 16;
    if (inst.op != Mn::jmp) {
      bool found = false;
      for (const CcRow& r : kCc)
        if (r.j == inst.op) cc = r.cc, found = true;
      if (!found) c.fail("operand 1 is a label; expected jmp or jcc");
    }
    if (inst.o[0].imm < 0) c.fail("label id " + std::to_string(inst.o[0].imm) + "; expected a label >= 0");
    gaps_.push_back(Gap{static_cast<uint32_t>(out_.size()), static_cast<int32_t>(inst.o[0].imm), cc, 0, false});
    return;
  }
  for (int k = 0; k < inst.n; k++)
    if (inst.o[k].kind == K::LABEL) c.fail("operand " + std::to_string(k + 1) + " is a label; expected a label only as a jump's target");
  for (const CcRow& r : kCc)
    if (r.j == inst.op) c.fail("expected a label operand (jcc .L<id>)");
  Buf b;
  if (inst.op == Mn::call && inst.n == 1 && inst.o[0].kind == K::SYMBOL) {
    if (inst.o[0].imm < 0 || static_cast<size_t>(inst.o[0].imm) >= externs_.size())
      c.fail("symbol index " + std::to_string(inst.o[0].imm) + " is not one of the encoder's " + std::to_string(externs_.size()) + " extern symbols");
    b.put(0xE8);
    relocs_.push_back(PendingReloc{static_cast<uint32_t>(out_.size() + 1), static_cast<uint32_t>(gaps_.size()), static_cast<int32_t>(inst.o[0].imm)});
    b.put_le(0, 4);
  } else {
    for (int k = 0; k < inst.n; k++)
      if (inst.o[k].kind == K::SYMBOL) c.fail("operand " + std::to_string(k + 1) + " is a symbol; expected a symbol only as call's target");
    if (in_table_vex(inst.op)) {
      encode_vex(b, c);
    } else {
      if (inst.masked || inst.zeroing) c.fail("has a write mask; expected masking only on EVEX instructions");
      encode_legacy(b, c);
    }
  }
  if (b.rip_at >= 0) {
    if (b.rip_label < 0) c.fail("RIP-relative operand without a label; expected [rip + .L<id>]");
    fixups_.push_back(Fixup{static_cast<uint32_t>(out_.size() + b.rip_at), static_cast<uint32_t>(out_.size() + b.n), b.rip_label, 4,
                            static_cast<uint32_t>(gaps_.size())});
  }
  out_.append(reinterpret_cast<const char*>(b.b), b.n);
}

void Encoder::bind(int32_t label) {
  if (label < 0) throw X86EncodeError("bind: label id " + std::to_string(label) + "; expected a label >= 0");
  if (static_cast<size_t>(label) >= labels_.size()) {
    labels_.resize(label + 1, -1);
    label_gaps_.resize(label + 1, 0);
  }
  if (labels_[label] >= 0) throw X86EncodeError("bind: label .L" + std::to_string(label) + " is bound twice; expected one definition");
  labels_[label] = static_cast<int64_t>(out_.size());
  label_gaps_[label] = static_cast<uint32_t>(gaps_.size());
}

void Encoder::data(uint32_t align, std::string_view bytes) {
  if (align == 0 || (align & (align - 1)) != 0) throw X86EncodeError("data: alignment " + std::to_string(align) + "; expected a power of two");
  if (data_start_ < 0) data_start_ = static_cast<int64_t>(gaps_.size());
  gaps_.push_back(Gap{static_cast<uint32_t>(out_.size()), -1, 0, align, false});
  out_.append(bytes);
}

int32_t Encoder::extern_symbol(std::string_view name) {
  for (size_t i = 0; i < externs_.size(); i++)
    if (externs_[i] == name) return static_cast<int32_t>(i);
  externs_.emplace_back(name);
  return static_cast<int32_t>(externs_.size() - 1);
}

namespace {
// Sizes of the gaps for the current choice of jump widths, and each gap's address; 0xCC pads alignments.
int jump_size(bool wide, uint8_t cc) { return !wide ? 2 : cc == 16 ? 5 : 6; }
}  // namespace

size_t Encoder::size() const {
  size_t shift = 0;
  for (const Gap& g : gaps_) {
    const size_t at = g.pos + shift;
    shift += g.align ? (g.align - at % g.align) % g.align : static_cast<size_t>(jump_size(g.wide, g.cc));
  }
  return out_.size() + shift;
}

AssembledCode Encoder::finish(std::string name) {
  for (const Gap& g : gaps_)
    if (g.align == 0 && (static_cast<size_t>(g.label) >= labels_.size() || labels_[g.label] < 0))
      throw X86EncodeError(name + ": label .L" + std::to_string(g.label) + " is jumped to but never bound");
  for (const Fixup& f : fixups_)
    if (static_cast<size_t>(f.label) >= labels_.size() || labels_[f.label] < 0)
      throw X86EncodeError(name + ": label .L" + std::to_string(f.label) + " is addressed [rip + .L" + std::to_string(f.label) + "] but never bound");
  // shift[i]: bytes the gaps before gap i add; relax jumps until none changes (x86-encoding.md §5.3).
  std::vector<int64_t> shift(gaps_.size() + 1, 0);
  for (;;) {
    int64_t s = 0;
    for (size_t i = 0; i < gaps_.size(); i++) {
      shift[i] = s;
      const Gap& g = gaps_[i];
      const int64_t at = g.pos + s;
      s += g.align ? (g.align - at % g.align) % g.align : jump_size(g.wide, g.cc);
    }
    shift[gaps_.size()] = s;
    bool changed = false;
    for (size_t i = 0; i < gaps_.size(); i++) {
      Gap& g = gaps_[i];
      if (g.align || g.wide) continue;
      const int64_t end = g.pos + shift[i] + 2;
      const int64_t target = labels_[g.label] + shift[label_gaps_[g.label]];
      if (!fits8(target - end)) g.wide = changed = true;
    }
    if (!changed) break;
  }
  AssembledCode code;
  code.name = std::move(name);
  std::string& o = code.bytes;
  o.reserve(out_.size() + static_cast<size_t>(shift[gaps_.size()]));
  size_t from = 0;
  for (size_t i = 0; i < gaps_.size(); i++) {
    const Gap& g = gaps_[i];
    o.append(out_, from, g.pos - from);
    from = g.pos;
    if (static_cast<int64_t>(i) == data_start_) code.code_bytes = static_cast<uint32_t>(o.size());
    if (g.align) {
      o.append((g.align - o.size() % g.align) % g.align, static_cast<char>(0xCC));
      continue;
    }
    const int64_t target = labels_[g.label] + shift[label_gaps_[g.label]];
    const int64_t end = static_cast<int64_t>(o.size()) + jump_size(g.wide, g.cc);
    const int64_t rel = target - end;
    if (!g.wide) {
      o.push_back(static_cast<char>(g.cc == 16 ? 0xEB : 0x70 | g.cc));
      o.push_back(static_cast<char>(rel));
    } else {
      if (g.cc == 16) {
        o.push_back(static_cast<char>(0xE9));
      } else {
        o.push_back(0x0F);
        o.push_back(static_cast<char>(0x80 | g.cc));
      }
      for (int k = 0; k < 4; k++) o.push_back(static_cast<char>(static_cast<uint32_t>(rel) >> (8 * k)));
    }
  }
  o.append(out_, from, std::string::npos);
  if (data_start_ < 0) code.code_bytes = static_cast<uint32_t>(o.size());
  for (const Fixup& f : fixups_) {
    const int64_t at = f.at + shift[f.gaps], end = f.end + shift[f.gaps];
    const int64_t target = labels_[f.label] + shift[label_gaps_[f.label]];
    int32_t disp;
    std::memcpy(&disp, o.data() + at, 4);
    const int64_t v = target + disp - end;
    if (!fits32(v)) throw X86EncodeError(code.name + ": [rip + .L" + std::to_string(f.label) + "] is out of 32-bit reach");
    const uint32_t u = static_cast<uint32_t>(v);
    std::memcpy(o.data() + at, &u, 4);
  }
  for (const PendingReloc& r : relocs_)
    code.relocations.push_back(Relocation{static_cast<uint32_t>(r.at + shift[r.gaps]), externs_[r.symbol], -4});
  return code;
}

}  // namespace doorbell::x86
