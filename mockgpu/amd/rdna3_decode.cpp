// decode_rdna3 and the opcode-name lookup (rdna3_decode.h). Bit fields per format: firmware-notes/amd-rdna3-isa.md
// (AMD "RDNA3 Instruction Set Architecture" guide, chapter "Microcode Formats"; LLVM 19's SIInstrFormats.td,
// VOPInstructions.td, SMInstructions.td, DSInstructions.td, FLATInstructions.td, BUFInstructions.td, GFX11 reals).
#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "mockgpu/amd/rdna3_decode.h"
#include "mockgpu/amd/rdna3_opcodes.h"

namespace doorbell::mockgpu::amd {
namespace {

constexpr uint32_t bits(uint32_t w, int hi, int lo) { return (w >> lo) & ((hi - lo == 31) ? ~0u : ((1u << (hi - lo + 1)) - 1)); }
constexpr int32_t sext(uint32_t v, int width) { return static_cast<int32_t>(v << (32 - width)) >> (32 - width); }

// One format's opcode -> lower-case mnemonic table, built from the X-macro list.
struct NameTable {
  std::vector<std::string> names;  // indexed by opcode; empty = unknown
  void add(const char* upper, int op) {
    if (static_cast<size_t>(op) >= names.size()) names.resize(op + 1);
    std::string s(upper);
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    names[op] = std::move(s);
  }
  const char* find(uint16_t op) const { return op < names.size() && !names[op].empty() ? names[op].c_str() : nullptr; }
};

#define DOORBELL_RDNA3_ADD_NAME(NAME, OP) t.add(#NAME, OP);
#define DOORBELL_RDNA3_TABLE(FN, LIST)     \
  const NameTable& FN() {                  \
    static const NameTable table = [] {    \
      NameTable t;                         \
      LIST(DOORBELL_RDNA3_ADD_NAME)        \
      return t;                            \
    }();                                   \
    return table;                          \
  }
DOORBELL_RDNA3_TABLE(sop2_names, DOORBELL_RDNA3_SOP2)
DOORBELL_RDNA3_TABLE(sopk_names, DOORBELL_RDNA3_SOPK)
DOORBELL_RDNA3_TABLE(sop1_names, DOORBELL_RDNA3_SOP1)
DOORBELL_RDNA3_TABLE(sopc_names, DOORBELL_RDNA3_SOPC)
DOORBELL_RDNA3_TABLE(sopp_names, DOORBELL_RDNA3_SOPP)
DOORBELL_RDNA3_TABLE(smem_names, DOORBELL_RDNA3_SMEM)
DOORBELL_RDNA3_TABLE(vop1_names, DOORBELL_RDNA3_VOP1)
DOORBELL_RDNA3_TABLE(vop2_names, DOORBELL_RDNA3_VOP2)
DOORBELL_RDNA3_TABLE(vopc_names, DOORBELL_RDNA3_VOPC)
DOORBELL_RDNA3_TABLE(vop3_names, DOORBELL_RDNA3_VOP3)
DOORBELL_RDNA3_TABLE(vop3p_names, DOORBELL_RDNA3_VOP3P)
DOORBELL_RDNA3_TABLE(vopdx_names, DOORBELL_RDNA3_VOPDX)
DOORBELL_RDNA3_TABLE(vopdy_names, DOORBELL_RDNA3_VOPDY)
DOORBELL_RDNA3_TABLE(ds_names, DOORBELL_RDNA3_DS)
DOORBELL_RDNA3_TABLE(flat_names, DOORBELL_RDNA3_FLAT)
DOORBELL_RDNA3_TABLE(global_names, DOORBELL_RDNA3_GLOBAL)
DOORBELL_RDNA3_TABLE(scratch_names, DOORBELL_RDNA3_SCRATCH)
DOORBELL_RDNA3_TABLE(mubuf_names, DOORBELL_RDNA3_MUBUF)
#undef DOORBELL_RDNA3_TABLE
#undef DOORBELL_RDNA3_ADD_NAME

const NameTable& names_of(Rdna3Format f) {
  switch (f) {
    case Rdna3Format::SOP2: return sop2_names();
    case Rdna3Format::SOPK: return sopk_names();
    case Rdna3Format::SOP1: return sop1_names();
    case Rdna3Format::SOPC: return sopc_names();
    case Rdna3Format::SOPP: return sopp_names();
    case Rdna3Format::SMEM: return smem_names();
    case Rdna3Format::VOP1: return vop1_names();
    case Rdna3Format::VOP2: return vop2_names();
    case Rdna3Format::VOPC: return vopc_names();
    case Rdna3Format::VOP3: return vop3_names();
    case Rdna3Format::VOP3P: return vop3p_names();
    case Rdna3Format::VOPD: return vopdx_names();
    case Rdna3Format::DS: return ds_names();
    case Rdna3Format::FLAT: return flat_names();
    case Rdna3Format::GLOBAL: return global_names();
    case Rdna3Format::SCRATCH: return scratch_names();
    case Rdna3Format::MUBUF: return mubuf_names();
  }
  return sopp_names();
}

std::string hex_words(const uint32_t* words, std::size_t n) {
  std::string s;
  char buf[16];
  for (std::size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%s0x%08X", i ? " " : "", words[i]);
    s += buf;
  }
  return s;
}

// Reads the instruction's words one by one, so a cut-off encoding names what is missing.
class Reader {
 public:
  Reader(const uint32_t* words, std::size_t available) : words_(words), available_(available) {}
  uint32_t need(std::size_t index, Rdna3Format f, const char* what) const {
    if (index >= available_)
      throw std::invalid_argument("RDNA3 " + std::string(rdna3_format_name(f)) + " instruction " +
                                  hex_words(words_, available_) + " is truncated: " + what + " (dword " +
                                  std::to_string(index) + ") is missing");
    return words_[index];
  }
  [[noreturn]] void unknown(std::size_t n, Rdna3Format f, uint16_t op, const char* which = "opcode") const {
    throw std::invalid_argument("RDNA3 " + std::string(rdna3_format_name(f)) + " instruction " +
                                hex_words(words_, std::min(n, available_)) + ": unknown " + which + " " +
                                std::to_string(op) + " (not an LLVM 19 gfx1100 opcode)");
  }

 private:
  const uint32_t* words_;
  std::size_t available_;
};

bool is_dpp(uint16_t src0) { return src0 == operand::kDpp16 || src0 == operand::kDpp8 || src0 == operand::kDpp8Fi; }

// VOP3 opcodes encoded VOP3SD (an SGPR carry/condition destination in bits [14:8] instead of abs/opsel):
// v_add/sub/subrev_co_ci_u32 (VOP2 promoted), v_div_scale_f32/f64, v_mad_u64_u32, v_mad_i64_i32, v_add/sub/subrev_co_u32.
bool vop3sd(uint16_t op) { return (op >= 288 && op <= 290) || (op >= 764 && op <= 770); }

// VOP2 opcodes whose encoding always carries a literal constant K (v_fmamk/fmaak_f32/f16).
bool vop2_takes_literal(uint16_t op) { return op == 44 || op == 45 || op == 55 || op == 56; }
// VOPD halves with a literal K (v_dual_fmaak_f32 1, v_dual_fmamk_f32 2).
bool vopd_takes_literal(uint16_t op) { return op == 1 || op == 2; }

}  // namespace

const char* rdna3_format_name(Rdna3Format f) {
  switch (f) {
    case Rdna3Format::SOP2: return "SOP2";
    case Rdna3Format::SOPK: return "SOPK";
    case Rdna3Format::SOP1: return "SOP1";
    case Rdna3Format::SOPC: return "SOPC";
    case Rdna3Format::SOPP: return "SOPP";
    case Rdna3Format::SMEM: return "SMEM";
    case Rdna3Format::VOP1: return "VOP1";
    case Rdna3Format::VOP2: return "VOP2";
    case Rdna3Format::VOPC: return "VOPC";
    case Rdna3Format::VOP3: return "VOP3";
    case Rdna3Format::VOP3P: return "VOP3P";
    case Rdna3Format::VOPD: return "VOPD";
    case Rdna3Format::DS: return "DS";
    case Rdna3Format::FLAT: return "FLAT";
    case Rdna3Format::GLOBAL: return "GLOBAL";
    case Rdna3Format::SCRATCH: return "SCRATCH";
    case Rdna3Format::MUBUF: return "MUBUF";
  }
  return "?";
}

const char* rdna3_mnemonic(Rdna3Format format, uint16_t op) { return names_of(format).find(op); }
const char* rdna3_vopdy_mnemonic(uint16_t op) { return vopdy_names().find(op); }

Rdna3Inst decode_rdna3(const uint32_t* words, std::size_t available) {
  if (available == 0) throw std::invalid_argument("RDNA3 decode: no instruction word (0 dwords available)");
  const Reader r(words, available);
  const uint32_t w = words[0];
  Rdna3Inst in;
  uint32_t w1 = 0;
  std::size_t n = 1;  // dwords consumed before a DPP word or literal
  // Literal constant: one dword after the encoding (and after a DPP word), shared by every source that names 255.
  auto take_literal = [&](bool wanted, Rdna3Format f) {
    if (!wanted) return;
    in.has_literal = true;
    in.literal = r.need(n, f, "the 32-bit literal constant");
    ++n;
  };
  auto take_dpp = [&](Rdna3Format f) {
    if (!is_dpp(in.src[0])) return;
    in.dpp = r.need(n, f, in.src[0] == operand::kDpp16 ? "the DPP16 control word" : "the DPP8 selector word");
    ++n;
  };
  auto check_op = [&](Rdna3Format f) {
    if (!rdna3_mnemonic(f, in.op)) r.unknown(n, f, in.op);
  };

  const uint32_t top9 = bits(w, 31, 23), top6 = bits(w, 31, 26);
  if (bits(w, 31, 31) == 0) {
    // VOP1 [31:25]=0x3F, VOPC [31:25]=0x3E, otherwise VOP2 with op in [30:25].
    const uint32_t top7 = bits(w, 31, 25);
    if (top7 == 0x3F) {
      in.format = Rdna3Format::VOP1;
      in.vdst = bits(w, 24, 17);
      in.op = bits(w, 16, 9);
      in.src[0] = bits(w, 8, 0);
    } else if (top7 == 0x3E) {
      in.format = Rdna3Format::VOPC;
      in.op = bits(w, 24, 17);
      in.src[1] = operand::kVgpr0 + bits(w, 16, 9);
      in.src[0] = bits(w, 8, 0);
    } else {
      in.format = Rdna3Format::VOP2;
      in.op = bits(w, 30, 25);
      in.vdst = bits(w, 24, 17);
      in.src[1] = operand::kVgpr0 + bits(w, 16, 9);
      in.src[0] = bits(w, 8, 0);
    }
    check_op(in.format);
    take_dpp(in.format);
    take_literal(in.src[0] == operand::kLiteral || (in.format == Rdna3Format::VOP2 && vop2_takes_literal(in.op)),
                 in.format);
  } else if (bits(w, 31, 30) == 2) {
    if (top9 == 0x17D) {
      in.format = Rdna3Format::SOP1;
      in.sdst = bits(w, 22, 16);
      in.op = bits(w, 15, 8);
      in.ssrc0 = bits(w, 7, 0);
      check_op(in.format);
      take_literal(in.ssrc0 == operand::kLiteral, in.format);
    } else if (top9 == 0x17E) {
      in.format = Rdna3Format::SOPC;
      in.op = bits(w, 22, 16);
      in.ssrc1 = bits(w, 15, 8);
      in.ssrc0 = bits(w, 7, 0);
      check_op(in.format);
      take_literal(in.ssrc0 == operand::kLiteral || in.ssrc1 == operand::kLiteral, in.format);
    } else if (top9 == 0x17F) {
      in.format = Rdna3Format::SOPP;
      in.op = bits(w, 22, 16);
      in.simm16 = sext(bits(w, 15, 0), 16);
      check_op(in.format);
    } else if (bits(w, 31, 28) == 0xB) {
      in.format = Rdna3Format::SOPK;
      in.op = bits(w, 27, 23);
      in.sdst = bits(w, 22, 16);
      in.simm16 = sext(bits(w, 15, 0), 16);
      check_op(in.format);
      take_literal(in.op == 19, in.format);  // s_setreg_imm32_b32: the value is a literal
    } else {
      in.format = Rdna3Format::SOP2;
      in.op = bits(w, 29, 23);
      in.sdst = bits(w, 22, 16);
      in.ssrc1 = bits(w, 15, 8);
      in.ssrc0 = bits(w, 7, 0);
      check_op(in.format);
      take_literal(in.ssrc0 == operand::kLiteral || in.ssrc1 == operand::kLiteral, in.format);
    }
  } else if (top6 == 0x35) {  // VOP3 (and VOP3SD)
    in.format = Rdna3Format::VOP3;
    in.op = bits(w, 25, 16);
    check_op(in.format);
    w1 = r.need(1, in.format, "the second VOP3 dword (sources)");
    n = 2;
    in.vdst = bits(w, 7, 0);
    in.clamp = bits(w, 15, 15);
    if (vop3sd(in.op)) {
      in.sdst = bits(w, 14, 8);
    } else {
      in.abs = bits(w, 10, 8);
      in.opsel = bits(w, 14, 11);
      if (in.op < 256) in.sdst = in.vdst;  // a promoted VOPC writes its SGPR (pair) through the VDST field
    }
    in.src[0] = bits(w1, 8, 0);
    in.src[1] = bits(w1, 17, 9);
    in.src[2] = bits(w1, 26, 18);
    in.omod = bits(w1, 28, 27);
    in.neg = bits(w1, 31, 29);
    take_dpp(in.format);
    take_literal(in.src[0] == operand::kLiteral || in.src[1] == operand::kLiteral || in.src[2] == operand::kLiteral,
                 in.format);
  } else if (bits(w, 31, 24) == 0xCC) {  // VOP3P
    in.format = Rdna3Format::VOP3P;
    in.op = bits(w, 22, 16);
    check_op(in.format);
    w1 = r.need(1, in.format, "the second VOP3P dword (sources)");
    n = 2;
    in.vdst = bits(w, 7, 0);
    in.neg_hi = bits(w, 10, 8);
    in.opsel = bits(w, 13, 11);
    in.opsel_hi = static_cast<uint8_t>(bits(w1, 28, 27) | bits(w, 14, 14) << 2);
    in.clamp = bits(w, 15, 15);
    in.src[0] = bits(w1, 8, 0);
    in.src[1] = bits(w1, 17, 9);
    in.src[2] = bits(w1, 26, 18);
    in.neg = bits(w1, 31, 29);
    take_dpp(in.format);
    take_literal(in.src[0] == operand::kLiteral || in.src[1] == operand::kLiteral || in.src[2] == operand::kLiteral,
                 in.format);
  } else if (top6 == 0x32) {  // VOPD
    in.format = Rdna3Format::VOPD;
    in.op = bits(w, 25, 22);
    in.opy = bits(w, 21, 17);
    if (!rdna3_mnemonic(in.format, in.op)) r.unknown(1, in.format, in.op, "OPX");
    if (!rdna3_vopdy_mnemonic(in.opy)) r.unknown(1, in.format, in.opy, "OPY");
    in.src[1] = operand::kVgpr0 + bits(w, 16, 9);
    in.src[0] = bits(w, 8, 0);
    w1 = r.need(1, in.format, "the second VOPD dword (the Y half)");
    n = 2;
    in.vdst = bits(w1, 31, 24);
    // VDSTY holds bits [7:1]; bit 0 is the opposite of VDSTX's (the two destinations sit in different banks).
    in.vdsty = static_cast<uint16_t>(bits(w1, 23, 17) << 1 | ((in.vdst & 1) ^ 1));
    in.vsrcy1 = operand::kVgpr0 + bits(w1, 16, 9);
    in.srcy0 = bits(w1, 8, 0);
    take_literal(in.src[0] == operand::kLiteral || in.srcy0 == operand::kLiteral || vopd_takes_literal(in.op) ||
                     vopd_takes_literal(in.opy),
                 in.format);
  } else if (top6 == 0x3D) {  // SMEM
    in.format = Rdna3Format::SMEM;
    in.op = bits(w, 25, 18);
    check_op(in.format);
    w1 = r.need(1, in.format, "the second SMEM dword (offset)");
    n = 2;
    in.sbase = bits(w, 5, 0) << 1;
    in.sdst = bits(w, 12, 6);
    in.dlc = bits(w, 13, 13);
    in.glc = bits(w, 14, 14);
    in.offset = sext(bits(w1, 20, 0), 21);
    in.soffset = bits(w1, 31, 25);
  } else if (top6 == 0x36) {  // DS
    in.format = Rdna3Format::DS;
    in.op = bits(w, 25, 18);
    check_op(in.format);
    w1 = r.need(1, in.format, "the second DS dword (registers)");
    n = 2;
    in.offset0 = bits(w, 7, 0);
    in.offset1 = bits(w, 15, 8);
    in.offset = in.offset0 | in.offset1 << 8;
    in.gds = bits(w, 17, 17);
    in.addr = bits(w1, 7, 0);
    in.data0 = bits(w1, 15, 8);
    in.data1 = bits(w1, 23, 16);
    in.vdst = bits(w1, 31, 24);
  } else if (top6 == 0x37) {  // FLAT / GLOBAL / SCRATCH (SEG in [17:16])
    const uint32_t seg = bits(w, 17, 16);
    if (seg == 3) r.unknown(1, Rdna3Format::FLAT, static_cast<uint16_t>(seg), "segment");
    in.format = seg == 0 ? Rdna3Format::FLAT : seg == 1 ? Rdna3Format::SCRATCH : Rdna3Format::GLOBAL;
    in.op = bits(w, 24, 18);
    check_op(in.format);
    w1 = r.need(1, in.format, "the second FLAT dword (registers)");
    n = 2;
    // GLOBAL/SCRATCH offsets are signed 13 bits; LLVM 19 reads a FLAT (segment 0) offset as unsigned.
    in.offset = seg == 0 ? static_cast<int32_t>(bits(w, 12, 0)) : sext(bits(w, 12, 0), 13);
    in.dlc = bits(w, 13, 13);
    in.glc = bits(w, 14, 14);
    in.slc = bits(w, 15, 15);
    in.addr = bits(w1, 7, 0);
    in.data0 = bits(w1, 15, 8);
    in.saddr = bits(w1, 22, 16);
    in.sve = bits(w1, 23, 23);
    in.vdst = bits(w1, 31, 24);
  } else if (top6 == 0x38) {  // MUBUF
    in.format = Rdna3Format::MUBUF;
    in.op = bits(w, 25, 18);
    check_op(in.format);
    w1 = r.need(1, in.format, "the second MUBUF dword (registers)");
    n = 2;
    in.offset = bits(w, 11, 0);
    in.slc = bits(w, 12, 12);
    in.dlc = bits(w, 13, 13);
    in.glc = bits(w, 14, 14);
    in.addr = bits(w1, 7, 0);
    in.data0 = bits(w1, 15, 8);
    in.vdst = in.data0;
    in.srsrc = bits(w1, 20, 16) << 2;
    in.tfe = bits(w1, 21, 21);
    in.offen = bits(w1, 22, 22);
    in.idxen = bits(w1, 23, 23);
    in.soffset = bits(w1, 31, 24);
  } else {
    const char* kind = top6 == 0x3A ? "MTBUF" : top6 == 0x3C ? "MIMG" : top6 == 0x3E ? "EXP"
                     : bits(w, 31, 24) == 0xCD ? "VINTERP" : bits(w, 31, 24) == 0xCE ? "LDSDIR" : "unknown";
    throw std::invalid_argument("RDNA3 instruction " + hex_words(words, std::min<std::size_t>(available, 2)) +
                                ": encoding " + kind + " is not decoded (no format among SOP*, SMEM, VOP*, DS, " +
                                "FLAT/GLOBAL/SCRATCH, MUBUF matches the top bits)");
  }
  in.words = static_cast<uint8_t>(n);
  return in;
}

}  // namespace doorbell::mockgpu::amd
