// The x86-64 encoder and assembler: instructions (compiler/x86/x86_inst.h) to bytes with REX, VEX and EVEX prefixes,
// ModRM, SIB, displacements and immediates, rel8/rel32 jumps patched by label (rel8 where the target is in reach),
// RIP-relative constants and calls to external functions as relocations. Every form is checked byte for byte against
// `llvm-mc-19 --show-encoding` (tests/x86/x86_encoder_test.cpp). Facts: Intel SDM vol. 2 ch. 2-3 (firmware-notes/x86-encoding.md).
//
// The x86 target renders a kernel as its listing (print_listing: Intel syntax, which llvm-mc assembles too) and
// "compiles" that listing with assemble(): the listing is the source of the PROGRAM, and what DEBUG=4 prints is
// exactly what runs. write_elf_object wraps the code in a relocatable ELF object that compiler/cpu/elf_loader.h loads
// like clang's.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/x86/x86_inst.h"

namespace doorbell::x86 {

// Names the instruction (its listing line) or the listing line, and the form that was expected.
class X86EncodeError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct Relocation {
  uint32_t offset = 0;  // of the 32-bit field in the code
  std::string symbol;   // an external function
  int64_t addend = -4;  // R_X86_64_PLT32: S + A - P
};

struct AssembledCode {
  std::string name;               // the function's symbol, at offset 0
  std::string bytes;              // code, then the constant pool
  uint32_t code_bytes = 0;        // where the code ends
  std::vector<Relocation> relocations;
};

// Appends encoded instructions; labels may be used before they are bound. Only physical registers and REG/RIP
// memory operands (an allocated function's).
class Encoder {
 public:
  void emit(const Inst& inst);
  void bind(int32_t label);                          // the label's address is the current position
  // Pool data at the current position (aligned first, padded with 0xCC). A constant's label goes between the
  // alignment and the bytes: data(align, {}); bind(label); data(1, bytes).
  void data(uint32_t align, std::string_view bytes);
  int32_t extern_symbol(std::string_view name);      // the index a SYMBOL operand names
  // Lays out the code (jumps rel8 where the target is in reach, else rel32, to a fixed point, as llvm-mc relaxes),
  // patches every jump and RIP-relative reference; throws X86EncodeError naming an unbound label.
  AssembledCode finish(std::string name);
  // Bytes so far, every jump counted at its rel8 size (finish() widens the ones whose target is out of reach).
  size_t size() const;

 private:
  // RIP-relative fields patched by finish(); `gaps` is how many gaps (below) precede them.
  struct Fixup {
    uint32_t at;      // the displacement field
    uint32_t end;     // the end of the instruction (rel fields count from there)
    int32_t label;
    uint8_t width;    // 1 (rel8) or 4
    uint32_t gaps = 0;
  };
  // What finish() sizes: a jump to a label (rel8 or rel32) or the padding of an alignment, at out_ position `pos`.
  struct Gap {
    uint32_t pos;
    int32_t label;    // jump target; -1 for an alignment
    uint8_t cc;       // condition code 0-15 of a jcc; 16 for jmp
    uint32_t align;   // alignment; 0 for a jump
    bool wide = false;
  };
  struct PendingReloc {
    uint32_t at;
    uint32_t gaps;
    int32_t symbol;
  };
  std::string out_;               // everything but the gaps
  std::vector<int64_t> labels_;   // out_ position of each bound label, -1 while unbound
  std::vector<uint32_t> label_gaps_;  // gaps before each bound label
  std::vector<Fixup> fixups_;
  std::vector<Gap> gaps_;
  std::vector<std::string> externs_;
  std::vector<PendingReloc> relocs_;
  int64_t data_start_ = -1;       // gap index of the first data() call: where the code ends
};

// Whether the instruction's operands match only forms with a VEX encoding (vcmpss into an xmm, vblendvps,
// vroundps, vpcmpeqd into a vector, ...): its vector registers must then be 0-15 (EVEX alone reaches 16-31). The
// register allocator keeps such operands there. Register numbers are not looked at: virtual registers work.
bool vex_only_form(const Inst& inst);

// The function's listing: ".intel_syntax noprefix", the global symbol, its instructions, labels and pool data
// (`.p2align`, `.byte`/`.long`), one per line. Requires an allocated function.
std::string print_listing(const MachineFunction& mf);

// Assembles a listing in print_listing's format (the subset of Intel syntax it prints; compiler/x86/x86_assembler.cpp).
// Throws X86EncodeError naming the line number, the line and what was expected.
AssembledCode assemble(std::string_view listing);

// A relocatable ELF64 x86-64 object: .text (code and pool, 64-byte aligned), the function's global symbol, and
// .rela.text with an R_X86_64_PLT32 relocation against an undefined symbol for each external call.
std::string write_elf_object(const AssembledCode& code);

}  // namespace doorbell::x86
