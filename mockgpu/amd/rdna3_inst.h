// One decoded RDNA3 (gfx11) instruction, as the fields of its encoding (AMD "RDNA3 Instruction Set Architecture"
// reference guide, chapter "Microcode Formats"; recorded in firmware-notes/amd-rdna3-isa.md). Operand fields keep the
// hardware's 9-bit source encoding so the executor and the disassembler read one representation:
//   0-105 SGPR n, 106/107 VCC_LO/HI, 124 NULL, 125 M0, 126/127 EXEC_LO/HI, 128-192 integers 0..64, 193-208 -1..-16,
//   235-239 SHARED/PRIVATE_BASE/LIMIT, 240-248 0.5 -0.5 1.0 -1.0 2.0 -2.0 4.0 -4.0 1/(2pi), 250 DPP16, 233 DPP8,
//   253 SCC, 255 a 32-bit literal (in `literal`), 256-511 VGPR n-256.
// decode_rdna3 (rdna3_decode.h) fills it from the instruction words; run by the shader core (shader_core.h).
#pragma once
#include <cstdint>

namespace doorbell::mockgpu::amd {

enum class Rdna3Format : uint8_t {
  SOP2, SOPK, SOP1, SOPC, SOPP, SMEM,
  VOP1, VOP2, VOPC, VOP3, VOP3P, VOPD,
  DS, FLAT, GLOBAL, SCRATCH, MUBUF,
};

// Source operand codes named above.
namespace operand {
inline constexpr uint16_t kVccLo = 106, kVccHi = 107, kNull = 124, kM0 = 125, kExecLo = 126, kExecHi = 127;
inline constexpr uint16_t kIntZero = 128, kIntMax = 192, kIntNegMin = 193, kIntNegMax = 208;
inline constexpr uint16_t kDpp8 = 233, kDpp8Fi = 234, kDpp16 = 250;
inline constexpr uint16_t kScc = 253, kLiteral = 255, kVgpr0 = 256;
}  // namespace operand

struct Rdna3Inst {
  Rdna3Format format = Rdna3Format::SOPP;
  uint16_t op = 0;      // the opcode number in its format's list (rdna3_opcodes.h); VOPD: OPX
  uint8_t words = 1;    // instruction length in dwords, the literal included
  bool has_literal = false;
  uint32_t literal = 0;

  // Scalar formats. SOP2/SOPC/SOP1: ssrc0, ssrc1, sdst. SOPK/SOPP: simm16 (sign-extended where the op says so).
  // SMEM: sdst = SDATA, sbase = SBASE (an even SGPR index), soffset (operand code, kNull when absent), offset
  // (signed 21 bits, bytes), glc, dlc.
  uint16_t sdst = 0, ssrc0 = 0, ssrc1 = 0, sbase = 0, soffset = operand::kNull;
  int32_t simm16 = 0;

  // Vector ALU. src[0..2] are operand codes (VGPR as 256+n; VOP2 vsrc1 and VOPC vsrc1 are stored as 256+n too).
  // VOP3: vdst, sdst (VOP3SD forms such as v_add_co_u32, v_div_scale; also a VOPC's SGPR destination in VOP3),
  // abs/neg per source (bit i = src i), opsel (bit 3 = dst), clamp, omod. VOP3P: neg (NEG), neg_hi (NEG_HI),
  // opsel (OP_SEL), opsel_hi (OP_SEL_HI, 3 bits), clamp. VOP1/VOP2/VOPC may carry DPP or SDWA-free literals only.
  uint16_t vdst = 0;
  uint16_t src[3] = {0, 0, 0};
  uint8_t abs = 0, neg = 0, neg_hi = 0, opsel = 0, opsel_hi = 0, omod = 0;
  bool clamp = false;
  // DPP (src0 == kDpp16 / kDpp8): the control word as encoded; the executor applies it to src0's lanes.
  uint32_t dpp = 0;

  // VOPD (dual issue): the X half is op/vdst/src[0]/src[1]; the Y half below. Both read their sources before either
  // writes (the hardware rule the encoding's bank constraints make safe).
  uint16_t opy = 0, vdsty = 0, srcy0 = 0, vsrcy1 = 0;

  // Memory; register fields are plain VGPR indices (n, not 256+n). DS: addr (VGPR), data0, data1 (VGPRs), vdst,
  // offset0/offset1 (the two 8-bit offsets; a single-address op uses offset = offset0 | offset1 << 8 as its 16-bit
  // offset), gds. FLAT/GLOBAL/SCRATCH: addr (VGPR), data0 (store data), vdst, saddr (operand code; kNull = off/no
  // scalar base), offset (13 bits: signed for GLOBAL/SCRATCH, unsigned for FLAT), glc, slc, dlc, sve (scratch).
  // MUBUF: vaddr = addr, vdata = data0 (and vdst for loads), srsrc (SGPR index, multiple of 4), soffset (operand
  // code), offset (12 bits), offen, idxen, tfe, glc, slc, dlc.
  uint16_t addr = 0, data0 = 0, data1 = 0, saddr = operand::kNull, srsrc = 0;
  int32_t offset = 0;
  uint8_t offset0 = 0, offset1 = 0;
  bool gds = false, glc = false, slc = false, dlc = false, sve = false, offen = false, idxen = false, tfe = false;
};

}  // namespace doorbell::mockgpu::amd
