// The SPIR-V module builder: instructions kept per section of the logical layout, and their binary form.
// Facts (header, instruction word, literal encoding, section order): firmware-notes/spirv-binary.md.
#include "compiler/spirv/spirv_module.h"

#include <algorithm>
#include <limits>

#include "compiler/spirv/spirv_kernel_abi.h"

namespace doorbell::spirv {
namespace {

constexpr uint32_t kMagic = 0x07230203;
// The generator word: 0, which the specification allows (it has no effect on semantics; doorbell has no registered
// tool id). assemble() writes the same, so text and words agree (firmware-notes/spirv-binary.md §2.3).
constexpr uint32_t kGenerator = 0;
constexpr size_t kNoLabel = std::numeric_limits<size_t>::max();

// Appends a literal string: its UTF-8 bytes, a nul, zero padding to a word boundary, little-endian within a word
// (SPIR-V specification 2.2.1, "Literal String").
void append_string(std::vector<uint32_t>& out, const std::string& s) {
  uint32_t word = 0;
  size_t i = 0;
  for (; i < s.size(); ++i) {
    word |= static_cast<uint32_t>(static_cast<unsigned char>(s[i])) << (8 * (i % 4));
    if (i % 4 == 3) {
      out.push_back(word);
      word = 0;
    }
  }
  // The nul (and padding) fills the rest of the current word, or a whole word when the string filled its last.
  out.push_back(word);
}

}  // namespace

Module::Module() = default;

Id Module::new_id() {
  if (next_id_ == std::numeric_limits<Id>::max()) throw std::length_error("SPIR-V module: out of result ids");
  return next_id_++;
}

Id Module::add(Section section, Op opcode, Id result_type, Id result, std::vector<Operand> operands) {
  sections_[section].push_back(Inst{opcode, result_type, result, std::move(operands)});
  return result;
}

void Module::name(Id target, std::string_view name) {
  add(kDebugNames, Op::Name, 0, 0, {Operand::id(target), Operand::string(std::string(name))});
}

void Module::capability(Capability c) {
  const auto value = static_cast<uint32_t>(c);
  if (std::find(capabilities_.begin(), capabilities_.end(), value) != capabilities_.end()) return;
  capabilities_.push_back(value);
  add(kCapabilities, Op::Capability, 0, 0, {Operand::e(c)});
}

void Module::extension(std::string_view name) {
  if (std::find(extensions_.begin(), extensions_.end(), name) != extensions_.end()) return;
  extensions_.emplace_back(name);
  add(kExtensions, Op::Extension, 0, 0, {Operand::string(std::string(name))});
}

Id Module::ext_inst_import(std::string_view name) {
  auto it = imports_.find(std::string(name));
  if (it != imports_.end()) return it->second;
  const Id id = new_id();
  imports_.emplace(std::string(name), id);
  return add(kImports, Op::ExtInstImport, 0, id, {Operand::string(std::string(name))});
}

void Module::memory_model(AddressingModel addressing, MemoryModel memory) {
  // One per module (specification 2.4): asking again replaces it.
  sections_[kMemoryModel].clear();
  add(kMemoryModel, Op::MemoryModel, 0, 0, {Operand::e(addressing), Operand::e(memory)});
}

void Module::entry_point(ExecutionModel model, Id function, std::string_view name, const std::vector<Id>& interface) {
  std::vector<Operand> operands{Operand::e(model), Operand::id(function), Operand::string(std::string(name))};
  for (Id id : interface) operands.push_back(Operand::id(id));
  add(kEntryPoints, Op::EntryPoint, 0, 0, std::move(operands));
}

namespace {

// The operands of an enumerant's parameters (the grammar's token string of that enumerant) from plain words: ids for
// I, literals for L, enumerants for {Kind}. Throws when the count or a kind does not fit.
std::vector<Operand> enumerant_operands(EnumKind kind, uint32_t value, const std::vector<uint32_t>& literals) {
  const char* params = enumerant_parameters(kind, value);
  const char* what = enumerant_name(kind, value);
  if (params == nullptr) {
    throw std::invalid_argument(std::string("SPIR-V module: ") + enum_kind_name(kind) + " " + std::to_string(value) +
                                " is not in the grammar table");
  }
  std::vector<Operand> out;
  std::string_view rest(params);
  size_t index = 0;
  while (!rest.empty()) {
    const size_t space = rest.find(' ');
    const std::string_view token = rest.substr(0, space);
    rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
    if (index >= literals.size()) {
      throw std::invalid_argument(std::string("SPIR-V module: ") + enum_kind_name(kind) + " " + what + " takes " +
                                  "parameters '" + params + "'; got " + std::to_string(literals.size()));
    }
    const uint32_t v = literals[index++];
    if (token == "I") {
      out.push_back(Operand::id(v));
    } else if (token == "L") {
      out.push_back(Operand::word(v));
    } else if (token.size() > 2 && token.front() == '{' && token.back() == '}' &&
               enum_kind_from_name(token.substr(1, token.size() - 2))) {
      const EnumKind param_kind = *enum_kind_from_name(token.substr(1, token.size() - 2));
      out.push_back(
          Operand{is_mask_kind(param_kind) ? Operand::Kind::kEnumMask : Operand::Kind::kEnum, param_kind, v, {}});
    } else {
      throw std::invalid_argument(std::string("SPIR-V module: ") + enum_kind_name(kind) + " " + what +
                                  " takes a parameter of kind '" + std::string(token) +
                                  "', which the builder cannot make from a word");
    }
  }
  if (index != literals.size()) {
    throw std::invalid_argument(std::string("SPIR-V module: ") + enum_kind_name(kind) + " " + what + " takes " +
                                "parameters '" + params + "'; got " + std::to_string(literals.size()));
  }
  return out;
}

}  // namespace

void Module::execution_mode(Id function, ExecutionMode mode, const std::vector<uint32_t>& literals) {
  std::vector<Operand> operands{Operand::id(function), Operand::e(mode)};
  for (Operand& o : enumerant_operands(EnumKind::kExecutionMode, static_cast<uint32_t>(mode), literals)) {
    operands.push_back(std::move(o));
  }
  add(kExecutionModes, Op::ExecutionMode, 0, 0, std::move(operands));
}

void Module::decorate(Id target, Decoration decoration, const std::vector<uint32_t>& literals) {
  std::vector<Operand> operands{Operand::id(target), Operand::e(decoration)};
  for (Operand& o : enumerant_operands(EnumKind::kDecoration, static_cast<uint32_t>(decoration), literals)) {
    operands.push_back(std::move(o));
  }
  add(kAnnotations, Op::Decorate, 0, 0, std::move(operands));
}

void Module::member_decorate(Id struct_type, uint32_t member, Decoration decoration,
                             const std::vector<uint32_t>& literals) {
  std::vector<Operand> operands{Operand::id(struct_type), Operand::word(member), Operand::e(decoration)};
  for (Operand& o : enumerant_operands(EnumKind::kDecoration, static_cast<uint32_t>(decoration), literals)) {
    operands.push_back(std::move(o));
  }
  add(kAnnotations, Op::MemberDecorate, 0, 0, std::move(operands));
}

// ---- types -------------------------------------------------------------------------------------------------------

namespace {

std::vector<Operand> type_operands(const std::vector<uint64_t>& key) {
  // key = {opcode, operand...}; TypePointer's storage class is an enumerant, every other operand here is an id or
  // a literal as noted by the caller's key layout (see Module::type_*).
  std::vector<Operand> out;
  const auto opcode = static_cast<Op>(key[0]);
  for (size_t i = 1; i < key.size(); ++i) {
    const auto v = static_cast<uint32_t>(key[i]);
    switch (opcode) {
      case Op::TypeInt:
      case Op::TypeFloat:
        out.push_back(Operand::word(v));
        break;
      case Op::TypeVector:
        out.push_back(i == 1 ? Operand::id(v) : Operand::word(v));
        break;
      case Op::TypePointer:
        out.push_back(i == 1 ? Operand::e(static_cast<StorageClass>(v)) : Operand::id(v));
        break;
      default:
        out.push_back(Operand::id(v));
        break;
    }
  }
  return out;
}

}  // namespace

Id Module::type_void() { return type_from_key({static_cast<uint64_t>(Op::TypeVoid)}); }
Id Module::type_bool() { return type_from_key({static_cast<uint64_t>(Op::TypeBool)}); }
Id Module::type_int(uint32_t width, bool is_signed) {
  if (width != 8 && width != 16 && width != 32 && width != 64) {
    throw std::invalid_argument("SPIR-V module: OpTypeInt width " + std::to_string(width) +
                                "; expected 8, 16, 32 or 64");
  }
  return type_from_key({static_cast<uint64_t>(Op::TypeInt), width, is_signed ? 1u : 0u});
}
Id Module::type_float(uint32_t width) {
  if (width != 16 && width != 32 && width != 64) {
    throw std::invalid_argument("SPIR-V module: OpTypeFloat width " + std::to_string(width) +
                                "; expected 16, 32 or 64");
  }
  return type_from_key({static_cast<uint64_t>(Op::TypeFloat), width});
}
Id Module::type_vector(Id component, uint32_t count) {
  return type_from_key({static_cast<uint64_t>(Op::TypeVector), component, count});
}
Id Module::type_array(Id element, Id length_constant) {
  return type_from_key({static_cast<uint64_t>(Op::TypeArray), element, length_constant});
}
Id Module::type_runtime_array(Id element) {
  return type_from_key({static_cast<uint64_t>(Op::TypeRuntimeArray), element});
}
Id Module::type_struct(const std::vector<Id>& members) {
  // Always new: two structs of the same members differ by their decorations (Block, offsets).
  const Id id = new_id();
  std::vector<Operand> operands;
  std::vector<uint64_t> key{static_cast<uint64_t>(Op::TypeStruct)};
  for (Id m : members) {
    operands.push_back(Operand::id(m));
    key.push_back(m);
  }
  type_of_id_.emplace(id, std::move(key));
  return add(kGlobals, Op::TypeStruct, 0, id, std::move(operands));
}
Id Module::type_pointer(StorageClass storage, Id pointee) {
  return type_from_key({static_cast<uint64_t>(Op::TypePointer), static_cast<uint32_t>(storage), pointee});
}
Id Module::type_function(Id return_type, const std::vector<Id>& parameters) {
  std::vector<uint64_t> key{static_cast<uint64_t>(Op::TypeFunction), return_type};
  for (Id p : parameters) key.push_back(p);
  return type_from_key(key);
}

Id Module::type_from_key(const std::vector<uint64_t>& key) {
  auto it = types_.find(key);
  if (it != types_.end()) return it->second;
  const Id id = new_id();
  types_.emplace(key, id);
  type_of_id_.emplace(id, key);
  return add(kGlobals, static_cast<Op>(key[0]), 0, id, type_operands(key));
}

// ---- constants ---------------------------------------------------------------------------------------------------

Id Module::constant_bool(bool value) {
  const Id type = type_bool();
  const auto key = std::make_tuple(type, static_cast<uint64_t>(value), 1);
  auto it = constants_.find(key);
  if (it != constants_.end()) return it->second;
  const Id id = new_id();
  constants_.emplace(key, id);
  return add(kGlobals, value ? Op::ConstantTrue : Op::ConstantFalse, type, id, {});
}

Id Module::constant(Id type, uint64_t bits) {
  auto t = type_of_id_.find(type);
  const bool scalar = t != type_of_id_.end() && (t->second[0] == static_cast<uint64_t>(Op::TypeInt) ||
                                                 t->second[0] == static_cast<uint64_t>(Op::TypeFloat));
  if (!scalar) {
    throw std::invalid_argument("SPIR-V module: OpConstant of type %" + std::to_string(type) +
                                "; expected an OpTypeInt or OpTypeFloat made by this module");
  }
  const auto width = static_cast<uint32_t>(t->second[1]);
  const bool is_signed_int = t->second[0] == static_cast<uint64_t>(Op::TypeInt) && t->second[2] != 0;
  if (width < 64) bits &= (uint64_t{1} << width) - 1;  // the value's bits in the type's width
  const auto key = std::make_tuple(type, bits, 0);
  auto it = constants_.find(key);
  if (it != constants_.end()) return it->second;
  const Id id = new_id();
  constants_.emplace(key, id);
  Operand literal;
  if (width == 64) {
    literal = Operand::word64(bits);
  } else {
    uint64_t word = bits;
    // Narrower than a word: the high bits are 0, or copies of the sign bit for a signed integer (specification
    // 2.2.1, "Literal"; firmware-notes/spirv-binary.md §3).
    if (is_signed_int && width < 32 && (bits >> (width - 1)) & 1) word |= ~uint64_t{0} << width;
    literal = Operand::word(static_cast<uint32_t>(word));
  }
  return add(kGlobals, Op::Constant, type, id, {literal});
}

Id Module::constant_null(Id type) {
  const auto key = std::make_tuple(type, uint64_t{0}, 2);
  auto it = constants_.find(key);
  if (it != constants_.end()) return it->second;
  const Id id = new_id();
  constants_.emplace(key, id);
  return add(kGlobals, Op::ConstantNull, type, id, {});
}

Id Module::constant_composite(Id type, const std::vector<Id>& constituents) {
  std::vector<uint64_t> key{type};
  std::vector<Operand> operands;
  for (Id c : constituents) {
    key.push_back(c);
    operands.push_back(Operand::id(c));
  }
  auto it = composites_.find(key);
  if (it != composites_.end()) return it->second;
  const Id id = new_id();
  composites_.emplace(std::move(key), id);
  return add(kGlobals, Op::ConstantComposite, type, id, std::move(operands));
}

Id Module::global_variable(Id pointer_type, StorageClass storage) {
  if (storage == StorageClass::Function) {
    throw std::invalid_argument("SPIR-V module: global_variable with storage class Function; use function_variable");
  }
  return add(kGlobals, Op::Variable, pointer_type, new_id(), {Operand::e(storage)});
}

// ---- functions ---------------------------------------------------------------------------------------------------

void Module::require_function(const char* what) const {
  if (!in_function_) {
    throw std::logic_error(std::string("SPIR-V module: ") + what + " outside a function; call begin_function first");
  }
}

Id Module::begin_function(Id return_type, Id function_type, uint32_t function_control) {
  if (in_function_) throw std::logic_error("SPIR-V module: begin_function inside a function; call end_function first");
  in_function_ = true;
  function_first_label_ = kNoLabel;
  function_variables_.clear();
  return add(kFunctions, Op::Function, return_type, new_id(),
             {Operand::mask(FunctionControl::None, function_control), Operand::id(function_type)});
}

Id Module::function_variable(Id pointer_type) {
  require_function("function_variable");
  const Id id = new_id();
  function_variables_.push_back(Inst{Op::Variable, pointer_type, id, {Operand::e(StorageClass::Function)}});
  return id;
}

Id Module::label(Id id) {
  require_function("label");
  if (id == 0) id = new_id();
  if (function_first_label_ == kNoLabel) function_first_label_ = sections_[kFunctions].size();
  return add(kFunctions, Op::Label, 0, id, {});
}

Id Module::op(Op opcode, Id result_type, std::initializer_list<Operand> operands, Id result) {
  return op(opcode, result_type, std::vector<Operand>(operands), result);
}

Id Module::op(Op opcode, Id result_type, const std::vector<Operand>& operands, Id result) {
  require_function(op_name(opcode) ? op_name(opcode) : "op");
  if (result == 0) result = new_id();
  if (opcode == Op::Variable) {
    // A function-scope OpVariable made through op(): hoisted like function_variable(), where the rules want it.
    function_variables_.push_back(Inst{opcode, result_type, result, operands});
    return result;
  }
  return add(kFunctions, opcode, result_type, result, operands);
}

void Module::op_void(Op opcode, std::initializer_list<Operand> operands) {
  op_void(opcode, std::vector<Operand>(operands));
}

void Module::op_void(Op opcode, const std::vector<Operand>& operands) {
  require_function(op_name(opcode) ? op_name(opcode) : "op_void");
  add(kFunctions, opcode, 0, 0, operands);
}

Id Module::glsl(GLSLstd450 instruction, Id result_type, const std::vector<Id>& arguments) {
  const Id set = ext_inst_import("GLSL.std.450");
  std::vector<Operand> operands{Operand::id(set), Operand::word(static_cast<uint32_t>(instruction))};
  for (Id a : arguments) operands.push_back(Operand::id(a));
  return op(Op::ExtInst, result_type, operands);
}

void Module::end_function() {
  require_function("end_function");
  if (function_first_label_ == kNoLabel) {
    throw std::logic_error("SPIR-V module: end_function of a function without a block; call label() first");
  }
  // Function-scope variables must be the first instructions of the first block (specification 2.4,
  // function definitions; firmware-notes/spirv-binary.md §2.5).
  auto& body = sections_[kFunctions];
  body.insert(body.begin() + static_cast<std::ptrdiff_t>(function_first_label_ + 1),
              std::make_move_iterator(function_variables_.begin()), std::make_move_iterator(function_variables_.end()));
  function_variables_.clear();
  add(kFunctions, Op::FunctionEnd, 0, 0, {});
  in_function_ = false;
}

// ---- words -------------------------------------------------------------------------------------------------------

std::vector<uint32_t> encode_instruction(Op opcode, Id result_type, Id result, const std::vector<Operand>& operands) {
  std::vector<uint32_t> out{0};
  if (result_type != 0) out.push_back(result_type);
  if (result != 0) out.push_back(result);
  for (const Operand& o : operands) {
    switch (o.kind) {
      case Operand::Kind::kWord64:
        out.push_back(static_cast<uint32_t>(o.value));
        out.push_back(static_cast<uint32_t>(o.value >> 32));
        break;
      case Operand::Kind::kString:
        append_string(out, o.text);
        break;
      default:
        out.push_back(static_cast<uint32_t>(o.value));
        break;
    }
  }
  if (out.size() > 0xffff) {
    throw std::length_error(std::string("SPIR-V module: ") + (op_name(opcode) ? op_name(opcode) : "an instruction") +
                            " of " + std::to_string(out.size()) + " words; at most 65535");
  }
  out[0] = (static_cast<uint32_t>(out.size()) << 16) | static_cast<uint32_t>(opcode);
  return out;
}

std::vector<uint32_t> Module::words() const {
  if (in_function_) throw std::logic_error("SPIR-V module: words() inside a function; call end_function first");
  std::vector<uint32_t> body;
  Id max_id = 0;
  for (const auto& section : sections_) {
    for (const Inst& inst : section) {
      const auto w = encode_instruction(inst.opcode, inst.result_type, inst.result, inst.operands);
      body.insert(body.end(), w.begin(), w.end());
      max_id = std::max({max_id, inst.result_type, inst.result});
      for (const Operand& o : inst.operands) {
        if (o.kind == Operand::Kind::kId) max_id = std::max(max_id, static_cast<Id>(o.value));
      }
    }
  }
  // The bound: one more than the largest id the module uses (ids reserved by new_id() and never used do not
  // count), so that assembling text() (which knows only the ids it sees) gives the same header.
  std::vector<uint32_t> out{kMagic, kSpirvVersionWord, kGenerator, max_id + 1, 0};
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

std::string words_to_bytes(const std::vector<uint32_t>& words) {
  std::string out(words.size() * 4, '\0');
  for (size_t i = 0; i < words.size(); ++i) {
    for (int b = 0; b < 4; ++b) out[i * 4 + b] = static_cast<char>((words[i] >> (8 * b)) & 0xff);
  }
  return out;
}

std::vector<uint32_t> bytes_to_words(std::string_view bytes) {
  if (bytes.size() % 4 != 0) {
    throw std::invalid_argument("SPIR-V binary of " + std::to_string(bytes.size()) +
                                " bytes; expected a multiple of 4 (32-bit words)");
  }
  std::vector<uint32_t> out(bytes.size() / 4);
  for (size_t i = 0; i < out.size(); ++i) {
    uint32_t w = 0;
    for (int b = 0; b < 4; ++b) w |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i * 4 + b])) << (8 * b);
    out[i] = w;
  }
  if (out.empty() || out[0] != kMagic) {
    throw std::invalid_argument("SPIR-V binary does not start with the magic number 0x07230203 (little-endian)");
  }
  return out;
}

}  // namespace doorbell::spirv
