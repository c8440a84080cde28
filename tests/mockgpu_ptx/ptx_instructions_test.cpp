// The PTX interpreter instruction by instruction on hand-written snippets: exact result bits, including float edge
// cases (NaN, -0, ties, subnormals), integer wrap-around, saturating conversions, half/bfloat16 rounding,
// predication and loops.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ptx_test_util.h"

namespace doorbell::mockgpu::nv {
namespace {

using test::f32_lit;
using test::f32_lit_bits;
using test::f32_op;
using test::f32_val;
using test::f64_lit;
using test::run_words;

constexpr uint32_t kCanonicalNan = 0x7FFFFFFFu;

TEST(PtxParse, ReadsParamsRegistersLabelsAndSharedArrays) {
  PtxProgram p = parse_ptx(test::module(
      "\tmov.u64 %rd2, db_local0;\n\tmov.u64 %rd3, db_local1;\n$L__a:\n\tbra.uni $L__a;\n", 3,
      "\t.shared .align 16 .b8 db_local0[1024];\n\t.shared .align 4 .b8 db_local1[10];\n"));
  ASSERT_EQ(p.entries.size(), 1u);
  const PtxEntry& e = p.entry("k");
  ASSERT_EQ(e.params.size(), 3u);
  EXPECT_EQ(e.params[2].name, "data2");
  EXPECT_EQ(e.params[2].offset, 16u);
  EXPECT_EQ(e.param_bytes, 24u);
  ASSERT_EQ(e.shared.size(), 2u);
  EXPECT_EQ(e.shared[0].offset, 0u);
  EXPECT_EQ(e.shared[1].offset, 1024u);
  EXPECT_EQ(e.static_shared_bytes, 1034u);
  EXPECT_EQ(p.version, "8.0");
  EXPECT_EQ(p.target, "sm_90");
  EXPECT_EQ(e.code[2].op, PtxOp::Bra);
  EXPECT_EQ(e.code[2].imm, 2);
  EXPECT_THROW(p.entry("nope"), std::invalid_argument);
}

TEST(PtxParse, UnknownInstructionNamesItAndItsLine) {
  try {
    parse_ptx(test::module("\tmov.b32 %r1, 1;\n\tfrobnicate.b32 %r1, %r2;\n"));
    FAIL() << "expected a parse error";
  } catch (const std::invalid_argument& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("frobnicate.b32"), std::string::npos) << m;
    EXPECT_NE(m.find("line 16"), std::string::npos) << m;
  }
}

TEST(PtxParse, RejectsUndeclaredRegistersLabelsAndUnsupportedForms) {
  EXPECT_THROW(parse_ptx(test::module("\tmov.b32 %q1, 1;\n")), std::invalid_argument);
  EXPECT_THROW(parse_ptx(test::module("\tmov.b32 %r40, 1;\n")), std::invalid_argument);
  EXPECT_THROW(parse_ptx(test::module("\tbra $L__nowhere;\n")), std::invalid_argument);
  EXPECT_THROW(parse_ptx(test::module("\tadd.rz.f32 %f1, %f2, %f3;\n")), std::invalid_argument);
  EXPECT_THROW(parse_ptx(test::module("\tld.global.v4.f64 {%fd1, %fd2, %fd3, %fd4}, [%rd1];\n")), std::invalid_argument);
  EXPECT_THROW(parse_ptx(test::module("\tld.global.v2.f32 {%f1}, [%rd1];\n")), std::invalid_argument);
  EXPECT_THROW(parse_ptx(test::module("\tld.local.f32 %f1, [%rd1];\n")), std::invalid_argument);
  EXPECT_THROW(parse_ptx(test::module("\tld.param.u64 %rd1, [data7];\n")), std::invalid_argument);
  EXPECT_THROW(parse_ptx("garbage"), std::invalid_argument);
  EXPECT_THROW(parse_ptx(test::module("\tmov.f32 %f1, 1;\n")), std::invalid_argument);  // as ptxas: 1.0 or 0f3F800000
  EXPECT_NO_THROW(parse_ptx(test::module("\tmov.f32 %f1, 1.5;\n\tmov.f64 %fd1, 0d3FF0000000000000;\n")));
  EXPECT_THROW(parse_ptx(test::module("\tmov.b32 %r1, 1\n")), std::invalid_argument);  // no ';' before ret
}

TEST(PtxParse, DamagedModulesThrowAndNeverCrash) {
  // every prefix of a module, and the module with one character replaced at each position: parsed or rejected with
  // std::invalid_argument, nothing else
  std::string good = test::module(
      "\t.shared .align 16 .b8 db_local0[64];\n\tld.param.u64 %rd1, [data0];\n\tmov.u64 %rd2, db_local0;\n"
      "\tmov.u32 %r1, %tid.x;\n\tsetp.lt.u32 %p1, %r1, 4;\n$L__a:\n\t@!%p1 bra $L__b;\n\tld.global.v2.f32 {%f1, %f2}, [%rd1+8];\n"
      "\tcvt.rn.f16.f32 %h1, %f1;\n\tst.shared.b16 [%rd2+2], %h1;\n\tbar.sync 0;\n\tadd.rn.f32 %f3, %f1, 0f3F800000;\n$L__b:\n",
      1);
  ASSERT_NO_THROW(parse_ptx(good));
  // a module that still parses runs, or faults with an exception
  std::vector<float> buf(16, 1.0f);
  test::HostMemory mem;
  mem.add(buf.data(), buf.size() * 4);
  std::vector<uint8_t> params = test::pointer_params({buf.data()});
  PtxRunOptions opt;
  opt.max_branches_per_thread = 100;
  int rejected = 0, ran = 0;
  auto attempt = [&](const std::string& text) {
    PtxProgram p;
    try {
      p = parse_ptx(text);
    } catch (const std::invalid_argument&) {
      rejected++;
      return;
    }
    try {
      for (const PtxEntry& e : p.entries) run_kernel(p, e.name, {2, 1, 1}, {4, 1, 1}, params, 0, mem, opt);
      ran++;
    } catch (const std::exception&) {
    }
  };
  for (size_t n = 0; n < good.size(); n++) {
    attempt(good.substr(0, n));
    for (char c : {'}', '%', '[', '9', ';', '.', '{', '-', '1'}) {
      std::string bad = good;
      bad[n] = c;
      attempt(bad);
    }
  }
  EXPECT_GT(rejected, static_cast<int>(good.size()));
  EXPECT_GT(ran, 0);
}

TEST(PtxInteger, ArithmeticWrapsAtItsWidth) {
  auto w = run_words(
      "\tmov.b32 %r1, 2147483647;\n\tadd.s32 %r2, %r1, 1;\n\tcvt.s64.s32 %rd2, %r2;\n\tst.global.u64 [%rd1], %rd2;\n"
      "\tmov.b64 %rd3, -1;\n\tadd.u64 %rd4, %rd3, 2;\n\tst.global.u64 [%rd1+8], %rd4;\n"
      "\tmov.b32 %r3, 65536;\n\tmul.lo.s32 %r4, %r3, %r3;\n\tst.global.u32 [%rd1+16], %r4;\n"
      "\tmov.b32 %r5, -2147483648;\n\tneg.s32 %r6, %r5;\n\tst.global.u32 [%rd1+24], %r6;\n"
      "\tsub.s32 %r7, 0, %r1;\n\tst.global.s32 [%rd1+32], %r7;\n"
      "\tmul.hi.u32 %r8, %r5, 4;\n\tst.global.u32 [%rd1+40], %r8;\n"
      "\tmul.wide.s32 %rd5, %r5, %r5;\n\tst.global.u64 [%rd1+48], %rd5;\n"
      "\tmad.lo.s32 %r9, %r1, 2, 5;\n\tst.global.u32 [%rd1+56], %r9;\n");
  EXPECT_EQ(static_cast<int64_t>(w[0]), INT32_MIN);
  EXPECT_EQ(w[1], 1u);
  EXPECT_EQ(w[2], 0u);
  EXPECT_EQ(w[3], 0x80000000u);
  EXPECT_EQ(static_cast<int32_t>(w[4]), -2147483647);
  EXPECT_EQ(w[5], 2u);
  EXPECT_EQ(w[6], uint64_t{1} << 62);
  EXPECT_EQ(w[7], 3u);  // 2 * (2^31 - 1) + 5 wraps to 3
}

TEST(PtxInteger, DivisionAndRemainderTruncateAndSurviveZeroAndMinusOne) {
  auto w = run_words(
      "\tmov.b32 %r1, -7;\n\tmov.b32 %r2, 2;\n\tdiv.s32 %r3, %r1, %r2;\n\tst.global.s32 [%rd1], %r3;\n"
      "\trem.s32 %r4, %r1, %r2;\n\tst.global.s32 [%rd1+8], %r4;\n"
      "\tmov.b32 %r5, -2147483648;\n\tdiv.s32 %r6, %r5, -1;\n\tst.global.s32 [%rd1+16], %r6;\n"
      "\trem.s32 %r7, %r5, -1;\n\tst.global.s32 [%rd1+24], %r7;\n"
      "\tdiv.s32 %r8, %r1, 0;\n\tst.global.s32 [%rd1+32], %r8;\n"
      "\tdiv.u32 %r9, %r1, 0;\n\tst.global.u32 [%rd1+40], %r9;\n"
      "\tmov.b64 %rd2, -9;\n\tdiv.s64 %rd3, %rd2, 4;\n\tst.global.s64 [%rd1+48], %rd3;\n"
      "\tdiv.u32 %r10, %r1, %r2;\n\tst.global.u32 [%rd1+56], %r10;\n"
      "\trem.u64 %rd4, %rd2, 0;\n\tst.global.u64 [%rd1+64], %rd4;\n");
  EXPECT_EQ(static_cast<int32_t>(w[0]), -3);
  EXPECT_EQ(static_cast<int32_t>(w[1]), -1);
  EXPECT_EQ(static_cast<int32_t>(w[2]), INT32_MIN);
  EXPECT_EQ(w[3], 0u);
  EXPECT_EQ(static_cast<int32_t>(w[4]), -1);  // unspecified by the ISA: all ones, as the hardware sequence gives
  EXPECT_EQ(w[5], 0xFFFFFFFFu);
  EXPECT_EQ(static_cast<int64_t>(w[6]), -2);
  EXPECT_EQ(w[7], 0x7FFFFFFCu);  // 0xFFFFFFF9 / 2 unsigned
  EXPECT_EQ(w[8], static_cast<uint64_t>(-9));
}

TEST(PtxInteger, ShiftsClampLargeAmountsAndBitwiseOps) {
  auto w = run_words(
      "\tmov.b32 %r1, -16;\n\tshr.s32 %r2, %r1, 2;\n\tst.global.s32 [%rd1], %r2;\n"
      "\tshr.u32 %r3, %r1, 2;\n\tst.global.u32 [%rd1+8], %r3;\n"
      "\tshl.b32 %r4, %r1, 40;\n\tst.global.u32 [%rd1+16], %r4;\n"
      "\tshr.s32 %r5, %r1, 99;\n\tst.global.s32 [%rd1+24], %r5;\n"
      "\tmov.b64 %rd2, 1;\n\tshl.b64 %rd3, %rd2, 63;\n\tst.global.u64 [%rd1+32], %rd3;\n"
      "\tand.b32 %r6, %r1, 0xFF;\n\tor.b32 %r7, %r6, 1;\n\txor.b32 %r8, %r7, 3;\n\tnot.b32 %r9, %r8;\n"
      "\tst.global.u32 [%rd1+40], %r9;\n"
      "\tmin.s32 %r10, %r1, 3;\n\tmax.u32 %r11, %r1, 3;\n\tst.global.s32 [%rd1+48], %r10;\n\tst.global.u32 [%rd1+56], %r11;\n");
  EXPECT_EQ(static_cast<int32_t>(w[0]), -4);
  EXPECT_EQ(w[1], 0x3FFFFFFCu);
  EXPECT_EQ(w[2], 0u);
  EXPECT_EQ(static_cast<int32_t>(w[3]), -1);
  EXPECT_EQ(w[4], uint64_t{1} << 63);
  EXPECT_EQ(w[5], ~((0xF0u | 1u) ^ 3u));
  EXPECT_EQ(static_cast<int32_t>(w[6]), -16);
  EXPECT_EQ(w[7], 0xFFFFFFF0u);
}

TEST(PtxInteger, CvtChopsAndExtendsPerType) {
  auto w = run_words(
      "\tmov.b32 %r1, 200;\n\tcvt.s32.s8 %r2, %r1;\n\tst.global.s32 [%rd1], %r2;\n"
      "\tmov.b32 %r3, 70000;\n\tcvt.s32.s16 %r4, %r3;\n\tst.global.s32 [%rd1+8], %r4;\n"
      "\tmov.b32 %r5, -1;\n\tcvt.u64.u32 %rd2, %r5;\n\tst.global.u64 [%rd1+16], %rd2;\n"
      "\tcvt.s64.s32 %rd3, %r5;\n\tst.global.u64 [%rd1+24], %rd3;\n"
      "\tmov.b64 %rd4, 0x123456789;\n\tcvt.u32.u64 %r6, %rd4;\n\tst.global.u32 [%rd1+32], %r6;\n"
      "\tcvt.u16.u32 %h1, %r3;\n\tcvt.u32.u16 %r7, %h1;\n\tst.global.u32 [%rd1+40], %r7;\n");
  EXPECT_EQ(static_cast<int32_t>(w[0]), -56);
  EXPECT_EQ(static_cast<int32_t>(w[1]), 70000 - 65536);
  EXPECT_EQ(w[2], 0xFFFFFFFFu);
  EXPECT_EQ(w[3], UINT64_MAX);
  EXPECT_EQ(w[4], 0x23456789u);
  EXPECT_EQ(w[5], 70000u - 65536u);
}

TEST(PtxFloat, AddRoundsInFloat32NotDouble) {
  // 1 + 2^-24 is a tie in float32: rounds to even (1.0); in double it would be exact
  EXPECT_EQ(f32_val("add.rn.f32", 1.0f, std::ldexp(1.0f, -24)), 1.0f);
  EXPECT_EQ(f32_val("add.rn.f32", 1.0f + std::ldexp(1.0f, -23), std::ldexp(1.0f, -24)), 1.0f + std::ldexp(1.0f, -22));
  EXPECT_EQ(f32_val("mul.rn.f32", 3.0f, 1.0f / 3.0f), 3.0f * (1.0f / 3.0f));
  EXPECT_EQ(f32_val("sub.rn.f32", 1e-45f, 0.0f), 1e-45f);  // subnormals are kept
  EXPECT_EQ(f32_val("mul.rn.f32", std::ldexp(1.0f, -126), 0.5f), std::ldexp(1.0f, -127));
  EXPECT_EQ(f32_op("add.rn.f32", -0.0f, -0.0f), 0x80000000u);
  EXPECT_EQ(f32_op("add.rn.f32", -0.0f, 0.0f), 0u);
  EXPECT_EQ(f32_op("add.rn.f32", INFINITY, -INFINITY), kCanonicalNan);
  EXPECT_EQ(f32_op("mul.rn.f32", std::bit_cast<float>(0xFFC00001u), 1.0f), kCanonicalNan);
}

TEST(PtxFloat, DivisionSqrtAndReciprocalAreCorrectlyRounded) {
  EXPECT_EQ(f32_val("div.rn.f32", 1.0f, 3.0f), 1.0f / 3.0f);
  EXPECT_EQ(f32_val("div.rn.f32", 1.0f, 0.0f), INFINITY);
  EXPECT_EQ(f32_op("div.rn.f32", 0.0f, 0.0f), kCanonicalNan);
  EXPECT_EQ(f32_val("sqrt.rn.f32", 2.0f), std::sqrt(2.0f));
  EXPECT_EQ(f32_op("sqrt.rn.f32", -0.0f), 0x80000000u);
  EXPECT_EQ(f32_op("sqrt.rn.f32", -1.0f), kCanonicalNan);
  EXPECT_EQ(f32_val("rcp.rn.f32", 3.0f), 1.0f / 3.0f);
  EXPECT_EQ(f32_val("rcp.rn.f32", -0.0f), -INFINITY);
  EXPECT_EQ(f32_val("rcp.rn.f32", std::ldexp(1.0f, 127)), std::ldexp(1.0f, -127));  // a subnormal result
  auto w = run_words("\tmov.f64 %fd1, " + f64_lit(1.0) + ";\n\tmov.f64 %fd2, " + f64_lit(3.0) +
                     ";\n\tdiv.rn.f64 %fd3, %fd1, %fd2;\n\tst.global.f64 [%rd1], %fd3;\n\tsqrt.rn.f64 %fd4, %fd2;\n"
                     "\tst.global.f64 [%rd1+8], %fd4;\n\trcp.rn.f64 %fd5, %fd2;\n\tst.global.f64 [%rd1+16], %fd5;\n");
  EXPECT_EQ(std::bit_cast<double>(w[0]), 1.0 / 3.0);
  EXPECT_EQ(std::bit_cast<double>(w[1]), std::sqrt(3.0));
  EXPECT_EQ(std::bit_cast<double>(w[2]), 1.0 / 3.0);
}

TEST(PtxFloat, MinMaxReturnTheNumberWhenOneOperandIsNan) {
  EXPECT_EQ(f32_val("max.f32", NAN, 2.0f), 2.0f);
  EXPECT_EQ(f32_val("max.f32", 2.0f, NAN), 2.0f);
  EXPECT_EQ(f32_val("min.f32", NAN, -3.0f), -3.0f);
  EXPECT_EQ(f32_op("max.f32", NAN, NAN), kCanonicalNan);
  EXPECT_EQ(f32_op("max.f32", -0.0f, 0.0f), 0u);
  EXPECT_EQ(f32_op("min.f32", 0.0f, -0.0f), 0x80000000u);
  EXPECT_EQ(f32_val("max.f32", -INFINITY, -1e30f), -1e30f);
}

TEST(PtxFloat, FmaRoundsOnceNegAndAbsTouchOnlyTheSign) {
  float a = 1.0f + std::ldexp(1.0f, -12), c = -(1.0f + std::ldexp(1.0f, -11));
  auto w = run_words("\tmov.f32 %f1, " + f32_lit(a) + ";\n\tmov.f32 %f2, " + f32_lit(c) +
                     ";\n\tfma.rn.f32 %f3, %f1, %f1, %f2;\n\tst.global.f32 [%rd1], %f3;\n"
                     "\tmov.f32 %f4, " + f32_lit_bits(0x7FC00123u) + ";\n\tneg.f32 %f5, %f4;\n\tst.global.f32 [%rd1+8], %f5;\n"
                     "\tabs.f32 %f6, %f5;\n\tst.global.f32 [%rd1+16], %f6;\n\tneg.f32 %f7, 0f00000000;\n\tst.global.f32 [%rd1+24], %f7;\n");
  EXPECT_EQ(std::bit_cast<float>(static_cast<uint32_t>(w[0])), std::ldexp(1.0f, -24));  // exact: not rounded twice
  EXPECT_EQ(w[1], 0xFFC00123u);
  EXPECT_EQ(w[2], 0x7FC00123u);
  EXPECT_EQ(w[3], 0x80000000u);
}

TEST(PtxFloat, SetpOrderedUnorderedAndNanTests) {
  // for each comparison, bit i of the result word = setp on pair i: (1,2), (2,1), (1,1), (NaN,1)
  const char* cmps[] = {"eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"};
  const unsigned want[] = {0b0100, 0b0011, 0b0001, 0b0101, 0b0010, 0b0110, 0b1100, 0b1011, 0b1001, 0b1101, 0b1010, 0b1110, 0b0111, 0b1000};
  std::string body = "\tmov.f32 %f1, 0f3F800000;\n\tmov.f32 %f2, 0f40000000;\n\tmov.f32 %f3, 0f7FC00000;\n";
  const char* pairs[4][2] = {{"%f1", "%f2"}, {"%f2", "%f1"}, {"%f1", "%f1"}, {"%f3", "%f1"}};
  for (int c = 0; c < 14; c++) {
    body += "\tmov.b32 %r1, 0;\n";
    for (int i = 0; i < 4; i++) {
      body += std::string("\tsetp.") + cmps[c] + ".f32 %p1, " + pairs[i][0] + ", " + pairs[i][1] + ";\n";
      body += "\t@%p1 or.b32 %r1, %r1, " + std::to_string(1 << i) + ";\n";
    }
    body += "\tst.global.u32 [%rd1+" + std::to_string(8 * c) + "], %r1;\n";
  }
  auto w = run_words(body);
  for (int c = 0; c < 14; c++) EXPECT_EQ(w[c], want[c]) << cmps[c];
}

TEST(PtxFloat, SetpIntegerSignednessAndTestp) {
  auto w = run_words(
      "\tmov.b32 %r1, -1;\n\tsetp.lt.s32 %p1, %r1, 0;\n\tselp.u32 %r2, 1, 0, %p1;\n\tst.global.u32 [%rd1], %r2;\n"
      "\tsetp.lt.u32 %p2, %r1, 0;\n\tselp.u32 %r3, 1, 0, %p2;\n\tst.global.u32 [%rd1+8], %r3;\n"
      "\tsetp.hi.u32 %p3, %r1, 5;\n\tselp.u32 %r4, 1, 0, %p3;\n\tst.global.u32 [%rd1+16], %r4;\n"
      "\ttestp.subnormal.f32 %p4, 0f00000001;\n\tselp.u32 %r5, 1, 0, %p4;\n\tst.global.u32 [%rd1+24], %r5;\n"
      "\ttestp.finite.f32 %p5, 0f7F800000;\n\tselp.u32 %r6, 1, 0, %p5;\n\tst.global.u32 [%rd1+32], %r6;\n");
  EXPECT_EQ(w[0], 1u);
  EXPECT_EQ(w[1], 0u);
  EXPECT_EQ(w[2], 1u);
  EXPECT_EQ(w[3], 1u);
  EXPECT_EQ(w[4], 0u);
}

// cvt.rzi.<int>.f32 of x, as 64 bits.
uint64_t cvt_to_int(const std::string& form, float x) {
  bool wide = form.find("64") != std::string::npos;
  std::string body = "\tmov.f32 %f1, " + f32_lit(x) + ";\n\t" + form + (wide ? " %rd2, %f1;\n\tst.global.u64 [%rd1], %rd2;\n" : " %r2, %f1;\n\tst.global.u32 [%rd1], %r2;\n");
  return run_words(body)[0];
}

TEST(PtxConvert, FloatToIntegerSaturatesAndTakesNanToZero) {
  EXPECT_EQ(static_cast<int32_t>(cvt_to_int("cvt.rzi.s32.f32", 3e9f)), INT32_MAX);
  EXPECT_EQ(static_cast<int32_t>(cvt_to_int("cvt.rzi.s32.f32", -3e9f)), INT32_MIN);
  EXPECT_EQ(cvt_to_int("cvt.rzi.s32.f32", NAN), 0u);
  EXPECT_EQ(static_cast<int32_t>(cvt_to_int("cvt.rzi.s32.f32", -2.9f)), -2);
  EXPECT_EQ(static_cast<int32_t>(cvt_to_int("cvt.rni.s32.f32", 2.5f)), 2);
  EXPECT_EQ(static_cast<int32_t>(cvt_to_int("cvt.rni.s32.f32", 3.5f)), 4);
  EXPECT_EQ(static_cast<int32_t>(cvt_to_int("cvt.rmi.s32.f32", -2.1f)), -3);
  EXPECT_EQ(static_cast<int32_t>(cvt_to_int("cvt.rpi.s32.f32", 2.1f)), 3);
  EXPECT_EQ(cvt_to_int("cvt.rzi.u32.f32", -5.0f), 0u);
  EXPECT_EQ(cvt_to_int("cvt.rzi.u32.f32", 1e10f), 0xFFFFFFFFu);
  EXPECT_EQ(static_cast<int64_t>(cvt_to_int("cvt.rzi.s64.f32", 1e19f)), INT64_MAX);
  EXPECT_EQ(static_cast<int64_t>(cvt_to_int("cvt.rzi.s64.f32", -1e19f)), INT64_MIN);
  EXPECT_EQ(static_cast<int64_t>(cvt_to_int("cvt.rzi.s64.f32", -9.2233720e18f)), INT64_MIN);
  EXPECT_EQ(cvt_to_int("cvt.rzi.u64.f32", 1e20f), UINT64_MAX);
  EXPECT_EQ(cvt_to_int("cvt.rzi.u64.f32", -1.5f), 0u);
  EXPECT_EQ(cvt_to_int("cvt.rzi.u64.f32", NAN), 0u);
}

// What the PTX renderer emits for a float -> int8 / int16 CAST (PTX ISA "Operand Size Exceeding Instruction-Type
// Size": cvt writes the 8- or 16-bit result into a 32-bit register, sign- or zero-extended), saturated to the type.
TEST(PtxConvert, FloatToSubWordIntegerSaturatesToItsTypeAndExtendsInto32Bits) {
  EXPECT_EQ(static_cast<int32_t>(cvt_to_int("cvt.rzi.s8.f32", 300.0f)), 127);
  EXPECT_EQ(static_cast<int32_t>(cvt_to_int("cvt.rzi.s8.f32", -300.0f)), -128);
  EXPECT_EQ(static_cast<int32_t>(cvt_to_int("cvt.rzi.s8.f32", -2.9f)), -2);
  EXPECT_EQ(cvt_to_int("cvt.rzi.u8.f32", -3.0f), 0u);
  EXPECT_EQ(cvt_to_int("cvt.rzi.u16.f32", 1e9f), 65535u);
  EXPECT_EQ(cvt_to_int("cvt.rzi.s16.f32", NAN), 0u);
  EXPECT_EQ(static_cast<int32_t>(cvt_to_int("cvt.rzi.s16.f32", -INFINITY)), INT16_MIN);
}

TEST(PtxConvert, IntegerToFloatRoundsToNearestEven) {
  auto w = run_words(
      "\tmov.b32 %r1, 16777217;\n\tcvt.rn.f32.s32 %f1, %r1;\n\tst.global.f32 [%rd1], %f1;\n"
      "\tmov.b64 %rd2, -1;\n\tcvt.rn.f32.u64 %f2, %rd2;\n\tst.global.f32 [%rd1+8], %f2;\n"
      "\tcvt.rn.f32.s64 %f3, %rd2;\n\tst.global.f32 [%rd1+16], %f3;\n"
      "\tmov.b64 %rd3, 9007199254740993;\n\tcvt.rn.f64.s64 %fd1, %rd3;\n\tst.global.f64 [%rd1+24], %fd1;\n"
      "\tcvt.rn.f64.u32 %fd2, %r1;\n\tst.global.f64 [%rd1+32], %fd2;\n");
  EXPECT_EQ(std::bit_cast<float>(static_cast<uint32_t>(w[0])), 16777216.0f);
  EXPECT_EQ(std::bit_cast<float>(static_cast<uint32_t>(w[1])), 18446744073709551616.0f);
  EXPECT_EQ(std::bit_cast<float>(static_cast<uint32_t>(w[2])), -1.0f);
  EXPECT_EQ(std::bit_cast<double>(w[3]), 9007199254740992.0);
  EXPECT_EQ(std::bit_cast<double>(w[4]), 16777217.0);
}

uint16_t to_half(const char* form, float x) {
  auto w = run_words("\tmov.f32 %f1, " + f32_lit(x) + ";\n\t" + form + " %h1, %f1;\n\tst.global.b16 [%rd1], %h1;\n");
  return static_cast<uint16_t>(w[0]);
}

TEST(PtxConvert, Float16RoundsToNearestEvenWithSubnormalsOverflowAndNan) {
  const char* f = "cvt.rn.f16.f32";
  EXPECT_EQ(to_half(f, 1.0f), 0x3C00);
  EXPECT_EQ(to_half(f, -0.0f), 0x8000);
  EXPECT_EQ(to_half(f, 1.0f + std::ldexp(1.0f, -11)), 0x3C00);       // tie: to even
  EXPECT_EQ(to_half(f, 1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);   // tie: to even (up)
  EXPECT_EQ(to_half(f, 65504.0f), 0x7BFF);
  EXPECT_EQ(to_half(f, 65519.99f), 0x7BFF);
  EXPECT_EQ(to_half(f, 65520.0f), 0x7C00);
  EXPECT_EQ(to_half(f, -1e10f), 0xFC00);
  EXPECT_EQ(to_half(f, std::ldexp(1.0f, -24)), 0x0001);              // smallest subnormal
  EXPECT_EQ(to_half(f, std::ldexp(1.0f, -25)), 0x0000);              // tie between 0 and it: even
  EXPECT_EQ(to_half(f, 3 * std::ldexp(1.0f, -25)), 0x0002);          // 1.5 units: to even (2)
  EXPECT_EQ(to_half(f, std::ldexp(1.0f, -14) - std::ldexp(1.0f, -25)), 0x0400);  // rounds up into the normals
  EXPECT_EQ(to_half(f, NAN), 0x7FFF);
  EXPECT_EQ(to_half(f, INFINITY), 0x7C00);
  auto back = run_words("\tmov.b16 %h1, 0x0001;\n\tcvt.f32.f16 %f1, %h1;\n\tst.global.f32 [%rd1], %f1;\n"
                        "\tmov.b16 %h2, 0xFBFF;\n\tcvt.f32.f16 %f2, %h2;\n\tst.global.f32 [%rd1+8], %f2;\n"
                        "\tmov.b16 %h3, 0x7E01;\n\tcvt.f32.f16 %f3, %h3;\n\tst.global.f32 [%rd1+16], %f3;\n");
  EXPECT_EQ(std::bit_cast<float>(static_cast<uint32_t>(back[0])), std::ldexp(1.0f, -24));
  EXPECT_EQ(std::bit_cast<float>(static_cast<uint32_t>(back[1])), -65504.0f);
  EXPECT_EQ(back[2], kCanonicalNan);
}

TEST(PtxConvert, Bfloat16RoundsToNearestEven) {
  const char* f = "cvt.rn.bf16.f32";
  EXPECT_EQ(to_half(f, 1.0f), 0x3F80);
  EXPECT_EQ(to_half(f, std::bit_cast<float>(0x3F808000u)), 0x3F80);  // tie: to even
  EXPECT_EQ(to_half(f, std::bit_cast<float>(0x3F818000u)), 0x3F82);  // tie: to even (up)
  EXPECT_EQ(to_half(f, std::bit_cast<float>(0x3F808001u)), 0x3F81);
  EXPECT_EQ(to_half(f, std::bit_cast<float>(0x7F7FFFFFu)), 0x7F80);  // max float rounds to infinity
  EXPECT_EQ(to_half(f, std::bit_cast<float>(0x00018000u)), 0x0002);  // subnormal tie: to even
  EXPECT_EQ(to_half(f, std::bit_cast<float>(0xFFC12345u)), 0x7FFF);
}

TEST(PtxConvert, FloatWidthAndIntegralRounding) {
  auto w = run_words(
      "\tmov.f64 %fd1, " + f64_lit(1.0 + std::ldexp(1.0, -24)) + ";\n\tcvt.rn.f32.f64 %f1, %fd1;\n\tst.global.f32 [%rd1], %f1;\n"
      "\tmov.f64 %fd2, " + f64_lit(1e300) + ";\n\tcvt.rn.f32.f64 %f2, %fd2;\n\tst.global.f32 [%rd1+8], %f2;\n"
      "\tmov.f32 %f3, 0fC0300000;\n\tcvt.rzi.f32.f32 %f4, %f3;\n\tst.global.f32 [%rd1+16], %f4;\n"
      "\tcvt.rni.f32.f32 %f5, %f3;\n\tst.global.f32 [%rd1+24], %f5;\n"
      "\tmov.f32 %f6, 0fBF000000;\n\tcvt.rzi.f32.f32 %f7, %f6;\n\tst.global.f32 [%rd1+32], %f7;\n"
      "\tcvt.f64.f32 %fd3, %f3;\n\tst.global.f64 [%rd1+40], %fd3;\n");
  EXPECT_EQ(std::bit_cast<float>(static_cast<uint32_t>(w[0])), 1.0f);  // tie: to even
  EXPECT_EQ(std::bit_cast<float>(static_cast<uint32_t>(w[1])), INFINITY);
  EXPECT_EQ(std::bit_cast<float>(static_cast<uint32_t>(w[2])), -2.0f);  // trunc(-2.75)
  EXPECT_EQ(std::bit_cast<float>(static_cast<uint32_t>(w[3])), -3.0f);
  EXPECT_EQ(w[4], 0x80000000u);  // trunc(-0.5) is -0
  EXPECT_EQ(std::bit_cast<double>(w[5]), -2.75);
}

TEST(PtxControl, PredicatedInstructionsAndLoops) {
  // sum of 0..9 with a loop, plus a negated guard that is skipped
  auto w = run_words(
      "\tmov.b64 %rd2, 0;\n\tmov.b64 %rd3, 0;\n$L__loop0:\n\tsetp.ge.s64 %p1, %rd2, 10;\n\t@%p1 bra $L__end0;\n"
      "\tadd.s64 %rd3, %rd3, %rd2;\n\tadd.s64 %rd2, %rd2, 1;\n\tbra.uni $L__loop0;\n$L__end0:\n"
      "\tst.global.u64 [%rd1], %rd3;\n\tmov.b32 %r1, 7;\n\t@!%p1 mov.b32 %r1, 8;\n\tst.global.u32 [%rd1+8], %r1;\n"
      "\t@%p1 st.global.u32 [%rd1+16], %r1;\n\t@!%p1 st.global.u32 [%rd1+24], %r1;\n");
  EXPECT_EQ(w[0], 45u);
  EXPECT_EQ(w[1], 7u);
  EXPECT_EQ(w[2], 7u);
  EXPECT_EQ(w[3], 0u);
}

TEST(PtxControl, PredicateLogic) {
  auto w = run_words(
      "\tsetp.eq.u32 %p1, 1, 1;\n\tsetp.eq.u32 %p2, 1, 0;\n\tand.pred %p3, %p1, %p2;\n\tor.pred %p4, %p1, %p2;\n"
      "\txor.pred %p5, %p1, %p1;\n\tnot.pred %p6, %p2;\n\tmov.pred %p7, %p6;\n"
      "\tselp.u32 %r1, 1, 0, %p3;\n\tselp.u32 %r2, 1, 0, %p4;\n\tselp.u32 %r3, 1, 0, %p5;\n\tselp.u32 %r4, 1, 0, %p7;\n"
      "\tst.global.u32 [%rd1], %r1;\n\tst.global.u32 [%rd1+8], %r2;\n\tst.global.u32 [%rd1+16], %r3;\n\tst.global.u32 [%rd1+24], %r4;\n");
  EXPECT_EQ(w[0], 0u);
  EXPECT_EQ(w[1], 1u);
  EXPECT_EQ(w[2], 0u);
  EXPECT_EQ(w[3], 1u);
}

TEST(PtxMemory, LoadsExtendPerTypeAndStoresTruncate) {
  std::vector<uint8_t> in{0xFE, 0x80, 0xFF, 0x80, 0x01, 0x00, 0x00, 0x80};
  std::vector<uint64_t> out(8, 0);
  std::string body =
      "\tld.param.u64 %rd1, [data0];\n\tld.param.u64 %rd2, [data1];\n\tcvta.to.global.u64 %rd2, %rd2;\n"
      "\tld.global.s8 %r1, [%rd2];\n\tst.global.u32 [%rd1], %r1;\n\tld.global.u8 %r2, [%rd2];\n\tst.global.u32 [%rd1+8], %r2;\n"
      "\tld.global.s16 %r3, [%rd2+2];\n\tst.global.u32 [%rd1+16], %r3;\n\tld.global.u16 %r4, [%rd2+2];\n\tst.global.u32 [%rd1+24], %r4;\n"
      "\tld.global.s32 %rd3, [%rd2+4];\n\tst.global.u64 [%rd1+32], %rd3;\n\tst.global.u8 [%rd1+40], %r1;\n"
      "\tld.global.nc.b16 %h1, [%rd2];\n\tst.global.b16 [%rd1+48], %h1;\n";
  PtxProgram p = parse_ptx(test::module(body, 2));
  test::HostMemory mem;
  mem.add(out.data(), 64);
  mem.add(in.data(), in.size());
  auto params = test::pointer_params({out.data(), in.data()});
  run_kernel(p, "k", {1, 1, 1}, {1, 1, 1}, params, 0, mem);
  EXPECT_EQ(out[0], 0xFFFFFFFEu);
  EXPECT_EQ(out[1], 0xFEu);
  EXPECT_EQ(out[2], 0xFFFF80FFu);
  EXPECT_EQ(out[3], 0x80FFu);
  EXPECT_EQ(out[4], 0xFFFFFFFF80000001ull);
  EXPECT_EQ(out[5], 0xFEu);
  EXPECT_EQ(out[6], 0x80FEu);
}

TEST(PtxMemory, VectorLoadsAndStoresMoveEveryLaneAndNeedTheWholeVectorAligned) {
  std::vector<float> in{1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f, 7.5f, 8.5f};
  std::vector<uint16_t> halves{0x3C00, 0x4000, 0x4200, 0x4400};
  std::vector<float> out(12, 0);
  std::string body =
      "\tld.param.u64 %rd1, [data0];\n\tld.param.u64 %rd2, [data1];\n\tld.param.u64 %rd3, [data2];\n"
      "\tld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd2+16];\n\tld.global.v2.f32 {%f5, %f6}, [%rd2+8];\n"
      "\tst.global.v4.f32 [%rd1], {%f4, %f3, %f2, %f1};\n\tst.global.v2.f32 [%rd1+16], {%f6, %f5};\n"
      "\tld.global.v4.b16 {%h1, %h2, %h3, %h4}, [%rd3];\n\tcvt.f32.f16 %f7, %h4;\n\tst.global.f32 [%rd1+24], %f7;\n"
      "\tld.global.v2.u64 {%rd4, %rd5}, [%rd2];\n\tst.global.u64 [%rd1+32], %rd5;\n";
  PtxProgram p = parse_ptx(test::module(body, 3));
  test::HostMemory mem;
  mem.add(out.data(), out.size() * 4);
  mem.add(in.data(), in.size() * 4);
  mem.add(halves.data(), 8);
  auto params = test::pointer_params({out.data(), in.data(), halves.data()});
  run_kernel(p, "k", {1, 1, 1}, {1, 1, 1}, params, 0, mem);
  EXPECT_EQ(out[0], 8.5f);
  EXPECT_EQ(out[3], 5.5f);
  EXPECT_EQ(out[4], 4.5f);
  EXPECT_EQ(out[5], 3.5f);
  EXPECT_EQ(out[6], 4.0f);
  EXPECT_EQ(out[8], 3.5f);
  EXPECT_EQ(out[9], 4.5f);
  PtxProgram bad = parse_ptx(test::module("\tld.param.u64 %rd2, [data1];\n\tld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd2+8];\n", 3));
  try {
    run_kernel(bad, "k", {1, 1, 1}, {1, 1, 1}, params, 0, mem);
    FAIL() << "expected a fault";
  } catch (const PtxFault& e) {
    EXPECT_NE(std::string(e.what()).find("unaligned global address"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("16-byte access"), std::string::npos) << e.what();
  }
}

// A memory that implements only translate (the SM caches exactly each access then).
class TranslateOnly : public GlobalMemory {
 public:
  explicit TranslateOnly(std::vector<uint32_t>& v) : v_(v) {}
  uint8_t* translate(uint64_t va, size_t bytes) override {
    uint64_t base = 0x10000;  // the buffer's device address: not its host address
    if (va < base || va + bytes > base + v_.size() * 4) throw std::runtime_error("unmapped");
    calls++;
    return reinterpret_cast<uint8_t*>(v_.data()) + (va - base);
  }
  int calls = 0;

 private:
  std::vector<uint32_t>& v_;
};

TEST(PtxMemory, AMemoryThatOnlyTranslatesIsEnough) {
  std::vector<uint32_t> buf(32, 0);
  TranslateOnly mem(buf);
  std::string body =
      "\tld.param.u64 %rd1, [data0];\n\tmov.u32 %r1, %tid.x;\n\tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n"
      "\tmad.lo.s32 %r2, %r1, %r1, 1;\n\tst.global.u32 [%rd3], %r2;\n";
  PtxProgram p = parse_ptx(test::module(body, 1));
  std::vector<uint8_t> params(8, 0);
  params[2] = 1;  // 0x10000
  run_kernel(p, "k", {1, 1, 1}, {32, 1, 1}, params, 0, mem);
  for (uint32_t i = 0; i < 32; i++) EXPECT_EQ(buf[i], i * i + 1);
  EXPECT_GE(mem.calls, 8);  // 8 entries cached, 32 distinct words
}

// Each of 64 threads in 2 blocks writes ctaid/tid/ntid/nctaid words.
TEST(PtxLaunch, SpecialRegistersFollowTheGrid) {
  std::vector<uint32_t> out(2 * 4 * 8 * 4, 0);
  std::string body =
      "\tld.param.u64 %rd1, [data0];\n\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, %tid.y;\n\tmov.u32 %r3, %ctaid.x;\n"
      "\tmov.u32 %r4, %ntid.x;\n\tmov.u32 %r5, %ntid.y;\n\tmov.u32 %r6, %nctaid.x;\n"
      "\tmad.lo.s32 %r7, %r2, %r4, %r1;\n\tmul.lo.s32 %r8, %r4, %r5;\n\tmad.lo.s32 %r9, %r3, %r8, %r7;\n"
      "\tmul.wide.u32 %rd2, %r9, 16;\n\tadd.s64 %rd3, %rd1, %rd2;\n"
      "\tst.global.u32 [%rd3], %r3;\n\tst.global.u32 [%rd3+4], %r7;\n\tst.global.u32 [%rd3+8], %r8;\n\tst.global.u32 [%rd3+12], %r6;\n";
  PtxProgram p = parse_ptx(test::module(body, 1));
  test::HostMemory mem;
  mem.add(out.data(), out.size() * 4);
  auto params = test::pointer_params({out.data()});
  run_kernel(p, "k", {2, 1, 1}, {4, 8, 1}, params, 0, mem);
  for (uint32_t i = 0; i < 64; i++) {
    EXPECT_EQ(out[4 * i], i / 32);
    EXPECT_EQ(out[4 * i + 1], i % 32);
    EXPECT_EQ(out[4 * i + 2], 32u);
    EXPECT_EQ(out[4 * i + 3], 2u);
  }
}

}  // namespace
}  // namespace doorbell::mockgpu::nv
