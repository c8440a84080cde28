// Module::text(): the module as SPIR-V assembly in the syntax spirv-as reads (SPIRV-Tools docs/syntax.md), with the
// numeric ids `spirv-dis --raw-id` prints. assemble() (spirv_assembler.cpp) reads it back to the same words.
// firmware-notes/spirv-binary.md §4 and §5.
#include <optional>
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

// A literal of the scalar type whose key in types_ is `type`: integers in decimal (signed types signed), floats as
// exact hex floats.
std::string scalar_literal(const std::vector<uint64_t>& type, uint64_t bits) {
  const auto width = static_cast<uint32_t>(type[1]);
  if (width < 64) bits &= (uint64_t{1} << width) - 1;
  if (type[0] == static_cast<uint64_t>(Op::TypeFloat)) return format_float_literal(bits, width);
  if (type[2] != 0 && (bits >> (width - 1)) & 1) {
    // Negative: -(2^width - bits), without overflowing int64 for INT64_MIN.
    const uint64_t magnitude = width == 64 ? ~bits + 1 : (uint64_t{1} << width) - bits;
    return "-" + std::to_string(magnitude);
  }
  return std::to_string(bits);
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
  // The integer type of an OpSwitch selector, from the instruction that made it (only looked up for OpSwitch).
  auto selector_type = [&](Id selector) -> std::optional<std::vector<uint64_t>> {
    for (const auto& section : sections_) {
      for (const Inst& inst : section) {
        if (inst.result != selector) continue;
        auto it = type_of_id_.find(inst.result_type);
        if (it == type_of_id_.end() || it->second[0] != static_cast<uint64_t>(Op::TypeInt)) return std::nullopt;
        return it->second;
      }
    }
    return std::nullopt;
  };
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
          out << scalar_literal(type_of_id_.at(inst.result_type), o.value);
          continue;
        }
        if (inst.opcode == Op::Switch && i >= 2 && i % 2 == 0 && o.kind != Operand::Kind::kId) {
          // A case literal reads as the selector's type (signed selectors print negative cases negative).
          const auto type = selector_type(static_cast<Id>(inst.operands[0].value));
          if (type) {
            out << scalar_literal(*type, o.value);
            continue;
          }
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
