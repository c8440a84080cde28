// Scalar instructions of the emulated RDNA3 shader core: SOP2/SOPK/SOP1/SOPC/SOPP and SMEM loads (AMD "RDNA3
// Instruction Set Architecture" reference guide, chapters "Scalar ALU Operations", "Scalar Memory Operations" and
// "Program Flow Control"; firmware-notes/amd-rdna3-exec.md).
#include <bit>
#include <cstring>
#include <string>

#include "mockgpu/amd/wave_state.h"

namespace doorbell::mockgpu::amd {
namespace {

// Inline float constants 240-248 (0.5 -0.5 1.0 -1.0 2.0 -2.0 4.0 -4.0 1/(2pi)) as f32 and f64 bits.
constexpr uint32_t kInlineF32[9] = {0x3f000000, 0xbf000000, 0x3f800000, 0xbf800000, 0x40000000,
                                    0xc0000000, 0x40800000, 0xc0800000, 0x3e22f983};
constexpr uint64_t kInlineF64[9] = {0x3fe0000000000000, 0xbfe0000000000000, 0x3ff0000000000000,
                                    0xbff0000000000000, 0x4000000000000000, 0xc000000000000000,
                                    0x4010000000000000, 0xc010000000000000, 0x3fc45f306dc9c882};

ExecError bad_operand(uint16_t code, const char* what) {
  return ExecError{"operand code " + std::to_string(code) + " cannot be " + what};
}

uint64_t pair(const Wave& w, uint16_t code) { return w.s[code] | (uint64_t{w.s[code + 1]} << 32); }

}  // namespace

uint32_t read_scalar32(const Wave& w, uint16_t code, uint32_t literal) {
  if (code < 128) return code == operand::kNull ? 0 : w.s[code];
  if (code <= operand::kIntMax) return code - operand::kIntZero;
  if (code <= operand::kIntNegMax) return static_cast<uint32_t>(-(static_cast<int32_t>(code) - 192));
  if (code >= 240 && code <= 248) return kInlineF32[code - 240];
  switch (code) {
    case operand::kLiteral: return literal;
    case operand::kScc: return w.scc ? 1 : 0;
    case 235: return static_cast<uint32_t>(kSharedApertureBase >> 32);   // SRC_SHARED_BASE
    case 236: return static_cast<uint32_t>((kSharedApertureBase + kApertureSize - 1) >> 32);  // SHARED_LIMIT
    case 237: return static_cast<uint32_t>(kPrivateApertureBase >> 32);  // SRC_PRIVATE_BASE
    case 238: return static_cast<uint32_t>((kPrivateApertureBase + kApertureSize - 1) >> 32);
    case 251: return w.s[operand::kVccLo] == 0 ? 1 : 0;  // SRC_VCCZ
    case 252: return w.exec() == 0 ? 1 : 0;              // SRC_EXECZ
    default: throw bad_operand(code, "read as a scalar");
  }
}

uint64_t read_scalar64(const Wave& w, uint16_t code, uint32_t literal, bool f64) {
  if (code < 127) return code == operand::kNull ? 0 : pair(w, code);
  if (code <= operand::kIntMax) return code - operand::kIntZero;
  if (code <= operand::kIntNegMax) return static_cast<uint64_t>(-(static_cast<int64_t>(code) - 192));
  if (code >= 240 && code <= 248) return f64 ? kInlineF64[code - 240] : kInlineF32[code - 240];
  switch (code) {
    // A 32-bit literal for a 64-bit operand: the high dword of an f64, zero-extended for integers (LLVM 19's
    // AMDGPUDisassembler::decodeLiteralConstant; firmware-notes/amd-rdna3-exec.md).
    case operand::kLiteral: return f64 ? uint64_t{literal} << 32 : literal;
    case operand::kScc: return w.scc ? 1 : 0;
    case 235: return kSharedApertureBase;
    case 236: return kSharedApertureBase + kApertureSize - 1;
    case 237: return kPrivateApertureBase;
    case 238: return kPrivateApertureBase + kApertureSize - 1;
    default: throw bad_operand(code, "read as a 64-bit scalar");
  }
}

void write_scalar32(Wave& w, uint16_t code, uint32_t value) {
  if (code <= 107 || code == operand::kM0 || code == operand::kExecLo) {
    w.s[code] = value;
  } else if (code == operand::kNull) {
  } else if (code == operand::kExecHi) {
    // wave32: EXEC_HI does not exist as lanes; keep it zero
  } else {
    throw bad_operand(code, "written as a scalar destination");
  }
}

void write_scalar64(Wave& w, uint16_t code, uint64_t value) {
  write_scalar32(w, code, static_cast<uint32_t>(value));
  if (code != operand::kNull) write_scalar32(w, static_cast<uint16_t>(code + 1), static_cast<uint32_t>(value >> 32));
}

namespace {

int32_t as_i32(uint32_t v) { return static_cast<int32_t>(v); }

uint32_t bfe32(uint32_t v, uint32_t ctl, bool sign) {
  uint32_t off = ctl & 31, width = (ctl >> 16) & 0x7f;
  if (width == 0) return 0;
  if (width > 32) width = 32;
  uint64_t x = static_cast<uint64_t>(v) >> off;
  if (width < 32) x &= (uint64_t{1} << width) - 1;
  if (sign && width < 32 && ((x >> (width - 1)) & 1)) x |= ~((uint64_t{1} << width) - 1);
  return static_cast<uint32_t>(x);
}

uint64_t bfe64(uint64_t v, uint32_t ctl, bool sign) {
  uint32_t off = ctl & 63, width = (ctl >> 16) & 0x7f;
  if (width == 0) return 0;
  if (width > 64) width = 64;
  uint64_t x = v >> off;
  if (width < 64) x &= (uint64_t{1} << width) - 1;
  if (sign && width < 64 && ((x >> (width - 1)) & 1)) x |= ~((uint64_t{1} << width) - 1);
  return x;
}

void exec_sop2(Wave& w, const Rdna3Inst& in) {
  const uint32_t a = read_scalar32(w, in.ssrc0, in.literal), b = read_scalar32(w, in.ssrc1, in.literal);
  auto a64 = [&] { return read_scalar64(w, in.ssrc0, in.literal, false); };
  auto b64 = [&] { return read_scalar64(w, in.ssrc1, in.literal, false); };
  auto put = [&](uint32_t v) { write_scalar32(w, in.sdst, v); };
  auto put_scc = [&](uint32_t v) { write_scalar32(w, in.sdst, v); w.scc = v != 0; };
  auto put64_scc = [&](uint64_t v) { write_scalar64(w, in.sdst, v); w.scc = v != 0; };
  switch (static_cast<Sop2>(in.op)) {
    case Sop2::S_ADD_U32: { uint64_t r = uint64_t{a} + b; put(static_cast<uint32_t>(r)); w.scc = r >> 32; break; }
    case Sop2::S_SUB_U32: put(a - b); w.scc = b > a; break;
    case Sop2::S_ADD_I32: { uint32_t r = a + b; put(r); w.scc = ((~(a ^ b)) & (a ^ r)) >> 31; break; }
    case Sop2::S_SUB_I32: { uint32_t r = a - b; put(r); w.scc = ((a ^ b) & (a ^ r)) >> 31; break; }
    case Sop2::S_ADDC_U32: { uint64_t r = uint64_t{a} + b + w.scc; put(static_cast<uint32_t>(r)); w.scc = r >> 32; break; }
    case Sop2::S_SUBB_U32: { uint64_t r = uint64_t{a} - b - w.scc; put(static_cast<uint32_t>(r)); w.scc = (r >> 32) != 0; break; }
    case Sop2::S_ABSDIFF_I32: { int64_t d = int64_t{as_i32(a)} - as_i32(b); put_scc(static_cast<uint32_t>(d < 0 ? -d : d)); break; }
    case Sop2::S_LSHL_B32: put_scc(a << (b & 31)); break;
    case Sop2::S_LSHL_B64: put64_scc(a64() << (b & 63)); break;
    case Sop2::S_LSHR_B32: put_scc(a >> (b & 31)); break;
    case Sop2::S_LSHR_B64: put64_scc(a64() >> (b & 63)); break;
    case Sop2::S_ASHR_I32: put_scc(static_cast<uint32_t>(as_i32(a) >> (b & 31))); break;
    case Sop2::S_ASHR_I64: put64_scc(static_cast<uint64_t>(static_cast<int64_t>(a64()) >> (b & 63))); break;
    case Sop2::S_LSHL1_ADD_U32: case Sop2::S_LSHL2_ADD_U32: case Sop2::S_LSHL3_ADD_U32: case Sop2::S_LSHL4_ADD_U32: {
      uint32_t sh = in.op - static_cast<uint16_t>(Sop2::S_LSHL1_ADD_U32) + 1;
      uint64_t r = (uint64_t{a} << sh) + b;
      put(static_cast<uint32_t>(r));
      w.scc = (r >> 32) != 0;
      break;
    }
    case Sop2::S_MIN_I32: w.scc = as_i32(a) < as_i32(b); put(w.scc ? a : b); break;
    case Sop2::S_MIN_U32: w.scc = a < b; put(w.scc ? a : b); break;
    case Sop2::S_MAX_I32: w.scc = as_i32(a) > as_i32(b); put(w.scc ? a : b); break;
    case Sop2::S_MAX_U32: w.scc = a > b; put(w.scc ? a : b); break;
    case Sop2::S_AND_B32: put_scc(a & b); break;
    case Sop2::S_AND_B64: put64_scc(a64() & b64()); break;
    case Sop2::S_OR_B32: put_scc(a | b); break;
    case Sop2::S_OR_B64: put64_scc(a64() | b64()); break;
    case Sop2::S_XOR_B32: put_scc(a ^ b); break;
    case Sop2::S_XOR_B64: put64_scc(a64() ^ b64()); break;
    case Sop2::S_NAND_B32: put_scc(~(a & b)); break;
    case Sop2::S_NAND_B64: put64_scc(~(a64() & b64())); break;
    case Sop2::S_NOR_B32: put_scc(~(a | b)); break;
    case Sop2::S_NOR_B64: put64_scc(~(a64() | b64())); break;
    case Sop2::S_XNOR_B32: put_scc(~(a ^ b)); break;
    case Sop2::S_XNOR_B64: put64_scc(~(a64() ^ b64())); break;
    case Sop2::S_AND_NOT1_B32: put_scc(a & ~b); break;
    case Sop2::S_AND_NOT1_B64: put64_scc(a64() & ~b64()); break;
    case Sop2::S_OR_NOT1_B32: put_scc(a | ~b); break;
    case Sop2::S_OR_NOT1_B64: put64_scc(a64() | ~b64()); break;
    case Sop2::S_BFE_U32: put_scc(bfe32(a, b, false)); break;
    case Sop2::S_BFE_I32: put_scc(bfe32(a, b, true)); break;
    case Sop2::S_BFE_U64: put64_scc(bfe64(a64(), b, false)); break;
    case Sop2::S_BFE_I64: put64_scc(bfe64(a64(), b, true)); break;
    case Sop2::S_BFM_B32: put(((b & 31) == 0 && (a & 31) == 0 ? 0u : ((1u << (a & 31)) - 1)) << (b & 31)); break;
    case Sop2::S_BFM_B64: write_scalar64(w, in.sdst, ((uint64_t{1} << (a & 63)) - 1) << (b & 63)); break;
    case Sop2::S_MUL_I32: put(a * b); break;
    case Sop2::S_MUL_HI_U32: put(static_cast<uint32_t>((uint64_t{a} * b) >> 32)); break;
    case Sop2::S_MUL_HI_I32: put(static_cast<uint32_t>(static_cast<uint64_t>(int64_t{as_i32(a)} * as_i32(b)) >> 32)); break;
    case Sop2::S_CSELECT_B32: put(w.scc ? a : b); break;
    case Sop2::S_CSELECT_B64: write_scalar64(w, in.sdst, w.scc ? a64() : b64()); break;
    case Sop2::S_PACK_LL_B32_B16: put((a & 0xffff) | (b << 16)); break;
    case Sop2::S_PACK_LH_B32_B16: put((a & 0xffff) | (b & 0xffff0000)); break;
    case Sop2::S_PACK_HH_B32_B16: put((a >> 16) | (b & 0xffff0000)); break;
    case Sop2::S_PACK_HL_B32_B16: put((a >> 16) | (b << 16)); break;
    default: unimplemented(in);
  }
}

void exec_sopk(Wave& w, const Rdna3Inst& in) {
  const int32_t k = static_cast<int16_t>(in.simm16);
  const uint32_t ku = static_cast<uint16_t>(in.simm16);
  const uint32_t d = in.sdst < 128 ? w.s[in.sdst] : 0;
  switch (static_cast<Sopk>(in.op)) {
    case Sopk::S_MOVK_I32: write_scalar32(w, in.sdst, static_cast<uint32_t>(k)); break;
    case Sopk::S_CMOVK_I32: if (w.scc) write_scalar32(w, in.sdst, static_cast<uint32_t>(k)); break;
    case Sopk::S_CMPK_EQ_I32: w.scc = as_i32(d) == k; break;
    case Sopk::S_CMPK_LG_I32: w.scc = as_i32(d) != k; break;
    case Sopk::S_CMPK_GT_I32: w.scc = as_i32(d) > k; break;
    case Sopk::S_CMPK_GE_I32: w.scc = as_i32(d) >= k; break;
    case Sopk::S_CMPK_LT_I32: w.scc = as_i32(d) < k; break;
    case Sopk::S_CMPK_LE_I32: w.scc = as_i32(d) <= k; break;
    case Sopk::S_CMPK_EQ_U32: w.scc = d == ku; break;
    case Sopk::S_CMPK_LG_U32: w.scc = d != ku; break;
    case Sopk::S_CMPK_GT_U32: w.scc = d > ku; break;
    case Sopk::S_CMPK_GE_U32: w.scc = d >= ku; break;
    case Sopk::S_CMPK_LT_U32: w.scc = d < ku; break;
    case Sopk::S_CMPK_LE_U32: w.scc = d <= ku; break;
    case Sopk::S_ADDK_I32: {
      uint32_t r = d + static_cast<uint32_t>(k);
      w.scc = ((~(d ^ static_cast<uint32_t>(k))) & (d ^ r)) >> 31;
      write_scalar32(w, in.sdst, r);
      break;
    }
    case Sopk::S_MULK_I32: write_scalar32(w, in.sdst, d * static_cast<uint32_t>(k)); break;
    case Sopk::S_VERSION: break;
    // Memory is complete when its instruction retires (see exec_sopp), so the counters are always zero.
    case Sopk::S_WAITCNT_VSCNT: case Sopk::S_WAITCNT_VMCNT: case Sopk::S_WAITCNT_EXPCNT: case Sopk::S_WAITCNT_LGKMCNT: break;
    default: unimplemented(in);
  }
}

void exec_sop1(Wave& w, const Rdna3Inst& in, WaveContext& ctx) {
  auto a32 = [&] { return read_scalar32(w, in.ssrc0, in.literal); };
  auto a64 = [&] { return read_scalar64(w, in.ssrc0, in.literal, false); };
  auto saveexec = [&](auto fn) {
    uint32_t old = w.exec();
    uint32_t r = fn(a32(), old);
    write_scalar32(w, in.sdst, old);
    w.s[operand::kExecLo] = r;
    w.scc = r != 0;
  };
  switch (static_cast<Sop1>(in.op)) {
    case Sop1::S_MOV_B32: write_scalar32(w, in.sdst, a32()); break;
    case Sop1::S_MOV_B64: write_scalar64(w, in.sdst, read_scalar64(w, in.ssrc0, in.literal, true)); break;
    case Sop1::S_CMOV_B32: if (w.scc) write_scalar32(w, in.sdst, a32()); break;
    case Sop1::S_CMOV_B64: if (w.scc) write_scalar64(w, in.sdst, a64()); break;
    case Sop1::S_BREV_B32: { uint32_t v = a32(), r = 0; for (int i = 0; i < 32; ++i) r |= ((v >> i) & 1u) << (31 - i); write_scalar32(w, in.sdst, r); break; }
    case Sop1::S_CTZ_I32_B32: { uint32_t v = a32(); write_scalar32(w, in.sdst, v ? std::countr_zero(v) : 0xffffffffu); break; }
    case Sop1::S_CLZ_I32_U32: { uint32_t v = a32(); write_scalar32(w, in.sdst, v ? std::countl_zero(v) : 0xffffffffu); break; }
    case Sop1::S_CTZ_I32_B64: { uint64_t v = a64(); write_scalar32(w, in.sdst, v ? std::countr_zero(v) : 0xffffffffu); break; }
    case Sop1::S_CLZ_I32_U64: { uint64_t v = a64(); write_scalar32(w, in.sdst, v ? std::countl_zero(v) : 0xffffffffu); break; }
    case Sop1::S_SEXT_I32_I8: write_scalar32(w, in.sdst, static_cast<uint32_t>(static_cast<int8_t>(a32()))); break;
    case Sop1::S_SEXT_I32_I16: write_scalar32(w, in.sdst, static_cast<uint32_t>(static_cast<int16_t>(a32()))); break;
    case Sop1::S_ABS_I32: { int32_t v = as_i32(a32()); uint32_t r = v < 0 ? 0u - static_cast<uint32_t>(v) : static_cast<uint32_t>(v); write_scalar32(w, in.sdst, r); w.scc = r != 0; break; }
    case Sop1::S_BCNT1_I32_B32: { uint32_t r = std::popcount(a32()); write_scalar32(w, in.sdst, r); w.scc = r != 0; break; }
    case Sop1::S_BCNT1_I32_B64: { uint32_t r = std::popcount(a64()); write_scalar32(w, in.sdst, r); w.scc = r != 0; break; }
    case Sop1::S_BCNT0_I32_B32: { uint32_t r = 32 - std::popcount(a32()); write_scalar32(w, in.sdst, r); w.scc = r != 0; break; }
    case Sop1::S_NOT_B32: { uint32_t r = ~a32(); write_scalar32(w, in.sdst, r); w.scc = r != 0; break; }
    case Sop1::S_NOT_B64: { uint64_t r = ~a64(); write_scalar64(w, in.sdst, r); w.scc = r != 0; break; }
    case Sop1::S_BITSET0_B32: w.s[in.sdst] &= ~(1u << (a32() & 31)); break;
    case Sop1::S_BITSET1_B32: w.s[in.sdst] |= 1u << (a32() & 31); break;
    case Sop1::S_AND_SAVEEXEC_B32: saveexec([](uint32_t s, uint32_t e) { return s & e; }); break;
    case Sop1::S_OR_SAVEEXEC_B32: saveexec([](uint32_t s, uint32_t e) { return s | e; }); break;
    case Sop1::S_XOR_SAVEEXEC_B32: saveexec([](uint32_t s, uint32_t e) { return s ^ e; }); break;
    case Sop1::S_NAND_SAVEEXEC_B32: saveexec([](uint32_t s, uint32_t e) { return ~(s & e); }); break;
    case Sop1::S_NOR_SAVEEXEC_B32: saveexec([](uint32_t s, uint32_t e) { return ~(s | e); }); break;
    case Sop1::S_XNOR_SAVEEXEC_B32: saveexec([](uint32_t s, uint32_t e) { return ~(s ^ e); }); break;
    case Sop1::S_AND_NOT0_SAVEEXEC_B32: saveexec([](uint32_t s, uint32_t e) { return ~s & e; }); break;
    case Sop1::S_OR_NOT0_SAVEEXEC_B32: saveexec([](uint32_t s, uint32_t e) { return ~s | e; }); break;
    case Sop1::S_AND_NOT1_SAVEEXEC_B32: saveexec([](uint32_t s, uint32_t e) { return s & ~e; }); break;
    case Sop1::S_OR_NOT1_SAVEEXEC_B32: saveexec([](uint32_t s, uint32_t e) { return s | ~e; }); break;
    case Sop1::S_AND_NOT0_WREXEC_B32: { uint32_t r = ~a32() & w.exec(); w.s[operand::kExecLo] = r; write_scalar32(w, in.sdst, r); w.scc = r != 0; break; }
    case Sop1::S_AND_NOT1_WREXEC_B32: { uint32_t r = a32() & ~w.exec(); w.s[operand::kExecLo] = r; write_scalar32(w, in.sdst, r); w.scc = r != 0; break; }
    case Sop1::S_GETPC_B64: write_scalar64(w, in.sdst, w.pc + 4u * in.words); break;
    case Sop1::S_SENDMSG_RTN_B32: case Sop1::S_SENDMSG_RTN_B64: {
      // The message id is in the SSRC0 field; MSG_RTN_GET_REALTIME is 0x83 (LLVM SIDefines.h, ID_RTN_GET_REALTIME).
      if (in.ssrc0 != 0x83) unimplemented(in);
      if (!ctx.options.realtime) throw ExecError{"s_sendmsg_rtn REALTIME: no realtime counter was given to the shader core"};
      uint64_t t = ctx.options.realtime();
      if (static_cast<Sop1>(in.op) == Sop1::S_SENDMSG_RTN_B64) write_scalar64(w, in.sdst, t);
      else write_scalar32(w, in.sdst, static_cast<uint32_t>(t));
      break;
    }
    default: unimplemented(in);
  }
}

void exec_sopc(Wave& w, const Rdna3Inst& in) {
  const uint32_t a = read_scalar32(w, in.ssrc0, in.literal), b = read_scalar32(w, in.ssrc1, in.literal);
  switch (static_cast<Sopc>(in.op)) {
    case Sopc::S_CMP_EQ_I32: case Sopc::S_CMP_EQ_U32: w.scc = a == b; break;
    case Sopc::S_CMP_LG_I32: case Sopc::S_CMP_LG_U32: w.scc = a != b; break;
    case Sopc::S_CMP_GT_I32: w.scc = as_i32(a) > as_i32(b); break;
    case Sopc::S_CMP_GE_I32: w.scc = as_i32(a) >= as_i32(b); break;
    case Sopc::S_CMP_LT_I32: w.scc = as_i32(a) < as_i32(b); break;
    case Sopc::S_CMP_LE_I32: w.scc = as_i32(a) <= as_i32(b); break;
    case Sopc::S_CMP_GT_U32: w.scc = a > b; break;
    case Sopc::S_CMP_GE_U32: w.scc = a >= b; break;
    case Sopc::S_CMP_LT_U32: w.scc = a < b; break;
    case Sopc::S_CMP_LE_U32: w.scc = a <= b; break;
    case Sopc::S_BITCMP0_B32: w.scc = ((a >> (b & 31)) & 1) == 0; break;
    case Sopc::S_BITCMP1_B32: w.scc = ((a >> (b & 31)) & 1) == 1; break;
    case Sopc::S_CMP_EQ_U64: w.scc = read_scalar64(w, in.ssrc0, in.literal, false) == read_scalar64(w, in.ssrc1, in.literal, false); break;
    case Sopc::S_CMP_LG_U64: w.scc = read_scalar64(w, in.ssrc0, in.literal, false) != read_scalar64(w, in.ssrc1, in.literal, false); break;
    default: unimplemented(in);
  }
}

// Returns true when the instruction set the pc (a taken branch, or the end of the wave).
bool exec_sopp(Wave& w, const Rdna3Inst& in) {
  auto branch = [&](bool taken) {
    // Target = address of the next instruction + simm16 * 4 (ISA guide, "Program Flow Control").
    if (!taken) return false;
    w.pc = w.pc + 4 + static_cast<int64_t>(static_cast<int16_t>(in.simm16)) * 4;
    return true;
  };
  const uint32_t vcc = w.s[operand::kVccLo];
  switch (static_cast<Sopp>(in.op)) {
    // Memory completes before the issuing instruction returns in this emulator, so every counter is already zero:
    // waits, hints and scheduling directives have nothing to order (firmware-notes/amd-rdna3-exec.md).
    case Sopp::S_NOP: case Sopp::S_CLAUSE: case Sopp::S_DELAY_ALU: case Sopp::S_WAITCNT: case Sopp::S_WAITCNT_DEPCTR:
    case Sopp::S_WAIT_IDLE: case Sopp::S_SET_INST_PREFETCH_DISTANCE: case Sopp::S_SETPRIO: case Sopp::S_SLEEP:
    case Sopp::S_ICACHE_INV: case Sopp::S_INCPERFLEVEL: case Sopp::S_DECPERFLEVEL:
      return false;
    case Sopp::S_ENDPGM: w.done = true; return true;
    case Sopp::S_SENDMSG:
      // MSG_DEALLOC_VGPRS (id 3, LLVM SIDefines.h ID_DEALLOC_VGPRS_GFX11Plus) before s_endpgm: a hint that frees
      // the wave's VGPRs early; nothing to free here. Other messages (GS, interrupts) are not emulated.
      if ((in.simm16 & 0xff) == 3) return false;
      unimplemented(in);
    case Sopp::S_BARRIER: w.at_barrier = true; w.pc += 4; return true;
    case Sopp::S_BRANCH: return branch(true);
    case Sopp::S_CBRANCH_SCC0: return branch(!w.scc);
    case Sopp::S_CBRANCH_SCC1: return branch(w.scc);
    case Sopp::S_CBRANCH_VCCZ: return branch(vcc == 0);
    case Sopp::S_CBRANCH_VCCNZ: return branch(vcc != 0);
    case Sopp::S_CBRANCH_EXECZ: return branch(w.exec() == 0);
    case Sopp::S_CBRANCH_EXECNZ: return branch(w.exec() != 0);
    default: unimplemented(in);
  }
}

void exec_smem(Wave& w, const Rdna3Inst& in, WaveContext& ctx) {
  uint32_t dwords = 0;
  switch (static_cast<Smem>(in.op)) {
    case Smem::S_LOAD_B32: dwords = 1; break;
    case Smem::S_LOAD_B64: dwords = 2; break;
    case Smem::S_LOAD_B128: dwords = 4; break;
    case Smem::S_LOAD_B256: dwords = 8; break;
    case Smem::S_LOAD_B512: dwords = 16; break;
    case Smem::S_GL1_INV: case Smem::S_DCACHE_INV: return;  // no caches to invalidate
    default: unimplemented(in);
  }
  // Address = SBASE (64-bit, low 2 bits ignored) + IOFFSET + SOFFSET (ISA guide, "Scalar Memory Operations").
  uint64_t base = pair(w, in.sbase) & ~uint64_t{3};
  uint64_t soff = in.soffset == operand::kNull ? 0 : read_scalar32(w, in.soffset, in.literal);
  uint64_t va = (base + static_cast<int64_t>(in.offset) + soff) & ~uint64_t{3};
  const uint8_t* p = translate_or_fault(ctx.memory, va, dwords * 4u);
  if (in.sdst + dwords > 106) throw ExecError{"SMEM destination s" + std::to_string(in.sdst) + " + " + std::to_string(dwords) + " passes s105"};
  std::memcpy(&w.s[in.sdst], p, dwords * 4u);
}

}  // namespace

bool exec_scalar(Wave& w, const Rdna3Inst& inst, WaveContext& ctx) {
  switch (inst.format) {
    case Rdna3Format::SOP2: exec_sop2(w, inst); return false;
    case Rdna3Format::SOPK: exec_sopk(w, inst); return false;
    case Rdna3Format::SOP1: exec_sop1(w, inst, ctx); return false;
    case Rdna3Format::SOPC: exec_sopc(w, inst); return false;
    case Rdna3Format::SOPP: return exec_sopp(w, inst);
    case Rdna3Format::SMEM: exec_smem(w, inst, ctx); return false;
    default: unimplemented(inst);
  }
}

}  // namespace doorbell::mockgpu::amd
