// A SPIR-V module under construction, and the two forms it leaves in: its binary words and its SPIR-V assembly text
// (the syntax of SPIRV-Tools' spirv-as / spirv-dis). The renderer (compiler/spirv/spirv_renderer.cpp) builds one
// Module per kernel; the target (compiler/spirv/spirv_target.h) renders text() as the PROGRAM's SOURCE and compiles it
// with assemble(), which gives exactly words() again (what is printed is what runs).
//
// Instructions are kept as data: opcode, then tagged operands (an id, a literal word, a 64-bit literal, a string,
// an enumerant of a named kind), so that one instruction list makes both the words and the text. The module places
// each instruction in its section of the logical layout (SPIR-V specification, section 2.4), whatever the order
// the renderer makes them in. Types and constants are made once: asking again with the same arguments returns the
// same id.
//
// Opcode and enumerant values are the SPIR-V 1.5 specification's, from KhronosGroup/SPIRV-Headers
// include/spirv/unified1/spirv.core.grammar.json and extinst.glsl.std.450.grammar.json; spirv_grammar.h holds the
// tables (one list per kind, which makes the enum, the names and the operand kinds).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "compiler/spirv/spirv_grammar.h"

namespace doorbell::spirv {

using Id = uint32_t;

// Thrown by assemble() for text it cannot read, naming the line and what was expected.
class SpirvAssemblyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One operand as both forms need it. `kind` says how it is encoded and printed; kEnum operands carry the enumerant
// kind (for the name table) and kEnumMask a mask whose set bits are printed as names joined by '|'.
struct Operand {
  enum class Kind : uint8_t { kId, kWord, kWord64, kString, kEnum, kEnumMask };
  Kind kind = Kind::kWord;
  EnumKind enum_kind = EnumKind::kNone;
  uint64_t value = 0;
  std::string text;  // kString

  static Operand id(Id v) { return {Kind::kId, EnumKind::kNone, v, {}}; }
  static Operand word(uint32_t v) { return {Kind::kWord, EnumKind::kNone, v, {}}; }
  static Operand word64(uint64_t v) { return {Kind::kWord64, EnumKind::kNone, v, {}}; }  // low word first
  static Operand string(std::string s) { return {Kind::kString, EnumKind::kNone, 0, std::move(s)}; }
  // An enumerant of any of spirv_grammar.h's enum classes (StorageClass::Function, Decoration::Aligned, ...).
  template <class E>
  static Operand e(E v) { return {Kind::kEnum, enum_kind_of<E>(), static_cast<uint32_t>(v), {}}; }
  // A mask operand (MemoryAccess, FunctionControl, SelectionControl, LoopControl): bits of that kind.
  template <class E>
  static Operand mask(E kind_tag, uint32_t bits) { (void)kind_tag; return {Kind::kEnumMask, enum_kind_of<E>(), bits, {}}; }
};

class Module {
 public:
  Module();

  // A fresh result id (ids start at 1; the header's bound is the largest + 1).
  Id new_id();
  // OpName, for the text and debuggers; optional.
  void name(Id target, std::string_view name);

  // Module-level declarations, each placed in its section.
  void capability(Capability c);                 // once each, however often asked
  void extension(std::string_view name);         // once each
  Id ext_inst_import(std::string_view name);     // "GLSL.std.450": once each, the same id after
  void memory_model(AddressingModel addressing, MemoryModel memory);
  void entry_point(ExecutionModel model, Id function, std::string_view name, const std::vector<Id>& interface);
  void execution_mode(Id function, ExecutionMode mode, const std::vector<uint32_t>& literals = {});
  void decorate(Id target, Decoration decoration, const std::vector<uint32_t>& literals = {});
  void member_decorate(Id struct_type, uint32_t member, Decoration decoration, const std::vector<uint32_t>& literals = {});

  // Types, each made once per distinct argument list (structs are always new: their decorations tell them apart).
  Id type_void();
  Id type_bool();
  Id type_int(uint32_t width, bool is_signed);
  Id type_float(uint32_t width);
  Id type_vector(Id component, uint32_t count);
  Id type_array(Id element, Id length_constant);
  Id type_runtime_array(Id element);
  Id type_struct(const std::vector<Id>& members);
  Id type_pointer(StorageClass storage, Id pointee);
  Id type_function(Id return_type, const std::vector<Id>& parameters);

  // Constants, each made once per (type, value). `bits` holds the value's bits in the type's width (a float's IEEE
  // bits, an integer's two's complement; 8- and 16-bit integers are encoded in one word, sign-extended for signed
  // types as the specification requires).
  Id constant_bool(bool value);
  Id constant(Id type, uint64_t bits);
  Id constant_null(Id type);
  Id constant_composite(Id type, const std::vector<Id>& constituents);

  // A module-scope OpVariable (storage class Workgroup, PushConstant, Input, ...), in the globals section.
  Id global_variable(Id pointer_type, StorageClass storage);

  // Function bodies. Instructions go to the current function in the order they are made, except function-scope
  // variables, which the specification requires at the top of the first block: function_variable() puts them there.
  Id begin_function(Id return_type, Id function_type, uint32_t function_control = 0);
  Id function_variable(Id pointer_type);  // OpVariable ... Function
  Id label(Id id = 0);                    // OpLabel: a new block (id 0: a fresh id; else one reserved by new_id())
  // An instruction with a result: returns its id (a fresh one unless `result` is given). An OpVariable (of storage
  // class Function: the only one a function may hold) is hoisted as function_variable() does.
  Id op(Op opcode, Id result_type, std::initializer_list<Operand> operands, Id result = 0);
  Id op(Op opcode, Id result_type, const std::vector<Operand>& operands, Id result = 0);
  // An instruction without a result type or result (OpStore, OpBranch, OpReturn, OpControlBarrier, ...).
  void op_void(Op opcode, std::initializer_list<Operand> operands = {});
  void op_void(Op opcode, const std::vector<Operand>& operands);
  // OpExtInst of the GLSL.std.450 set.
  Id glsl(GLSLstd450 instruction, Id result_type, const std::vector<Id>& arguments);
  void end_function();

  // The module's words: the header (magic, kSpirvVersionWord, generator, bound, 0) and every section in order.
  std::vector<uint32_t> words() const;
  // The module as SPIR-V assembly: one instruction per line, "%N = OpX ..." with the numeric ids spirv-dis prints
  // with --raw-id, enumerants by name, strings quoted, float constants as hex floats.
  std::string text() const;

 private:
  struct Inst {
    Op opcode;
    Id result_type = 0;  // 0: none
    Id result = 0;       // 0: none
    std::vector<Operand> operands;
  };
  // ... the implementation's sections, dedup maps and the current function (spirv_module.cpp).
  enum Section : uint8_t { kCapabilities, kExtensions, kImports, kMemoryModel, kEntryPoints, kExecutionModes,
                           kDebugNames, kAnnotations, kGlobals, kFunctions, kSectionCount };
  std::vector<Inst> sections_[kSectionCount];
  std::vector<Inst> function_variables_;  // of the current function, moved in after its first OpLabel at end
  size_t function_first_label_ = 0;       // index in sections_[kFunctions] of the current function's first label
  bool in_function_ = false;
  Id next_id_ = 1;
  std::map<std::vector<uint64_t>, Id> types_;
  std::map<std::tuple<Id, uint64_t, int>, Id> constants_;
  std::map<std::vector<uint64_t>, Id> composites_;  // (type, constituents...) of constant_composite
  std::map<Id, std::vector<uint64_t>> type_of_id_;  // a type id's key in types_: how its constants are encoded
  std::map<std::string, Id> imports_;
  std::vector<uint32_t> capabilities_;
  std::vector<std::string> extensions_;
  Id add(Section section, Op opcode, Id result_type, Id result, std::vector<Operand> operands);
  Id type_from_key(const std::vector<uint64_t>& key);  // key: {opcode, operands...}
  void require_function(const char* what) const;
};

// One instruction's words: (word count << 16) | opcode, the result type and result when not 0, then the operands.
// Throws std::length_error past 65535 words.
std::vector<uint32_t> encode_instruction(Op opcode, Id result_type, Id result, const std::vector<Operand>& operands);

// Assembles text() output (and the subset of spirv-as syntax it uses) into words. Throws SpirvAssemblyError naming
// the line.
std::vector<uint32_t> assemble(std::string_view text);

// The words as bytes, little-endian (CompiledBinary::bytes), and back (a length that is not a multiple of 4, or a
// wrong magic number, throws std::invalid_argument).
std::string words_to_bytes(const std::vector<uint32_t>& words);
std::vector<uint32_t> bytes_to_words(std::string_view bytes);

}  // namespace doorbell::spirv
