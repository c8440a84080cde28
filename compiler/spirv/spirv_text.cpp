// Module::text(): the module as SPIR-V assembly in the syntax spirv-as reads (SPIRV-Tools docs/syntax.md), with the
// numeric ids `spirv-dis --raw-id` prints. assemble() (spirv_assembler.cpp) reads it back to the same words.
// firmware-notes/spirv-binary.md §4 and §5.
#include <sstream>

#include "compiler/spirv/spirv_kernel_abi.h"
#include "compiler/spirv/spirv_literal.h"
#include "compiler/spirv/spirv_module.h"

namespace doorbell::spirv {
namespace {

std::string quoted(const std::string& s) {
  // Inside quotes a backslash takes the next byte as it is: escape the quote and the backslash, nothing else.
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string enumerant(EnumKind kind, uint32_t value) {
  const char* name = enumerant_name(kind, value);
  return name ? std::string(name) : std::to_string(value);
}

std::string mask(EnumKind kind, uint32_t bits) {
  if (bits == 0) return enumerant(kind, 0);
  std::string out;
  for (uint32_t bit = 0; bit < 32; ++bit) {
    const uint32_t b = uint32_t{1} << bit;
    if (!(bits & b)) continue;
    if (!out.empty()) out += '|';
    const char* name = enumerant_name(kind, b);
    out += name ? std::string(name) : std::to_string(b);
  }
  return out;
}

}  // namespace

std::string Module::text() const {
  if (in_function_) throw std::logic_error("SPIR-V module: text() inside a function; call end_function first");
  const auto words_now = words();  // the header's bound, as words() computes it
  std::ostringstream out;
  out << "; SPIR-V\n; Version: " << (kSpirvVersionWord >> 16) << "." << ((kSpirvVersionWord >> 8) & 0xff)
      << "\n; Generator: doorbell (0)\n; Bound: " << words_now[3] << "\n; Schema: 0\n";
  std::map<Id, std::string> import_names;
  for (const auto& [name, id] : imports_) import_names.emplace(id, name);
  for (const auto& section : sections_) {
    for (const Inst& inst : section) {
      if (inst.result != 0) out << "%" << inst.result << " = ";
      const char* name = op_name(inst.opcode);
      if (name == nullptr)
        throw std::logic_error("SPIR-V module: opcode " + std::to_string(static_cast<int>(inst.opcode)) +
                               " is not in the grammar table; text() cannot name it");
      out << name;
      if (inst.result_type != 0) out << " %" << inst.result_type;
      const bool is_constant = inst.opcode == Op::Constant || inst.opcode == Op::SpecConstant;
      for (size_t i = 0; i < inst.operands.size(); ++i) {
        const Operand& o = inst.operands[i];
        out << ' ';
        if (is_constant && i == 0) {
          // The literal as its type reads: integers in decimal (signed types signed), floats as exact hex floats.
          const auto& type = type_of_id_.at(inst.result_type);
          const auto width = static_cast<uint32_t>(type[1]);
          uint64_t bits = o.value;
          if (width < 64) bits &= (uint64_t{1} << width) - 1;
          if (type[0] == static_cast<uint64_t>(Op::TypeFloat)) {
            out << format_float_literal(bits, width);
          } else if (type[2] != 0 && (bits >> (width - 1)) & 1) {
            // Negative: -(2^width - bits), printed without overflowing int64 for INT64_MIN.
            const uint64_t magnitude = width == 64 ? ~bits + 1 : (uint64_t{1} << width) - bits;
            out << '-' << magnitude;
          } else {
            out << bits;
          }
          continue;
        }
        switch (o.kind) {
          case Operand::Kind::kId:
            out << '%' << o.value;
            break;
          case Operand::Kind::kWord:
            if (inst.opcode == Op::ExtInst && i == 1 && import_names.count(static_cast<Id>(inst.operands[0].value)) &&
                import_names.at(static_cast<Id>(inst.operands[0].value)) == "GLSL.std.450" &&
                glsl_name(static_cast<GLSLstd450>(o.value))) {
              out << glsl_name(static_cast<GLSLstd450>(o.value));
            } else {
              out << static_cast<uint32_t>(o.value);
            }
            break;
          case Operand::Kind::kWord64:
            out << o.value;
            break;
          case Operand::Kind::kString:
            out << quoted(o.text);
            break;
          case Operand::Kind::kEnum:
            out << enumerant(o.enum_kind, static_cast<uint32_t>(o.value));
            break;
          case Operand::Kind::kEnumMask:
            out << mask(o.enum_kind, static_cast<uint32_t>(o.value));
            break;
        }
      }
      out << '\n';
    }
  }
  return out.str();
}

}  // namespace doorbell::spirv
