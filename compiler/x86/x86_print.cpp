// Intel-syntax text of machine instructions and whole functions: the form `llvm-mc-19 -x86-asm-syntax=intel` reads
// (and that assemble() in compiler/x86/x86_encoder.cpp parses back). Operand syntax: firmware-notes/x86-encoding.md §6.
#include <cstdio>
#include <stdexcept>
#include <string>

#include "compiler/x86/x86_encoder.h"
#include "compiler/x86/x86_inst.h"

namespace doorbell::x86 {
namespace {

constexpr const char* kGpr64[16] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                                    "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};
constexpr const char* kGpr32[16] = {"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi",
                                    "r8d", "r9d", "r10d", "r11d", "r12d", "r13d", "r14d", "r15d"};
constexpr const char* kGpr16[16] = {"ax", "cx", "dx", "bx", "sp", "bp", "si", "di",
                                    "r8w", "r9w", "r10w", "r11w", "r12w", "r13w", "r14w", "r15w"};
// With a REX prefix, 4-7 are spl..dil (never ah..bh: the backend does not use them).
constexpr const char* kGpr8[16] = {"al", "cl", "dl", "bl", "spl", "bpl", "sil", "dil",
                                   "r8b", "r9b", "r10b", "r11b", "r12b", "r13b", "r14b", "r15b"};

std::string where(const Inst& inst) { return std::string(mnemonic_name(inst.op)); }

void put_reg(std::string& s, const Reg& r, const Inst& inst) {
  if (r.virt) {
    switch (r.cls) {
      case RegClass::GPR:
        s += "%g" + std::to_string(r.num);
        s += r.bits == 32 ? "d" : r.bits == 16 ? "w" : r.bits == 8 ? "b" : "";
        return;
      case RegClass::VEC:
        s += "%v" + std::to_string(r.num);
        s += r.bits == 512 ? "z" : r.bits == 256 ? "y" : "x";
        return;
      case RegClass::MASK: s += "%k" + std::to_string(r.num); return;
    }
  }
  switch (r.cls) {
    case RegClass::GPR: {
      if (r.num >= 16) throw std::invalid_argument(where(inst) + ": GPR number " + std::to_string(r.num) + "; expected 0-15");
      const char* const* names = r.bits == 64 ? kGpr64 : r.bits == 32 ? kGpr32 : r.bits == 16 ? kGpr16 : r.bits == 8 ? kGpr8 : nullptr;
      if (!names) throw std::invalid_argument(where(inst) + ": GPR width " + std::to_string(r.bits) + "; expected 8, 16, 32 or 64");
      s += names[r.num];
      return;
    }
    case RegClass::VEC:
      if (r.num >= 32) throw std::invalid_argument(where(inst) + ": vector register number " + std::to_string(r.num) + "; expected 0-31");
      if (r.bits != 128 && r.bits != 256 && r.bits != 512)
        throw std::invalid_argument(where(inst) + ": vector width " + std::to_string(r.bits) + "; expected 128, 256 or 512");
      s += r.bits == 512 ? "zmm" : r.bits == 256 ? "ymm" : "xmm";
      s += std::to_string(r.num);
      return;
    case RegClass::MASK:
      if (r.num >= 8) throw std::invalid_argument(where(inst) + ": mask register number " + std::to_string(r.num) + "; expected 0-7");
      s += "k" + std::to_string(r.num);
      return;
  }
}

const char* ptr_name(uint16_t bits) {
  switch (bits) {
    case 8: return "byte ptr ";
    case 16: return "word ptr ";
    case 32: return "dword ptr ";
    case 64: return "qword ptr ";
    case 128: return "xmmword ptr ";
    case 256: return "ymmword ptr ";
    case 512: return "zmmword ptr ";
    default: return nullptr;
  }
}

void put_disp(std::string& s, int64_t disp, bool first) {
  if (first) {
    s += std::to_string(disp);
  } else if (disp < 0) {
    s += " - " + std::to_string(-disp);
  } else if (disp > 0) {
    s += " + " + std::to_string(disp);
  }
}

void put_mem(std::string& s, const Mem& m, const Inst& inst) {
  if (m.bits != 0) {
    const char* p = ptr_name(m.bits);
    if (!p) throw std::invalid_argument(where(inst) + ": memory width " + std::to_string(m.bits) + "; expected 8..512 or 0 (lea)");
    s += p;
  }
  s += '[';
  switch (m.kind) {
    case MemBase::REG: {
      bool first = true;
      if (m.has_base) {
        put_reg(s, with_bits(m.base, 64), inst);
        first = false;
      }
      if (m.has_index) {
        if (!first) s += " + ";
        if (m.scale != 1) s += std::to_string(m.scale) + "*";
        put_reg(s, with_bits(m.index, 64), inst);
        first = false;
      }
      put_disp(s, m.disp, first);
      break;
    }
    case MemBase::RIP:
      s += "rip + .L" + std::to_string(m.label);
      put_disp(s, m.disp, false);
      break;
    case MemBase::ARG: s += "arg " + std::to_string(m.slot); put_disp(s, m.disp, false); break;
    case MemBase::SPILL: s += "spill " + std::to_string(m.slot); put_disp(s, m.disp, false); break;
    case MemBase::LOCAL: s += "local " + std::to_string(m.slot); put_disp(s, m.disp, false); break;
  }
  s += ']';
}

}  // namespace

std::string print_inst(const Inst& inst, const MachineFunction& mf) {
  std::string s;
  if (inst.op == Mn::LABEL) {
    if (inst.n < 1 || inst.o[0].kind != Operand::Kind::LABEL)
      throw std::invalid_argument("LABEL: operand 1 is not a label; expected LABEL .L<id>");
    return ".L" + std::to_string(inst.o[0].imm) + ":";
  }
  if (inst.n > 4) throw std::invalid_argument(where(inst) + ": " + std::to_string(inst.n) + " operands; expected at most 4");
  s += mnemonic_name(inst.op);
  for (int k = 0; k < inst.n; k++) {
    s += k == 0 ? " " : ", ";
    const Operand& o = inst.o[k];
    switch (o.kind) {
      case Operand::Kind::NONE: s += "<none>"; break;
      case Operand::Kind::REG: put_reg(s, o.reg, inst); break;
      case Operand::Kind::IMM: s += std::to_string(o.imm); break;
      case Operand::Kind::MEM: put_mem(s, o.mem, inst); break;
      case Operand::Kind::LABEL: s += ".L" + std::to_string(o.imm); break;
      case Operand::Kind::SYMBOL:
        if (o.imm < 0 || static_cast<size_t>(o.imm) >= mf.externs.size())
          throw std::invalid_argument(where(inst) + ": symbol index " + std::to_string(o.imm) + " is not one of the function's " +
                                      std::to_string(mf.externs.size()) + " externs");
        s += mf.externs[static_cast<size_t>(o.imm)];
        // @PLT: llvm-mc makes the call an R_X86_64_PLT32 relocation (firmware-notes/x86-encoding.md §7).
        if (inst.op == Mn::call) s += "@PLT";
        break;
    }
    if (k == 0 && inst.masked) {
      s += " {";
      put_reg(s, inst.mask, inst);
      s += '}';
    }
    if (k == 0 && inst.zeroing) s += " {z}";
  }
  return s;
}

std::string print_listing(const MachineFunction& mf) {
  if (!mf.allocated) throw std::invalid_argument("print_listing: " + mf.name + " is not allocated; expected physical registers and a laid-out frame");
  std::string s = ".intel_syntax noprefix\n.text\n.globl " + mf.name + "\n" + mf.name + ":\n";
  for (const Inst& inst : mf.code) {
    for (int k = 0; k < inst.n; k++) {
      const Operand& o = inst.o[k];
      if ((o.kind == Operand::Kind::REG && o.reg.virt) || (inst.masked && inst.mask.virt))
        throw std::invalid_argument("print_listing: " + print_inst(inst, mf) + " has a virtual register; expected physical ones");
      if (o.kind == Operand::Kind::MEM && o.mem.kind != MemBase::REG && o.mem.kind != MemBase::RIP)
        throw std::invalid_argument("print_listing: " + print_inst(inst, mf) + " addresses a frame slot; expected [rsp + offset]");
    }
    if (inst.op == Mn::CALL_EXTERN || inst.tied)
      throw std::invalid_argument("print_listing: " + print_inst(inst, mf) + " is not lowered; expected an allocated instruction");
    if (inst.op != Mn::LABEL) s += "  ";
    s += print_inst(inst, mf);
    s += '\n';
  }
  // Pool data: aligned with int3 fill (llvm-mc pads .text with NOPs otherwise; an explicit fill byte makes our bytes and
  // its bytes the same), then .quad/.long where the size allows, else .byte.
  for (const ConstantData& c : mf.constants) {
    if (c.align == 0 || (c.align & (c.align - 1)) != 0)
      throw std::invalid_argument("print_listing: constant .L" + std::to_string(c.label) + " alignment " + std::to_string(c.align) +
                                  "; expected a power of two");
    int log2 = 0;
    while ((1u << log2) < c.align) log2++;
    s += ".p2align " + std::to_string(log2) + ", 0xcc\n.L" + std::to_string(c.label) + ":\n";
    const size_t n = c.bytes.size();
    const size_t unit = n % 8 == 0 ? 8 : n % 4 == 0 ? 4 : 1;
    const char* dir = unit == 8 ? "  .quad " : unit == 4 ? "  .long " : "  .byte ";
    for (size_t i = 0; i < n;) {
      s += dir;
      for (size_t j = 0; j < 8 && i < n; j++, i += unit) {
        uint64_t v = 0;
        for (size_t b = 0; b < unit; b++) v |= uint64_t(static_cast<uint8_t>(c.bytes[i + b])) << (8 * b);
        char buf[24];
        std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
        if (j) s += ", ";
        s += buf;
      }
      s += '\n';
    }
  }
  return s;
}

}  // namespace doorbell::x86
