// Lookups over the grammar tables of spirv_grammar.h. Where the grammar gives several names to one value (aliases
// such as PhysicalStorageBufferAddressesEXT), the first in the table is the one printed, as SPIRV-Tools prints the
// first (the core) name; every alias is accepted when reading.
#include "compiler/spirv/spirv_grammar.h"

#include <span>

namespace doorbell::spirv {
namespace {

struct Entry {
  const char* name;
  uint32_t value;
  const char* operands;
};

#define DOORBELL_SPIRV_ENTRY(name, value, operands) Entry{#name, static_cast<uint32_t>(value), operands},
#define DOORBELL_SPIRV_OP_ENTRY(name, value, operands) Entry{"Op" #name, static_cast<uint32_t>(value), operands},

constexpr Entry kOps[] = {DOORBELL_SPIRV_OPS(DOORBELL_SPIRV_OP_ENTRY)};
constexpr Entry kCapability[] = {DOORBELL_SPIRV_CAPABILITY(DOORBELL_SPIRV_ENTRY)};
constexpr Entry kAddressingModel[] = {DOORBELL_SPIRV_ADDRESSING_MODEL(DOORBELL_SPIRV_ENTRY)};
constexpr Entry kMemoryModel[] = {DOORBELL_SPIRV_MEMORY_MODEL(DOORBELL_SPIRV_ENTRY)};
constexpr Entry kExecutionModel[] = {DOORBELL_SPIRV_EXECUTION_MODEL(DOORBELL_SPIRV_ENTRY)};
constexpr Entry kExecutionMode[] = {DOORBELL_SPIRV_EXECUTION_MODE(DOORBELL_SPIRV_ENTRY)};
constexpr Entry kStorageClass[] = {DOORBELL_SPIRV_STORAGE_CLASS(DOORBELL_SPIRV_ENTRY)};
constexpr Entry kDecoration[] = {DOORBELL_SPIRV_DECORATION(DOORBELL_SPIRV_ENTRY)};
constexpr Entry kBuiltIn[] = {DOORBELL_SPIRV_BUILT_IN(DOORBELL_SPIRV_ENTRY)};
constexpr Entry kScope[] = {DOORBELL_SPIRV_SCOPE(DOORBELL_SPIRV_ENTRY)};
constexpr Entry kMemorySemantics[] = {DOORBELL_SPIRV_MEMORY_SEMANTICS(DOORBELL_SPIRV_ENTRY)};
constexpr Entry kMemoryAccess[] = {DOORBELL_SPIRV_MEMORY_ACCESS(DOORBELL_SPIRV_ENTRY)};
constexpr Entry kFunctionControl[] = {DOORBELL_SPIRV_FUNCTION_CONTROL(DOORBELL_SPIRV_ENTRY)};
constexpr Entry kSelectionControl[] = {DOORBELL_SPIRV_SELECTION_CONTROL(DOORBELL_SPIRV_ENTRY)};
constexpr Entry kLoopControl[] = {DOORBELL_SPIRV_LOOP_CONTROL(DOORBELL_SPIRV_ENTRY)};
constexpr Entry kSourceLanguage[] = {DOORBELL_SPIRV_SOURCE_LANGUAGE(DOORBELL_SPIRV_ENTRY)};
constexpr Entry kFPRoundingMode[] = {DOORBELL_SPIRV_FP_ROUNDING_MODE(DOORBELL_SPIRV_ENTRY)};
constexpr Entry kFPFastMathMode[] = {DOORBELL_SPIRV_FP_FAST_MATH_MODE(DOORBELL_SPIRV_ENTRY)};
constexpr Entry kGroupOperation[] = {DOORBELL_SPIRV_GROUP_OPERATION(DOORBELL_SPIRV_ENTRY)};
constexpr Entry kGlsl[] = {DOORBELL_SPIRV_GLSL_STD_450(DOORBELL_SPIRV_ENTRY)};

#undef DOORBELL_SPIRV_ENTRY
#undef DOORBELL_SPIRV_OP_ENTRY

struct KindTable {
  EnumKind kind;
  const char* name;
  std::span<const Entry> entries;
  bool mask;
};

constexpr KindTable kKinds[] = {
    {EnumKind::kCapability, "Capability", kCapability, false},
    {EnumKind::kAddressingModel, "AddressingModel", kAddressingModel, false},
    {EnumKind::kMemoryModel, "MemoryModel", kMemoryModel, false},
    {EnumKind::kExecutionModel, "ExecutionModel", kExecutionModel, false},
    {EnumKind::kExecutionMode, "ExecutionMode", kExecutionMode, false},
    {EnumKind::kStorageClass, "StorageClass", kStorageClass, false},
    {EnumKind::kDecoration, "Decoration", kDecoration, false},
    {EnumKind::kBuiltIn, "BuiltIn", kBuiltIn, false},
    {EnumKind::kScope, "Scope", kScope, false},
    {EnumKind::kMemorySemantics, "MemorySemantics", kMemorySemantics, true},
    {EnumKind::kMemoryAccess, "MemoryAccess", kMemoryAccess, true},
    {EnumKind::kFunctionControl, "FunctionControl", kFunctionControl, true},
    {EnumKind::kSelectionControl, "SelectionControl", kSelectionControl, true},
    {EnumKind::kLoopControl, "LoopControl", kLoopControl, true},
    {EnumKind::kSourceLanguage, "SourceLanguage", kSourceLanguage, false},
    {EnumKind::kFPRoundingMode, "FPRoundingMode", kFPRoundingMode, false},
    {EnumKind::kFPFastMathMode, "FPFastMathMode", kFPFastMathMode, true},
    {EnumKind::kGroupOperation, "GroupOperation", kGroupOperation, false},
};

const KindTable* table_of(EnumKind kind) {
  for (const KindTable& t : kKinds) {
    if (t.kind == kind) return &t;
  }
  return nullptr;
}

const Entry* by_value(std::span<const Entry> entries, uint32_t value) {
  for (const Entry& e : entries) {
    if (e.value == value) return &e;
  }
  return nullptr;
}

const Entry* by_name(std::span<const Entry> entries, std::string_view name) {
  for (const Entry& e : entries) {
    if (name == e.name) return &e;
  }
  return nullptr;
}

}  // namespace

const char* op_name(Op op) {
  const Entry* e = by_value(kOps, static_cast<uint32_t>(op));
  return e ? e->name : nullptr;
}

const char* op_operands(Op op) {
  const Entry* e = by_value(kOps, static_cast<uint32_t>(op));
  return e ? e->operands : nullptr;
}

std::optional<Op> op_from_name(std::string_view name) {
  const Entry* e = by_name(kOps, name);
  if (!e) return std::nullopt;
  return static_cast<Op>(e->value);
}

const char* enum_kind_name(EnumKind kind) {
  const KindTable* t = table_of(kind);
  return t ? t->name : nullptr;
}

std::optional<EnumKind> enum_kind_from_name(std::string_view name) {
  for (const KindTable& t : kKinds) {
    if (name == t.name) return t.kind;
  }
  return std::nullopt;
}

const char* enumerant_name(EnumKind kind, uint32_t value) {
  const KindTable* t = table_of(kind);
  if (!t) return nullptr;
  const Entry* e = by_value(t->entries, value);
  return e ? e->name : nullptr;
}

std::optional<uint32_t> enumerant_value(EnumKind kind, std::string_view name) {
  const KindTable* t = table_of(kind);
  if (!t) return std::nullopt;
  const Entry* e = by_name(t->entries, name);
  if (!e) return std::nullopt;
  return e->value;
}

const char* enumerant_parameters(EnumKind kind, uint32_t value) {
  const KindTable* t = table_of(kind);
  if (!t) return nullptr;
  const Entry* e = by_value(t->entries, value);
  return e ? e->operands : nullptr;
}

bool is_mask_kind(EnumKind kind) {
  const KindTable* t = table_of(kind);
  return t && t->mask;
}

const char* glsl_name(GLSLstd450 instruction) {
  const Entry* e = by_value(kGlsl, static_cast<uint32_t>(instruction));
  return e ? e->name : nullptr;
}

std::optional<GLSLstd450> glsl_from_name(std::string_view name) {
  const Entry* e = by_name(kGlsl, name);
  if (!e) return std::nullopt;
  return static_cast<GLSLstd450>(e->value);
}

}  // namespace doorbell::spirv
