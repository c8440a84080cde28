// assemble(): print_listing's text (compiler/x86/x86_print.cpp) back into instructions, encoded by the Encoder.
// Hand-written scanning (no regex, no streams): a listing of a few hundred lines assembles in tens of microseconds.
#include <cstring>
#include <string>
#include <unordered_map>

#include "compiler/x86/x86_encoder.h"

namespace doorbell::x86 {
namespace {

using K = Operand::Kind;

const std::unordered_map<std::string_view, Reg>& register_names() {
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string_view, Reg>();
    static const char* g64[16] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"};
    static const char* g32[16] = {"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi", "r8d", "r9d", "r10d", "r11d", "r12d", "r13d", "r14d", "r15d"};
    static const char* g16[16] = {"ax", "cx", "dx", "bx", "sp", "bp", "si", "di", "r8w", "r9w", "r10w", "r11w", "r12w", "r13w", "r14w", "r15w"};
    static const char* g8[16] = {"al", "cl", "dl", "bl", "spl", "bpl", "sil", "dil", "r8b", "r9b", "r10b", "r11b", "r12b", "r13b", "r14b", "r15b"};
    for (uint32_t i = 0; i < 16; i++) {
      t->emplace(g64[i], gpr(i, 64));
      t->emplace(g32[i], gpr(i, 32));
      t->emplace(g16[i], gpr(i, 16));
      t->emplace(g8[i], gpr(i, 8));
    }
    static std::string vnames[96 + 8];
    for (uint32_t i = 0; i < 32; i++) {
      vnames[i] = "xmm" + std::to_string(i);
      vnames[32 + i] = "ymm" + std::to_string(i);
      vnames[64 + i] = "zmm" + std::to_string(i);
      t->emplace(vnames[i], vec(i, 128));
      t->emplace(vnames[32 + i], vec(i, 256));
      t->emplace(vnames[64 + i], vec(i, 512));
    }
    for (uint32_t i = 0; i < 8; i++) {
      vnames[96 + i] = "k" + std::to_string(i);
      t->emplace(vnames[96 + i], kreg(i));
    }
    return t;
  }();
  return *table;
}

std::string_view trim(std::string_view s) {
  size_t a = 0, b = s.size();
  while (a < b && (s[a] == ' ' || s[a] == '\t' || s[a] == '\r')) a++;
  while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r')) b--;
  return s.substr(a, b - a);
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

struct Line {
  size_t number;
  std::string_view text;
  [[noreturn]] void fail(const std::string& what) const {
    throw X86EncodeError("assemble: line " + std::to_string(number) + " '" + std::string(text) + "': " + what);
  }
};

// Decimal or 0x-hex, optionally negative; the whole token.
bool parse_int(std::string_view s, int64_t& out) {
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  uint64_t v = 0;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s.remove_prefix(2);
    if (s.size() > 16) return false;
    for (char ch : s) {
      int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
      if (d < 0) return false;
      v = v << 4 | static_cast<uint64_t>(d);
    }
  } else {
    for (char ch : s) {
      if (ch < '0' || ch > '9') return false;
      const uint64_t nv = v * 10 + static_cast<uint64_t>(ch - '0');
      if (nv / 10 != v) return false;
      v = nv;
    }
  }
  out = neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return true;
}

bool parse_label(std::string_view s, int32_t& out) {
  if (!starts_with(s, ".L")) return false;
  int64_t v;
  if (!parse_int(s.substr(2), v) || v < 0 || v > INT32_MAX || s.size() < 3 || s[2] == '-' || s[2] == '+') return false;
  out = static_cast<int32_t>(v);
  return true;
}

// "[rdi + 4*rax - 8]", "[rip + .L5 + 16]", "[4*rax + 32]"
Mem parse_mem(std::string_view s, const Line& line) {
  Mem m;
  m.has_base = false;
  if (s.size() < 2 || s.front() != '[' || s.back() != ']') line.fail("memory operand '" + std::string(s) + "'; expected [base + scale*index + disp]");
  s = s.substr(1, s.size() - 2);
  const auto& regs = register_names();
  bool negative = false;
  size_t i = 0;
  int64_t disp = 0;
  bool expect_term = true;
  while (i < s.size()) {
    if (s[i] == ' ') {
      i++;
      continue;
    }
    if (s[i] == '+' || s[i] == '-') {
      if (expect_term) line.fail("memory operand '[" + std::string(s) + "]' has two signs in a row; expected term +/- term");
      negative = s[i] == '-';
      expect_term = true;
      i++;
      continue;
    }
    if (!expect_term) line.fail("memory operand '[" + std::string(s) + "]': terms without + or - between them");
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '+' && s[j] != '-') j++;
    const std::string_view term = s.substr(i, j - i);
    i = j;
    expect_term = false;
    int64_t v;
    int32_t label;
    const size_t star = term.find('*');
    if (star != std::string_view::npos) {
      if (negative) line.fail("a subtracted index in '[" + std::string(s) + "]'; expected + scale*index");
      int64_t scale;
      auto it = regs.find(term.substr(star + 1));
      if (!parse_int(term.substr(0, star), scale) || it == regs.end() || it->second.cls != RegClass::GPR || it->second.bits != 64)
        line.fail("index term '" + std::string(term) + "'; expected scale*reg64 with scale 1, 2, 4 or 8");
      if (scale != 1 && scale != 2 && scale != 4 && scale != 8) line.fail("scale " + std::to_string(scale) + "; expected 1, 2, 4 or 8");
      if (m.has_index) line.fail("two index registers in '[" + std::string(s) + "]'");
      m.has_index = true;
      m.index = it->second;
      m.scale = static_cast<uint8_t>(scale);
    } else if (parse_int(term, v)) {
      disp += negative ? -v : v;
    } else if (term == "rip") {
      if (negative || m.has_base || m.has_index || m.kind == MemBase::RIP) line.fail("rip in '[" + std::string(s) + "]'; expected [rip + .L<id> + disp]");
      m.kind = MemBase::RIP;
    } else if (parse_label(term, label)) {
      if (negative || m.kind != MemBase::RIP || m.label >= 0) line.fail("label " + std::string(term) + " in '[" + std::string(s) + "]'; expected [rip + .L<id>]");
      m.label = label;
    } else {
      auto it = regs.find(term);
      if (it == regs.end() || it->second.cls != RegClass::GPR || it->second.bits != 64)
        line.fail("'" + std::string(term) + "' in a memory operand; expected a 64-bit register, scale*register, number or rip + .L<id>");
      if (negative) line.fail("a subtracted register in '[" + std::string(s) + "]'");
      if (m.kind == MemBase::RIP) line.fail("a register with rip in '[" + std::string(s) + "]'");
      if (!m.has_base) {
        m.has_base = true;
        m.base = it->second;
      } else if (!m.has_index) {
        m.has_index = true;
        m.index = it->second;
        m.scale = 1;
      } else {
        line.fail("three registers in '[" + std::string(s) + "]'");
      }
    }
  }
  if (expect_term && !s.empty()) line.fail("memory operand '[" + std::string(s) + "]' ends with a sign");
  if (m.kind == MemBase::RIP && m.label < 0) line.fail("[rip + ...] without a label; expected [rip + .L<id>]");
  if (disp < INT32_MIN || disp > INT32_MAX) line.fail("displacement " + std::to_string(disp) + " does not fit 32 bits");
  m.disp = static_cast<int32_t>(disp);
  return m;
}

constexpr struct {
  std::string_view word;
  uint16_t bits;
} kPtr[] = {{"byte", 8}, {"word", 16}, {"dword", 32}, {"qword", 64}, {"xmmword", 128}, {"ymmword", 256}, {"zmmword", 512}};

Operand parse_operand(std::string_view s, Encoder& enc, const Line& line, int k) {
  if (s.empty()) line.fail("operand " + std::to_string(k + 1) + " is empty");
  const char c0 = s[0];
  if (c0 == '[') return op_mem(parse_mem(s, line));
  for (const auto& p : kPtr) {
    if (starts_with(s, p.word) && s.size() > p.word.size() && s[p.word.size()] == ' ') {
      std::string_view rest = trim(s.substr(p.word.size()));
      if (!starts_with(rest, "ptr")) line.fail("operand '" + std::string(s) + "'; expected " + std::string(p.word) + " ptr [...]");
      Mem m = parse_mem(trim(rest.substr(3)), line);
      m.bits = p.bits;
      return op_mem(m);
    }
  }
  int64_t v;
  if ((c0 >= '0' && c0 <= '9') || c0 == '-') {
    if (!parse_int(s, v)) line.fail("operand '" + std::string(s) + "' is not a number; expected a decimal or 0x immediate");
    return op_imm(v);
  }
  int32_t label;
  if (parse_label(s, label)) return op_label(label);
  const auto& regs = register_names();
  auto it = regs.find(s);
  if (it != regs.end()) return op_reg(it->second);
  std::string_view name = s;
  if (name.size() > 4 && name.substr(name.size() - 4) == "@PLT") name.remove_suffix(4);
  for (char ch : name)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '$'))
      line.fail("operand '" + std::string(s) + "'; expected a register, immediate, memory operand, label or symbol");
  return op_symbol(enc.extern_symbol(name));
}

void parse_instruction(std::string_view text, Encoder& enc, const Line& line) {
  size_t sp = 0;
  while (sp < text.size() && text[sp] != ' ' && text[sp] != '\t') sp++;
  Inst inst;
  if (!mnemonic_from_name(text.substr(0, sp), inst.op) || inst.op == Mn::LABEL || inst.op == Mn::CALL_EXTERN)
    line.fail("unknown mnemonic '" + std::string(text.substr(0, sp)) + "'; expected an instruction of compiler/x86/x86_inst.h");
  std::string_view rest = trim(text.substr(sp));
  int k = 0;
  while (!rest.empty()) {
    if (k == 4) line.fail("more than 4 operands");
    const size_t comma = rest.find(',');
    std::string_view tok = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : trim(rest.substr(comma + 1));
    if (comma != std::string_view::npos && rest.empty()) line.fail("trailing comma; expected an operand after it");
    // "zmm1 {k1} {z}": decorations of the destination.
    const size_t brace = tok.find('{');
    if (brace != std::string_view::npos) {
      if (k != 0) line.fail("{...} on operand " + std::to_string(k + 1) + "; expected a write mask only on the destination");
      std::string_view deco = tok.substr(brace);
      tok = trim(tok.substr(0, brace));
      while (!deco.empty()) {
        const size_t close = deco.find('}');
        if (deco[0] != '{' || close == std::string_view::npos) line.fail("decoration '" + std::string(deco) + "'; expected {k1}..{k7} or {z}");
        const std::string_view d = deco.substr(1, close - 1);
        if (d == "z") {
          inst.zeroing = true;
        } else {
          auto it = register_names().find(d);
          if (it == register_names().end() || it->second.cls != RegClass::MASK) line.fail("decoration {" + std::string(d) + "}; expected {k1}..{k7} or {z}");
          inst.masked = true;
          inst.mask = it->second;
        }
        deco = trim(deco.substr(close + 1));
      }
    }
    inst.o[k] = parse_operand(tok, enc, line, k);
    k++;
  }
  inst.n = static_cast<uint8_t>(k);
  try {
    enc.emit(inst);
  } catch (const X86EncodeError& e) {
    line.fail(e.what());
  }
}

void parse_data(std::string_view args, int unit, Encoder& enc, const Line& line) {
  std::string bytes;
  while (!args.empty()) {
    const size_t comma = args.find(',');
    const std::string_view tok = trim(args.substr(0, comma));
    args = comma == std::string_view::npos ? std::string_view() : trim(args.substr(comma + 1));
    int64_t v;
    if (!parse_int(tok, v)) line.fail("value '" + std::string(tok) + "'; expected a number");
    if (unit < 8) {
      const int64_t lo = -(int64_t(1) << (unit * 8 - 1)), hi = (int64_t(1) << (unit * 8)) - 1;
      if (v < lo || v > hi) line.fail("value " + std::string(tok) + " does not fit " + std::to_string(unit) + " bytes");
    }
    for (int b = 0; b < unit; b++) bytes.push_back(static_cast<char>(static_cast<uint64_t>(v) >> (8 * b)));
  }
  if (bytes.empty()) line.fail("no values; expected at least one");
  enc.data(1, bytes);
}

}  // namespace

AssembledCode assemble(std::string_view listing) {
  Encoder enc;
  std::string name;
  size_t number = 0;
  size_t pos = 0;
  while (pos < listing.size()) {
    size_t end = listing.find('\n', pos);
    if (end == std::string_view::npos) end = listing.size();
    const std::string_view raw = listing.substr(pos, end - pos);
    pos = end + 1;
    number++;
    const std::string_view text = trim(raw);
    const Line line{number, text};
    if (text.empty() || text[0] == '#') continue;
    if (text.back() == ':') {
      const std::string_view label = text.substr(0, text.size() - 1);
      int32_t id;
      if (parse_label(label, id)) {
        try {
          enc.bind(id);
        } catch (const X86EncodeError& e) {
          line.fail(e.what());
        }
      } else if (name.empty() && enc.size() == 0 && !label.empty() && label.find(' ') == std::string_view::npos) {
        name = label;
      } else {
        line.fail("label '" + std::string(label) + "'; expected .L<id> (the function's own symbol only once, before its code)");
      }
      continue;
    }
    if (text[0] == '.') {
      size_t sp = 0;
      while (sp < text.size() && text[sp] != ' ' && text[sp] != '\t') sp++;
      const std::string_view dir = text.substr(0, sp), args = trim(text.substr(sp));
      if (dir == ".intel_syntax" || dir == ".text") continue;
      if (dir == ".globl") {
        if (!name.empty() && name != args) line.fail("second global symbol; expected one function per listing");
        continue;
      }
      if (dir == ".p2align") {
        const size_t comma = args.find(',');
        int64_t log2;
        if (!parse_int(trim(args.substr(0, comma)), log2) || log2 < 0 || log2 > 12) line.fail("alignment; expected .p2align N with N 0-12");
        if (comma != std::string_view::npos && trim(args.substr(comma + 1)) != "0xcc")
          line.fail("fill '" + std::string(trim(args.substr(comma + 1))) + "'; expected 0xcc (the fill the encoder pads with)");
        enc.data(1u << log2, {});
        continue;
      }
      if (dir == ".byte") { parse_data(args, 1, enc, line); continue; }
      if (dir == ".long") { parse_data(args, 4, enc, line); continue; }
      if (dir == ".quad") { parse_data(args, 8, enc, line); continue; }
      line.fail("unknown directive '" + std::string(dir) + "'; expected .intel_syntax, .text, .globl, .p2align, .byte, .long or .quad");
    }
    parse_instruction(text, enc, line);
  }
  if (name.empty()) throw X86EncodeError("assemble: no function symbol; expected a 'name:' line before the code");
  return enc.finish(name);
}

}  // namespace doorbell::x86
