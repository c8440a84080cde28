// Blocks as a whole: shared memory and bar.sync across threads, the poison that shared memory starts with, and
// faults that name the address, the instruction and the thread.
#include <gtest/gtest.h>

#include <functional>
#include <numeric>

#include "ptx_test_util.h"

namespace doorbell::mockgpu::nv {
namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

// out[i] = in[n - 1 - i] for one block of n threads, through a shared array: every thread stores its element,
// waits at the barrier, then loads its mirror's.
constexpr const char* kReverse = R"(
	.shared .align 16 .b8 db_local0[1024];
	ld.param.u64 %rd1, [data0];
	cvta.to.global.u64 %rd2, %rd1;
	ld.param.u64 %rd3, [data1];
	cvta.to.global.u64 %rd4, %rd3;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ntid.x;
	cvt.u64.u32 %rd5, %r1;
	shl.b64 %rd6, %rd5, 2;
	add.s64 %rd7, %rd4, %rd6;
	ld.global.f32 %f1, [%rd7];
	mov.u64 %rd8, db_local0;
	add.s64 %rd9, %rd8, %rd6;
	st.shared.f32 [%rd9], %f1;
	bar.sync 0;
	sub.s32 %r3, %r2, %r1;
	sub.s32 %r4, %r3, 1;
	cvt.u64.u32 %rd10, %r4;
	shl.b64 %rd11, %rd10, 2;
	add.s64 %rd12, %rd8, %rd11;
	ld.shared.f32 %f2, [%rd12];
	add.s64 %rd13, %rd2, %rd6;
	st.global.f32 [%rd13], %f2;
)";

TEST(PtxShared, ABlockReversesAnArrayThroughSharedMemory) {
  for (uint32_t n : {1u, 7u, 64u, 256u}) {
    std::vector<float> in(n), out(n, -1);
    std::iota(in.begin(), in.end(), 0.5f);
    PtxProgram p = parse_ptx(test::module(kReverse, 2));
    test::HostMemory mem;
    mem.add(in.data(), n * 4);
    mem.add(out.data(), n * 4);
    auto params = test::pointer_params({out.data(), in.data()});
    run_kernel(p, "k", {3, 1, 1}, {n, 1, 1}, params, 0, mem);
    for (uint32_t i = 0; i < n; i++) EXPECT_EQ(out[i], in[n - 1 - i]) << "n " << n << " element " << i;
  }
}

TEST(PtxShared, ATreeReductionPassesABarrierInEveryRound) {
  constexpr const char* kTreeSum = R"(
	.shared .align 4 .b8 s[1024];
	ld.param.u64 %rd1, [data0];
	ld.param.u64 %rd2, [data1];
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ntid.x;
	mov.u32 %r3, %ctaid.x;
	mad.lo.s32 %r4, %r3, %r2, %r1;
	mul.wide.u32 %rd3, %r4, 4;
	add.s64 %rd4, %rd2, %rd3;
	ld.global.u32 %r5, [%rd4];
	mov.u64 %rd5, s;
	mul.wide.u32 %rd6, %r1, 4;
	add.s64 %rd7, %rd5, %rd6;
	st.shared.u32 [%rd7], %r5;
	bar.sync 0;
	shr.u32 %r6, %r2, 1;
$L__round:
	setp.eq.u32 %p1, %r6, 0;
	@%p1 bra $L__done;
	setp.lt.u32 %p2, %r1, %r6;
	mul.wide.u32 %rd8, %r6, 4;
	add.s64 %rd9, %rd7, %rd8;
	@%p2 ld.shared.u32 %r7, [%rd9];
	@%p2 ld.shared.u32 %r8, [%rd7];
	@%p2 add.s32 %r8, %r8, %r7;
	@%p2 st.shared.u32 [%rd7], %r8;
	barrier.sync.aligned 0;
	shr.u32 %r6, %r6, 1;
	bra.uni $L__round;
$L__done:
	setp.ne.u32 %p3, %r1, 0;
	@%p3 bra $L__exit;
	ld.shared.u32 %r9, [%rd5];
	mul.wide.u32 %rd10, %r3, 4;
	add.s64 %rd11, %rd1, %rd10;
	st.global.u32 [%rd11], %r9;
$L__exit:
)";
  constexpr uint32_t kBlocks = 5, kThreads = 256;
  std::vector<uint32_t> in(kBlocks * kThreads), out(kBlocks, 0);
  for (uint32_t i = 0; i < in.size(); i++) in[i] = i * 7 + 1;
  PtxProgram p = parse_ptx(test::module(kTreeSum, 2));
  test::HostMemory mem;
  mem.add(in.data(), in.size() * 4);
  mem.add(out.data(), out.size() * 4);
  auto params = test::pointer_params({out.data(), in.data()});
  run_kernel(p, "k", {kBlocks, 1, 1}, {kThreads, 1, 1}, params, 0, mem);
  for (uint32_t b = 0; b < kBlocks; b++) {
    uint32_t want = 0;
    for (uint32_t t = 0; t < kThreads; t++) want += in[b * kThreads + t];
    EXPECT_EQ(out[b], want) << "block " << b;
  }
}

TEST(PtxShared, EveryTypeRoundTripsThroughSharedMemory) {
  // a byte pattern copied global -> shared -> global with each access type, predicated stores included
  std::vector<uint8_t> in(64), out(64 * 11, 0);
  for (size_t i = 0; i < in.size(); i++) in[i] = static_cast<uint8_t>(0x81 + 13 * i);
  const char* types[] = {"u8", "s8", "u16", "s16", "b16", "u32", "s32", "f32", "u64", "s64", "f64"};
  const char* regs[] = {"%r1", "%r1", "%r1", "%r1", "%h1", "%r1", "%r1", "%f1", "%rd5", "%rd5", "%fd1"};
  const int sizes[] = {1, 1, 2, 2, 2, 4, 4, 4, 8, 8, 8};
  std::string body = "\tld.param.u64 %rd1, [data0];\n\tld.param.u64 %rd2, [data1];\n\tmov.u64 %rd3, sh;\n\tsetp.eq.u32 %p1, 1, 1;\n";
  for (int t = 0; t < 11; t++)
    for (int off = 0; off < 64; off += sizes[t]) {
      std::string o = std::to_string(off), g = std::to_string(64 * t + off);
      body += std::string("\tld.global.") + types[t] + " " + regs[t] + ", [%rd2+" + o + "];\n";
      body += std::string("\t@%p1 st.shared.") + types[t] + " [%rd3+" + o + "], " + regs[t] + ";\n";
      std::string zero = types[t][0] == 'f' ? (sizes[t] == 4 ? "0f00000000" : "0d0000000000000000") : "0";
      body += std::string("\t@!%p1 st.shared.") + types[t] + " [%rd3+" + o + "], " + zero + ";\n";
      body += std::string("\tld.shared.") + types[t] + " " + regs[t] + ", [%rd3+" + o + "];\n";
      body += std::string("\tst.global.") + types[t] + " [%rd1+" + g + "], " + regs[t] + ";\n";
    }
  PtxProgram p = parse_ptx(test::module(body, 2, "\t.shared .align 16 .b8 sh[64];\n"));
  test::HostMemory mem;
  mem.add(in.data(), in.size());
  mem.add(out.data(), out.size());
  auto params = test::pointer_params({out.data(), in.data()});
  run_kernel(p, "k", {1, 1, 1}, {1, 1, 1}, params, 0, mem);
  for (int t = 0; t < 11; t++)
    for (size_t i = 0; i < 64; i++) EXPECT_EQ(out[64 * t + i], in[i]) << types[t] << " byte " << i;
}

TEST(PtxShared, StartsPoisonedAndIsPrivateToEachBlock) {
  // thread 0 of each block reads a word before writing it, then writes its block index: a block must never see
  // another block's value
  std::vector<uint32_t> out(8, 0);
  std::string body = R"(
	.shared .align 4 .b8 s[8];
	ld.param.u64 %rd1, [data0];
	mov.u32 %r1, %ctaid.x;
	mov.u64 %rd2, s;
	ld.shared.u32 %r2, [%rd2+4];
	mul.wide.u32 %rd3, %r1, 4;
	add.s64 %rd4, %rd1, %rd3;
	st.global.u32 [%rd4], %r2;
	st.shared.u32 [%rd2+4], %r1;
)";
  PtxProgram p = parse_ptx(test::module(body, 1));
  test::HostMemory mem;
  mem.add(out.data(), 32);
  auto params = test::pointer_params({out.data()});
  run_kernel(p, "k", {8, 1, 1}, {1, 1, 1}, params, 0, mem);
  for (uint32_t v : out) EXPECT_EQ(v, 0xCDCDCDCDu);
}

TEST(PtxShared, DynamicSharedMemoryFollowsTheStaticArrays) {
  std::vector<uint64_t> out(2, 0);
  std::string body = R"(
	.shared .align 4 .b8 s[4];
	ld.param.u64 %rd1, [data0];
	mov.u64 %rd2, dyn;
	st.global.u64 [%rd1], %rd2;
	st.shared.u64 [%rd2+24], %rd2;
	ld.shared.u64 %rd3, [%rd2+24];
	st.global.u64 [%rd1+8], %rd3;
)";
  // dynamic shared memory is declared at module scope (ptxas rejects .extern inside an entry)
  std::string text = test::module(body, 1);
  text.insert(text.find(".visible"), ".extern .shared .align 16 .b8 dyn[];\n\n");
  PtxProgram p = parse_ptx(text);
  EXPECT_THROW(parse_ptx(test::module("\t.extern .shared .align 16 .b8 dyn[];\n", 1)), std::invalid_argument);
  test::HostMemory mem;
  mem.add(out.data(), 16);
  auto params = test::pointer_params({out.data()});
  run_kernel(p, "k", {1, 1, 1}, {1, 1, 1}, params, 32, mem);
  EXPECT_EQ(out[0], 16u);
  EXPECT_EQ(out[1], 16u);
  std::string m = message_of([&] { run_kernel(p, "k", {1, 1, 1}, {1, 1, 1}, params, 16, mem); });
  EXPECT_NE(m.find("shared address 0x28 is outside the block's 32 bytes"), std::string::npos) << m;  // 16 static + 16
}

TEST(PtxFaults, UnmappedGlobalAddressNamesAddressInstructionAndThread) {
  std::vector<uint32_t> out(4, 0);
  std::string body = R"(
	ld.param.u64 %rd1, [data0];
	mov.u32 %r1, %tid.x;
	setp.eq.u32 %p1, %r1, 2;
	@%p1 mov.b64 %rd1, 0x1000;
	st.global.u32 [%rd1], %r1;
)";
  PtxProgram p = parse_ptx(test::module(body, 1));
  test::HostMemory mem;
  mem.add(out.data(), 16);
  auto params = test::pointer_params({out.data()});
  std::string m = message_of([&] { run_kernel(p, "k", {2, 1, 1}, {4, 1, 1}, params, 0, mem); });
  EXPECT_NE(m.find("0x1000"), std::string::npos) << m;
  EXPECT_NE(m.find("st.global.u32 [%rd1], %r1"), std::string::npos) << m;
  EXPECT_NE(m.find("block (0,0,0) thread (2,0,0)"), std::string::npos) << m;
  EXPECT_NE(m.find("line 20"), std::string::npos) << m;
}

TEST(PtxFaults, UnalignedAccessesFault) {
  std::vector<uint32_t> out(4, 0);
  PtxProgram g = parse_ptx(test::module("\tld.param.u64 %rd1, [data0];\n\tld.global.u32 %r1, [%rd1+2];\n", 1));
  PtxProgram s = parse_ptx(test::module("\tmov.u64 %rd1, sh;\n\tst.shared.f64 [%rd1+4], %fd1;\n", 1, "\t.shared .align 8 .b8 sh[64];\n"));
  test::HostMemory mem;
  mem.add(out.data(), 16);
  auto params = test::pointer_params({out.data()});
  std::string m = message_of([&] { run_kernel(g, "k", {1, 1, 1}, {1, 1, 1}, params, 0, mem); });
  EXPECT_NE(m.find("unaligned global address"), std::string::npos) << m;
  m = message_of([&] { run_kernel(s, "k", {1, 1, 1}, {1, 1, 1}, params, 0, mem); });
  EXPECT_NE(m.find("unaligned shared address 0x4"), std::string::npos) << m;
  EXPECT_THROW(run_kernel(s, "k", {1, 1, 1}, {1, 1, 1}, params, 0, mem), PtxFault);
}

TEST(PtxFaults, ABarrierThatAnExitedThreadNeverReachesIsAnError) {
  std::string body = R"(
	mov.u32 %r1, %tid.x;
	setp.eq.u32 %p1, %r1, 1;
	@%p1 bra $L__out;
	bar.sync 0;
$L__out:
)";
  PtxProgram p = parse_ptx(test::module(body, 1));
  test::HostMemory mem;
  std::vector<uint8_t> params(8, 0);
  std::string m = message_of([&] { run_kernel(p, "k", {1, 1, 1}, {4, 1, 1}, params, 0, mem); });
  EXPECT_NE(m.find("barrier 0 waits for thread (1,0,0), which has exited"), std::string::npos) << m;
  EXPECT_NE(m.find("bar.sync 0"), std::string::npos) << m;
}

TEST(PtxFaults, BadLaunchesAndEndlessLoopsAreErrorsNotHangs) {
  PtxProgram p = parse_ptx(test::module("$L__spin:\n\tbra.uni $L__spin;\n", 2));
  test::HostMemory mem;
  std::vector<uint8_t> params(16, 0);
  EXPECT_THROW(run_kernel(p, "k", {1, 1, 1}, {1, 1, 1}, std::span<const uint8_t>(params.data(), 8), 0, mem), std::invalid_argument);
  EXPECT_THROW(run_kernel(p, "k", {1, 1, 1}, {2048, 1, 1}, params, 0, mem), std::invalid_argument);
  EXPECT_THROW(run_kernel(p, "nope", {1, 1, 1}, {1, 1, 1}, params, 0, mem), std::invalid_argument);
  PtxRunOptions o;
  o.max_branches_per_thread = 1000;
  std::string m = message_of([&] { run_kernel(p, "k", {1, 1, 1}, {1, 1, 1}, params, 0, mem, o); });
  EXPECT_NE(m.find("more than 1000 branches"), std::string::npos) << m;
}

TEST(PtxLaunch, MaxntidLimitsTheBlock) {
  std::string src = test::module("", 1);
  src.replace(src.find("{\n"), 2, ".maxntid 64, 1, 1\n{\n");
  PtxProgram p = parse_ptx(src);
  EXPECT_EQ(p.entry("k").maxntid[0], 64u);
  test::HostMemory mem;
  std::vector<uint8_t> params(8, 0);
  EXPECT_NO_THROW(run_kernel(p, "k", {1, 1, 1}, {8, 8, 1}, params, 0, mem));
  EXPECT_THROW(run_kernel(p, "k", {1, 1, 1}, {65, 1, 1}, params, 0, mem), std::invalid_argument);
}

}  // namespace
}  // namespace doorbell::mockgpu::nv
