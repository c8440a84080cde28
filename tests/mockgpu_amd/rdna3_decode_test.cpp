// The RDNA3 decoder and disassembler (mockgpu/amd/rdna3_decode.h). Every instruction's words were made by
// `llvm-mc-19 -triple=amdgcn -mcpu=gfx1100 -show-encoding <asm>` (the asm text is next to them): each decodes to the
// fields its format's layout (firmware-notes/amd-rdna3-isa.md) puts there, and disassembles back to that asm text.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "mockgpu/amd/rdna3_decode.h"

namespace doorbell::mockgpu::amd {
namespace {

struct Case {
  std::vector<uint32_t> words;
  const char* asm_text;  // what llvm-mc-19 assembled the words from (and llvm-objdump-19 prints for them)
};

// One instruction per format and operand form: literals in SOP2/SOPC/VOPC/VOP3/VOPD, SMEM with and without an
// offset, VOP3 modifiers, VOP3SD destinations, VOP3P op_sel/neg, VOPD with a shared literal, DS single/two-address,
// GLOBAL with saddr and off, an atomic with return, FLAT, SCRATCH, MUBUF, and a DPP16 source.
const std::vector<Case>& cases() {
  static const std::vector<Case> c{
    {{0x8002FF06, 0xFFFFFB88}, "s_add_u32 s2, s6, 0xfffffb88"},
    {{0xB0060078}, "s_movk_i32 s6, 0x78"},
    {{0xBE812000}, "s_and_saveexec_b32 s1, s0"},
    {{0xBF07FF02, 0x00011200}, "s_cmp_lg_u32 s2, 0x11200"},
    {{0xBF890007}, "s_waitcnt vmcnt(0) lgkmcnt(0)"},
    {{0xBF870112}, "s_delay_alu instid0(VALU_DEP_2) | instskip(NEXT) | instid1(VALU_DEP_2)"},
    {{0xBFA50009}, "s_cbranch_execz 9"},
    {{0xF4040000, 0xF8000010}, "s_load_b64 s[0:1], s[0:1], 0x10"},
    {{0xF4080100, 0xF8000000}, "s_load_b128 s[4:7], s[0:1], null"},
    {{0x7E0A0280}, "v_mov_b32_e32 v5, 0"},
    {{0x7E242112}, "v_cvt_f64_f32_e32 v[18:19], v18"},
    {{0x400A0A05}, "v_add_co_ci_u32_e32 v5, vcc_lo, s5, v5, vcc_lo"},
    {{0x58080905, 0x4F800000}, "v_fmamk_f32 v4, v5, 0x4f800000, v4"},
    {{0x7C8802FF, 0x00000223}, "v_cmp_gt_i32_e32 vcc_lo, 0x223, v1"},
    {{0x7D940080}, "v_cmpx_eq_u32_e32 0, v0"},
    {{0xD6138211, 0x23CA1506}, "v_fma_f32 v17, -v6, |v10|, 1.0 clamp"},
    {{0xD4410000, 0x000220FF, 0x000000FE}, "v_cmp_lt_i32_e64 s0, 0xfe, v16"},
    {{0xD7000006, 0x00020C02}, "v_add_co_u32 v6, s0, s2, v6"},
    {{0xD6FE7C01, 0x040D2A0F}, "v_mad_u64_u32 v[1:2], null, s15, 21, v[3:4]"},
    {{0xD6FC6A06, 0x03C80A05}, "v_div_scale_f32 v6, vcc_lo, s5, s5, 1.0"},
    {{0xCC0F4801, 0x58020702}, "v_pk_add_f16 v1, v2, v3 op_sel:[1,0] neg_lo:[0,1]"},
    {{0xCA240103, 0x020C00FF, 0x00000FFC}, "v_dual_mov_b32 v2, v3 :: v_dual_and_b32 v13, 0xffc, v0"},
    {{0xC862190D, 0x010A0490, 0x3F800000}, "v_dual_fmaak_f32 v1, v13, v12, 0x3f800000 :: v_dual_lshlrev_b32 v10, 16, v2"},
    {{0xDBFC0040, 0x0200000E}, "ds_load_b128 v[2:5], v14 offset:64"},
    {{0xD8380804, 0x00030201}, "ds_store_2addr_b32 v1, v2, v3 offset0:4 offset1:8"},
    {{0xDC4A1FF7, 0x05020002}, "global_load_u16 v5, v2, s[2:3] offset:-9"},
    {{0xDC760000, 0x007C0004}, "global_store_b128 v[4:5], v[0:3], off"},
    {{0xDCD64000, 0x02000100}, "global_atomic_add_u32 v2, v0, v1, s[0:1] glc"},
    {{0xDC500008, 0x017C0002}, "flat_load_b32 v1, v[2:3] offset:8"},
    {{0xDC690010, 0x00000100}, "scratch_store_b32 off, v1, s0 offset:16"},
    {{0xE0504010, 0x03410102}, "buffer_load_b32 v1, v2, s[4:7], s3 offen offset:16 glc"},
    {{0x7E0202FA, 0xFF00B102}, "v_mov_b32_dpp v1, v2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf"},
    {{0xD5030001, 0x08020702}, "v_add_f32_e64 v1, v2, v3 mul:2"},
  };
  return c;
}

Rdna3Inst decode(const std::vector<uint32_t>& w) { return decode_rdna3(w.data(), w.size()); }

TEST(Rdna3Disassemble, EveryCasePrintsAsLlvmAssembledItAndUsesAllItsWords) {
  for (const Case& c : cases()) {
    Rdna3Inst in = decode(c.words);
    EXPECT_EQ(in.words, c.words.size()) << c.asm_text;
    EXPECT_EQ(disassemble_rdna3(in), c.asm_text);
  }
}

TEST(Rdna3Decode, Sop2WithALiteralSource) {
  Rdna3Inst in = decode({0x8002FF06, 0xFFFFFB88});  // s_add_u32 s2, s6, 0xfffffb88
  EXPECT_EQ(in.format, Rdna3Format::SOP2);
  EXPECT_STREQ(rdna3_mnemonic(in.format, in.op), "s_add_u32");
  EXPECT_EQ(in.sdst, 2);
  EXPECT_EQ(in.ssrc0, 6);
  EXPECT_EQ(in.ssrc1, operand::kLiteral);
  EXPECT_TRUE(in.has_literal);
  EXPECT_EQ(in.literal, 0xFFFFFB88u);
  EXPECT_EQ(in.words, 2);
}

TEST(Rdna3Decode, SopkSop1SopcAndSoppFields) {
  Rdna3Inst k = decode({0xB0060078});  // s_movk_i32 s6, 0x78
  EXPECT_EQ(k.format, Rdna3Format::SOPK);
  EXPECT_EQ(k.sdst, 6);
  EXPECT_EQ(k.simm16, 0x78);
  Rdna3Inst one = decode({0xBE812000});  // s_and_saveexec_b32 s1, s0
  EXPECT_EQ(one.format, Rdna3Format::SOP1);
  EXPECT_STREQ(rdna3_mnemonic(one.format, one.op), "s_and_saveexec_b32");
  EXPECT_EQ(one.sdst, 1);
  EXPECT_EQ(one.ssrc0, 0);
  Rdna3Inst c = decode({0xBF07FF02, 0x00011200});  // s_cmp_lg_u32 s2, 0x11200
  EXPECT_EQ(c.format, Rdna3Format::SOPC);
  EXPECT_EQ(c.ssrc0, 2);
  EXPECT_EQ(c.literal, 0x11200u);
  Rdna3Inst p = decode({0xBFA5FFF7});  // s_cbranch_execz 65527: a backward branch of -9 words
  EXPECT_EQ(p.format, Rdna3Format::SOPP);
  EXPECT_STREQ(rdna3_mnemonic(p.format, p.op), "s_cbranch_execz");
  EXPECT_EQ(p.simm16, -9) << "SOPP simm16 is sign-extended";
  EXPECT_EQ(disassemble_rdna3(p), "s_cbranch_execz 65527");
}

TEST(Rdna3Decode, SmemBaseDestinationAndOffset) {
  Rdna3Inst in = decode({0xF4040000, 0xF8000010});  // s_load_b64 s[0:1], s[0:1], 0x10
  EXPECT_EQ(in.format, Rdna3Format::SMEM);
  EXPECT_STREQ(rdna3_mnemonic(in.format, in.op), "s_load_b64");
  EXPECT_EQ(in.sbase, 0);
  EXPECT_EQ(in.sdst, 0);
  EXPECT_EQ(in.offset, 0x10);
  EXPECT_EQ(in.soffset, operand::kNull);
  Rdna3Inst b = decode({0xF4080100, 0xF8000000});  // s_load_b128 s[4:7], s[0:1], null
  EXPECT_EQ(b.sdst, 4);
}

TEST(Rdna3Decode, Vop1Vop2AndVopcKeepVgprSourcesAs256PlusN) {
  Rdna3Inst v2 = decode({0x400A0A05});  // v_add_co_ci_u32_e32 v5, vcc_lo, s5, v5, vcc_lo
  EXPECT_EQ(v2.format, Rdna3Format::VOP2);
  EXPECT_EQ(v2.vdst, 5);
  EXPECT_EQ(v2.src[0], 5) << "s5";
  EXPECT_EQ(v2.src[1], operand::kVgpr0 + 5);
  Rdna3Inst k = decode({0x58080905, 0x4F800000});  // v_fmamk_f32 v4, v5, 0x4f800000, v4: K is always there
  EXPECT_TRUE(k.has_literal);
  EXPECT_EQ(k.literal, 0x4F800000u);
  EXPECT_EQ(k.src[0], operand::kVgpr0 + 5);
  Rdna3Inst c = decode({0x7C8802FF, 0x00000223});  // v_cmp_gt_i32_e32 vcc_lo, 0x223, v1
  EXPECT_EQ(c.format, Rdna3Format::VOPC);
  EXPECT_EQ(c.src[0], operand::kLiteral);
  EXPECT_EQ(c.literal, 0x223u);
  EXPECT_EQ(c.src[1], operand::kVgpr0 + 1);
  Rdna3Inst one = decode({0x7E242112});  // v_cvt_f64_f32_e32 v[18:19], v18
  EXPECT_EQ(one.format, Rdna3Format::VOP1);
  EXPECT_EQ(one.vdst, 18);
}

TEST(Rdna3Decode, Vop3ModifiersLiteralsAndSdstForms) {
  Rdna3Inst f = decode({0xD6138211, 0x23CA1506});  // v_fma_f32 v17, -v6, |v10|, 1.0 clamp
  EXPECT_EQ(f.format, Rdna3Format::VOP3);
  EXPECT_STREQ(rdna3_mnemonic(f.format, f.op), "v_fma_f32");
  EXPECT_EQ(f.vdst, 17);
  EXPECT_EQ(f.src[0], operand::kVgpr0 + 6);
  EXPECT_EQ(f.src[1], operand::kVgpr0 + 10);
  EXPECT_EQ(f.src[2], 242) << "inline 1.0";
  EXPECT_EQ(f.neg, 1);
  EXPECT_EQ(f.abs, 2);
  EXPECT_TRUE(f.clamp);
  Rdna3Inst cmp = decode({0xD4410000, 0x000220FF, 0x000000FE});  // v_cmp_lt_i32_e64 s0, 0xfe, v16
  EXPECT_EQ(cmp.op, 65) << "VOPC opcodes keep their number in VOP3";
  EXPECT_EQ(cmp.sdst, 0);
  EXPECT_TRUE(cmp.has_literal) << "gfx11 VOP3 takes a literal";
  EXPECT_EQ(cmp.literal, 0xFEu);
  EXPECT_EQ(cmp.words, 3);
  Rdna3Inst sd = decode({0xD6FE7C01, 0x040D2A0F});  // v_mad_u64_u32 v[1:2], null, s15, 21, v[3:4]
  EXPECT_EQ(sd.sdst, operand::kNull);
  EXPECT_EQ(sd.src[1], operand::kIntZero + 21);
  EXPECT_EQ(sd.src[2], operand::kVgpr0 + 3);
  Rdna3Inst ds = decode({0xD6FC6A06, 0x03C80A05});  // v_div_scale_f32 v6, vcc_lo, s5, s5, 1.0
  EXPECT_EQ(ds.sdst, operand::kVccLo);
  EXPECT_EQ(ds.abs, 0) << "VOP3SD has no ABS field";
  Rdna3Inst om = decode({0xD5030001, 0x08020702});  // v_add_f32_e64 v1, v2, v3 mul:2
  EXPECT_EQ(om.omod, 1);
}

TEST(Rdna3Decode, Vop3pOpSelAndNeg) {
  Rdna3Inst in = decode({0xCC0F4801, 0x58020702});  // v_pk_add_f16 v1, v2, v3 op_sel:[1,0] neg_lo:[0,1]
  EXPECT_EQ(in.format, Rdna3Format::VOP3P);
  EXPECT_STREQ(rdna3_mnemonic(in.format, in.op), "v_pk_add_f16");
  EXPECT_EQ(in.opsel, 1);
  EXPECT_EQ(in.opsel_hi, 7) << "OP_SEL_HI [1:0] in the second dword, [2] in bit 14";
  EXPECT_EQ(in.neg, 2);
}

TEST(Rdna3Decode, VopdHalvesAndTheSharedLiteral) {
  Rdna3Inst in = decode({0xCA240103, 0x020C00FF, 0x00000FFC});  // v_dual_mov_b32 v2, v3 :: v_dual_and_b32 v13, 0xffc, v0
  EXPECT_EQ(in.format, Rdna3Format::VOPD);
  EXPECT_STREQ(rdna3_mnemonic(in.format, in.op), "v_dual_mov_b32");
  EXPECT_STREQ(rdna3_vopdy_mnemonic(in.opy), "v_dual_and_b32");
  EXPECT_EQ(in.vdst, 2);
  EXPECT_EQ(in.src[0], operand::kVgpr0 + 3);
  EXPECT_EQ(in.vdsty, 13) << "VDSTY's low bit is the inverse of VDSTX's";
  EXPECT_EQ(in.srcy0, operand::kLiteral);
  EXPECT_EQ(in.vsrcy1, operand::kVgpr0 + 0);
  EXPECT_EQ(in.literal, 0xFFCu);
  Rdna3Inst k = decode({0xC862190D, 0x010A0490, 0x3F800000});  // v_dual_fmaak_f32 ... :: v_dual_lshlrev_b32 ...
  EXPECT_TRUE(k.has_literal) << "fmaak carries K without a 255 source";
  EXPECT_EQ(k.words, 3);
}

TEST(Rdna3Decode, DsFlatGlobalScratchAndMubufFields) {
  Rdna3Inst ds = decode({0xD8380804, 0x00030201});  // ds_store_2addr_b32 v1, v2, v3 offset0:4 offset1:8
  EXPECT_EQ(ds.format, Rdna3Format::DS);
  EXPECT_EQ(ds.addr, 1);
  EXPECT_EQ(ds.data0, 2);
  EXPECT_EQ(ds.data1, 3);
  EXPECT_EQ(ds.offset0, 4);
  EXPECT_EQ(ds.offset1, 8);
  Rdna3Inst g = decode({0xDC4A1FF7, 0x05020002});  // global_load_u16 v5, v2, s[2:3] offset:-9
  EXPECT_EQ(g.format, Rdna3Format::GLOBAL);
  EXPECT_EQ(g.vdst, 5);
  EXPECT_EQ(g.addr, 2);
  EXPECT_EQ(g.saddr, 2);
  EXPECT_EQ(g.offset, -9) << "13-bit signed offset";
  Rdna3Inst off = decode({0xDC760000, 0x007C0004});  // global_store_b128 v[4:5], v[0:3], off
  EXPECT_EQ(off.saddr, operand::kNull);
  EXPECT_EQ(off.data0, 0);
  Rdna3Inst a = decode({0xDCD64000, 0x02000100});  // global_atomic_add_u32 v2, v0, v1, s[0:1] glc
  EXPECT_TRUE(a.glc);
  EXPECT_EQ(a.vdst, 2);
  Rdna3Inst f = decode({0xDC500008, 0x017C0002});  // flat_load_b32 v1, v[2:3] offset:8
  EXPECT_EQ(f.format, Rdna3Format::FLAT);
  EXPECT_EQ(f.offset, 8);
  Rdna3Inst s = decode({0xDC690010, 0x00000100});  // scratch_store_b32 off, v1, s0 offset:16
  EXPECT_EQ(s.format, Rdna3Format::SCRATCH);
  EXPECT_FALSE(s.sve);
  EXPECT_EQ(s.saddr, 0);
  Rdna3Inst m = decode({0xE0504010, 0x03410102});  // buffer_load_b32 v1, v2, s[4:7], s3 offen offset:16 glc
  EXPECT_EQ(m.format, Rdna3Format::MUBUF);
  EXPECT_EQ(m.addr, 2);
  EXPECT_EQ(m.data0, 1);
  EXPECT_EQ(m.srsrc, 4);
  EXPECT_EQ(m.soffset, 3);
  EXPECT_TRUE(m.offen);
  EXPECT_EQ(m.offset, 16);
  EXPECT_TRUE(m.glc);
}

TEST(Rdna3Decode, ADpp16SourceKeepsItsControlWord) {
  Rdna3Inst in = decode({0x7E0202FA, 0xFF00B102});  // v_mov_b32_dpp v1, v2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
  EXPECT_EQ(in.src[0], operand::kDpp16);
  EXPECT_EQ(in.dpp, 0xFF00B102u);
  EXPECT_EQ(in.words, 2);
}

// Printing rules LLVM applies to encodings its compiler does not emit, found by disassembling random encodings with
// llvm-mc-19 (the words below; the text is llvm-mc's): a literal equal to an inline constant prints as the constant,
// FLAT offsets are unsigned, SMEM offsets signed, VOP3 op_sel/abs/neg bits an opcode does not take are not printed,
// v_mov_b16_e32 names true16 halves, a misaligned SGPR pair prints aligned.
TEST(Rdna3Disassemble, FollowsLlvmOnEncodingsTheCompilerDoesNotEmit) {
  const std::vector<Case> c{
      {{0x7E2E02FF, 0xFFFFFFF0}, "v_mov_b32_e32 v23, -16"},
      {{0xDC505FF8, 0x097C0C11}, "flat_load_b32 v9, v[17:18] offset:8184 glc"},
      {{0xF4000304, 0x0A1FFFF0}, "s_load_b32 s12, s[8:9], s5 offset:-0x10"},
      {{0xD6270821, 0x040A0E81}, "v_div_fixup_f32 v33, 1, v7, v2"},
      {{0x7E16380A}, "v_mov_b16_e32 v11.l, s10"},
      {{0xD64E0021, 0x21A81C96}, "v_max3_u16 v33, 22, s14, vcc_lo"},
      {{0xBE95017E}, "s_mov_b64 s[20:21], exec"},
  };
  for (const Case& x : c) EXPECT_EQ(disassemble_rdna3(decode(x.words)), x.asm_text);
  EXPECT_EQ(decode({0xDC505FF8, 0x097C0C11}).offset, 8184);
  EXPECT_EQ(decode({0xF4000304, 0x0A1FFFF0}).offset, -16);
}

std::string error_of(const std::vector<uint32_t>& w) {
  try {
    decode(w);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(Rdna3Decode, AnUnknownOpcodeNamesTheWordsAndTheFormat) {
  // VOP2 opcode 13 is not a gfx1100 instruction (llvm-mc-19 rejects it).
  const std::string e = error_of({0x1A0A0A05});
  EXPECT_NE(e.find("VOP2"), std::string::npos) << e;
  EXPECT_NE(e.find("0x1A0A0A05"), std::string::npos) << e;
  EXPECT_NE(e.find("13"), std::string::npos) << e;
  const std::string mimg = error_of({0xF0000000, 0});
  EXPECT_NE(mimg.find("MIMG"), std::string::npos) << mimg;
}

TEST(Rdna3Decode, ATruncatedLiteralOrSecondDwordSaysWhatIsMissing) {
  const std::string lit = error_of({0x8002FF06});  // s_add_u32 s2, s6, <literal cut off>
  EXPECT_NE(lit.find("literal"), std::string::npos) << lit;
  EXPECT_NE(lit.find("SOP2"), std::string::npos) << lit;
  const std::string vop3 = error_of({0xD6138211});  // v_fma_f32 without its source dword
  EXPECT_NE(vop3.find("second VOP3 dword"), std::string::npos) << vop3;
  EXPECT_NE(error_of({}).find("no instruction word"), std::string::npos);
  // The decoder stays usable after errors.
  EXPECT_EQ(disassemble_rdna3(decode({0x7E0A0280})), "v_mov_b32_e32 v5, 0");
}

}  // namespace
}  // namespace doorbell::mockgpu::amd
