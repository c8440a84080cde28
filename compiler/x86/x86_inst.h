// x86-64 machine instructions as data: what instruction selection (compiler/x86/isel.h) makes, register allocation
// (compiler/x86/regalloc.h) rewrites, the printer shows (Intel syntax, what `llvm-mc-19 -x86-asm-syntax=intel`
// reads) and the encoder (compiler/x86/x86_encoder.h) turns into bytes. One list of mnemonics generates the enum and
// the names, as ir/ops.h does for UOps.
//
// Registers are physical (encoding numbers) or virtual (numbered per class by instruction selection). A register
// operand carries the width it is used at: a 64-bit virtual GPR read as 32 bits prints as the physical register's
// 32-bit name once allocated (eax for rax); a VEC register is xmm, ymm or zmm by its width.
//
// Memory operands address a base register + index * scale + displacement, a label of the function's constant pool
// (RIP-relative), or a slot of the stack frame the allocator lays out: the kernel's incoming arguments (ARG), the
// allocator's spill slots (SPILL) and instruction selection's own scratch (LOCAL). Frame slots become [rsp + offset]
// when the allocator finishes the frame; the encoder never sees them.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace doorbell::x86 {

// clang-format off
// Every instruction the backend emits, by its Intel-syntax mnemonic. Condition-code families are spelled out.
#define DOORBELL_X86_MNEMONICS(X) \
  /* integer */ \
  X(mov) X(movabs) X(movzx) X(movsx) X(movsxd) X(lea) X(add) X(sub) X(imul) X(neg) X(not_) X(and_) X(or_) X(xor_) \
  X(shl) X(shr) X(sar) X(cmp) X(test) X(idiv) X(div) X(cwd) X(cdq) X(cqo) X(push) X(pop) X(ret) X(call) X(jmp) \
  X(nop) X(vzeroupper) \
  X(je) X(jne) X(jl) X(jle) X(jg) X(jge) X(jb) X(jbe) X(ja) X(jae) X(jp) X(jnp) X(js) X(jns) \
  X(sete) X(setne) X(setl) X(setle) X(setg) X(setge) X(setb) X(setbe) X(seta) X(setae) X(setp) X(setnp) \
  X(cmove) X(cmovne) X(cmovl) X(cmovle) X(cmovg) X(cmovge) X(cmovb) X(cmovbe) X(cmova) X(cmovae) X(cmovp) X(cmovnp) \
  /* scalar float (VEX) */ \
  X(vmovss) X(vmovsd) X(vmovd) X(vmovq) X(vaddss) X(vaddsd) X(vsubss) X(vsubsd) X(vmulss) X(vmulsd) X(vdivss) \
  X(vdivsd) X(vsqrtss) X(vsqrtsd) X(vmaxss) X(vmaxsd) X(vminss) X(vminsd) X(vucomiss) X(vucomisd) X(vcmpss) \
  X(vcmpsd) X(vroundss) X(vroundsd) X(vcvtsi2ss) X(vcvtsi2sd) X(vcvttss2si) X(vcvttsd2si) X(vcvtss2sd) \
  X(vcvtsd2ss) X(vcvtusi2ss) X(vcvtusi2sd) X(vcvttss2usi) X(vcvttsd2usi) X(vfmadd231ss) X(vfmadd231sd) \
  X(vcvtph2ps) X(vcvtps2ph) X(vpextrw) X(vpinsrw) \
  /* vector (VEX for xmm/ymm, EVEX for zmm and registers 16-31) */ \
  X(vmovups) X(vmovaps) X(vmovdqu) X(vmovdqu32) X(vmovdqa) X(vmovdqa32) X(vbroadcastss) X(vbroadcastsd) \
  X(vpbroadcastd) X(vpbroadcastq) X(vaddps) X(vsubps) X(vmulps) X(vdivps) X(vsqrtps) X(vmaxps) X(vminps) \
  X(vroundps) X(vrndscaleps) X(vfmadd231ps) X(vfmadd213ps) X(vxorps) X(vandps) X(vandnps) X(vorps) X(vcmpps) \
  X(vblendvps) X(vblendmps) X(vpblendmd) X(vpaddd) X(vpsubd) X(vpmulld) X(vpand) X(vpandd) X(vpandn) X(vpandnd) \
  X(vpor) X(vpord) X(vpxor) X(vpxord) X(vpternlogd) X(vpslld) X(vpsrld) X(vpsrad) X(vpsllvd) X(vpsrlvd) \
  X(vpsravd) X(vpcmpeqd) X(vpcmpgtd) X(vpcmpd) X(vpcmpud) X(vpmaxsd) X(vpmaxud) X(vpminsd) X(vpminud) \
  X(vpmovm2d) X(vpmovd2m) X(vptestmd) X(vcvtdq2ps) X(vcvttps2dq) X(vcvtudq2ps) X(vcvttps2udq) X(vextractf128) \
  X(vextracti128) X(vextractf32x4) X(vextractf32x8) X(vextracti32x8) X(vinsertf128) X(vpermilps) X(vshufps) \
  X(vpshufd) X(vmovshdup) X(vmovhlps) X(vextractps) X(vpextrd) X(vpinsrd) X(vinsertps) X(vpermps) X(vpermd) \
  X(kmovw) X(kmovb) X(knotw) X(kortestw) \
  /* pseudo-instructions: never encoded */ \
  X(LABEL) X(CALL_EXTERN)
// clang-format on

enum class Mn : uint16_t {
#define DOORBELL_X86_ENUM(name) name,
  DOORBELL_X86_MNEMONICS(DOORBELL_X86_ENUM)
#undef DOORBELL_X86_ENUM
};

// The Intel-syntax name ("and" for Mn::and_); "LABEL" and "CALL_EXTERN" for the pseudo-instructions.
std::string_view mnemonic_name(Mn op);
// The mnemonic of a name; false when there is none.
bool mnemonic_from_name(std::string_view name, Mn& out);

enum class RegClass : uint8_t { GPR, VEC, MASK };

// GPR numbers in encoding order.
enum Gpr : uint8_t { RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8, R9, R10, R11, R12, R13, R14, R15 };

struct Reg {
  RegClass cls = RegClass::GPR;
  bool virt = false;
  uint16_t bits = 64;  // the width this operand uses: GPR 8/16/32/64, VEC 128/256/512, MASK 16
  uint32_t num = 0;    // physical: encoding number (GPR 0-15, VEC 0-31, MASK 0-7); virtual: the class's index
  bool operator==(const Reg& o) const { return cls == o.cls && virt == o.virt && num == o.num; }  // width aside
};
inline Reg gpr(uint32_t num, uint16_t bits = 64) { return Reg{RegClass::GPR, false, bits, num}; }
inline Reg vec(uint32_t num, uint16_t bits) { return Reg{RegClass::VEC, false, bits, num}; }
inline Reg kreg(uint32_t num) { return Reg{RegClass::MASK, false, 16, num}; }
inline Reg with_bits(Reg r, uint16_t bits) { r.bits = bits; return r; }

enum class MemBase : uint8_t {
  REG,    // base (and optional index) registers
  RIP,    // [rip + label]: `label` is a constant of the function's pool (MachineFunction::constants)
  ARG,    // incoming argument `slot` (0 buffers, 1 scalars, 2 core_id, 3 core_count), 8 bytes each
  SPILL,  // the allocator's spill slot `slot`
  LOCAL,  // instruction selection's scratch slot `slot` (MachineFunction::locals gives its size)
};

struct Mem {
  MemBase kind = MemBase::REG;
  uint16_t bits = 0;  // access width: 8..512 ("byte ptr" .. "zmmword ptr"); 0 for lea
  bool has_base = true, has_index = false;
  Reg base{}, index{};  // 64-bit GPRs
  uint8_t scale = 1;    // 1, 2, 4, 8
  int32_t disp = 0;     // added to the base, the label's address or the slot's offset
  int32_t label = -1;   // RIP: the constant's label
  int32_t slot = -1;    // ARG, SPILL, LOCAL
};

struct Operand {
  enum class Kind : uint8_t { NONE, REG, IMM, MEM, LABEL, SYMBOL } kind = Kind::NONE;
  Reg reg{};
  int64_t imm = 0;   // IMM; LABEL: the label id; SYMBOL: index of MachineFunction::externs
  Mem mem{};
};
inline Operand op_reg(Reg r) { Operand o; o.kind = Operand::Kind::REG; o.reg = r; return o; }
inline Operand op_imm(int64_t v) { Operand o; o.kind = Operand::Kind::IMM; o.imm = v; return o; }
inline Operand op_mem(Mem m) { Operand o; o.kind = Operand::Kind::MEM; o.mem = m; return o; }
// Frame slot `slot` of `kind` (ARG, SPILL, LOCAL), accessed at `bits`.
inline Mem frame_slot(MemBase kind, int32_t slot, uint16_t bits) {
  Mem m;
  m.kind = kind;
  m.has_base = false;
  m.slot = slot;
  m.bits = bits;
  return m;
}
inline Operand op_label(int32_t id) { Operand o; o.kind = Operand::Kind::LABEL; o.imm = id; return o; }
inline Operand op_symbol(int32_t index) { Operand o; o.kind = Operand::Kind::SYMBOL; o.imm = index; return o; }

struct Inst {
  Mn op = Mn::nop;
  uint8_t n = 0;        // operands used, in Intel order: destination first
  Operand o[4]{};
  // EVEX write mask {k1}..{k7} (a MASK register, physical or virtual) and zeroing {z}; without {z} the
  // destination's other lanes are kept (merge masking reads it).
  bool masked = false;
  bool zeroing = false;
  Reg mask{RegClass::MASK, false, 16, 0};
  // Three-address form of a two-address instruction: o[0] is the destination, o[1] the source x86 ties to it, the
  // rest the other sources ("add d, a, b" for d = a + b). Register allocation's two-address fixup makes o[0] and
  // o[1] one register (a mov when they differ) and drops o[1]: the encoder never sees a tied instruction.
  bool tied = false;
  // o[0] is a register defined from nothing but immediates and constant-pool memory: the allocator may re-execute
  // this instruction before a use instead of spilling the value (rematerialization).
  bool remat = false;
};

// An instruction of `op` with `operands` in Intel order. More than 4 throws std::invalid_argument naming `op`.
Inst make_inst(Mn op, std::initializer_list<Operand> operands);

// A constant of the function's pool, placed after its code, `align`-aligned, addressed [rip + label].
struct ConstantData {
  int32_t label = 0;
  uint32_t align = 4;
  std::string bytes;
};

// One kernel function in machine instructions: virtual registers until allocate_registers (compiler/x86/regalloc.h)
// has run, physical ones and a laid-out frame after.
struct MachineFunction {
  std::string name;
  std::vector<Inst> code;
  uint32_t vregs[3] = {0, 0, 0};      // virtual registers made, per RegClass
  int32_t labels = 0;                 // label ids 0..labels-1 (code labels and constants share the numbering)
  std::vector<ConstantData> constants;
  std::vector<std::string> externs;   // functions a CALL_EXTERN calls (libm's exp2, ...), by SYMBOL index
  std::vector<uint32_t> locals;       // bytes of each LOCAL slot (64-byte aligned)
  bool allocated = false;             // physical registers and an [rsp + offset] frame: ready to print and encode

  Reg new_vreg(RegClass cls, uint16_t bits) { return Reg{cls, true, bits, vregs[static_cast<int>(cls)]++}; }
  int32_t new_label() { return labels++; }
};

// How an instruction reads and writes its operands: what the register allocator needs. Memory operands only read
// their base and index registers.
enum class Role : uint8_t { NONE, USE, DEF, USE_DEF };
// Roles of o[0..n-1]; a tied instruction's o[0] is DEF and o[1] USE. Throws std::invalid_argument naming the
// instruction when its mnemonic has no form with these operands.
void operand_roles(const Inst& inst, Role out[4]);

// "vaddps ymm0, ymm1, ymmword ptr [rdi + 4*rax + 32]"; virtual registers print as %g7 / %v3 / %k1 with a width
// suffix (%g7d, %v3y), frame slots as [arg 0] / [spill 3] / [local 1], labels as .L12.
std::string print_inst(const Inst& inst, const MachineFunction& mf);

}  // namespace doorbell::x86
