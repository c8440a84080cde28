// Shader memory setup the emulated compute class requires before a launch that needs it: the shared and local memory
// windows (SET_SHADER_SHARED/LOCAL_MEMORY_WINDOW_A/B, clcbc0.h:413-417, 592-596; 4 GiB-aligned shared window on
// Hopper, Mesa NVK nvk_push_dispatch_state_init), the shader local memory store and its size per TPC
// (SET_SHADER_LOCAL_MEMORY_A/B, _NON_THROTTLED_A/B/C, clcbc0.h:459-468, 583-587) and mapped constant buffers.
// Each missing piece faults the channel through RM's error notifier, naming what was missing.
#include "compute_fixture.h"

namespace doorbell::mockgpu_nv_test {
namespace {

using nv::HOPPER_COMPUTE_A;

const char* kUsesSharedPtx = R"(.version 8.0
.target sm_90
.address_size 64

.visible .entry uses_shared(
	.param .u64 out
)
{
	.shared .align 4 .b8 buf[256];
	.reg .b32 %r<4>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [out];
	mov.u32 %r1, 41;
	st.shared.u32 [buf], %r1;
	ld.shared.u32 %r2, [buf];
	add.s32 %r3, %r2, 1;
	st.global.u32 [%rd1], %r3;
	ret;
}
)";

// out[t] = arr[(7 t) & 15] after arr[i] = 100 t + i for i < 16, arr a .local array of thread t.
const char* kLocalArrayPtx = R"(.version 8.0
.target sm_90
.address_size 64

.visible .entry local_array(
	.param .u64 out
)
{
	.local .align 4 .b8 arr[64];
	.reg .pred %p<2>;
	.reg .b32 %r<10>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [out];
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, 0;
	mov.u32 %r3, arr;
LOOP:
	mad.lo.s32 %r4, %r1, 100, %r2;
	shl.b32 %r5, %r2, 2;
	add.s32 %r6, %r3, %r5;
	st.local.u32 [%r6], %r4;
	add.s32 %r2, %r2, 1;
	setp.lt.u32 %p1, %r2, 16;
	@%p1 bra LOOP;
	mul.lo.s32 %r7, %r1, 7;
	and.b32 %r7, %r7, 15;
	shl.b32 %r7, %r7, 2;
	add.s32 %r8, %r3, %r7;
	ld.local.u32 %r9, [%r8];
	mul.wide.u32 %rd2, %r1, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r9;
	ret;
}
)";

class ShaderMemoryTest : public MockNvGpuComputeTest {
 protected:
  // The setup before this change: SET_OBJECT and a cache invalidation, no windows.
  static std::vector<std::uint32_t> launch_without_windows(std::uint64_t qmd_va) {
    return join({nv::encode_set_object(nv::kSubchannelCompute, HOPPER_COMPUTE_A), nv::encode_invalidate_shader_caches(),
                 nv::encode_compute_launch(qmd_va, nv::PcasAction::kInvalidateCopySchedule)});
  }
  static std::vector<std::uint32_t> launch_with_local_memory(std::uint64_t qmd_va, nv::ShaderLocalMemory memory) {
    return join({nv::encode_set_object(nv::kSubchannelCompute, HOPPER_COMPUTE_A),
                 nv::encode_set_shader_memory_windows(kSharedWindow, kLocalWindow),
                 nv::encode_set_shader_local_memory(HOPPER_COMPUTE_A, memory),
                 nv::encode_compute_launch(qmd_va, nv::PcasAction::kInvalidateCopySchedule)});
  }
  std::string fault_with_notifier() {
    const std::string message = wait_fault();
    EXPECT_TRUE(gpu_->channel_faulted(compute_.token));
    EXPECT_EQ(error_notification().status, 0xffff) << "RM's notifier was not written";
    return message;
  }
  // Local memory per thread in the QMD (SHADER_LOCAL_MEMORY_HIGH_SIZE, where CUDA puts it).
  std::uint64_t place_local_launch(const Block& out, std::uint32_t local_per_thread, const Block& done,
                                   const char* ptx = kIncrementPtx, std::uint32_t threads = 1) {
    KernelLaunch k{ptx, {out.va}, {1, 1, 1}, {threads, 1, 1}};
    k.release = release_to(done.va, 1);
    nv::QmdLaunch q = qmd_launch(k, place_program(k.ptx));
    q.shader_local_memory_high_size = local_per_thread;
    return place_qmd(nv::encode_qmd_v04(q));
  }
  // 64 warps per SM x 2 SMs per TPC (the emulated GH100's GR info) x 32 threads.
  static constexpr std::uint64_t kThreadsPerTpc = 64 * 2 * 32;
  static constexpr std::uint64_t kTpcs = 8 * 9;
};

TEST_F(ShaderMemoryTest, SharedMemoryKernelWithoutWindowsFaultsThroughTheErrorNotifier) {
  const Block out = take(16);
  KernelLaunch k{kUsesSharedPtx, {out.va}};
  k.shared_memory_size = 256;
  submit(compute_, launch_without_windows(place_launch(k)));
  const std::string message = fault_with_notifier();
  EXPECT_NE(message.find("256 bytes of shared memory (SHARED_MEMORY_SIZE)"), std::string::npos) << message;
  EXPECT_NE(message.find("SET_SHADER_SHARED_MEMORY_WINDOW_A/B"), std::string::npos) << message;
  EXPECT_EQ(load64(out.cpu), 0u) << "the kernel ran";
}

TEST_F(ShaderMemoryTest, SharedMemoryKernelRunsOnceTheWindowsAreSet) {
  const Block out = take(16), done = take(16);
  KernelLaunch k{kUsesSharedPtx, {out.va}};
  k.shared_memory_size = 256;
  k.release = release_to(done.va, 1);
  submit(compute_, launch_words(place_launch(k)));
  ASSERT_TRUE(wait_value(done.cpu, 1)) << first_fault();
  EXPECT_EQ(reinterpret_cast<std::uint32_t*>(out.cpu)[0], 42u);
}

TEST_F(ShaderMemoryTest, KernelWithoutSharedOrLocalMemoryNeedsNoWindows) {
  const Block counter = take(16), done = take(16);
  KernelLaunch k{kIncrementPtx, {counter.va}};
  k.release = release_to(done.va, 1);
  submit(compute_, launch_without_windows(place_launch(k)));
  ASSERT_TRUE(wait_value(done.cpu, 1)) << first_fault();
  EXPECT_EQ(reinterpret_cast<std::uint32_t*>(counter.cpu)[0], 1u);
}

TEST_F(ShaderMemoryTest, SharedWindowNotFourGibAlignedFaultsOnHopper) {
  const Block out = take(16);
  KernelLaunch k{kUsesSharedPtx, {out.va}};
  k.shared_memory_size = 256;
  submit(compute_, join({nv::encode_set_object(nv::kSubchannelCompute, HOPPER_COMPUTE_A),
                         nv::encode_set_shader_memory_windows(kSharedWindow + 0x10000, kLocalWindow),
                         nv::encode_compute_launch(place_launch(k), nv::PcasAction::kInvalidateCopySchedule)}));
  const std::string message = fault_with_notifier();
  EXPECT_NE(message.find("shared memory window 0x729400010000 is not 4 GiB aligned"), std::string::npos) << message;
}

TEST_F(ShaderMemoryTest, LocalMemoryLaunchWithoutShaderLocalMemoryFaults) {
  const Block counter = take(16), done = take(16);
  submit(compute_, launch_words(place_local_launch(counter, 0x260, done)));
  const std::string message = fault_with_notifier();
  EXPECT_NE(message.find("608 bytes of local memory per thread"), std::string::npos) << message;
  EXPECT_NE(message.find("SET_SHADER_LOCAL_MEMORY_A/B"), std::string::npos) << message;
}

TEST_F(ShaderMemoryTest, LocalMemorySmallerThanTheQmdAsksFaultsNamingBothSizes) {
  const Block counter = take(16), done = take(16);
  const std::uint64_t per_tpc = 16 * kThreadsPerTpc;  // room for 16 bytes per thread; the QMD asks 32
  const Block store = take(per_tpc * kTpcs, 4096);
  submit(compute_, launch_with_local_memory(place_local_launch(counter, 32, done), {store.va, per_tpc}));
  const std::string message = fault_with_notifier();
  EXPECT_NE(message.find("32 bytes of local memory per thread, " + std::to_string(32 * kThreadsPerTpc) +
                         " bytes per TPC"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("programmed " + std::to_string(per_tpc) + " bytes per TPC"), std::string::npos) << message;
}

TEST_F(ShaderMemoryTest, LocalMemoryLaunchRunsWhenTheStoreIsLargeEnough) {
  const Block counter = take(16), done = take(16);
  const std::uint64_t per_tpc = 32 * kThreadsPerTpc;
  const Block store = take(per_tpc * kTpcs, 4096);
  submit(compute_, launch_with_local_memory(place_local_launch(counter, 32, done), {store.va, per_tpc}));
  ASSERT_TRUE(wait_value(done.cpu, 1)) << first_fault();
  EXPECT_EQ(reinterpret_cast<std::uint32_t*>(counter.cpu)[0], 1u);
}

TEST_F(ShaderMemoryTest, LocalMemoryStoreThatIsNotMappedFaults) {
  const Block counter = take(16), done = take(16);
  const std::uint64_t per_tpc = 32 * kThreadsPerTpc;
  submit(compute_, launch_with_local_memory(place_local_launch(counter, 32, done), {0x7f0000000000ull, per_tpc}));
  const std::string message = fault_with_notifier();
  EXPECT_NE(message.find("the shader local memory"), std::string::npos) << message;
  EXPECT_NE(message.find("0x7f0000000000"), std::string::npos) << message;
}

TEST_F(ShaderMemoryTest, LocalArraysLiveInTheShaderLocalMemoryStoreOneSlicePerThread) {
  const Block out = take(64 * 4), done = take(16);
  const std::uint64_t per_tpc = 64 * kThreadsPerTpc;
  const Block store = take(per_tpc * kTpcs, 4096);
  submit(compute_, launch_with_local_memory(place_local_launch(out, 64, done, kLocalArrayPtx, 64), {store.va, per_tpc}));
  ASSERT_TRUE(wait_value(done.cpu, 1)) << first_fault();
  for (std::uint32_t t = 0; t < 64; ++t) EXPECT_EQ(reinterpret_cast<std::uint32_t*>(out.cpu)[t], 100 * t + ((7 * t) & 15)) << t;
  // Thread 5's arr[3] at its slice of the store (64 bytes per thread, the QMD's size).
  EXPECT_EQ(reinterpret_cast<std::uint32_t*>(store.cpu + 5 * 64)[3], 503u);
}

TEST_F(ShaderMemoryTest, LocalArraysLargerThanTheQmdsLocalMemorySizeFault) {
  const Block out = take(64 * 4), done = take(16);
  const std::uint64_t per_tpc = 64 * kThreadsPerTpc;
  const Block store = take(per_tpc * kTpcs, 4096);
  submit(compute_, launch_with_local_memory(place_local_launch(out, 32, done, kLocalArrayPtx, 64), {store.va, per_tpc}));
  const std::string message = fault_with_notifier();
  EXPECT_NE(message.find(".local arrays take 64 bytes per thread; SHADER_LOCAL_MEMORY_LOW/HIGH_SIZE give 32"),
            std::string::npos)
      << message;
}

TEST_F(ShaderMemoryTest, ConstantBufferBoundAtAnUnmappedAddressFaults) {
  const Block counter = take(16);
  KernelLaunch k{kIncrementPtx, {counter.va}};
  nv::QmdLaunch q = qmd_launch(k, place_program(k.ptx));
  q.constant_buffers[3] = {0x7f0000000000ull, 64};
  submit(compute_, launch_words(place_qmd(nv::encode_qmd_v04(q))));
  const std::string message = fault_with_notifier();
  EXPECT_NE(message.find("constant buffer 3 (CONSTANT_BUFFER_VALID(3))"), std::string::npos) << message;
}

}  // namespace
}  // namespace doorbell::mockgpu_nv_test
