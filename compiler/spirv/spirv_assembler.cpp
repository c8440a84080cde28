// assemble(): SPIR-V assembly text (the subset of spirv-as syntax that Module::text() prints) into words, driven by
// the grammar's operand tokens (spirv_grammar.h): which operands an opcode takes decides how each token reads, so
// OpDecorate's "Aligned" is looked up as a Decoration and OpLoad's as a MemoryAccess. firmware-notes/spirv-binary.md
// §4 (the syntax) and §3 (literal encoding).
#include <charconv>
#include <limits>
#include <map>

#include "compiler/spirv/spirv_kernel_abi.h"
#include "compiler/spirv/spirv_literal.h"
#include "compiler/spirv/spirv_module.h"

namespace doorbell::spirv {
namespace {

struct Token {
  std::string text;  // a string token keeps its quotes off; `quoted` says it was one
  bool quoted = false;
  size_t line = 0;
};

struct ScalarType {
  bool is_float = false;
  uint32_t width = 0;
  bool is_signed = false;
};

class Assembler {
 public:
  explicit Assembler(std::string_view text) : text_(text) { tokenize(); }

  std::vector<uint32_t> run() {
    std::vector<uint32_t> body;
    while (pos_ < tokens_.size()) {
      const auto inst = instruction();
      body.insert(body.end(), inst.begin(), inst.end());
    }
    std::vector<uint32_t> out{0x07230203, kSpirvVersionWord, 0, max_id_ + 1, 0};
    out.insert(out.end(), body.begin(), body.end());
    return out;
  }

 private:
  std::string_view text_;
  std::vector<Token> tokens_;
  std::vector<size_t> line_starts_{0};
  size_t pos_ = 0;
  Id max_id_ = 0;
  std::map<Id, ScalarType> scalar_types_;
  std::map<Id, std::string> imports_;
  std::map<Id, bool> defined_;
  std::map<Id, Id> value_types_;  // result id -> its result type id

  std::string line_text(size_t line) const {
    if (line == 0 || line > line_starts_.size()) return "";
    const size_t begin = line_starts_[line - 1];
    size_t end = text_.find('\n', begin);
    if (end == std::string_view::npos) end = text_.size();
    std::string s(text_.substr(begin, end - begin));
    while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
    size_t first = s.find_first_not_of(" \t");
    return first == std::string::npos ? "" : s.substr(first);
  }

  [[noreturn]] void fail(size_t line, const std::string& what) const {
    throw SpirvAssemblyError("SPIR-V assembly line " + std::to_string(line) + " (`" + line_text(line) + "`): " + what);
  }
  [[noreturn]] void fail_at(const Token& t, const std::string& what) const { fail(t.line, what); }

  void tokenize() {
    size_t line = 1;
    size_t i = 0;
    auto newline = [&](size_t at) {
      ++line;
      line_starts_.push_back(at + 1);
    };
    while (i < text_.size()) {
      const char c = text_[i];
      if (c == '\n') {
        newline(i);
        ++i;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++i;
      } else if (c == ';') {
        while (i < text_.size() && text_[i] != '\n') ++i;
      } else if (c == '"') {
        Token t{"", true, line};
        ++i;
        bool closed = false;
        while (i < text_.size()) {
          char d = text_[i];
          if (d == '"') {
            closed = true;
            ++i;
            break;
          }
          if (d == '\\') {
            if (i + 1 >= text_.size()) break;
            d = text_[++i];
          }
          if (d == '\n') newline(i);
          t.text += d;
          ++i;
        }
        if (!closed) fail(t.line, "a string without its closing quote; expected \"...\" with \\\" and \\\\ escapes");
        if (i < text_.size() && text_[i] != ' ' && text_[i] != '\t' && text_[i] != '\n' && text_[i] != '\r' &&
            text_[i] != ';') {
          fail(line, "text right after a string's closing quote; expected a space between operands");
        }
        tokens_.push_back(std::move(t));
      } else {
        Token t{"", false, line};
        while (i < text_.size() && text_[i] != ' ' && text_[i] != '\t' && text_[i] != '\n' && text_[i] != '\r' &&
               text_[i] != ';' && text_[i] != '"') {
          t.text += text_[i++];
        }
        tokens_.push_back(std::move(t));
      }
    }
  }

  bool at_end() const { return pos_ >= tokens_.size(); }
  // The start of the next instruction: "OpX" or "%id =".
  bool at_instruction_start() const {
    if (at_end()) return true;
    const Token& t = tokens_[pos_];
    if (t.quoted) return false;
    if (t.text.rfind("Op", 0) == 0) return true;
    return !t.text.empty() && t.text[0] == '%' && pos_ + 1 < tokens_.size() && !tokens_[pos_ + 1].quoted &&
           tokens_[pos_ + 1].text == "=";
  }
  const Token& previous_or_last() const { return tokens_[pos_ == 0 ? 0 : pos_ - 1]; }

  // The next token as an operand of `what`; fails when the instruction ended.
  const Token& operand(const std::string& what) {
    if (at_instruction_start()) {
      const Token& last = previous_or_last();
      fail_at(last, "too few operands: expected " + what +
                        (at_end() ? " before the end of the text" : ", got '" + tokens_[pos_].text + "'"));
    }
    return tokens_[pos_++];
  }

  Id parse_id_text(const Token& t, const std::string& what) const {
    if (t.quoted || t.text.size() < 2 || t.text[0] != '%') {
      fail_at(t, "expected " + what + " (an id %<number>), got " + (t.quoted ? "a string" : "'" + t.text + "'"));
    }
    uint32_t v = 0;
    const char* first = t.text.data() + 1;
    const char* last = t.text.data() + t.text.size();
    const auto [end, ec] = std::from_chars(first, last, v);
    if (ec != std::errc() || end != last || v == 0 || v == std::numeric_limits<uint32_t>::max()) {
      fail_at(t, "expected " + what + " (an id %<number> from 1 to 4294967294), got '" + t.text + "'");
    }
    return v;
  }

  Id id_operand(const std::string& what) {
    const Token& t = operand(what);
    const Id id = parse_id_text(t, what);
    max_id_ = std::max(max_id_, id);
    return id;
  }

  uint64_t unsigned_number(const Token& t, uint64_t max, const std::string& what) const {
    if (t.quoted || t.text.empty()) fail_at(t, "expected " + what + ", got a string");
    uint64_t v = 0;
    std::string_view s = t.text;
    int base = 10;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
      base = 16;
      s.remove_prefix(2);
    }
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (ec != std::errc() || end != s.data() + s.size() || v > max) {
      fail_at(t, "expected " + what + " (an unsigned integer up to " + std::to_string(max) + "), got '" + t.text + "'");
    }
    return v;
  }

  uint32_t literal_operand(const std::string& what) {
    return static_cast<uint32_t>(unsigned_number(operand(what), std::numeric_limits<uint32_t>::max(), what));
  }

  // A literal of the scalar type `type` (OpConstant, OpSpecConstant): one word, or two low word first for 64 bits.
  void context_literal(Id type, const std::string& opname, std::vector<uint32_t>& out) {
    const Token& t = operand("a literal number");
    auto it = scalar_types_.find(type);
    if (it == scalar_types_.end()) {
      fail_at(t, opname + ": result type %" + std::to_string(type) +
                     " is not an OpTypeInt or OpTypeFloat defined earlier; expected the literal's type before it");
    }
    const ScalarType st = it->second;
    uint64_t bits = 0;
    if (st.is_float) {
      std::string error;
      if (t.quoted || !parse_float_literal(t.text, st.width, bits, error))
        fail_at(t, "expected " + error + ", got '" + t.text + "'");
    } else {
      const uint64_t umax = st.width == 64 ? ~uint64_t{0} : (uint64_t{1} << st.width) - 1;
      if (!t.quoted && !t.text.empty() && t.text[0] == '-') {
        if (!st.is_signed)
          fail_at(t, "expected an unsigned " + std::to_string(st.width) + "-bit integer, got '" + t.text + "'");
        const Token magnitude_token{t.text.substr(1), false, t.line};
        const uint64_t min_magnitude = uint64_t{1} << (st.width - 1);
        const uint64_t magnitude =
            unsigned_number(magnitude_token, min_magnitude, "a signed " + std::to_string(st.width) + "-bit integer");
        bits = (~magnitude + 1) & umax;
      } else {
        // Decimal: the type's range (signed types: up to their maximum); hex: any bits of the width.
        const bool hex = t.text.size() > 2 && t.text[0] == '0' && (t.text[1] == 'x' || t.text[1] == 'X');
        const uint64_t max = st.is_signed && !hex ? umax >> 1 : umax;
        bits = unsigned_number(
            t, max,
            std::string(st.is_signed ? "a signed " : "an unsigned ") + std::to_string(st.width) + "-bit integer");
      }
    }
    if (st.width == 64) {
      out.push_back(static_cast<uint32_t>(bits));
      out.push_back(static_cast<uint32_t>(bits >> 32));
    } else {
      if (!st.is_float && st.is_signed && st.width < 32 && ((bits >> (st.width - 1)) & 1))
        bits |= ~uint64_t{0} << st.width;
      out.push_back(static_cast<uint32_t>(bits));
    }
  }

  // OpSwitch: selector, default, then (literal, label) pairs whose literals take the selector's integer type (one
  // word, or two for 64 bits; specification, OpSwitch), which the grammar's "LI*" cannot say.
  void switch_operands(std::vector<uint32_t>& out) {
    const Id selector = id_operand("the selector of OpSwitch");
    out.push_back(selector);
    out.push_back(id_operand("the default label of OpSwitch"));
    auto it = value_types_.find(selector);
    const Id type = it == value_types_.end() ? 0 : it->second;
    while (!at_instruction_start()) {
      if (auto st = scalar_types_.find(type); st == scalar_types_.end() || st->second.is_float) {
        fail_at(tokens_[pos_], "OpSwitch: selector %" + std::to_string(selector) +
                                   " has no OpTypeInt type defined earlier; expected an integer selector before its "
                                   "case literals");
      }
      context_literal(type, "OpSwitch", out);
      out.push_back(id_operand("a case label of OpSwitch"));
    }
  }

  // An enumerant (or a mask of them, A|B) of `kind`, then the parameters of each, in the order of their bits.
  void enum_operand(std::string_view kind_name, std::vector<uint32_t>& out) {
    const auto kind = enum_kind_from_name(kind_name);
    const Token& t = operand("a " + std::string(kind_name));
    if (!kind)
      fail_at(t, "operand kind " + std::string(kind_name) +
                     " is not in the grammar tables; expected one of the kinds spirv_grammar.h lists");
    if (t.quoted) fail_at(t, "expected a " + std::string(kind_name) + ", got a string");
    auto value_of = [&](std::string_view name) -> uint32_t {
      if (auto v = enumerant_value(*kind, name)) return *v;
      uint32_t number = 0;
      const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), number);
      if (ec == std::errc() && end == name.data() + name.size() && !name.empty()) return number;
      fail_at(t, "unknown " + std::string(kind_name) + " '" + std::string(name) + "'");
    };
    std::vector<uint32_t> with_parameters;  // the values whose parameters follow, in order
    uint32_t value = 0;
    if (is_mask_kind(*kind)) {
      std::string_view rest = t.text;
      while (true) {
        const size_t bar = rest.find('|');
        const std::string_view part = rest.substr(0, bar);
        const uint32_t v = value_of(part);
        if (v != 0 && (v & (v - 1)) != 0 && enumerant_name(*kind, v) == nullptr) {
          fail_at(t, "'" + std::string(part) + "' is not one bit of " + std::string(kind_name));
        }
        value |= v;
        if (bar == std::string_view::npos) break;
        rest = rest.substr(bar + 1);
      }
      for (uint32_t bit = 0; bit < 32; ++bit) {
        if (value & (uint32_t{1} << bit)) with_parameters.push_back(uint32_t{1} << bit);
      }
    } else {
      value = value_of(t.text);
      with_parameters.push_back(value);
    }
    out.push_back(value);
    for (uint32_t v : with_parameters) {
      const char* params = enumerant_parameters(*kind, v);
      if (params == nullptr) continue;  // a value outside the table (given by number): no parameters known
      const std::string owner = std::string(kind_name) + " " + enumerant_name(*kind, v);
      parse_tokens(params, owner, 0, out);
    }
  }

  // Operands by a grammar token string ("I {MemoryAccess}?"); `result_type` for C literals.
  void parse_tokens(std::string_view spec, const std::string& owner, Id result_type, std::vector<uint32_t>& out) {
    while (!spec.empty()) {
      const size_t space = spec.find(' ');
      std::string_view token = spec.substr(0, space);
      spec = space == std::string_view::npos ? std::string_view() : spec.substr(space + 1);
      char quantifier = 0;
      if (token.back() == '?' || token.back() == '*') {
        quantifier = token.back();
        token.remove_suffix(1);
      }
      if (quantifier == '*') {
        while (!at_instruction_start()) one_operand(token, owner, result_type, out);
      } else if (quantifier == '?') {
        if (!at_instruction_start()) one_operand(token, owner, result_type, out);
      } else {
        one_operand(token, owner, result_type, out);
      }
    }
  }

  void one_operand(std::string_view token, const std::string& owner, Id result_type, std::vector<uint32_t>& out) {
    if (token.size() > 2 && token.front() == '{') {
      enum_operand(token.substr(1, token.size() - 2), out);
      return;
    }
    for (char k : token) {  // LI, IL, II: two operands in turn
      switch (k) {
        case 'I':
          out.push_back(id_operand("an id operand of " + owner));
          break;
        case 'L':
          out.push_back(literal_operand("a literal integer of " + owner));
          break;
        case 'S': {
          const Token& t = operand("a string of " + owner);
          if (!t.quoted) fail_at(t, "expected a quoted string of " + owner + ", got '" + t.text + "'");
          if (t.text.size() >= 4 * 0xffff)
            fail_at(
                t, "a string of " + std::to_string(t.text.size()) + " bytes; an instruction holds at most 65535 words");
          std::vector<Operand> one{Operand::string(t.text)};
          const auto words = encode_instruction(Op::Nop, 0, 0, one);
          out.insert(out.end(), words.begin() + 1, words.end());
          break;
        }
        case 'C':
          context_literal(result_type, owner, out);
          break;
        case 'X': {
          const Token& t = operand("an extended instruction of " + owner);
          // The set is the operand just before: GLSL.std.450 instructions go by name, any set by number.
          const Id set = out.empty() ? 0 : out.back();
          uint32_t number = 0;
          const auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), number);
          if (!t.quoted && ec == std::errc() && end == t.text.data() + t.text.size() && !t.text.empty()) {
            out.push_back(number);
          } else if (auto it = imports_.find(set);
                     it != imports_.end() && it->second == "GLSL.std.450" && !t.quoted && glsl_from_name(t.text)) {
            out.push_back(static_cast<uint32_t>(*glsl_from_name(t.text)));
          } else {
            fail_at(
                t,
                "unknown extended instruction '" + t.text + "' of set %" + std::to_string(set) +
                    "; expected a GLSL.std.450 name (an OpExtInstImport \"GLSL.std.450\" defined earlier) or a number");
          }
          break;
        }
        default:
          fail(previous_or_last().line,
               "the grammar token '" + std::string(token) + "' of " + owner + " is not one the assembler reads");
      }
    }
  }

  std::vector<uint32_t> instruction() {
    Id result = 0;
    const Token& first = tokens_[pos_];
    if (!first.quoted && !first.text.empty() && first.text[0] == '%') {
      result = parse_id_text(first, "a result id");
      if (pos_ + 1 >= tokens_.size() || tokens_[pos_ + 1].text != "=" || tokens_[pos_ + 1].quoted) {
        fail_at(first, "expected '=' after the result id " + first.text);
      }
      pos_ += 2;
      if (at_end()) fail_at(first, "expected an opcode after '" + first.text + " =', got the end of the text");
    }
    const Token& op_token = tokens_[pos_++];
    if (op_token.quoted || op_token.text.rfind("Op", 0) != 0) {
      fail_at(op_token, "expected an instruction ('OpX ...' or '%<id> = OpX ...'), got " +
                            (op_token.quoted ? std::string("a string") : "'" + op_token.text + "'"));
    }
    const auto opcode = op_from_name(op_token.text);
    if (!opcode)
      fail_at(op_token,
              "unknown opcode '" + op_token.text + "'; expected an opcode of the grammar tables (spirv_grammar.h)");
    std::string_view spec = op_operands(*opcode);
    const bool has_type = spec.rfind("T R", 0) == 0;
    const bool has_result = has_type || spec.rfind("R", 0) == 0;
    if (has_result && result == 0)
      fail_at(op_token, op_token.text + " makes a result; expected '%<id> = " + op_token.text + " ...'");
    if (!has_result && result != 0)
      fail_at(op_token, op_token.text + " has no result; expected it without '%" + std::to_string(result) + " ='");
    if (result != 0) {
      if (defined_[result])
        fail_at(op_token, "%" + std::to_string(result) + " is defined twice; expected each result id once");
      defined_[result] = true;
      max_id_ = std::max(max_id_, result);
    }
    std::vector<uint32_t> words{0};
    Id type = 0;
    if (has_type) {
      type = id_operand("the result type of " + op_token.text);
      words.push_back(type);
      spec.remove_prefix(3);
    } else if (has_result) {
      spec.remove_prefix(1);
    }
    if (has_result) words.push_back(result);
    if (!spec.empty() && spec.front() == ' ') spec.remove_prefix(1);
    if (*opcode == Op::Switch) {
      switch_operands(words);
    } else {
      parse_tokens(spec, op_token.text, type, words);
    }
    if (!at_instruction_start()) {
      const Token& extra = tokens_[pos_];
      fail_at(extra, "too many operands for " + op_token.text + " (operands '" + std::string(op_operands(*opcode)) +
                         "'); expected the next instruction, got '" + extra.text + "'");
    }
    if (has_type) value_types_[result] = type;
    if (words.size() > 0xffff)
      fail_at(op_token, op_token.text + " of " + std::to_string(words.size()) + " words; at most 65535");
    words[0] = (static_cast<uint32_t>(words.size()) << 16) | static_cast<uint32_t>(*opcode);
    remember(*opcode, words);
    return words;
  }

  // What later instructions need: scalar types (for C literals) and extended instruction sets (for X names).
  void remember(Op opcode, const std::vector<uint32_t>& words) {
    if (opcode == Op::TypeInt && words.size() == 4) {
      if (words[2] != 8 && words[2] != 16 && words[2] != 32 && words[2] != 64) return;
      scalar_types_[words[1]] = ScalarType{false, words[2], words[3] != 0};
    } else if (opcode == Op::TypeFloat && words.size() == 3) {
      if (words[2] != 16 && words[2] != 32 && words[2] != 64) return;
      scalar_types_[words[1]] = ScalarType{true, words[2], false};
    } else if (opcode == Op::ExtInstImport) {
      std::string name;
      for (size_t i = 2; i < words.size(); ++i) {
        for (int b = 0; b < 4; ++b) {
          const char c = static_cast<char>((words[i] >> (8 * b)) & 0xff);
          if (c == 0) {
            imports_[words[1]] = name;
            return;
          }
          name += c;
        }
      }
    }
  }
};

}  // namespace

std::vector<uint32_t> assemble(std::string_view text) { return Assembler(text).run(); }

}  // namespace doorbell::spirv
