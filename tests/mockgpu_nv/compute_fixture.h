// Compute launches as the NV backend builds them: PTX text (the mock's program image) in GPU memory, constant buffer
// 0 with the kernel parameters at kCbuf0ParamOffset, a QMD V04 from encode_qmd_v04, and SET_OBJECT + SEND_PCAS_A +
// SEND_SIGNALING_PCAS2_B from the hcq/nv encoders.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "mock_gpu_fixture.h"

namespace doorbell::mockgpu_nv_test {

struct KernelLaunch {
  std::string ptx;
  std::vector<std::uint64_t> params;  // 64-bit parameters, in order, at cbuf0 + 0x210
  std::array<std::uint32_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  std::uint32_t shared_memory_size = 0;
  nv::QmdRelease release{};  // release 0
  std::uint64_t dependent_qmd = 0;
};

class MockNvGpuComputeTest : public MockNvGpuTest {
 protected:
  // The windows the NV backend programs at channel setup (tinygrad's values; the shared one 4 GiB aligned).
  static constexpr std::uint64_t kSharedWindow = 0x729400000000ull;
  static constexpr std::uint64_t kLocalWindow = 0x729300000000ull;
  std::uint64_t place_program(const std::string& ptx) {
    const Block text = take(ptx.size() + 1, 256);
    std::memcpy(text.cpu, ptx.data(), ptx.size());
    text.cpu[ptx.size()] = 0;
    return text.va;
  }
  // cbuf0: driver words (left zero) then the parameters at 0x210; 64-byte aligned because V04 stores address >> 6.
  std::pair<std::uint64_t, std::uint32_t> place_cbuf0(const std::vector<std::uint64_t>& params) {
    const auto size = static_cast<std::uint32_t>(mockgpu::nv::kCbuf0ParamOffset + 8 * params.size());
    const Block cbuf = take(size, 64);
    std::memcpy(cbuf.cpu + mockgpu::nv::kCbuf0ParamOffset, params.data(), 8 * params.size());
    return {cbuf.va, size};
  }
  nv::QmdLaunch qmd_launch(const KernelLaunch& k, std::uint64_t program) {
    nv::QmdLaunch q;
    q.program_address = program;
    q.program_prefetch_size = static_cast<std::uint32_t>(k.ptx.size());
    q.grid_x = k.grid[0], q.grid_y = k.grid[1], q.grid_z = k.grid[2];
    q.block_x = k.block[0], q.block_y = k.block[1], q.block_z = k.block[2];
    q.shared_memory_size = k.shared_memory_size;
    q.register_count = 32;
    q.sass_version = 0x90;
    const auto [cbuf_va, cbuf_size] = place_cbuf0(k.params);
    q.constant_buffer0_address = cbuf_va;
    q.constant_buffer0_size = cbuf_size;
    q.releases[0] = k.release;
    q.dependent_qmd_address = k.dependent_qmd;
    return q;
  }
  // A QMD V04 at a 256-byte aligned address; returns it.
  std::uint64_t place_qmd(const std::array<std::uint32_t, nv::kQmdV04Words>& words) {
    const Block qmd = take(words.size() * 4, 256);
    std::memcpy(qmd.cpu, words.data(), words.size() * 4);
    return qmd.va;
  }
  std::uint64_t place_launch(const KernelLaunch& k) {
    return place_qmd(nv::encode_qmd_v04(qmd_launch(k, place_program(k.ptx))));
  }
  static std::vector<std::uint32_t> launch_words(std::uint64_t qmd_va,
                                                 nv::PcasAction action = nv::PcasAction::kInvalidateCopySchedule) {
    return join({nv::encode_set_object(nv::kSubchannelCompute, nv::HOPPER_COMPUTE_A),
                 nv::encode_set_shader_memory_windows(kSharedWindow, kLocalWindow), nv::encode_invalidate_shader_caches(),
                 nv::encode_compute_launch(qmd_va, action)});
  }
  static nv::QmdRelease release_to(std::uint64_t va, std::uint64_t payload) {
    return {.enable = true, .address = va, .payload = payload, .timestamp = true, .payload64 = true};
  }
  std::string first_fault() {
    const auto faults = gpu_->faults();
    return faults.empty() ? std::string() : faults.front();
  }
};

// out[i] = in[i] * 3 for i = ctaid.x * ntid.x + tid.x (u32 elements).
inline const char* kScale3Ptx = R"(.version 8.0
.target sm_90
.address_size 64

.visible .entry scale3(
	.param .u64 out,
	.param .u64 in
)
{
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [out];
	ld.param.u64 %rd2, [in];
	mov.u32 %r1, %ctaid.x;
	mov.u32 %r2, %ntid.x;
	mov.u32 %r3, %tid.x;
	mad.lo.s32 %r4, %r1, %r2, %r3;
	mul.wide.s32 %rd3, %r4, 4;
	add.s64 %rd4, %rd2, %rd3;
	ld.global.u32 %r5, [%rd4];
	mul.lo.s32 %r6, %r5, 3;
	add.s64 %rd5, %rd1, %rd3;
	st.global.u32 [%rd5], %r6;
	ret;
}
)";

// out[i] = in[i] + 1, same indexing.
inline const char* kAddOnePtx = R"(.version 8.0
.target sm_90
.address_size 64

.visible .entry add_one(
	.param .u64 out,
	.param .u64 in
)
{
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [out];
	ld.param.u64 %rd2, [in];
	mov.u32 %r1, %ctaid.x;
	mov.u32 %r2, %ntid.x;
	mov.u32 %r3, %tid.x;
	mad.lo.s32 %r4, %r1, %r2, %r3;
	mul.wide.s32 %rd3, %r4, 4;
	add.s64 %rd4, %rd2, %rd3;
	ld.global.u32 %r5, [%rd4];
	add.s32 %r6, %r5, 1;
	add.s64 %rd5, %rd1, %rd3;
	st.global.u32 [%rd5], %r6;
	ret;
}
)";

// counter[0] += 1 (one thread).
inline const char* kIncrementPtx = R"(.version 8.0
.target sm_90
.address_size 64

.visible .entry increment(
	.param .u64 counter
)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [counter];
	ld.global.u32 %r1, [%rd1];
	add.s32 %r2, %r1, 1;
	st.global.u32 [%rd1], %r2;
	ret;
}
)";

}  // namespace doorbell::mockgpu_nv_test
