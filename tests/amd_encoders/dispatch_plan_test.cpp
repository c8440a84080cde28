// Dispatch plans (hcq/amd/dispatch_plan.h): registers, user SGPRs and the PM4 stream of a dispatch, word for word;
// every rule's error; the COV5 hidden kernargs and the HSA dispatch packet byte for byte; and plans for descriptors
// LLVM 19 writes for gfx1100 and gfx942 (when built with LLVM). Facts: firmware-notes/amd-pm4.md §3, §4, §9, §10.
#include "hcq/amd/dispatch_plan.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "hcq/amd/pm4.h"
#include "tests/common/error_of.h"

#ifdef DOORBELL_HAVE_LLVM
#include "compiler/gpu/llvm/amdgpu_compiler.h"
#endif

namespace doorbell::amd {
namespace {

using doorbell::testing::error_of;
using Words = std::vector<uint32_t>;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

constexpr uint64_t kKdVa = 0x7F0000010000;
constexpr uint64_t kKernargVa = 0x7F0000020000;

// A gfx1100 wave32 kernel: properties KERNARG_SEGMENT_PTR (bit 3) | ENABLE_WAVEFRONT_SIZE32 (bit 10) = 0x408;
// RSRC2 USER_SGPR 2 << 1 | TGID_X_EN 1 << 7 = 0x84; entry 0x100 past the descriptor; 1000 bytes of LDS.
KernelDescriptor gfx11_kernel() {
  KernelDescriptor kd;
  kd.group_segment_fixed_size = 1000;
  kd.kernarg_size = 16;
  kd.kernel_code_entry_byte_offset = 0x100;
  kd.compute_pgm_rsrc1 = 0x60AF0001;
  kd.compute_pgm_rsrc2 = 0x84;
  kd.compute_pgm_rsrc3 = 0x00000010;
  kd.kernel_code_properties = 0x408;
  return kd;
}

// A gfx942 kernel: DISPATCH_PTR (bit 1) | KERNARG_SEGMENT_PTR (bit 3) | DISPATCH_ID (bit 4) = 0x1A, 6 user SGPRs:
// RSRC2 USER_SGPR 6 << 1 | TGID_X_EN 1 << 7 | TGID_Y_EN 1 << 8 = 0x18C.
KernelDescriptor gfx942_kernel() {
  KernelDescriptor kd;
  kd.kernarg_size = 24;
  kd.kernel_code_entry_byte_offset = -0x1000;
  kd.compute_pgm_rsrc1 = 0x002C0041;
  kd.compute_pgm_rsrc2 = 0x18C;
  kd.compute_pgm_rsrc3 = 0x3;
  kd.kernel_code_properties = 0x1A;
  return kd;
}

LaunchAddresses launch() {
  LaunchAddresses a;
  a.kernarg_va = kKernargVa;
  a.dispatch_packet_va = 0x7F0000030040;
  a.dispatch_id = 0x0000000500000007;
  return a;
}

Words encode(GfxIp ip, const DispatchPlan& p) {
  CmdStream s(256);
  write_dispatch(s, ip, p);
  EXPECT_EQ(s.size(), dispatch_dwords(p));
  return Words(s.words().begin(), s.words().end());
}

TEST(DispatchPlan, Gfx11Wave32KernargOnly) {
  const DispatchPlan p = plan_dispatch(GfxIp::kGc11_0, gfx11_kernel(), kKdVa, launch(), {7, 3, 1}, {64, 2, 1});
  // entry 0x7F0000010100 >> 8 = 0x7F00000101: PGM_LO 0x00000101, PGM_HI 0x7F
  EXPECT_EQ(p.pgm_lo, 0x00000101u);
  EXPECT_EQ(p.pgm_hi, 0x7Fu);
  EXPECT_EQ(p.rsrc1, 0x60AF0001u);
  // LDS_SIZE ceil(1000 / 512) = 2 at 23:15: 0x84 | 2 << 15 = 0x10084
  EXPECT_EQ(p.rsrc2, 0x00010084u);
  EXPECT_EQ(p.rsrc3, 0x10u);
  // COMPUTE_SHADER_EN 1 | FORCE_START_AT_000 1 << 2 | CS_W32_EN 1 << 15
  EXPECT_EQ(p.initiator, 0x8005u);
  EXPECT_EQ(p.num_thread, (Dim3{64, 2, 1}));
  EXPECT_EQ(p.groups, (Dim3{7, 3, 1}));
  EXPECT_EQ(p.user_data, (Words{0x00020000, 0x7F00})) << "the kernarg pointer, low word first";
  EXPECT_EQ(p.tmpring_size, 0u);
  EXPECT_EQ(p.scratch_lo, 0u);
  EXPECT_EQ(p.resource_limits, 0u);
}

TEST(DispatchPlan, Gfx11DispatchStreamWordForWord) {
  const DispatchPlan p = plan_dispatch(GfxIp::kGc11_0, gfx11_kernel(), kKdVa, launch(), {7, 3, 1}, {64, 2, 1});
  // SET_SH_REG headers: 0xC0007600 | values << 16; offsets = register - 0x2C00.
  EXPECT_EQ(encode(GfxIp::kGc11_0, p),
            (Words{0xC0027600, 0x20C, 0x00000101, 0x7F,        // PGM_LO/HI 0x2E0C
                   0xC0027600, 0x212, 0x60AF0001, 0x00010084,  // RSRC1/2 0x2E12
                   0xC0017600, 0x228, 0x10,                    // RSRC3 0x2E28 (gc 11)
                   0xC0027600, 0x210, 0, 0,                    // DISPATCH_SCRATCH_BASE_LO/HI 0x2E10
                   0xC0017600, 0x215, 0,                       // RESOURCE_LIMITS 0x2E15
                   0xC0017600, 0x218, 0,                       // TMPRING_SIZE 0x2E18
                   0xC0067600, 0x204, 0, 0, 0, 64, 2, 1,       // START_X..Z 0x2E04, NUM_THREAD_X..Z 0x2E07
                   0xC0037600, 0x21B, 0, 0, 0,                 // RESTART_X..Z 0x2E1B
                   0xC0027600, 0x240, 0x00020000, 0x7F00,      // USER_DATA_0.. 0x2E40
                   0xC0031500, 7, 3, 1, 0x8005}));             // DISPATCH_DIRECT
}

TEST(DispatchPlan, Gfx943DispatchPtrKernargAndDispatchIdInPropertyOrder) {
  const DispatchPlan p = plan_dispatch(GfxIp::kGc9_4_3, gfx942_kernel(), kKdVa, launch(), {2, 5, 1}, {256, 1, 1});
  // entry 0x7F0000010000 - 0x1000 = 0x7F000000F000 >> 8 = 0x7F000000F0
  EXPECT_EQ(p.pgm_lo, 0x000000F0u);
  EXPECT_EQ(p.pgm_hi, 0x7Fu);
  EXPECT_EQ(p.rsrc2, 0x18Cu) << "no LDS: LDS_SIZE 0";
  EXPECT_EQ(p.initiator, 0x5u) << "wave64: no CS_W32_EN";
  // dispatch ptr, kernarg ptr, dispatch id
  EXPECT_EQ(p.user_data, (Words{0x00030040, 0x7F00, 0x00020000, 0x7F00, 7, 5}));
  const Words w = encode(GfxIp::kGc9_4_3, p);
  // RSRC3 goes to 0x2E2D on gc 9.4.3: offset 0x22D
  EXPECT_EQ(Words(w.begin() + 8, w.begin() + 11), (Words{0xC0017600, 0x22D, 0x3}));
  EXPECT_EQ(Words(w.end() - 13, w.end() - 5),
            (Words{0xC0067600, 0x240, 0x00030040, 0x7F00, 0x00020000, 0x7F00, 7, 5}));
}

TEST(DispatchPlan, Gfx11PaddedUserSgprsAreZeros) {
  // LLVM pads gfx11 USER_SGPR so user + system SGPRs = 16: kernarg ptr (2) with TGID_X (1 system) -> USER_SGPR 15:
  // RSRC2 15 << 1 | 1 << 7 = 0x9E
  KernelDescriptor kd = gfx11_kernel();
  kd.compute_pgm_rsrc2 = 0x9E;
  const DispatchPlan p = plan_dispatch(GfxIp::kGc11_0, kd, kKdVa, launch(), {1, 1, 1}, {32, 1, 1});
  Words want{0x00020000, 0x7F00};
  want.resize(15, 0);
  EXPECT_EQ(p.user_data, want);
  const Words w = encode(GfxIp::kGc11_0, p);
  EXPECT_EQ(w[w.size() - 5 - 17], 0xC00F7600u) << "SET_SH_REG of 15 values";
}

TEST(DispatchPlan, UserSgprMismatchThrows) {
  KernelDescriptor kd = gfx11_kernel();
  kd.compute_pgm_rsrc2 = 0x9E;  // USER_SGPR 15: the gc 11 padding, not accepted on gc 9.4.3
  kd.kernel_code_properties = 0x8;
  std::string m = error_of([&] { plan_dispatch(GfxIp::kGc9_4_3, kd, kKdVa, launch(), {1, 1, 1}, {64, 1, 1}); });
  EXPECT_TRUE(contains(m, "the properties enable 2 user SGPRs but RSRC2.USER_SGPR is 15")) << m;
  kd.compute_pgm_rsrc2 = (4 << 1) | (1 << 7);  // 4 with one system SGPR is no padding to 16
  kd.kernel_code_properties = 0x408;
  m = error_of([&] { plan_dispatch(GfxIp::kGc11_0, kd, kKdVa, launch(), {1, 1, 1}, {64, 1, 1}); });
  EXPECT_TRUE(contains(m, "RSRC2.USER_SGPR is 4 (and user plus system SGPRs are not the padded 16)")) << m;
  kd.compute_pgm_rsrc2 = 0;  // fewer than enabled
  m = error_of([&] { plan_dispatch(GfxIp::kGc11_0, kd, kKdVa, launch(), {1, 1, 1}, {64, 1, 1}); });
  EXPECT_TRUE(contains(m, "RSRC2.USER_SGPR is 0")) << m;
}

TEST(DispatchPlan, EveryRuleThrowsNamingIt) {
  auto plan_error = [](GfxIp ip, KernelDescriptor kd, uint64_t kd_va, LaunchAddresses a, Dim3 grid, Dim3 block) {
    return error_of([&] { plan_dispatch(ip, kd, kd_va, a, grid, block); });
  };
  const GfxIp g11 = GfxIp::kGc11_0;
  const KernelDescriptor k = gfx11_kernel();
  std::string m = plan_error(g11, k, kKdVa + 0x20, launch(), {1, 1, 1}, {1, 1, 1});
  EXPECT_TRUE(contains(m, "kernel descriptor address 0x7f0000010020 is not 64-byte aligned")) << m;
  KernelDescriptor kd = k;
  kd.kernel_code_entry_byte_offset = 0x140;
  m = plan_error(g11, kd, kKdVa, launch(), {1, 1, 1}, {1, 1, 1});
  EXPECT_TRUE(contains(m, "entry 0x7f0000010140 (descriptor + entry offset) is not 256-byte aligned")) << m;
  m = plan_error(g11, k, uint64_t{1} << 48, launch(), {1, 1, 1}, {1, 1, 1});
  EXPECT_TRUE(contains(m, "is not below 2^48")) << m;
  m = plan_error(GfxIp::kGc9_4_3, k, kKdVa, launch(), {1, 1, 1}, {1, 1, 1});
  EXPECT_TRUE(contains(m, "asks for wave32 (kernel_code_properties bit 10) but gc 9.4.3 (gfx942) runs wave64 only")) << m;
  kd = k;
  kd.compute_pgm_rsrc2 |= 3 << 15;
  m = plan_error(g11, kd, kKdVa, launch(), {1, 1, 1}, {1, 1, 1});
  EXPECT_TRUE(contains(m, "the descriptor's RSRC2.LDS_SIZE is 3 (must be 0")) << m;
  kd = k;
  kd.group_segment_fixed_size = 65537;
  m = plan_error(g11, kd, kKdVa, launch(), {1, 1, 1}, {1, 1, 1});
  EXPECT_TRUE(contains(m, "group segment 65537 bytes exceeds the 64 KiB of LDS")) << m;
  kd.group_segment_fixed_size = 65536;  // exactly 64 KiB: 128 granules
  EXPECT_EQ((plan_dispatch(g11, kd, kKdVa, launch(), {1, 1, 1}, {1, 1, 1}).rsrc2 >> 15) & 0x1FF, 128u);
  m = plan_error(g11, k, kKdVa, launch(), {1, 1, 1}, {0, 1, 1});
  EXPECT_TRUE(contains(m, "block 0x1x1 has an empty dimension")) << m;
  m = plan_error(g11, k, kKdVa, launch(), {1, 1, 1}, {32, 32, 2});
  EXPECT_TRUE(contains(m, "block 32x32x2 is 2048 threads (at most 1024)")) << m;
  EXPECT_NO_THROW(plan_dispatch(g11, k, kKdVa, launch(), {1, 1, 1}, {32, 32, 1}));
  m = plan_error(g11, k, kKdVa, launch(), {1, 0, 1}, {1, 1, 1});
  EXPECT_TRUE(contains(m, "grid 1x0x1 has an empty dimension")) << m;
  LaunchAddresses a = launch();
  a.kernarg_va = 0x7F0000020004;
  m = plan_error(g11, k, kKdVa, a, {1, 1, 1}, {1, 1, 1});
  EXPECT_TRUE(contains(m, "KERNARG_SEGMENT_PTR is enabled for 16 bytes but the kernarg address 0x7f0000020004")) << m;
  a = launch();
  a.dispatch_packet_va = 0;
  m = plan_error(GfxIp::kGc9_4_3, gfx942_kernel(), kKdVa, a, {1, 1, 1}, {1, 1, 1});
  EXPECT_TRUE(contains(m, "DISPATCH_PTR is enabled but the dispatch packet address 0x0")) << m;
  kd = gfx942_kernel();
  kd.kernel_code_properties |= 1;  // PRIVATE_SEGMENT_BUFFER
  m = plan_error(GfxIp::kGc9_4_3, kd, kKdVa, launch(), {1, 1, 1}, {1, 1, 1});
  EXPECT_TRUE(contains(m, "PRIVATE_SEGMENT_BUFFER (kernel_code_properties bit 0) is not supported")) << m;
  kd = gfx942_kernel();
  kd.kernel_code_properties |= 1 << 5;
  m = plan_error(GfxIp::kGc9_4_3, kd, kKdVa, launch(), {1, 1, 1}, {1, 1, 1});
  EXPECT_TRUE(contains(m, "FLAT_SCRATCH_INIT")) << m;
  kd = gfx942_kernel();
  kd.kernarg_preload = 0x82;
  m = plan_error(GfxIp::kGc9_4_3, kd, kKdVa, launch(), {1, 1, 1}, {1, 1, 1});
  EXPECT_TRUE(contains(m, "kernarg preloading (kernarg_preload 0x82) is not supported")) << m;
  kd = gfx942_kernel();
  kd.kernel_code_properties = 0x1E;  // + QUEUE_PTR: 8 SGPRs
  kd.compute_pgm_rsrc2 = (8 << 1) | (1 << 7);
  m = plan_error(GfxIp::kGc9_4_3, kd, kKdVa, launch(), {1, 1, 1}, {1, 1, 1});
  EXPECT_TRUE(contains(m, "QUEUE_PTR is enabled but the queue address is 0")) << m;
  a = launch();
  a.queue_va = 0x7F0000040000;
  // dispatch ptr, queue ptr, kernarg ptr, dispatch id
  EXPECT_EQ(plan_dispatch(GfxIp::kGc9_4_3, kd, kKdVa, a, {1, 1, 1}, {1, 1, 1}).user_data,
            (Words{0x00030040, 0x7F00, 0x00040000, 0x7F00, 0x00020000, 0x7F00, 7, 5}));
  kd.compute_pgm_rsrc2 = (17 << 1);
  m = plan_error(GfxIp::kGc9_4_3, kd, kKdVa, a, {1, 1, 1}, {1, 1, 1});
  EXPECT_TRUE(contains(m, "RSRC2.USER_SGPR is 17 (at most 16)")) << m;
}

TEST(DispatchPlan, ScratchProgramsBaseAndTmpringSize) {
  // SCRATCH_EN (RSRC2 bit 0), 16 bytes per work-item; PRIVATE_SEGMENT_SIZE (bit 6) adds one user SGPR.
  KernelDescriptor kd = gfx11_kernel();
  kd.private_segment_fixed_size = 16;
  kd.kernel_code_properties |= 1 << 6;
  kd.compute_pgm_rsrc2 = 1 | (3 << 1) | (1 << 7);
  LaunchAddresses a = launch();
  a.scratch = {0x7F1234567800, 40};
  const DispatchPlan p = plan_dispatch(GfxIp::kGc11_0, kd, kKdVa, a, {1, 1, 1}, {32, 1, 1});
  // wave32: 16 * 32 = 512 bytes per wave = 2 units of 256: WAVES 40 | 2 << 12 = 0x2028
  EXPECT_EQ(p.tmpring_size, 0x2028u);
  // 0x7F1234567800 >> 8 = 0x7F12345678
  EXPECT_EQ(p.scratch_lo, 0x12345678u);
  EXPECT_EQ(p.scratch_hi, 0x7Fu);
  EXPECT_EQ(p.user_data, (Words{0x00020000, 0x7F00, 16})) << "kernarg ptr, then the private segment size";
  // gc 9.4.3, wave64: 16 * 64 = 1024 bytes = 1 unit of 1024: WAVES 40 | 1 << 12 = 0x1028
  kd.kernel_code_properties &= ~(1 << 10);
  EXPECT_EQ(plan_dispatch(GfxIp::kGc9_4_3, kd, kKdVa, a, {1, 1, 1}, {64, 1, 1}).tmpring_size, 0x1028u);
  a.scratch = {0x7F1234567880, 40};
  std::string m = error_of([&] { plan_dispatch(GfxIp::kGc9_4_3, kd, kKdVa, a, {1, 1, 1}, {64, 1, 1}); });
  EXPECT_TRUE(contains(m, "scratch base 0x7f1234567880 is not a nonzero 256-byte aligned address")) << m;
  a.scratch = {0x7F1234567800, 0x1000};
  m = error_of([&] { plan_dispatch(GfxIp::kGc9_4_3, kd, kKdVa, a, {1, 1, 1}, {64, 1, 1}); });
  EXPECT_TRUE(contains(m, "scratch waves 4096 is outside 1-4095")) << m;
}

TEST(DispatchPlan, ShortStreamTakesNoPartOfTheDispatch) {
  const DispatchPlan p = plan_dispatch(GfxIp::kGc11_0, gfx11_kernel(), kKdVa, launch(), {1, 1, 1}, {64, 1, 1});
  std::vector<uint32_t> memory(dispatch_dwords(p) - 1);
  CmdStream s(memory);
  const std::string m = error_of<std::logic_error>([&] { write_dispatch(s, GfxIp::kGc11_0, p); });
  EXPECT_TRUE(contains(m, "dispatch: 43 dwords at dword 0 pass the end of the stream's 42 dwords")) << m;
  EXPECT_EQ(s.size(), 0u);
}

TEST(ImplicitKernargs, Cov5FieldsAndZeros) {
  std::vector<uint8_t> area(256, 0xEE);
  write_implicit_kernargs(area, {7, 3, 1}, {64, 2, 1});
  std::vector<uint8_t> want(256, 0);
  auto put = [&](size_t at, uint64_t v, size_t n) { std::memcpy(want.data() + at, &v, n); };
  put(0, 7, 4), put(4, 3, 4), put(8, 1, 4);        // block_count x/y/z
  put(12, 64, 2), put(14, 2, 2), put(16, 1, 2);    // group_size x/y/z
  put(64, 2, 2);                                   // grid_dims: y has 6 work-items, z one -> 2
  EXPECT_EQ(area, want);
  std::vector<uint8_t> small(66);
  write_implicit_kernargs(small, {1, 1, 9}, {1, 1, 1});
  EXPECT_EQ(small[64], 3) << "z > 1: three dimensions";
  std::vector<uint8_t> tiny(65);
  const std::string m = error_of([&] { write_implicit_kernargs(tiny, {1, 1, 1}, {1, 1, 1}); });
  EXPECT_TRUE(contains(m, "the hidden kernarg area is 65 bytes (at least 66")) << m;
  EXPECT_TRUE(contains(error_of([&] { write_implicit_kernargs(area, {1, 1, 1}, {0, 1, 1}); }), "empty dimension"));
}

TEST(DispatchPacket, HsaKernelDispatchPacketBytes) {
  KernelDescriptor kd = gfx942_kernel();
  kd.private_segment_fixed_size = 32;
  kd.group_segment_fixed_size = 2048;
  const auto b = dispatch_packet_bytes(kd, kKdVa, kKernargVa, {2, 5, 1}, {256, 1, 1});
  std::array<uint8_t, 64> want{};
  auto put = [&](size_t at, uint64_t v, size_t n) { std::memcpy(want.data() + at, &v, n); };
  put(0, 0x1502, 2);  // KERNEL_DISPATCH 2 | BARRIER 1 << 8 | ACQUIRE SYSTEM 2 << 9 | RELEASE SYSTEM 2 << 11
  put(2, 2, 2);       // setup: 2 dimensions (y has 5 work-items)
  put(4, 256, 2), put(6, 1, 2), put(8, 1, 2);
  put(12, 512, 4), put(16, 5, 4), put(20, 1, 4);  // grid in work-items
  put(24, 32, 4), put(28, 2048, 4);
  put(32, kKdVa, 8), put(40, kKernargVa, 8);
  EXPECT_EQ(b, want);
  const std::string m = error_of([&] { dispatch_packet_bytes(kd, kKdVa, kKernargVa, {0x01000000, 1, 1}, {256, 1, 1}); });
  EXPECT_TRUE(contains(m, "more than 2^32-1 work-items in dimension 0")) << m;
}

#ifdef DOORBELL_HAVE_LLVM
// ---- Descriptors LLVM 19 writes ----

// LLVM 19's AMDGPU datalayout, which compile_amdgpu requires the IR to state.
const char* kIrHeader =
    "target datalayout = \"e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-"
    "p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-"
    "v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9\"\n"
    "target triple = \"amdgcn-amd-amdhsa\"\n";

AmdCodeObject compiled(const std::string& body, const char* arch, int opt_level = 2) {
  AmdgpuCompileOptions o;
  o.opt_level = opt_level;
  return read_amd_code_object(compile_amdgpu(kIrHeader + body, arch, o).object);
}

const std::string kStoreGroupId =
    "define amdgpu_kernel void @k(ptr addrspace(1) %out) #0 {\n"
    "  %g = call i32 @llvm.amdgcn.workgroup.id.x()\n"
    "  %p = getelementptr i32, ptr addrspace(1) %out, i32 %g\n"
    "  store i32 %g, ptr addrspace(1) %p\n"
    "  ret void\n"
    "}\n"
    "declare i32 @llvm.amdgcn.workgroup.id.x()\n"
    "attributes #0 = { \"amdgpu-no-implicitarg-ptr\" }\n";

TEST(DispatchPlanLlvm, Gfx1100DescriptorPadsUserSgprsAndPlansWave32) {
  AmdCodeObject co = compiled(kStoreGroupId, "gfx1100");
  const AmdKernel& k = co.kernel("k");
  // What LLVM 19 enables for gfx1100: the kernarg pointer and wave32; USER_SGPR padded to 16 - 1 (TGID_X).
  EXPECT_EQ(k.kd.kernel_code_properties & 0x7F, 0x8) << "only KERNARG_SEGMENT_PTR among the user SGPR bits";
  EXPECT_TRUE(k.kd.enable_wavefront_size32());
  EXPECT_TRUE(k.kd.enable_sgpr_workgroup_id(0));
  EXPECT_EQ(k.kd.user_sgpr_count(), 15u);
  std::printf("[ gfx1100 ] kernel_code_properties 0x%x, RSRC2 0x%x (USER_SGPR %u), RSRC1 0x%x, RSRC3 0x%x\n",
              k.kd.kernel_code_properties, k.kd.compute_pgm_rsrc2, k.kd.user_sgpr_count(), k.kd.compute_pgm_rsrc1,
              k.kd.compute_pgm_rsrc3);
  const uint64_t kd_va = 0x7F0000000000 + k.kd_address;  // the object loaded at a 256-byte aligned base
  const DispatchPlan p = plan_dispatch(GfxIp::kGc11_0, k.kd, kd_va, launch(), {4, 1, 1}, {32, 1, 1});
  EXPECT_EQ(uint64_t{p.pgm_hi} << 40 | uint64_t{p.pgm_lo} << 8, 0x7F0000000000 + k.entry_address);
  EXPECT_EQ(p.initiator, 0x8005u);
  ASSERT_EQ(p.user_data.size(), 15u);
  EXPECT_EQ(p.user_data[0], 0x00020000u);
  EXPECT_EQ(p.user_data[1], 0x7F00u);
  EXPECT_EQ(p.rsrc2 & 0xFF803F, k.kd.compute_pgm_rsrc2 & 0xFF803F) << "the descriptor's RSRC2 outside LDS_SIZE";
  EXPECT_EQ(p.rsrc3, k.kd.compute_pgm_rsrc3);
}

TEST(DispatchPlanLlvm, Gfx942DescriptorMatchesItsPropertiesExactly) {
  AmdCodeObject co = compiled(kStoreGroupId, "gfx942");
  const AmdKernel& k = co.kernel("k");
  EXPECT_FALSE(k.kd.enable_wavefront_size32());
  EXPECT_EQ(k.kd.kernel_code_properties & 0x7F, 0x8) << "only KERNARG_SEGMENT_PTR among the user SGPR bits";
  EXPECT_EQ(k.kd.user_sgpr_count(), 2u) << "no padding on gfx942";
  const DispatchPlan p = plan_dispatch(GfxIp::kGc9_4_3, k.kd, 0x7F0000000000 + k.kd_address, launch(), {4, 1, 1},
                                       {64, 1, 1});
  EXPECT_EQ(p.initiator, 0x5u);
  EXPECT_EQ(p.user_data.size(), k.kd.user_sgpr_count());
}

TEST(DispatchPlanLlvm, DispatchPtrKernelGetsThePacketAddressFirst) {
  const std::string ir =
      "define amdgpu_kernel void @k(ptr addrspace(1) %out) #0 {\n"
      "  %d = call ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()\n"
      "  %f = getelementptr i8, ptr addrspace(4) %d, i64 4\n"
      "  %v = load i16, ptr addrspace(4) %f\n"
      "  %w = zext i16 %v to i32\n"
      "  store i32 %w, ptr addrspace(1) %out\n"
      "  ret void\n"
      "}\n"
      "declare ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()\n"
      "attributes #0 = { \"amdgpu-no-implicitarg-ptr\" }\n";
  for (const char* arch : {"gfx1100", "gfx942"}) {
    AmdCodeObject co = compiled(ir, arch);
    const AmdKernel& k = co.kernel("k");
    EXPECT_TRUE(k.kd.enable_sgpr_dispatch_ptr()) << arch;
    const GfxIp ip = std::string(arch) == "gfx1100" ? GfxIp::kGc11_0 : GfxIp::kGc9_4_3;
    const DispatchPlan p = plan_dispatch(ip, k.kd, 0x7F0000000000 + k.kd_address, launch(), {1, 1, 1}, {64, 1, 1});
    ASSERT_GE(p.user_data.size(), 4u) << arch;
    EXPECT_EQ(p.user_data[0], 0x00030040u) << arch << ": dispatch ptr first";
    EXPECT_EQ(p.user_data[1], 0x7F00u) << arch;
    EXPECT_EQ(p.user_data[2], 0x00020000u) << arch << ": then the kernarg ptr";
  }
}

TEST(DispatchPlanLlvm, HiddenKernargOffsetsMatchLlvmMetadata) {
  // Without amdgpu-no-implicitarg-ptr at O0, LLVM appends the COV5 hidden arguments after the explicit 8 bytes; their
  // metadata offsets are 8 + the offsets write_implicit_kernargs uses.
  const std::string ir =
      "define amdgpu_kernel void @k(ptr addrspace(1) %out) {\n"
      "  store i32 1, ptr addrspace(1) %out\n"
      "  ret void\n"
      "}\n";
  AmdCodeObject co = compiled(ir, "gfx1100", 0);
  const MsgPack* md = co.kernel_metadata("k");
  ASSERT_NE(md, nullptr);
  std::vector<std::pair<std::string, int64_t>> hidden;
  int64_t base = -1;
  for (const MsgPack& a : md->find(".args")->array()) {
    const std::string kind = a.find(".value_kind")->as_string();
    if (kind.rfind("hidden_", 0) != 0) continue;
    if (base < 0) base = a.find(".offset")->as_int();
    hidden.emplace_back(kind, a.find(".offset")->as_int());
  }
  ASSERT_EQ(base, 8) << "the hidden area follows the one explicit pointer";
  auto offset_of = [&](const std::string& kind) -> int64_t {
    for (const auto& [k, off] : hidden)
      if (k == kind) return off - base;
    return -1;
  };
  EXPECT_EQ(offset_of("hidden_block_count_x"), 0);
  EXPECT_EQ(offset_of("hidden_block_count_y"), 4);
  EXPECT_EQ(offset_of("hidden_block_count_z"), 8);
  EXPECT_EQ(offset_of("hidden_group_size_x"), 12);
  EXPECT_EQ(offset_of("hidden_group_size_y"), 14);
  EXPECT_EQ(offset_of("hidden_group_size_z"), 16);
  EXPECT_EQ(offset_of("hidden_remainder_x"), 18);
  EXPECT_EQ(offset_of("hidden_remainder_y"), 20);
  EXPECT_EQ(offset_of("hidden_remainder_z"), 22);
  EXPECT_EQ(offset_of("hidden_grid_dims"), 64);
}
#else
TEST(DispatchPlanLlvm, SkippedWithoutLlvm) { GTEST_SKIP() << "built without DOORBELL_WITH_LLVM: no real descriptors"; }
#endif

}  // namespace
}  // namespace doorbell::amd
