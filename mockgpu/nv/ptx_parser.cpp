#include "mockgpu/nv/ptx_parser.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

#include "mockgpu/nv/ptx_decode.h"

namespace doorbell::mockgpu::nv {

const PtxEntry& PtxProgram::entry(const std::string& name) const {
  std::string names;
  for (const PtxEntry& e : entries) {
    if (e.name == name) return e;
    names += (names.empty() ? "" : ", ") + e.name;
  }
  throw std::invalid_argument("ptx: no entry named '" + name + "' (the module has: " + (names.empty() ? "none" : names) + ")");
}

namespace {

// ---- lexer -------------------------------------------------------------------------------------------------

enum class TokKind : uint8_t { Ident, Number, Punct, End };

struct Tok {
  TokKind kind = TokKind::End;
  std::string text;
  uint32_t line = 0;
};

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%' || c == '.'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.'; }

std::vector<Tok> lex(std::string_view s) {
  std::vector<Tok> out;
  uint32_t line = 1;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == '\n') { line++; i++; continue; }
    if (std::isspace(static_cast<unsigned char>(c))) { i++; continue; }
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      while (i < s.size() && s[i] != '\n') i++;
      continue;
    }
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      size_t end = s.find("*/", i + 2);
      if (end == std::string_view::npos) fail_at(line, "unterminated /* comment");
      for (size_t j = i; j < end; j++) line += s[j] == '\n';
      i = end + 2;
      continue;
    }
    Tok t;
    t.line = line;
    size_t start = i;
    if (ident_start(c)) {
      t.kind = TokKind::Ident;
      i++;
      while (i < s.size() && ident_char(s[i])) i++;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      t.kind = TokKind::Number;
      bool hex = c == '0' && i + 1 < s.size() && std::strchr("xXfFdD", s[i + 1]) != nullptr;
      i++;
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '.' ||
                              (!hex && (s[i] == '+' || s[i] == '-') && (s[i - 1] == 'e' || s[i - 1] == 'E'))))
        i++;
    } else if (std::strchr(",;:[](){}<>@!+-|=", c) != nullptr) {
      t.kind = TokKind::Punct;
      i++;
    } else {
      fail_at(line, std::string("unexpected character '") + c + "'");
    }
    t.text = std::string(s.substr(start, i - start));
    out.push_back(std::move(t));
  }
  out.push_back(Tok{TokKind::End, "", line});
  return out;
}

struct RegRange {
  uint32_t first_slot = 0, count = 0;
  PtxType type;
};

class EntryParser : public EntrySlots {
 public:
  EntryParser(const std::vector<Tok>& toks, size_t& pos, PtxEntry& e) : t_(toks), pos_(pos), e_(e) {}

  // A module-scope shared array: e_ collects them for the entries that follow.
  void parse_module_shared() { parse_shared(true); }

  void parse() {
    e_.name = expect_ident("an entry name");
    if (peek("(")) {
      next();
      uint32_t offset = 0;
      while (!peek(")")) {
        if (peek(",")) { next(); continue; }
        parse_param(offset);
      }
      next();
      e_.param_bytes = offset;
    }
    // performance directives up to the body
    while (!peek("{")) {
      const Tok& d = next();
      if (d.kind == TokKind::End) fail_at(d.line, "expected '{' opening the body of entry " + e_.name);
      if (d.text == ".maxntid" || d.text == ".reqntid") {
        for (int i = 0; i < 3; i++) {
          if (i && !peek(",")) break;
          if (i) next();
          e_.maxntid[i] = static_cast<uint32_t>(number_value(next()));
        }
        for (uint32_t& v : e_.maxntid)
          if (v == 0) v = 1;
      }
    }
    next();
    parse_body();
    finish();
  }

 private:
  const Tok& next() {
    const Tok& t = t_[pos_];
    if (t.kind != TokKind::End) pos_++;
    return t;
  }
  const Tok& cur() const { return t_[pos_]; }
  bool peek(std::string_view s) const { return t_[pos_].text == s && t_[pos_].kind != TokKind::Number; }
  void expect(std::string_view s) {
    const Tok& t = next();
    if (t.text != s) fail_at(t.line, "expected '" + std::string(s) + "', got '" + t.text + "'");
  }
  std::string expect_ident(const char* what) {
    const Tok& t = next();
    if (t.kind != TokKind::Ident) fail_at(t.line, std::string("expected ") + what + ", got '" + t.text + "'");
    return t.text;
  }
  static int64_t number_value(const Tok& t) {
    if (t.kind != TokKind::Number) fail_at(t.line, "expected a number, got '" + t.text + "'");
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(t.text.c_str(), &end, 0);
    if (*end == 'U' || *end == 'u') end++;
    if (errno || *end != 0) fail_at(t.line, "'" + t.text + "' is not an integer literal");
    return static_cast<int64_t>(v);
  }

  // `[.align N]`: N, or 0 without it.
  uint32_t optional_align() {
    if (!peek(".align")) return 0;
    next();
    return static_cast<uint32_t>(number_value(next()));
  }

  // `.param [.align N] .type name[N]?`
  void parse_param(uint32_t& offset) {
    const Tok& p = next();
    if (p.text != ".param") fail_at(p.line, "expected a .param declaration, got '" + p.text + "'");
    uint32_t align = optional_align();
    const Tok& ty = next();
    PtxType type = ty.text.size() > 1 ? type_of(std::string_view(ty.text).substr(1)) : PtxType{};
    if (!type.valid() || type.cls == 'p') fail_at(ty.line, "expected a parameter type such as .u64, got '" + ty.text + "'");
    std::string name = expect_ident("a parameter name");
    uint32_t size = static_cast<uint32_t>(type.bits / 8), count = 1;
    if (peek("[")) {
      next();
      int64_t n = number_value(next());
      if (n < 1 || n > 4096) fail_at(ty.line, "parameter " + name + "[" + std::to_string(n) + "]: expected 1..4096 elements");
      count = static_cast<uint32_t>(n);
      expect("]");
    }
    if (align == 0) align = size;
    if (align == 0 || (align & (align - 1)) || align > 256) fail_at(ty.line, "parameter " + name + ": alignment must be a power of two up to 256");
    offset = (offset + align - 1) / align * align;
    e_.params.push_back({name, offset, size * count});
    offset += size * count;
  }

  void parse_body() {
    int depth = 1;
    while (true) {
      const Tok& t = cur();
      if (t.kind == TokKind::End) fail_at(t.line, "entry " + e_.name + " has no closing '}'");
      if (peek("}")) {
        next();
        if (--depth == 0) return;
        continue;
      }
      if (peek("{")) { next(); depth++; continue; }
      if (peek(";")) { next(); continue; }
      if (t.kind == TokKind::Ident && t_[pos_ + 1].text == ":" && t.text[0] != '.' && t.text[0] != '%') {
        if (!labels_.emplace(t.text, static_cast<uint32_t>(instrs_.size())).second) fail_at(t.line, "label " + t.text + " is defined twice");
        next();
        next();
        continue;
      }
      if (t.text == ".reg") { parse_reg(); continue; }
      if (t.text == ".shared" || t.text == ".extern") { parse_shared(); continue; }
      if (t.text == ".local") { parse_local(); continue; }
      if (t.text == ".pragma" || t.text == ".loc" || t.text == ".file") { skip_statement(); continue; }
      if (t.kind == TokKind::Ident && t.text[0] == '.') fail_at(t.line, "directive " + t.text + " is not supported inside an entry");
      parse_instruction();
    }
  }

  void skip_statement() {
    while (!peek(";") && cur().kind != TokKind::End) next();
    next();
  }

  // `.reg .type %name<N>;` or `.reg .type %a, %b;`
  void parse_reg() {
    uint32_t line = next().line;
    const Tok& ty = next();
    PtxType type = ty.text.size() > 1 ? type_of(std::string_view(ty.text).substr(1)) : PtxType{};
    if (!type.valid()) fail_at(line, "expected a register type such as .b32, got '" + ty.text + "'");
    while (true) {
      std::string name = expect_ident("a register name");
      if (name[0] != '%') fail_at(line, "register name '" + name + "' must start with %");
      uint32_t count = 0;
      if (peek("<")) {
        next();
        int64_t n = number_value(next());
        if (n < 1 || n > kMaxSlots) fail_at(line, "registers " + name + "<" + std::to_string(n) + ">: expected 1.." + std::to_string(kMaxSlots));
        count = static_cast<uint32_t>(n);
        expect(">");
      }
      RegRange r{next_slot_, count ? count : 1, type};
      if (next_slot_ + r.count > kMaxSlots) fail_at(line, "more than " + std::to_string(kMaxSlots) + " registers in entry " + e_.name);
      if (count) {
        if (!ranges_.emplace(name, r).second) fail_at(line, "registers " + name + "<N> are declared twice");
      } else if (!singles_.emplace(name, r).second) {
        fail_at(line, "register " + name + " is declared twice");
      }
      next_slot_ += r.count;
      if (!peek(",")) break;
      next();
    }
    expect(";");
  }

  // `[.extern] .shared [.align A] .b8 name[N];` (an .extern array with [] is the launch's dynamic shared memory;
  // PTX declares it at module scope only)
  void parse_shared(bool module_scope = false) {
    uint32_t line = cur().line;
    bool ext = false;
    if (peek(".extern")) {
      if (!module_scope) fail_at(line, ".extern .shared (dynamic shared memory) must be declared at module scope");
      next();
      ext = true;
    }
    if (!peek(".shared")) fail_at(line, "expected .shared after .extern");
    next();
    uint32_t align = optional_align();
    const Tok& ty = next();
    PtxType type = ty.text.size() > 1 ? type_of(std::string_view(ty.text).substr(1)) : PtxType{};
    if (!type.valid() || type.cls == 'p') fail_at(line, "expected a shared array element type such as .b8, got '" + ty.text + "'");
    uint32_t elem = static_cast<uint32_t>(type.bits / 8);
    if (align == 0) align = elem;
    if ((align & (align - 1)) || align > 4096) fail_at(line, "shared alignment must be a power of two up to 4096");
    std::string name = expect_ident("a shared array name");
    PtxSharedArray a{name, align, elem, false, 0};
    if (peek("[")) {
      next();
      if (peek("]")) {
        if (!ext) fail_at(line, "shared array " + name + "[] without a size must be .extern (dynamic shared memory)");
        a.dynamic = true;
        a.size = 0;
      } else {
        int64_t n = number_value(next());
        if (n < 1 || n > kMaxSharedBytes / elem) fail_at(line, "shared array " + name + " is larger than a block's shared memory");
        a.size = elem * static_cast<uint32_t>(n);
        if (ext) fail_at(line, ".extern shared array " + name + " must be declared with [] (dynamic shared memory)");
      }
      expect("]");
    }
    expect(";");
    for (const PtxSharedArray& s : e_.shared)
      if (s.name == name) fail_at(line, "shared array " + name + " is declared twice");
    e_.shared.push_back(a);
  }

  // `.local [.align A] .b8 name[N];` inside an entry: per-thread memory.
  void parse_local() {
    uint32_t line = next().line;
    uint32_t align = optional_align();
    const Tok& ty = next();
    PtxType type = ty.text.size() > 1 ? type_of(std::string_view(ty.text).substr(1)) : PtxType{};
    if (!type.valid() || type.cls == 'p') fail_at(line, "expected a local array element type such as .b8, got '" + ty.text + "'");
    uint32_t elem = static_cast<uint32_t>(type.bits / 8);
    if (align == 0) align = elem;
    if ((align & (align - 1)) || align > 4096) fail_at(line, "local alignment must be a power of two up to 4096");
    std::string name = expect_ident("a local array name");
    PtxLocalArray a{name, align, elem, 0};
    if (peek("[")) {
      next();
      int64_t n = number_value(next());
      if (n < 1 || n > kMaxLocalBytes / elem) fail_at(line, "local array " + name + " is larger than " + std::to_string(kMaxLocalBytes) + " bytes");
      a.size = elem * static_cast<uint32_t>(n);
      expect("]");
    }
    expect(";");
    for (const PtxLocalArray& l : e_.local)
      if (l.name == name) fail_at(line, "local array " + name + " is declared twice");
    e_.local.push_back(a);
  }

  RawOperand parse_operand() {
    RawOperand o;
    const Tok& t = cur();
    if (peek("[")) {
      next();
      o.kind = RawOperand::Addr;
      if (cur().kind == TokKind::Ident) o.base = next().text;
      else o.offset = number_value(next());
      if (peek("+") || peek("-")) {
        bool neg = next().text == "-";
        int64_t v = number_value(next());
        o.offset += neg ? -v : v;
      }
      expect("]");
      return o;
    }
    if (peek("{")) {  // a vector operand of a .v2/.v4 load or store
      next();
      o.kind = RawOperand::Vec;
      while (!peek("}")) {
        if (cur().kind == TokKind::End || peek(";")) fail_at(t.line, "unterminated vector operand");
        o.items.push_back(parse_operand());
        if (o.items.back().kind == RawOperand::Vec || o.items.back().kind == RawOperand::Addr) fail_at(t.line, "a vector operand holds registers or constants");
        if (peek(",")) next();
      }
      next();
      return o;
    }
    if (peek("-")) {
      next();
      o.negative = true;
    }
    const Tok& v = next();
    if (v.kind == TokKind::Number) {
      o.kind = RawOperand::Imm;
      o.text = v.text;
      return o;
    }
    if (v.kind != TokKind::Ident || o.negative) fail_at(t.line, "unexpected operand '" + v.text + "'");
    o.kind = v.text[0] == '%' ? RawOperand::Reg : RawOperand::Name;
    o.text = v.text;
    return o;
  }

  void parse_instruction() {
    ParsedInstr p;
    p.line = cur().line;
    size_t first = pos_;
    if (peek("@")) {
      next();
      if (peek("!")) {
        next();
        p.guard_negated = true;
      }
      p.guard = expect_ident("a guard predicate");
    }
    p.opcode = expect_ident("an instruction");
    if (p.opcode[0] == '.' || p.opcode[0] == '%') fail_at(p.line, "expected an instruction, got '" + p.opcode + "'");
    while (!peek(";")) {
      if (cur().kind == TokKind::End) fail_at(p.line, "instruction " + p.opcode + " is not terminated by ';'");
      p.ops.push_back(parse_operand());
      if (peek(",")) next();
      else if (peek("|")) fail_at(p.line, "setp with two destination predicates (p|q) is not supported");
      else if (!peek(";")) fail_at(cur().line, "unexpected '" + cur().text + "' in the operands of " + p.opcode);
    }
    next();
    for (size_t i = first; i < pos_; i++) {
      const Tok& k = t_[i];
      if (!p.text.empty() && k.text != "," && k.text != "]" && k.text != ";" && p.text.back() != '[' && p.text.back() != '@' && p.text.back() != '!') p.text += ' ';
      if (k.text != ";") p.text += k.text;
    }
    instrs_.push_back(std::move(p));
  }

  // EntrySlots: what decoding asks of the entry being parsed.
  uint32_t register_slot(const std::string& name, uint32_t line, const char* what) override {
    return reg_slot(name, line, what);
  }
  uint32_t constant_slot(uint64_t bits) override { return const_slot(bits); }
  uint32_t shared_address_slot(const std::string& array) override { return shared_slot(array); }
  uint32_t local_address_slot(const std::string& array) override {
    auto [it, fresh] = local_slots_.emplace(array, 0);
    if (fresh) {
      it->second = next_const_++;
      const_values_.push_back(0);  // the array's offset, known after layout (finish)
    }
    return it->second | kConstFlag;
  }
  PtxEntry& entry() override { return e_; }
  void branch_to(const std::string& label) override { branch_targets_.emplace_back(instrs_done_, label); }

  uint32_t reg_slot(const std::string& name, uint32_t line, const char* what) const {
    static const std::unordered_map<std::string, uint32_t> kSpecial = {
        {"%tid.x", kSlotTid},         {"%tid.y", kSlotTid + 1},       {"%tid.z", kSlotTid + 2},
        {"%ntid.x", kSlotNtid},       {"%ntid.y", kSlotNtid + 1},     {"%ntid.z", kSlotNtid + 2},
        {"%ctaid.x", kSlotCtaid},     {"%ctaid.y", kSlotCtaid + 1},   {"%ctaid.z", kSlotCtaid + 2},
        {"%nctaid.x", kSlotNctaid},   {"%nctaid.y", kSlotNctaid + 1}, {"%nctaid.z", kSlotNctaid + 2},
        {"%laneid", kSlotLaneid},     {"%warpid", kSlotWarpid}};
    if (auto it = kSpecial.find(name); it != kSpecial.end()) {
      if (std::string_view(what) == "destination") fail_at(line, "special register " + name + " cannot be written");
      return it->second;
    }
    if (const RegRange* r = singles_.count(name) ? &singles_.at(name) : nullptr) return r->first_slot;
    size_t d = name.size();
    while (d > 0 && std::isdigit(static_cast<unsigned char>(name[d - 1]))) d--;
    auto it = d < name.size() ? ranges_.find(name.substr(0, d)) : ranges_.end();
    if (it == ranges_.end()) fail_at(line, std::string(what) + " register " + name + " is not declared");
    uint64_t idx = std::strtoull(name.c_str() + d, nullptr, 10);
    if (idx >= it->second.count)
      fail_at(line, "register " + name + " is outside its declaration " + it->first + "<" + std::to_string(it->second.count) + ">");
    return it->second.first_slot + static_cast<uint32_t>(idx);
  }

  uint32_t const_slot(uint64_t bits) {
    auto [it, fresh] = consts_.emplace(bits, 0);
    if (fresh) {
      it->second = next_const_++;
      const_values_.push_back(bits);
    }
    return it->second | kConstFlag;
  }

  // Shared array addresses are known only after layout: a placeholder constant, patched in finish().
  uint32_t shared_slot(const std::string& name) {
    auto [it, fresh] = shared_slots_.emplace(name, 0);
    if (fresh) {
      it->second = next_const_++;
      const_values_.push_back(0);
    }
    return it->second | kConstFlag;
  }

  // Decodes every instruction, resolves labels and lays out shared memory and the slot template.
  void finish() {
    e_.code.reserve(instrs_.size() + 1);
    for (const ParsedInstr& p : instrs_) {
      instrs_done_ = static_cast<uint32_t>(e_.code.size());
      e_.code.push_back(decode_instruction(p, *this));
      e_.line.push_back(p.line);
      e_.text.push_back(p.text);
    }
    // falling off the end returns
    e_.code.push_back(PtxInstr{});
    e_.line.push_back(instrs_.empty() ? 0 : instrs_.back().line);
    e_.text.push_back("ret (end of " + e_.name + ")");
    for (const auto& [at, label] : branch_targets_) {
      auto it = labels_.find(label);
      if (it == labels_.end()) fail_at(e_.line[at], "branch to undefined label " + label);
      e_.code[at].imm = it->second;
    }
    uint32_t offset = 0, dyn_align = 16;
    for (PtxSharedArray& a : e_.shared) {
      if (a.dynamic) {
        dyn_align = std::max(dyn_align, a.align);
        continue;
      }
      offset = (offset + a.align - 1) / a.align * a.align;
      a.offset = offset;
      offset += a.size;
    }
    e_.static_shared_bytes = offset;
    uint32_t dyn = (offset + dyn_align - 1) / dyn_align * dyn_align;
    e_.dynamic_shared_offset = dyn;
    for (PtxSharedArray& a : e_.shared)
      if (a.dynamic) a.offset = dyn;
    for (const auto& [name, slot] : shared_slots_)
      for (const PtxSharedArray& a : e_.shared)
        if (a.name == name) const_values_[slot] = a.offset;
    uint32_t local = 0;
    for (PtxLocalArray& a : e_.local) {
      local = (local + a.align - 1) / a.align * a.align;
      a.offset = local;
      local += a.size;
    }
    e_.local_bytes = local;
    for (const auto& [name, slot] : local_slots_)
      for (const PtxLocalArray& a : e_.local)
        if (a.name == name) const_values_[slot] = a.offset;
    // constant slots follow the registers: rewrite the flagged indices
    uint32_t base = next_slot_;
    for (PtxInstr& in : e_.code)
      for (uint32_t* s : {&in.d, &in.a, &in.b, &in.c, &in.x, &in.guard})
        if (*s & kConstFlag) *s = base + (*s & ~kConstFlag);
    e_.slot_template.assign(base + const_values_.size(), 0);
    e_.slot_template[kSlotTrue] = 1;
    for (size_t i = 0; i < const_values_.size(); i++) e_.slot_template[base + i] = const_values_[i];
  }

  static constexpr uint32_t kConstFlag = 0x80000000u;
  // Bounds that keep a bad module from asking for unbounded memory: a thread's slots are 8 bytes each.
  static constexpr uint32_t kMaxSlots = 1u << 15;
  static constexpr int64_t kMaxSharedBytes = 227 * 1024;
  static constexpr int64_t kMaxLocalBytes = 512 * 1024;  // CUDA's per-thread local memory limit

  const std::vector<Tok>& t_;
  size_t& pos_;
  PtxEntry& e_;
  uint32_t next_slot_ = kFirstRegSlot, next_const_ = 0, instrs_done_ = 0;
  std::unordered_map<std::string, RegRange> ranges_, singles_;
  std::unordered_map<std::string, uint32_t> labels_, shared_slots_, local_slots_;
  std::unordered_map<uint64_t, uint32_t> consts_;
  std::vector<uint64_t> const_values_;
  std::vector<ParsedInstr> instrs_;
  std::vector<std::pair<uint32_t, std::string>> branch_targets_;
};

}  // namespace

PtxProgram parse_ptx(std::string_view text) {
  std::vector<Tok> toks = lex(text);
  PtxProgram prog;
  PtxEntry module_shared;  // holds the module-scope .shared arrays
  size_t pos = 0;
  auto next = [&]() -> const Tok& { return toks[pos].kind == TokKind::End ? toks[pos] : toks[pos++]; };
  auto value = [&](const Tok& directive) -> std::string {
    const Tok& v = next();
    if (v.kind == TokKind::End || v.kind == TokKind::Punct) fail_at(directive.line, directive.text + " needs a value");
    return v.text;
  };
  while (toks[pos].kind != TokKind::End) {
    const Tok& t = next();
    if (t.text == ".version") {
      prog.version = value(t);
    } else if (t.text == ".target") {
      prog.target = value(t);
      while (toks[pos].text == ",") {
        next();
        value(t);
      }
    } else if (t.text == ".address_size") {
      if (value(t) != "64") fail_at(t.line, "only .address_size 64 is supported");
    } else if (t.text == ".visible" || t.text == ".weak") {
      continue;
    } else if (t.text == ".entry") {
      prog.entries.emplace_back();
      prog.entries.back().shared = module_shared.shared;  // module-scope arrays exist in every block
      EntryParser(toks, pos, prog.entries.back()).parse();
    } else if (t.text == ".shared" || t.text == ".extern") {
      pos--;
      EntryParser(toks, pos, module_shared).parse_module_shared();
    } else if (t.text == ".func") {
      fail_at(t.line, "device functions (.func) are not supported");
    } else if (t.text == ".global" || t.text == ".const") {
      fail_at(t.line, "module-scope variables (" + t.text + ") are not supported");
    } else if (t.text == ".pragma" || t.text == ".file" || t.text == ".section") {
      while (toks[pos].kind != TokKind::End && toks[pos].text != ";") next();
      next();
    } else if (t.text != ";") {
      fail_at(t.line, "unexpected '" + t.text + "' at module scope");
    }
  }
  return prog;
}

}  // namespace doorbell::mockgpu::nv
