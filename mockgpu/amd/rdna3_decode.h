// The RDNA3 (gfx1100) instruction decoder and disassembler of the emulated AMD GPU's shader core. The decoder reads an
// instruction's fields (rdna3_inst.h) from its words; an encoding or opcode it does not know is an error naming the
// words in hex and the format, never a skip. The disassembler prints an instruction as `llvm-objdump-19 -d
// --mcpu=gfx1100` does (mnemonic with its _e32/_e64/_e64_dpp/... suffix as LLVM prints it, then the operands), so
// tests can compare the two on every kernel we compile (tests/mockgpu_amd).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "mockgpu/amd/rdna3_inst.h"

namespace doorbell::mockgpu::amd {

// Decodes the instruction at words[0]; `available` words may be read (a literal or a 64-bit encoding past the end is
// an error naming what was cut off). Throws std::invalid_argument.
Rdna3Inst decode_rdna3(const uint32_t* words, std::size_t available);

// The mnemonic of `op` in `format` (lower case, without suffix), or nullptr when the opcode is unknown.
const char* rdna3_mnemonic(Rdna3Format format, uint16_t op);
// The mnemonic of a VOPD instruction's Y half (OPY, 5 bits; rdna3_mnemonic(VOPD, op) names the X half).
const char* rdna3_vopdy_mnemonic(uint16_t opy);
// "SOP2", "VOP3", ... for messages.
const char* rdna3_format_name(Rdna3Format format);

// llvm-objdump's text for the instruction (no address, no encoding bytes, single spaces as LLVM prints them).
std::string disassemble_rdna3(const Rdna3Inst& inst);

}  // namespace doorbell::mockgpu::amd
