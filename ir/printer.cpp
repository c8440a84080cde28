#include "ir/printer.h"

#include <unordered_map>
#include <variant>

namespace doorbell {
namespace {
// The arg as text; a uint64 CONST keeps its bit pattern in an int64_t, so it is printed as its unsigned value.
std::string arg_text(const UOp& u) {
  const int64_t* v = std::get_if<int64_t>(&u.arg());
  if (v && u.op() == Ops::CONST && u.dtype().scalar_type == ScalarType::UInt64) return std::to_string(static_cast<uint64_t>(*v));
  return arg_to_string(u.arg());
}
}  // namespace

std::string print_node(const UOp& u) {
  std::string s = std::string(op_name(u.op())) + " " + u.dtype().name();
  if (!std::holds_alternative<std::monostate>(u.arg())) s += " arg=" + arg_text(u);
  if (u.tag() != UOp::kNoTag) s += " tag=" + std::to_string(u.tag());
  if (!u.src().empty()) s += " (" + std::to_string(u.src().size()) + " src" + (u.src().size() == 1 ? ")" : "s)");
  return s;
}

std::string print_graph(const UOp& root) {
  std::unordered_map<const UOpNode*, size_t> id;
  std::string out;
  for (const UOp& u : root.toposort()) {
    size_t n = id.size();
    id[u.get()] = n;
    out += "%" + std::to_string(n) + " = " + std::string(op_name(u.op())) + " " + u.dtype().name();
    if (!std::holds_alternative<std::monostate>(u.arg())) out += " " + arg_text(u);
    if (u.tag() != UOp::kNoTag) out += " tag=" + std::to_string(u.tag());
    if (const IntTuple* sh = u.shape(); sh && !sh->empty()) out += " shape=" + arg_to_string(Arg(*sh));
    if (!u.src().empty()) {
      out += " (";
      for (size_t i = 0; i < u.src().size(); i++) out += (i ? ", %" : "%") + std::to_string(id[u.src(i).get()]);
      out += ")";
    }
    out += "\n";
  }
  return out;
}

namespace {
const char* infix(Ops op) {
  switch (op) {
    case Ops::ADD: return "+"; case Ops::SUB: return "-"; case Ops::MUL: return "*"; case Ops::FDIV: return "/";
    case Ops::FLOORDIV: return "//"; case Ops::FLOORMOD: return "%"; case Ops::CDIV: return " cdiv ";
    case Ops::CMOD: return " cmod "; case Ops::CMPLT: return "<"; case Ops::CMPNE: return "!="; case Ops::CMPEQ: return "==";
    case Ops::AND: return "&"; case Ops::OR: return "|"; case Ops::XOR: return "^"; case Ops::SHL: return "<<";
    case Ops::SHR: return ">>";
    default: return nullptr;
  }
}
}  // namespace

std::string render_expr(const UOp& root) {
  // Written front to back into one string from an explicit stack of pieces (text, or a node to expand): a deep chain
  // neither recurses nor copies its inner text once per level. A shared node is written where each user reads it.
  using Piece = std::variant<const UOp*, std::string>;
  std::string out;
  std::vector<Piece> work{&root};
  std::vector<Piece> parts;
  while (!work.empty()) {
    Piece piece = std::move(work.back());
    work.pop_back();
    if (std::string* text = std::get_if<std::string>(&piece)) {
      out += *text;
      continue;
    }
    const UOp& u = *std::get<const UOp*>(piece);
    auto a = [&](size_t i) { return Piece(&u.src(i)); };
    parts.clear();
    if (u.op() == Ops::CONST) parts = {arg_text(u)};
    else if (u.op() == Ops::PARAM && std::get_if<ParamArg>(&u.arg())) parts = {std::get<ParamArg>(u.arg()).name};
    else if (u.op() == Ops::RANGE) parts = {"r" + std::to_string(std::get<RangeArg>(u.arg()).axis)};
    else if (const char* op = infix(u.op()); op && u.src().size() == 2) parts = {"(", a(0), op, a(1), ")"};
    else if (u.op() == Ops::NEG) parts = {"(-", a(0), ")"};
    else if (u.op() == Ops::WHERE) parts = {"(", a(0), " ? ", a(1), " : ", a(2), ")"};
    else if (u.op() == Ops::MAX) parts = {"max(", a(0), ", ", a(1), ")"};
    else if (u.op() == Ops::CAST) parts = {"(" + u.dtype().name() + ")", a(0)};
    else {
      parts = {std::string(op_name(u.op())) + "("};
      for (size_t i = 0; i < u.src().size(); i++) {
        if (i) parts.emplace_back(", ");
        parts.push_back(a(i));
      }
      parts.emplace_back(")");
    }
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) work.push_back(std::move(*it));
  }
  return out;
}

}  // namespace doorbell
