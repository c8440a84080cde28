// Internal to the PTX parser (ptx_parser.cpp, ptx_decode.cpp): one parsed instruction's text form and its
// decoding into a PtxInstr. Not for other users: parse_ptx (ptx_parser.h) is the interface.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mockgpu/nv/ptx_program.h"

namespace doorbell::mockgpu::nv {

// Throws std::invalid_argument "ptx line N: what".
[[noreturn]] void fail_at(uint32_t line, const std::string& what);

// A PTX fundamental type (PTX ISA "Fundamental Types"): class b/u/s/f/p(red), width in bits, bf for bfloat16.
struct PtxType {
  char cls = 0;
  int bits = 0;
  bool bf = false;
  bool valid() const { return cls != 0; }
  bool is_int() const { return cls == 'b' || cls == 'u' || cls == 's'; }
  bool is_float() const { return cls == 'f'; }
  bool is_signed() const { return cls == 's'; }
};

// The type a modifier such as "u32" names; invalid() for any other modifier.
PtxType type_of(std::string_view m);

// An operand as written.
struct RawOperand {
  enum Kind { Reg, Imm, Name, Addr, Vec } kind = Imm;
  std::vector<RawOperand> items;  // Vec: {a, b, ...}
  std::string text;               // register, special register or name; the literal's text for Imm
  bool negative = false;          // Imm: a leading '-'
  std::string base;               // Addr: register or name ("" for an absolute address)
  int64_t offset = 0;             // Addr
};

// One instruction as written: guard, opcode with its modifiers, operands; its line and text for messages.
struct ParsedInstr {
  uint32_t line = 0;
  std::string text, opcode, guard;
  bool guard_negated = false;
  std::vector<RawOperand> ops;
};

// What decoding asks of the entry being parsed.
class EntrySlots {
 public:
  virtual ~EntrySlots() = default;
  // The slot of a register or special register; `what` names its role in messages ("destination" may not be a
  // special register).
  virtual uint32_t register_slot(const std::string& name, uint32_t line, const char* what) = 0;
  virtual uint32_t constant_slot(uint64_t bits) = 0;
  virtual uint32_t shared_address_slot(const std::string& array) = 0;  // the array's address in the shared window
  virtual uint32_t local_address_slot(const std::string& array) = 0;   // its offset in a thread's local memory
  virtual PtxEntry& entry() = 0;                                       // parameters, shared arrays, has_barrier
  virtual void branch_to(const std::string& label) = 0;                // the instruction being decoded jumps there
};

// PTX ISA instruction -> PtxInstr; throws std::invalid_argument naming the instruction and its line when it is
// unknown or in a form the executor does not model.
PtxInstr decode_instruction(const ParsedInstr& p, EntrySlots& slots);

}  // namespace doorbell::mockgpu::nv
