// disassemble_rdna3 (rdna3_decode.h): llvm-objdump-19's text for a decoded gfx1100 instruction. The mnemonic (with
// its _e32/_e64 suffix) and the operand order and widths come from rdna3_operands.h, generated from llvm-mc-19's own
// output; this file prints the operands (firmware-notes/amd-rdna3-isa.md "Operand codes") and the modifiers in the
// order LLVM's AMDGPUInstPrinter prints them.
#include <array>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "mockgpu/amd/rdna3_decode.h"
#include "mockgpu/amd/rdna3_operands.h"

namespace doorbell::mockgpu::amd {
namespace {

struct Text {
  const char* mnemonic = nullptr;
  const char* operands = nullptr;
};

struct TextTable {
  std::vector<Text> rows;
  void add(int op, const char* mn, const char* tp) {
    if (static_cast<size_t>(op) >= rows.size()) rows.resize(op + 1);
    rows[op] = {mn, tp};
  }
  const Text* find(uint16_t op) const { return op < rows.size() && rows[op].mnemonic ? &rows[op] : nullptr; }
};

#define DOORBELL_RDNA3_ADD_TEXT(OP, MN, TP) t.add(OP, MN, TP);
#define DOORBELL_RDNA3_TEXT_TABLE(FN, LIST) \
  const TextTable& FN() {                   \
    static const TextTable table = [] {     \
      TextTable t;                          \
      LIST(DOORBELL_RDNA3_ADD_TEXT)         \
      return t;                             \
    }();                                    \
    return table;                           \
  }
DOORBELL_RDNA3_TEXT_TABLE(vop1_text, DOORBELL_RDNA3_VOP1_TEXT)
DOORBELL_RDNA3_TEXT_TABLE(vop2_text, DOORBELL_RDNA3_VOP2_TEXT)
DOORBELL_RDNA3_TEXT_TABLE(vopc_text, DOORBELL_RDNA3_VOPC_TEXT)
DOORBELL_RDNA3_TEXT_TABLE(vop3_text, DOORBELL_RDNA3_VOP3_TEXT)
DOORBELL_RDNA3_TEXT_TABLE(vop3p_text, DOORBELL_RDNA3_VOP3P_TEXT)
DOORBELL_RDNA3_TEXT_TABLE(sop2_text, DOORBELL_RDNA3_SOP2_TEXT)
DOORBELL_RDNA3_TEXT_TABLE(sop1_text, DOORBELL_RDNA3_SOP1_TEXT)
DOORBELL_RDNA3_TEXT_TABLE(sopc_text, DOORBELL_RDNA3_SOPC_TEXT)
DOORBELL_RDNA3_TEXT_TABLE(sopk_text, DOORBELL_RDNA3_SOPK_TEXT)
DOORBELL_RDNA3_TEXT_TABLE(smem_text, DOORBELL_RDNA3_SMEM_TEXT)
DOORBELL_RDNA3_TEXT_TABLE(ds_text, DOORBELL_RDNA3_DS_TEXT)
DOORBELL_RDNA3_TEXT_TABLE(flat_text, DOORBELL_RDNA3_FLAT_TEXT)
DOORBELL_RDNA3_TEXT_TABLE(flat_rtn_text, DOORBELL_RDNA3_FLATRTN_TEXT)
DOORBELL_RDNA3_TEXT_TABLE(global_text, DOORBELL_RDNA3_GLOBAL_TEXT)
DOORBELL_RDNA3_TEXT_TABLE(global_rtn_text, DOORBELL_RDNA3_GLOBALRTN_TEXT)
DOORBELL_RDNA3_TEXT_TABLE(scratch_text, DOORBELL_RDNA3_SCRATCH_TEXT)
DOORBELL_RDNA3_TEXT_TABLE(mubuf_text, DOORBELL_RDNA3_MUBUF_TEXT)
#undef DOORBELL_RDNA3_TEXT_TABLE
#undef DOORBELL_RDNA3_ADD_TEXT

// The VOP3 modifier bits LLVM prints per opcode (rdna3_operands.h DOORBELL_RDNA3_VOP3_MODS); 255 = every set bit.
struct Vop3Mods {
  uint8_t opsel = 255, abs = 255, neg = 255;
};
Vop3Mods vop3_mods(uint16_t op) {
  static const std::vector<Vop3Mods> table = [] {
    std::vector<Vop3Mods> t(1024);
#define DOORBELL_RDNA3_ADD_MODS(OP, OPSEL, ABS, NEG) t[OP] = {OPSEL, ABS, NEG};
    DOORBELL_RDNA3_VOP3_MODS(DOORBELL_RDNA3_ADD_MODS)
#undef DOORBELL_RDNA3_ADD_MODS
    return t;
  }();
  return op < table.size() ? table[op] : Vop3Mods{};
}

std::string fmt(const char* f, long long v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
std::string hex(uint64_t v) { return fmt("0x%llx", static_cast<long long>(v)); }
std::string signed_hex(int64_t v) { return v < 0 ? "-" + hex(static_cast<uint64_t>(-v)) : hex(static_cast<uint64_t>(v)); }

// A register range: "v7" / "v[6:7]", "s3" / "s[2:3]", "ttmp4" / "ttmp[4:5]".
std::string range(const char* prefix, unsigned first, unsigned dwords) {
  if (dwords <= 1) return prefix + std::to_string(first);
  return std::string(prefix) + "[" + std::to_string(first) + ":" + std::to_string(first + dwords - 1) + "]";
}

std::string vgpr(unsigned n, unsigned dwords) { return range("v", n, dwords); }

// A 32-bit literal whose value is an inline constant prints as that constant (LLVM's printImmediate32): -16..64 and
// the float bit patterns of 0.5, 1.0, 2.0, 4.0 (either sign) and 1/(2*pi).
std::string literal32(uint32_t v) {
  const int32_t i = static_cast<int32_t>(v);
  if (i >= -16 && i <= 64) return std::to_string(i);
  switch (v) {
    case 0x3F000000: return "0.5";
    case 0xBF000000: return "-0.5";
    case 0x3F800000: return "1.0";
    case 0xBF800000: return "-1.0";
    case 0x40000000: return "2.0";
    case 0xC0000000: return "-2.0";
    case 0x40800000: return "4.0";
    case 0xC0800000: return "-4.0";
    case 0x3E22F983: return "0.15915494";
    default: return hex(v);
  }
}

// Whether the operands of `mnemonic` are 32-bit values for literal printing: its last type token (the source type
// of a conversion) is not a 16- or 64-bit type.
bool literal_is_32bit(const char* mnemonic) {
  std::string m = mnemonic;
  if (m.size() > 4 && (m.compare(m.size() - 4, 4, "_e32") == 0 || m.compare(m.size() - 4, 4, "_e64") == 0)) m.resize(m.size() - 4);
  const std::string last = m.substr(m.rfind('_') + 1);
  return last.find("16") == std::string::npos && last.find("64") == std::string::npos;
}

// An operand code (rdna3_inst.h) as LLVM prints it; `dwords` is the operand's width (64-bit pairs print as ranges).
// `inline_literal`: a literal equal to an inline constant prints as the constant (32-bit operands).
// An SGPR range starts at an even register (pairs) or a multiple of 4 (wider): LLVM's disassembler drops the low
// bits of a misaligned field, and so does this printer.
unsigned sgpr_aligned(unsigned first, unsigned dwords) { return dwords >= 4 ? first & ~3u : dwords == 2 ? first & ~1u : first; }

std::string operand_text(uint16_t code, unsigned dwords, const Rdna3Inst& in, bool inline_literal = false) {
  if (code == operand::kLiteral && inline_literal && dwords == 1) return literal32(in.literal);
  if (code <= 105) return range("s", sgpr_aligned(code, dwords), dwords);
  if (code >= 108 && code <= 123) return range("ttmp", sgpr_aligned(code - 108, dwords), dwords);
  if (code >= operand::kVgpr0) return vgpr(code - operand::kVgpr0, dwords);
  if (code >= operand::kIntZero && code <= operand::kIntMax) return std::to_string(code - operand::kIntZero);
  if (code >= operand::kIntNegMin && code <= operand::kIntNegMax) return std::to_string(192 - static_cast<int>(code));
  switch (code) {
    case operand::kVccLo: return dwords == 2 ? "vcc" : "vcc_lo";
    case operand::kVccHi: return "vcc_hi";
    case operand::kNull: return "null";
    case operand::kM0: return "m0";
    case operand::kExecLo: return dwords == 2 ? "exec" : "exec_lo";
    case operand::kExecHi: return "exec_hi";
    case 235: return "src_shared_base";
    case 236: return "src_shared_limit";
    case 237: return "src_private_base";
    case 238: return "src_private_limit";
    case 239: return "src_pops_exiting_wave_id";
    case 240: return "0.5";
    case 241: return "-0.5";
    case 242: return "1.0";
    case 243: return "-1.0";
    case 244: return "2.0";
    case 245: return "-2.0";
    case 246: return "4.0";
    case 247: return "-4.0";
    case 248: return "0.15915494";
    case 251: return "src_vccz";
    case 252: return "src_execz";
    case operand::kScc: return "src_scc";
    case 254: return "src_lds_direct";
    case operand::kLiteral: return hex(in.literal);
    default: return "<operand " + std::to_string(code) + ">";
  }
}

// The modifier list "[a,b,c]" of `count` bits.
std::string bit_list(unsigned bits_value, unsigned count) {
  std::string s = "[";
  for (unsigned i = 0; i < count; ++i) s += std::string(i ? "," : "") + ((bits_value >> i) & 1 ? "1" : "0");
  return s + "]";
}

bool contains(const char* s, const char* part) { return std::strstr(s, part) != nullptr; }

// Fills a template of rdna3_operands.h. `field` maps a placeholder letter and width to the operand's text.
template <typename Field>
std::string fill(const char* tp, Field&& field) {
  std::string out;
  for (const char* p = tp; *p;) {
    if (*p != '{') {
      out += *p++;
      continue;
    }
    const char* close = std::strchr(p, '}');
    if (!close) throw std::logic_error(std::string("rdna3_operands.h: unclosed placeholder in \"") + tp + "\"");
    char letter = p[1];
    unsigned width = 0;
    for (const char* q = p + 2; q < close; ++q) width = width * 10 + static_cast<unsigned>(*q - '0');
    out += field(letter, width);
    p = close + 1;
  }
  return out;
}

// VALU source with VOP3/VOP3P modifiers: -x, |x|, -|x|.
std::string valu_source(const Rdna3Inst& in, int i, unsigned width, bool modifiers, bool inline_literal) {
  std::string s = operand_text(in.src[i], width, in, inline_literal);
  if (in.format == Rdna3Format::VOP3 && modifiers) {
    const Vop3Mods m = vop3_mods(in.op);
    if (((in.abs & m.abs) >> i) & 1) s = "|" + s + "|";
    if (((in.neg & m.neg) >> i) & 1) s = "-" + s;
  }
  return s;
}

// v_mov_b16_e32's true16 registers: VGPR field bit 7 selects the high half.
std::string true16(uint16_t code, const Rdna3Inst& in) {
  if (code < operand::kVgpr0) return operand_text(code, 1, in);
  const unsigned n = code - operand::kVgpr0;
  return "v" + std::to_string(n & 127) + ((n & 128) ? ".h" : ".l");
}

std::string unknown_text(const Rdna3Inst& in) {
  throw std::invalid_argument(std::string("RDNA3 disassemble: ") + rdna3_format_name(in.format) + " opcode " +
                              std::to_string(in.op) + " has no text in rdna3_operands.h");
}

const Text& text_of(const TextTable& t, const Rdna3Inst& in) {
  const Text* x = t.find(in.op);
  if (!x) unknown_text(in);
  return *x;
}

int count_sources(const char* tp) {
  int n = 0;
  for (const char* p = tp; (p = std::strchr(p, '{')); ++p)
    if (p[1] >= '0' && p[1] <= '2') ++n;
  return n;
}

std::string dpp_text(const Rdna3Inst& in) {
  if (in.src[0] == operand::kDpp8 || in.src[0] == operand::kDpp8Fi) {
    std::string s = " dpp8:[";
    for (int i = 0; i < 8; ++i) s += (i ? "," : "") + std::to_string((in.dpp >> (8 + 3 * i)) & 7);
    s += "]";
    if (in.src[0] == operand::kDpp8Fi) s += " fi:1";
    return s;
  }
  const unsigned ctrl = (in.dpp >> 8) & 0x1ff;
  std::string s;
  if (ctrl <= 0xff) {
    s = " quad_perm:[" + std::to_string(ctrl & 3) + "," + std::to_string((ctrl >> 2) & 3) + "," +
        std::to_string((ctrl >> 4) & 3) + "," + std::to_string((ctrl >> 6) & 3) + "]";
  } else if (ctrl >= 0x101 && ctrl <= 0x10f) {
    s = " row_shl:" + std::to_string(ctrl & 0xf);
  } else if (ctrl >= 0x111 && ctrl <= 0x11f) {
    s = " row_shr:" + std::to_string(ctrl & 0xf);
  } else if (ctrl >= 0x121 && ctrl <= 0x12f) {
    s = " row_ror:" + std::to_string(ctrl & 0xf);
  } else if (ctrl == 0x140) {
    s = " row_mirror";
  } else if (ctrl == 0x141) {
    s = " row_half_mirror";
  } else if (ctrl >= 0x150 && ctrl <= 0x15f) {
    s = " row_share:" + std::to_string(ctrl & 0xf);
  } else if (ctrl >= 0x160 && ctrl <= 0x16f) {
    s = " row_xmask:" + std::to_string(ctrl & 0xf);
  } else {
    s = " " + hex(ctrl);
  }
  s += " row_mask:" + hex((in.dpp >> 28) & 0xf) + " bank_mask:" + hex((in.dpp >> 24) & 0xf);
  if ((in.dpp >> 19) & 1) s += " bound_ctrl:1";
  if ((in.dpp >> 18) & 1) s += " fi:1";
  return s;
}

// ---- VALU ------------------------------------------------------------------------------------------------------

std::string valu(const Rdna3Inst& in) {
  const TextTable* table = nullptr;
  switch (in.format) {
    case Rdna3Format::VOP1: table = &vop1_text(); break;
    case Rdna3Format::VOP2: table = &vop2_text(); break;
    case Rdna3Format::VOPC: table = &vopc_text(); break;
    case Rdna3Format::VOP3: table = &vop3_text(); break;
    default: table = &vop3p_text(); break;
  }
  const Text& t = text_of(*table, in);
  const bool dpp = in.src[0] == operand::kDpp16 || in.src[0] == operand::kDpp8 || in.src[0] == operand::kDpp8Fi;
  Rdna3Inst shown = in;
  if (dpp) shown.src[0] = static_cast<uint16_t>(operand::kVgpr0 + (in.dpp & 0xff));
  std::string mnemonic = t.mnemonic;
  if (dpp) {
    // LLVM names the DPP forms <name>_dpp (32-bit encodings, the _e32 dropped) and <name>_e64_dpp (VOP3).
    if (mnemonic.size() > 4 && mnemonic.compare(mnemonic.size() - 4, 4, "_e32") == 0) mnemonic.resize(mnemonic.size() - 4);
    mnemonic += "_dpp";
  }
  const bool mods = in.format == Rdna3Format::VOP3;
  const bool lit32 = literal_is_32bit(t.mnemonic);
  std::string ops = fill(t.operands, [&](char letter, unsigned w) -> std::string {
    switch (letter) {
      case 'd': return vgpr(in.vdst, w);
      case 'D': return true16(static_cast<uint16_t>(operand::kVgpr0 + in.vdst), in);
      case 'T': return true16(shown.src[0], in);
      case 's': return operand_text(in.format == Rdna3Format::VOP3 ? in.sdst : in.vdst, w, in);
      case 'c': return operand_text(in.sdst, w, in);
      case '0': return valu_source(shown, 0, w, mods, lit32);
      case '1': return valu_source(shown, 1, w, mods, lit32);
      case '2': return valu_source(shown, 2, w, mods, lit32);
      case 'K': return hex(in.literal);
      default: return std::string("{") + letter + "}";
    }
  });
  std::string s = mnemonic + (ops.empty() ? "" : " " + ops);
  const int nsrc = count_sources(t.operands);
  if (in.format == Rdna3Format::VOP3) {
    const unsigned opsel = in.opsel & vop3_mods(in.op).opsel;
    if (opsel) s += " op_sel:" + bit_list((opsel & ((1u << nsrc) - 1)) | ((opsel >> 3) & 1) << nsrc, nsrc + 1);
    if (in.clamp) s += " clamp";
    if (in.omod) s += in.omod == 1 ? " mul:2" : in.omod == 2 ? " mul:4" : " div:2";
  } else if (in.format == Rdna3Format::VOP3P) {
    const bool mix = contains(t.mnemonic, "_mix");
    const unsigned hi_default = mix ? 0u : (1u << nsrc) - 1;
    if (in.opsel) s += " op_sel:" + bit_list(in.opsel, nsrc);
    if ((in.opsel_hi & ((1u << nsrc) - 1)) != hi_default) s += " op_sel_hi:" + bit_list(in.opsel_hi, nsrc);
    if (in.neg) s += " neg_lo:" + bit_list(in.neg, nsrc);
    if (in.neg_hi) s += " neg_hi:" + bit_list(in.neg_hi, nsrc);
    if (in.clamp) s += " clamp";
  }
  if (dpp) s += dpp_text(in);
  return s;
}

std::string vopd(const Rdna3Inst& in) {
  auto half = [&](const char* name, uint16_t op, uint16_t vdst, uint16_t src0, uint16_t vsrc1) {
    std::string s = std::string(name) + " " + vgpr(vdst, 1) + ", " + operand_text(src0, 1, in, true);
    if (op == 8) return s;  // v_dual_mov_b32: one source
    if (op == 2) return s + ", " + hex(in.literal) + ", " + operand_text(vsrc1, 1, in);  // fmamk: K before vsrc1
    s += ", " + operand_text(vsrc1, 1, in);
    if (op == 1) s += ", " + hex(in.literal);  // fmaak
    return s;
  };
  const char* x = rdna3_mnemonic(Rdna3Format::VOPD, in.op);
  const char* y = rdna3_vopdy_mnemonic(in.opy);
  if (!x || !y) unknown_text(in);
  return half(x, in.op, in.vdst, in.src[0], in.src[1]) + " :: " + half(y, in.opy, in.vdsty, in.srcy0, in.vsrcy1);
}

// ---- scalar ----------------------------------------------------------------------------------------------------

// simm16 as LLVM's printU16ImmOperand: an inline-constant value (0..64) in decimal, otherwise hex.
std::string u16_imm(int32_t simm16) {
  const uint32_t v = static_cast<uint16_t>(simm16);
  return v <= 64 ? std::to_string(v) : hex(v);
}

std::string hwreg_text(uint32_t v) {
  return "hwreg(" + std::to_string(v & 0x3f) + ", " + std::to_string((v >> 6) & 0x1f) + ", " +
         std::to_string(((v >> 11) & 0x1f) + 1) + ")";
}

std::string scalar(const Rdna3Inst& in) {
  const TextTable* table = in.format == Rdna3Format::SOP2   ? &sop2_text()
                           : in.format == Rdna3Format::SOP1 ? &sop1_text()
                           : in.format == Rdna3Format::SOPC ? &sopc_text()
                                                            : &sopk_text();
  const Text& t = text_of(*table, in);
  const uint32_t imm = static_cast<uint16_t>(in.simm16);
  std::string ops = fill(t.operands, [&](char letter, unsigned w) -> std::string {
    switch (letter) {
      case 'd': return operand_text(in.sdst, w, in);
      case '0': return operand_text(in.ssrc0, w, in, true);
      case '1': return operand_text(in.ssrc1, w, in, true);
      case 'i': return hex(imm);
      case 'I': return std::to_string(imm);
      case 'h': return hwreg_text(imm);
      case 'K': return hex(in.literal);
      default: return std::string("{") + letter + "}";
    }
  });
  return std::string(t.mnemonic) + (ops.empty() ? "" : " " + ops);
}

const char* delay_dep(unsigned v) {
  static const char* const names[] = {"NO_DEP",        "VALU_DEP_1",    "VALU_DEP_2",       "VALU_DEP_3",
                                      "VALU_DEP_4",    "TRANS32_DEP_1", "TRANS32_DEP_2",    "TRANS32_DEP_3",
                                      "FMA_ACCUM_CYCLE_1", "SALU_CYCLE_1", "SALU_CYCLE_2",  "SALU_CYCLE_3"};
  return v < 12 ? names[v] : nullptr;
}

std::string sopp(const Rdna3Inst& in) {
  const char* name = rdna3_mnemonic(Rdna3Format::SOPP, in.op);
  if (!name) unknown_text(in);
  const std::string n = name;
  const uint32_t v = static_cast<uint16_t>(in.simm16);
  switch (in.op) {
    case 0: case 1: case 2: case 3: case 16: case 18: case 53: case 56: case 57:  // nop, setkill, sethalt, sleep,
      return n + " " + u16_imm(in.simm16);                                       // trap, denorm_mode, setprio, perf
    case 4: case 5: case 11: case 17: case 59:  // prefetch distance, clause, wait_event, round_mode, ttracedata_imm
      return n + " " + hex(v);
    case 10: case 31: case 49: case 52: case 58: case 60: case 61:  // no operand
      return n;
    case 48:  // s_endpgm
      return v ? n + " " + std::to_string(v) : n;
    case 7: {  // s_delay_alu: instid0 [3:0], instskip [6:4], instid1 [10:7]
      if (v == 0) return n + " 0";
      static const char* const skips[] = {"SAME", "NEXT", "SKIP_1", "SKIP_2", "SKIP_3", "SKIP_4"};
      std::string s;
      auto add = [&](const std::string& part) { s += (s.empty() ? "" : " | ") + part; };
      const unsigned id0 = v & 0xf, skip = (v >> 4) & 7, id1 = (v >> 7) & 0xf;
      if (id0 && delay_dep(id0)) add(std::string("instid0(") + delay_dep(id0) + ")");
      if (skip && skip < 6) add(std::string("instskip(") + skips[skip] + ")");
      if (id1 && delay_dep(id1)) add(std::string("instid1(") + delay_dep(id1) + ")");
      return n + " " + s;
    }
    case 8: {  // s_waitcnt_depctr: named fields when only known bits are set (LLVM's DepCtr table)
      if (v & ~0xFF9Fu) return n + " " + hex(v);
      struct F { const char* name; int shift, width, def; };
      static const F fields[] = {{"depctr_hold_cnt", 7, 1, 1}, {"depctr_sa_sdst", 0, 1, 1}, {"depctr_va_vdst", 12, 4, 15},
                                 {"depctr_va_sdst", 9, 3, 7},  {"depctr_va_ssrc", 8, 1, 1}, {"depctr_va_vcc", 1, 1, 1},
                                 {"depctr_vm_vsrc", 2, 3, 7}};
      bool all_default = true;
      for (const F& f : fields) all_default &= static_cast<int>((v >> f.shift) & ((1u << f.width) - 1)) == f.def;
      std::string s;
      for (const F& f : fields) {
        const int x = static_cast<int>((v >> f.shift) & ((1u << f.width) - 1));
        if (all_default || x != f.def) s += std::string(s.empty() ? "" : " ") + f.name + "(" + std::to_string(x) + ")";
      }
      return n + " " + s;
    }
    case 9: {  // s_waitcnt: vmcnt [15:10], expcnt [2:0], lgkmcnt [9:4]; fields at their maximum are left out
      const unsigned vm = (v >> 10) & 0x3f, exp = v & 7, lgkm = (v >> 4) & 0x3f;
      const bool all = vm == 0x3f && exp == 7 && lgkm == 0x3f;
      std::string s;
      if (all || vm != 0x3f) s += "vmcnt(" + std::to_string(vm) + ")";
      if (all || exp != 7) s += std::string(s.empty() ? "" : " ") + "expcnt(" + std::to_string(exp) + ")";
      if (all || lgkm != 0x3f) s += std::string(s.empty() ? "" : " ") + "lgkmcnt(" + std::to_string(lgkm) + ")";
      return n + " " + s;
    }
    case 54: case 55: {  // s_sendmsg(halt): message id [7:0], op [9:8]... names LLVM knows on gfx11
      const unsigned id = v & 0xff, op = (v >> 8) & 7, stream = (v >> 11) & 3;
      if (v >> 13) return n + " " + std::to_string(v);
      const char* msg = id == 1 ? "MSG_INTERRUPT" : id == 2 ? "MSG_HS_TESSFACTOR" : id == 3 ? "MSG_DEALLOC_VGPRS"
                      : id == 5 ? "MSG_STALL_WAVE_GEN" : id == 6 ? "MSG_HALT_WAVES" : id == 9 ? "MSG_GS_ALLOC_REQ"
                      : nullptr;
      if (msg && op == 0 && stream == 0) return n + " sendmsg(" + msg + ")";
      return n + " sendmsg(" + std::to_string(id) + ", " + std::to_string(op) + ", " + std::to_string(stream) + ")";
    }
    default:  // branches: the signed word offset printed as LLVM does, an unsigned 16-bit decimal
      return n + " " + std::to_string(v);
  }
}

std::string smem(const Rdna3Inst& in) {
  const Text& t = text_of(smem_text(), in);
  std::string ops = fill(t.operands, [&](char letter, unsigned w) -> std::string {
    switch (letter) {
      case 'd': return operand_text(in.sdst, w, in);
      case 'P': return std::to_string(in.sdst);
      case 'b': return range("s", sgpr_aligned(in.sbase, w), w);
      case 'o':
        if (in.soffset == operand::kNull) return in.offset ? signed_hex(in.offset) : "null";
        return operand_text(in.soffset, 1, in) + (in.offset ? " offset:" + signed_hex(in.offset) : "");
      default: return std::string("{") + letter + "}";
    }
  });
  std::string s = std::string(t.mnemonic) + (ops.empty() ? "" : " " + ops);
  if (in.glc) s += " glc";
  if (in.dlc) s += " dlc";
  return s;
}

// ---- memory ----------------------------------------------------------------------------------------------------

std::string ds(const Rdna3Inst& in) {
  const Text& t = text_of(ds_text(), in);
  std::string ops = fill(t.operands, [&](char letter, unsigned w) -> std::string {
    switch (letter) {
      case 'a': return vgpr(in.addr, w);
      case '0': return vgpr(in.data0, w);
      case '1': return vgpr(in.data1, w);
      case 'd': return vgpr(in.vdst, w);
      default: return std::string("{") + letter + "}";
    }
  });
  std::string s = std::string(t.mnemonic) + (ops.empty() ? "" : " " + ops);
  if (contains(t.mnemonic, "2addr")) {
    if (in.offset0) s += " offset0:" + std::to_string(in.offset0);
    if (in.offset1) s += " offset1:" + std::to_string(in.offset1);
  } else if (in.offset) {
    s += " offset:" + std::to_string(in.offset);
  }
  if (in.gds) s += " gds";
  return s;
}

std::string flat(const Rdna3Inst& in) {
  const bool global = in.format == Rdna3Format::GLOBAL, scratch = in.format == Rdna3Format::SCRATCH;
  const Text* t = nullptr;
  if (in.glc && !scratch) t = (global ? global_rtn_text() : flat_rtn_text()).find(in.op);
  if (!t) t = &text_of(global ? global_text() : scratch ? scratch_text() : flat_text(), in);
  std::string ops = fill(t->operands, [&](char letter, unsigned w) -> std::string {
    switch (letter) {
      case 'a':
        if (scratch && !in.sve) return "off";
        return vgpr(in.addr, global && in.saddr == operand::kNull ? 2 : w);
      case '0': return vgpr(in.data0, w);
      case 'd': return vgpr(in.vdst, w);
      case 'S': return in.saddr == operand::kNull ? "off" : operand_text(in.saddr, w, in);
      default: return std::string("{") + letter + "}";
    }
  });
  std::string s = std::string(t->mnemonic) + (ops.empty() ? "" : " " + ops);
  if (in.offset) s += " offset:" + std::to_string(in.offset);
  if (in.glc) s += " glc";
  if (in.slc) s += " slc";
  if (in.dlc) s += " dlc";
  return s;
}

std::string mubuf(const Rdna3Inst& in) {
  const Text& t = text_of(mubuf_text(), in);
  std::string ops = fill(t.operands, [&](char letter, unsigned w) -> std::string {
    switch (letter) {
      case 'a':
        if (!in.offen && !in.idxen) return "off";
        return vgpr(in.addr, in.offen && in.idxen ? 2 : w);
      case '0': return vgpr(in.data0, w);
      case 'r': return range("s", in.srsrc, w);
      case 'o': return operand_text(in.soffset, 1, in);
      default: return std::string("{") + letter + "}";
    }
  });
  std::string s = std::string(t.mnemonic) + (ops.empty() ? "" : " " + ops);
  if (in.idxen) s += " idxen";
  if (in.offen) s += " offen";
  if (in.offset) s += " offset:" + std::to_string(in.offset);
  if (in.glc) s += " glc";
  if (in.slc) s += " slc";
  if (in.dlc) s += " dlc";
  if (in.tfe) s += " tfe";
  return s;
}

}  // namespace

std::string disassemble_rdna3(const Rdna3Inst& in) {
  switch (in.format) {
    case Rdna3Format::SOP2:
    case Rdna3Format::SOP1:
    case Rdna3Format::SOPC:
    case Rdna3Format::SOPK: return scalar(in);
    case Rdna3Format::SOPP: return sopp(in);
    case Rdna3Format::SMEM: return smem(in);
    case Rdna3Format::VOP1:
    case Rdna3Format::VOP2:
    case Rdna3Format::VOPC:
    case Rdna3Format::VOP3:
    case Rdna3Format::VOP3P: return valu(in);
    case Rdna3Format::VOPD: return vopd(in);
    case Rdna3Format::DS: return ds(in);
    case Rdna3Format::FLAT:
    case Rdna3Format::GLOBAL:
    case Rdna3Format::SCRATCH: return flat(in);
    case Rdna3Format::MUBUF: return mubuf(in);
  }
  return unknown_text(in);
}

}  // namespace doorbell::mockgpu::amd
