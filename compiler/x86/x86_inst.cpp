#include "compiler/x86/x86_inst.h"

#include <stdexcept>
#include <unordered_map>

namespace doorbell::x86 {
namespace {

constexpr std::string_view kNames[] = {
#define DOORBELL_X86_NAME(name) #name,
    DOORBELL_X86_MNEMONICS(DOORBELL_X86_NAME)
#undef DOORBELL_X86_NAME
};

// "and_" is Mn::and_ (a C++ keyword otherwise): the listing name drops the underscore.
std::string_view strip(std::string_view s) { return !s.empty() && s.back() == '_' ? s.substr(0, s.size() - 1) : s; }

bool in(Mn op, std::initializer_list<Mn> set) {
  for (Mn m : set)
    if (m == op) return true;
  return false;
}

// Two-address integer ops: the destination is also the first source.
bool reads_destination(const Inst& i) {
  using enum Mn;
  if (in(i.op, {add, sub, and_, or_, xor_, shl, shr, sar, neg, not_, cmove, cmovne, cmovl, cmovle, cmovg, cmovge,
                cmovb, cmovbe, cmova, cmovae, cmovp, cmovnp, vfmadd231ss, vfmadd231sd, vfmadd231ps, vfmadd213ps,
                vpternlogd}))
    return true;
  if (i.op == imul) return i.n == 2;  // imul r, r/m; the three-operand imul r, r/m, imm writes only
  return false;
}

// Instructions that only read their operands (flags, control flow, stores are the memory operand's).
bool writes_nothing(Mn op) {
  using enum Mn;
  return in(op, {cmp, test, vucomiss, vucomisd, kortestw, push, call, jmp, ret, nop, vzeroupper, idiv, div, cwd, cdq,
                 cqo, je, jne, jl, jle, jg, jge, jb, jbe, ja, jae, jp, jnp, js, jns, LABEL});
}

}  // namespace

Inst make_inst(Mn op, std::initializer_list<Operand> operands) {
  if (operands.size() > 4)
    throw std::invalid_argument(std::string(mnemonic_name(op)) + " with " + std::to_string(operands.size()) + " operands; expected at most 4");
  Inst inst;
  inst.op = op;
  for (const Operand& o : operands) inst.o[inst.n++] = o;
  return inst;
}

std::string_view mnemonic_name(Mn op) { return strip(kNames[static_cast<size_t>(op)]); }

bool mnemonic_from_name(std::string_view name, Mn& out) {
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string_view, Mn>();
    for (size_t i = 0; i < std::size(kNames); i++) t->emplace(strip(kNames[i]), static_cast<Mn>(i));
    return t;
  }();
  auto it = table->find(name);
  if (it == table->end()) return false;
  out = it->second;
  return true;
}

void operand_roles(const Inst& inst, Role out[4]) {
  for (int k = 0; k < 4; k++) out[k] = k < inst.n ? Role::USE : Role::NONE;
  if (inst.n > 4) throw std::invalid_argument("operand_roles: " + std::string(mnemonic_name(inst.op)) + " has " + std::to_string(inst.n) + " operands; expected at most 4");
  if (inst.op == Mn::CALL_EXTERN) {  // SYMBOL, result, arguments
    if (inst.n < 2) throw std::invalid_argument("operand_roles: CALL_EXTERN needs a symbol and a result; expected CALL_EXTERN sym, dst, a[, b]");
    out[0] = Role::NONE;
    out[1] = Role::DEF;
    return;
  }
  if (inst.n == 0 || writes_nothing(inst.op)) return;
  // One-operand imul reads its operand and writes rdx:rax, which instruction selection names nowhere (as idiv).
  if (inst.op == Mn::imul && inst.n == 1) return;
  if (inst.tied) {
    if (inst.n < 2) throw std::invalid_argument("operand_roles: tied " + std::string(mnemonic_name(inst.op)) + " needs a destination and its tied source");
    out[0] = Role::DEF;
    return;
  }
  // Merge masking keeps the destination's unselected lanes: it is read too. vblendmps / vpblendmd use the mask as
  // their selector and take unselected lanes from their first source, never the destination (SDM vol. 2C,
  // VBLENDMPS / VPBLENDMD operation: "ELSE IF *merging-masking* DEST[i] := SRC1[i]").
  const bool merges = inst.masked && !inst.zeroing && !in(inst.op, {Mn::vblendmps, Mn::vpblendmd});
  out[0] = reads_destination(inst) || merges ? Role::USE_DEF : Role::DEF;
}

}  // namespace doorbell::x86
