// The emulated RDNA3 shader core (mockgpu/amd/shader_core.h) on hand-assembled gfx1100 programs: each program's
// words come from `llvm-mc-19 -triple=amdgcn -mcpu=gfx1100 -filetype=obj` + `llvm-objdump-19 -d` (the text is in the
// comment after the words), run through run_dispatch on a GpuMemory backed by host buffers; results are exact.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "mockgpu/amd/shader_core.h"
#include "tests/mockgpu_amd/shader_core_fixture.h"

namespace doorbell::mockgpu::amd {
namespace {

// init.s
const std::vector<uint32_t> kInit = {
    0xd71f0001, 0x000100c1,  // v_mbcnt_lo_u32_b32 v1, -1, 0
    0x96058203,  // s_mul_i32 s5, s3, 2
    0x80050205,  // s_add_u32 s5, s5, s2
    0x84058305,  // s_lshl_b32 s5, s5, 3
    0x4a020205,  // v_add_nc_u32_e32 v1, s5, v1
    0x30020284,  // v_lshlrev_b32_e32 v1, 4, v1
    0x7e040300,  // v_mov_b32_e32 v2, v0
    0x7e060202,  // v_mov_b32_e32 v3, s2
    0x7e080203,  // v_mov_b32_e32 v4, s3
    0x7e0a0204,  // v_mov_b32_e32 v5, s4
    0xdc760000, 0x00000201,  // global_store_b128 v1, v[2:5], s[0:1]
    0xbfb00000,  // s_endpgm
};
// branch.s
const std::vector<uint32_t> kBranch = {
    0xd71f0001, 0x000100c1,  // v_mbcnt_lo_u32_b32 v1, -1, 0
    0x7c980284,  // v_cmp_gt_u32_e32 vcc_lo, 4, v1
    0x7e0402ff, 0x00000064,  // v_mov_b32_e32 v2, 0x64
    0xbe84206a,  // s_and_saveexec_b32 s4, vcc_lo
    0xbfa50002,  // s_cbranch_execz skip
    0xd5250002, 0x00011501,  // v_add_nc_u32_e64 v2, v1, 10
    0x8c7e047e,  // s_or_b32 exec_lo, exec_lo, s4
    0x30060282,  // v_lshlrev_b32_e32 v3, 2, v1
    0xdc6a0000, 0x00000203,  // global_store_b32 v3, v2, s[0:1]
    0xbfb00000,  // s_endpgm
};
// valu.s
const std::vector<uint32_t> kValu = {
    0xd71f0001, 0x000100c1,  // v_mbcnt_lo_u32_b32 v1, -1, 0
    0x7e040d01,  // v_cvt_f32_u32_e32 v2, v1
    0x7e064b02,  // v_exp_f32_e32 v3, v2
    0x7e086aff, 0x3e800000,  // v_sin_f32_e32 v4, 0x3e800000
    0xd6130005, 0x03ca0502,  // v_fma_f32 v5, v2, v2, 1.0
    0xbe8500ff, 0x80000001,  // s_mov_b32 s5, 0x80000001
    0xd6fe7c06, 0x02000b01,  // v_mad_u64_u32 v[6:7], null, v1, s5, 0
    0x7e101502,  // v_cvt_f16_f32_e32 v8, v2
    0x7e1254f6,  // v_rcp_f32_e32 v9, 4.0
    0x30140285,  // v_lshlrev_b32_e32 v10, 5, v1
    0xdc760000, 0x0000020a,  // global_store_b128 v10, v[2:5], s[0:1]
    0xdc760010, 0x0000060a,  // global_store_b128 v10, v[6:9], s[0:1] offset:16
    0xbfb00000,  // s_endpgm
};
// salu.s
const std::vector<uint32_t> kSalu = {
    0xbe8400c8,  // s_mov_b32 s4, -8
    0x86058104,  // s_ashr_i32 s5, s4, 1
    0x85069c04,  // s_lshr_b32 s6, s4, 28
    0xbe8b00ff, 0x00080008,  // s_mov_b32 s11, 0x80008
    0x93070bff, 0x12345678,  // s_bfe_u32 s7, 0x12345678, s11
    0x800882c1,  // s_add_u32 s8, -1, 2
    0x98098987,  // s_cselect_b32 s9, 7, 9
    0xbf048004,  // s_cmp_lt_i32 s4, 0
    0x980a8987,  // s_cselect_b32 s10, 7, 9
    0xbe8c01c2,  // s_mov_b64 s[12:13], -2
    0x848c840c,  // s_lshl_b64 s[12:13], s[12:13], 4
    0x7e000280,  // v_mov_b32_e32 v0, 0
    0x7e020205,  // v_mov_b32_e32 v1, s5
    0x7e040206,  // v_mov_b32_e32 v2, s6
    0x7e060207,  // v_mov_b32_e32 v3, s7
    0x7e080208,  // v_mov_b32_e32 v4, s8
    0x7e0a0209,  // v_mov_b32_e32 v5, s9
    0x7e0c020a,  // v_mov_b32_e32 v6, s10
    0x7e0e020c,  // v_mov_b32_e32 v7, s12
    0x7e10020d,  // v_mov_b32_e32 v8, s13
    0xbefe0081,  // s_mov_b32 exec_lo, 1
    0xdc760000, 0x00000100,  // global_store_b128 v0, v[1:4], s[0:1]
    0xdc760010, 0x00000500,  // global_store_b128 v0, v[5:8], s[0:1] offset:16
    0xbfb00000,  // s_endpgm
};
// lds.s
const std::vector<uint32_t> kLds = {
    0x30020082,  // v_lshlrev_b32_e32 v1, 2, v0
    0xd8340000, 0x00000001,  // ds_store_b32 v1, v0
    0xbf89fc07,  // s_waitcnt lgkmcnt(0)
    0xbfbd0000,  // s_barrier
    0x4c0400bf,  // v_sub_nc_u32_e32 v2, 63, v0
    0x30040482,  // v_lshlrev_b32_e32 v2, 2, v2
    0xd8d80000, 0x03000002,  // ds_load_b32 v3, v2
    0xbf89fc07,  // s_waitcnt lgkmcnt(0)
    0xdc6a0000, 0x00000301,  // global_store_b32 v1, v3, s[0:1]
    0xbfb00000,  // s_endpgm
};
// cube.s
const std::vector<uint32_t> kCube = {
    0xd60c0000, 0x040e0501,  // v_cubeid_f32 v0, v1, v2, v3
    0xbfb00000,  // s_endpgm
};
// loop.s
const std::vector<uint32_t> kLoop = {
    0x80028102,  // s_add_u32 s2, s2, 1
    0xbfa0fffe,  // s_branch loop
};
// fault.s
const std::vector<uint32_t> kFault = {
    0x7e020280,  // v_mov_b32_e32 v1, 0
    0xdc6a0008, 0x00000101,  // global_store_b32 v1, v1, s[0:1] offset:8
    0xbfb00000,  // s_endpgm
};
// scratch.s
const std::vector<uint32_t> kScratch = {
    0x30020082,  // v_lshlrev_b32_e32 v1, 2, v0
    0xdc690000, 0x00fc0001,  // scratch_store_b32 v1, v0, off
    0xbe84008c,  // s_mov_b32 s4, 12
    0xdc510000, 0x02040000,  // scratch_load_b32 v2, off, s4
    0xbf8903f7,  // s_waitcnt vmcnt(0)
    0xdc6a0000, 0x00000201,  // global_store_b32 v1, v2, s[0:1]
    0xbfb00000,  // s_endpgm
};
// rt.s
const std::vector<uint32_t> kRealtime = {
    0xbe844d83,  // s_sendmsg_rtn_b64 s[4:5], sendmsg(MSG_RTN_GET_REALTIME)
    0xbf89fc07,  // s_waitcnt lgkmcnt(0)
    0x7e000280,  // v_mov_b32_e32 v0, 0
    0x7e020204,  // v_mov_b32_e32 v1, s4
    0x7e040205,  // v_mov_b32_e32 v2, s5
    0xdc6e0000, 0x00000100,  // global_store_b64 v0, v[1:2], s[0:1]
    0xbfb00000,  // s_endpgm
};
// dsatom.s
const std::vector<uint32_t> kDsAtomics = {
    0x30020082,  // v_lshlrev_b32_e32 v1, 2, v0
    0x7e040285,  // v_mov_b32_e32 v2, 5
    0xd8382000, 0x00020001,  // ds_store_2addr_b32 v1, v0, v2 offset1:32
    0x7e080280,  // v_mov_b32_e32 v4, 0
    0x7e0a0281,  // v_mov_b32_e32 v5, 1
    0xd8800100, 0x06000504,  // ds_add_rtn_u32 v6, v4, v5 offset:256
    0xbf89fc07,  // s_waitcnt lgkmcnt(0)
    0xd8dc2000, 0x07000001,  // ds_load_2addr_b32 v[7:8], v1 offset1:32
    0xdcd60000, 0x00000504,  // global_atomic_add_u32 v4, v5, s[0:1]
    0xd60b0009, 0x02111900,  // v_mad_u32_u24 v9, v0, 12, 4
    0xbf89fc07,  // s_waitcnt lgkmcnt(0)
    0xdc720000, 0x00000609,  // global_store_b96 v9, v[6:8], s[0:1]
    0xbfb00000,  // s_endpgm
};

// RSRC2: USER_SGPR = 2 (bits 5:1), TGID_X/Y/Z_EN (bits 7-9).
constexpr uint32_t kRsrc2TwoUserSgprsXyz = (2u << 1) | (1u << 7) | (1u << 8) | (1u << 9);

TEST(ShaderCoreInitialState, UserSgprsWorkgroupIdsPackedTidsAndPartialExec) {
  ShaderCoreFixture f;
  // Workgroup 3x2x1 = 6 live lanes of 32; grid 2x3x1. Each lane writes {v0, s2, s3, s4} at record
  // (tgid_y * 2 + tgid_x) * 8 + lane; lanes 6 and 7 of each group of 8 records must stay untouched.
  std::vector<uint32_t> out(6 * 8 * 4, 0xdeadbeefu);
  uint64_t out_va = f.map_words(out);
  DispatchState st = f.state(kInit, kRsrc2TwoUserSgprsXyz, out_va);
  st.workgroup_size = {3, 2, 1};
  st.grid_workgroups = {2, 3, 1};
  run_dispatch(st, f.memory, f.options);
  f.read_back(out_va, out);
  for (uint32_t gy = 0; gy < 3; ++gy) {
    for (uint32_t gx = 0; gx < 2; ++gx) {
      for (uint32_t lane = 0; lane < 8; ++lane) {
        const uint32_t* r = &out[((gy * 2 + gx) * 8 + lane) * 4];
        if (lane >= 6) {
          EXPECT_EQ(r[0], 0xdeadbeefu) << "lane " << lane << " is outside EXEC and wrote";
          continue;
        }
        uint32_t x = lane % 3, y = lane / 3;
        EXPECT_EQ(r[0], x | (y << 10)) << "packed work-item id of lane " << lane;
        EXPECT_EQ(r[1], gx);
        EXPECT_EQ(r[2], gy);
        EXPECT_EQ(r[3], 0u) << "tgid_z";
      }
    }
  }
}

TEST(ShaderCoreInitialState, WorkItemIdZIsPackedAtBit20) {
  ShaderCoreFixture f;
  std::vector<uint32_t> out(8 * 4, 0);
  uint64_t out_va = f.map_words(out);
  DispatchState st = f.state(kInit, kRsrc2TwoUserSgprsXyz, out_va);
  st.workgroup_size = {2, 2, 2};
  run_dispatch(st, f.memory, f.options);
  f.read_back(out_va, out);
  for (uint32_t lane = 0; lane < 8; ++lane) EXPECT_EQ(out[lane * 4], (lane & 1) | (((lane >> 1) & 1) << 10) | ((lane >> 2) << 20));
}

TEST(ShaderCoreBranches, SaveexecAndExeczSkipMaskOffLanesThenRestoreExec) {
  ShaderCoreFixture f;
  std::vector<uint32_t> out(32, 0);
  uint64_t out_va = f.map_words(out);
  DispatchState st = f.state(kBranch, 2u << 1, out_va);
  st.workgroup_size = {32, 1, 1};
  run_dispatch(st, f.memory, f.options);
  f.read_back(out_va, out);
  for (uint32_t l = 0; l < 32; ++l) EXPECT_EQ(out[l], l < 4 ? l + 10 : 100u) << "lane " << l;
}

TEST(ShaderCoreBranches, ExeczBranchIsTakenWhenNoLaneQualifies) {
  ShaderCoreFixture f;
  std::vector<uint32_t> out(32, 0);
  uint64_t out_va = f.map_words(out);
  // kBranch with its compare replaced by v_cmp_gt_u32_e32 vcc_lo, 0, v1 (0x7c980280): 0 > lane is false in every
  // lane, so s_and_saveexec leaves EXEC zero and s_cbranch_execz jumps over the add.
  std::vector<uint32_t> words = kBranch;
  words[2] = 0x7c980280;
  DispatchState st = f.state(words, 2u << 1, out_va);
  st.workgroup_size = {32, 1, 1};
  run_dispatch(st, f.memory, f.options);
  f.read_back(out_va, out);
  for (uint32_t l = 0; l < 32; ++l) EXPECT_EQ(out[l], 100u) << "lane " << l;
}

TEST(ShaderCoreValu, FloatTranscendentalsAndWideIntegerResultsAreExact) {
  ShaderCoreFixture f;
  std::vector<uint32_t> out(32 * 8, 0);
  uint64_t out_va = f.map_words(out);
  DispatchState st = f.state(kValu, 2u << 1, out_va);
  st.workgroup_size = {32, 1, 1};
  run_dispatch(st, f.memory, f.options);
  f.read_back(out_va, out);
  for (uint32_t l = 0; l < 32; ++l) {
    const uint32_t* r = &out[l * 8];
    float lf = static_cast<float>(l);
    EXPECT_EQ(r[0], std::bit_cast<uint32_t>(lf)) << "v_cvt_f32_u32";
    EXPECT_EQ(r[1], std::bit_cast<uint32_t>(std::ldexp(1.0f, static_cast<int>(l)))) << "v_exp_f32 is 2^x";
    EXPECT_EQ(r[2], 0x3f800000u) << "v_sin_f32 takes revolutions: sin(2*pi*0.25) = 1";
    EXPECT_EQ(r[3], std::bit_cast<uint32_t>(lf * lf + 1.0f)) << "v_fma_f32";
    uint64_t mad = uint64_t{l} * 0x80000001ull;
    EXPECT_EQ(r[4], static_cast<uint32_t>(mad)) << "v_mad_u64_u32 low";
    EXPECT_EQ(r[5], static_cast<uint32_t>(mad >> 32)) << "v_mad_u64_u32 high";
    // v_cvt_f16_f32 writes the low half; the high half keeps the VGPR's zero from the wave's start.
    uint32_t half = l == 0 ? 0u : static_cast<uint32_t>(((15 + std::bit_width(l) - 1) << 10) | ((l << (11 - std::bit_width(l))) & 0x3ff));
    EXPECT_EQ(r[6], half) << "v_cvt_f16_f32 of " << l;
    EXPECT_EQ(r[7], 0x3e800000u) << "v_rcp_f32 of 4.0";
  }
}

TEST(ShaderCoreSalu, ShiftsBitfieldsCarriesSelectsAnd64BitOps) {
  ShaderCoreFixture f;
  std::vector<uint32_t> out(8, 0);
  uint64_t out_va = f.map_words(out);
  DispatchState st = f.state(kSalu, 2u << 1, out_va);
  run_dispatch(st, f.memory, f.options);
  f.read_back(out_va, out);
  EXPECT_EQ(out[0], static_cast<uint32_t>(-4)) << "s_ashr_i32 -8, 1";
  EXPECT_EQ(out[1], 0xfu) << "s_lshr_b32 -8, 28";
  EXPECT_EQ(out[2], 0x56u) << "s_bfe_u32 offset 8 width 8 of 0x12345678";
  EXPECT_EQ(out[3], 1u) << "s_add_u32 -1, 2";
  EXPECT_EQ(out[4], 7u) << "s_cselect after a carry-out (SCC=1)";
  EXPECT_EQ(out[5], 7u) << "s_cselect after s_cmp_lt_i32 -8, 0";
  EXPECT_EQ(out[6], 0xffffffe0u) << "s_lshl_b64 -2, 4 low";
  EXPECT_EQ(out[7], 0xffffffffu) << "s_lshl_b64 -2, 4 high";
}

TEST(ShaderCoreLds, TwoWavesExchangeThroughLdsAcrossABarrier) {
  ShaderCoreFixture f;
  std::vector<uint32_t> out(64 * 2, 0);
  uint64_t out_va = f.map_words(out);
  DispatchState st = f.state(kLds, 2u << 1, out_va);
  st.workgroup_size = {64, 1, 1};
  st.grid_workgroups = {1, 1, 1};
  st.lds_bytes = 256;
  run_dispatch(st, f.memory, f.options);
  f.read_back(out_va, out);
  // Wave 0 reads what wave 1 stored before the barrier, and the reverse.
  for (uint32_t t = 0; t < 64; ++t) EXPECT_EQ(out[t], 63 - t) << "thread " << t;
}

TEST(ShaderCoreSalu, SendmsgRtnRealtimeReadsTheOptionsCounter) {
  ShaderCoreFixture f;
  std::vector<uint32_t> out(2, 0);
  uint64_t out_va = f.map_words(out);
  f.options.realtime = [] { return uint64_t{0x123456789abcull}; };
  DispatchState st = f.state(kRealtime, 2u << 1, out_va);
  run_dispatch(st, f.memory, f.options);
  f.read_back(out_va, out);
  EXPECT_EQ(out[0], 0x56789abcu);
  EXPECT_EQ(out[1], 0x1234u);
}

TEST(ShaderCoreScratch, EachLaneHasItsOwnPrivateBytes) {
  ShaderCoreFixture f;
  std::vector<uint32_t> out(32, 0xffffffffu);
  uint64_t out_va = f.map_words(out);
  DispatchState st = f.state(kScratch, 2u << 1, out_va);
  st.workgroup_size = {32, 1, 1};
  st.scratch_wave_bytes = 32 * 256;  // 256 private bytes per lane
  st.scratch_va = f.map_bytes(st.scratch_wave_bytes);
  run_dispatch(st, f.memory, f.options);
  f.read_back(out_va, out);
  // Lane l stored l at its private offset 4*l; reading private offset 12 finds 3 only in lane 3.
  for (uint32_t l = 0; l < 32; ++l) EXPECT_EQ(out[l], l == 3 ? 3u : 0u) << "lane " << l;
}

TEST(ShaderCoreScratch, AnOffsetPastTheLanesPrivateSizeFaults) {
  ShaderCoreFixture f;
  std::vector<uint32_t> out(32, 0);
  uint64_t out_va = f.map_words(out);
  DispatchState st = f.state(kScratch, 2u << 1, out_va);
  st.workgroup_size = {32, 1, 1};
  st.scratch_wave_bytes = 32 * 64;  // 64 private bytes per lane: lanes 16.. store past them
  st.scratch_va = f.map_bytes(st.scratch_wave_bytes);
  try {
    run_dispatch(st, f.memory, f.options);
    FAIL() << "a private store past the lane's bytes ran";
  } catch (const ShaderFault& e) {
    EXPECT_NE(std::string(e.what()).find("scratch_store_b32"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("64 private bytes"), std::string::npos) << e.what();
  }
}

TEST(ShaderCoreLds, TwoAddressFormsAndAtomicsInLdsAndGlobalMemory) {
  ShaderCoreFixture f;
  std::vector<uint32_t> out(1 + 32 * 3, 0);
  uint64_t out_va = f.map_words(out);
  DispatchState st = f.state(kDsAtomics, 2u << 1, out_va);
  st.workgroup_size = {32, 1, 1};
  st.lds_bytes = 512;
  run_dispatch(st, f.memory, f.options);
  f.read_back(out_va, out);
  EXPECT_EQ(out[0], 32u) << "global_atomic_add_u32 once per lane";
  for (uint32_t l = 0; l < 32; ++l) {
    EXPECT_EQ(out[1 + 3 * l], l) << "ds_add_rtn_u32 returns the count before this lane (lanes in order)";
    EXPECT_EQ(out[2 + 3 * l], l) << "ds_load_2addr first dword (offset0 0)";
    EXPECT_EQ(out[3 + 3 * l], 5u) << "ds_load_2addr second dword (offset1 32 dwords)";
  }
}

TEST(ShaderCoreFaults, UnmappedStoreNamesTheAddressAndTheInstruction) {
  ShaderCoreFixture f;
  DispatchState st = f.state(kFault, 2u << 1, 0x7000000000ull);
  try {
    run_dispatch(st, f.memory, f.options);
    FAIL() << "the store to an unmapped address did not fault";
  } catch (const ShaderFault& e) {
    std::string m = e.what();
    EXPECT_EQ(e.address, 0x7000000008ull);
    EXPECT_EQ(e.pc, f.code_va + 4);
    EXPECT_NE(m.find("0x7000000008"), std::string::npos) << m;
    EXPECT_NE(m.find("global_store_b32 v1, v1, s[0:1] offset:8"), std::string::npos) << m;
  }
}

TEST(ShaderCoreFaults, UnimplementedInstructionIsNamedNotSkipped) {
  ShaderCoreFixture f;
  DispatchState st = f.state(kCube, 0, 0);
  try {
    run_dispatch(st, f.memory, f.options);
    FAIL() << "v_cubeid_f32 ran";
  } catch (const ShaderFault& e) {
    EXPECT_NE(std::string(e.what()).find("v_cubeid_f32 v0, v1, v2, v3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not implemented"), std::string::npos) << e.what();
    EXPECT_EQ(e.pc, f.code_va);
  }
}

TEST(ShaderCoreFaults, InfiniteLoopStopsAtTheInstructionLimit) {
  ShaderCoreFixture f;
  f.options.max_instructions_per_wave = 1000;
  DispatchState st = f.state(kLoop, 0, 0);
  try {
    run_dispatch(st, f.memory, f.options);
    FAIL() << "the loop ended";
  } catch (const ShaderFault& e) {
    EXPECT_NE(std::string(e.what()).find("1000 instructions"), std::string::npos) << e.what();
  }
  // The memory map is untouched and a new dispatch runs normally afterwards.
  std::vector<uint32_t> out(32, 0);
  uint64_t out_va = f.map_words(out);
  DispatchState ok = f.state(kBranch, 2u << 1, out_va);
  ok.workgroup_size = {32, 1, 1};
  run_dispatch(ok, f.memory, f.options);
  f.read_back(out_va, out);
  EXPECT_EQ(out[0], 10u);
}

TEST(ShaderCoreFaults, Wave64DispatchIsRefusedSayingWhy) {
  ShaderCoreFixture f;
  DispatchState st = f.state(kBranch, 2u << 1, 0);
  st.wave32 = false;
  try {
    run_dispatch(st, f.memory, f.options);
    FAIL();
  } catch (const ShaderFault& e) {
    EXPECT_NE(std::string(e.what()).find("wave32"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace doorbell::mockgpu::amd
