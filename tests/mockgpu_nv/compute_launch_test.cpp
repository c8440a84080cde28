// Compute launches through the command processor: kernels rendered by our PTX renderer (compared with the CPU
// reference, run_linear on the same CALL), a grouped reduction with shared memory and bar.sync, QMD chaining, the
// QMD's release semaphores, and 1000 launches from one pushbuffer.
#include <cmath>

#include "compiler/c_renderer.h"
#include "compiler/gpu/ptx_renderer.h"
#include "compute_fixture.h"
#include "frontend/tensor.h"
#include "hcq/host_buffers.h"
#include "hcq/run_linear.h"
#include "hcq/wait_primitives.h"
#include "mockgpu/nv/ptx_parser.h"

namespace doorbell::mockgpu_nv_test {
namespace {

// Elementwise float32 comparison within a relative tolerance (a grouped reduction sums in another order than the
// reference); other buffers byte for byte. Returns "" or the first difference.
std::string compare_buffer(const std::byte* got, const std::byte* want, size_t bytes, DType dtype) {
  if (dtype.scalar_type != ScalarType::Float32) {
    return std::memcmp(got, want, bytes) == 0 ? "" : "bytes differ";
  }
  for (size_t i = 0; i < bytes / 4; ++i) {
    float g, w;
    std::memcpy(&g, got + 4 * i, 4);
    std::memcpy(&w, want + 4 * i, 4);
    if (std::fabs(g - w) > 2e-5f * std::max(1.0f, std::fabs(w))) {
      return "element " + std::to_string(i) + ": " + std::to_string(g) + " vs reference " + std::to_string(w);
    }
  }
  return "";
}

class MockNvGpuRenderedKernelTest : public MockNvGpuComputeTest {
 protected:
  // Runs every kernel of `outs` on the mock GPU and on the CPU reference, each from the same inputs, and compares
  // every buffer. Returns the number of kernels and, through `ptx_out`, the text of the last.
  int run_and_compare(const std::vector<Tensor>& outs, std::string* ptx_out = nullptr) {
    const GpuTarget& target = gpu_target("sm_90");
    const UOp linear = Tensor::schedule_linear(outs);
    int kernels = 0;
    for (const UOp& call : linear.src()) {
      if (call.src(0).op() != Ops::SINK) {
        run_linear(UOp::make(Ops::LINEAR, dtypes::void_, {call}), on_device("REF"));
        continue;
      }
      ++kernels;
      const UOp& sink = call.src(0);
      const std::string name = c_kernel_name(sink);
      const GpuKernel k = prepare_gpu_kernel(sink, target);
      const std::string ptx = render_ptx(name, k, target);
      if (ptx_out != nullptr) *ptx_out = ptx;
      const mockgpu::nv::PtxProgram program = mockgpu::nv::parse_ptx(ptx);

      // The kernel's buffers in GPU memory, as they are before the reference runs.
      std::vector<Block> gpu_buffers;
      KernelLaunch launch;
      for (size_t i = 1; i < call.src().size(); ++i) {
        const std::span<std::byte> host = buffer_bytes(call.src(i));
        const Block b = take(host.size(), 256);
        std::memcpy(b.cpu, host.data(), host.size());
        gpu_buffers.push_back(b);
        launch.params.push_back(b.va);
      }
      run_linear(UOp::make(Ops::LINEAR, dtypes::void_, {call}), on_device("REF"));

      const Block done = take(16);
      launch.ptx = ptx;
      for (int d = 0; d < 3; ++d) {
        launch.grid[d] = static_cast<uint32_t>(k.global_size[d]);
        launch.block[d] = static_cast<uint32_t>(k.local_size[d]);
      }
      launch.shared_memory_size = (program.entries.at(0).static_shared_bytes + 255) / 256 * 256;
      launch.release = release_to(done.va, 1);
      submit(compute_, launch_words(place_launch(launch)));
      EXPECT_TRUE(wait_value(done.cpu, 1)) << name << ": " << first_fault() << "\n" << ptx;
      for (size_t i = 1; i < call.src().size(); ++i) {
        const std::span<std::byte> want = buffer_bytes(call.src(i));
        const std::string diff = compare_buffer(reinterpret_cast<const std::byte*>(gpu_buffers[i - 1].cpu), want.data(),
                                                want.size(), call.src(i).dtype());
        EXPECT_EQ(diff, "") << "buffer " << i - 1 << " of " << name << "\n" << ptx;
      }
    }
    return kernels;
  }
};

TEST_F(MockNvGpuRenderedKernelTest, RenderedElementwiseKernelMatchesTheCpuReference) {
  Tensor::manual_seed(11);
  Tensor a = Tensor::randn({1000}).realize(), b = Tensor::randn({1000}).realize();
  EXPECT_EQ(run_and_compare({a * b + a}), 1);
  EXPECT_EQ(gpu_->stats().launches, 1u);
  EXPECT_TRUE(gpu_->faults().empty()) << first_fault();
}

TEST_F(MockNvGpuRenderedKernelTest, GroupedReductionWithSharedMemoryAndBarrierMatchesTheCpuReference) {
  Tensor::manual_seed(12);
  Tensor x = Tensor::randn({1000}).realize();
  std::string ptx;
  EXPECT_GE(run_and_compare({x.sum()}, &ptx), 1);
  // The optimizer groups the reduction across the block: a shared array and barriers, which the QMD's shared
  // memory size must cover.
  EXPECT_NE(ptx.find(".shared"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("bar.sync"), std::string::npos) << ptx;
  EXPECT_TRUE(gpu_->faults().empty()) << first_fault();
}

TEST_F(MockNvGpuRenderedKernelTest, RenderedTwoDimensionalKernelOverSeveralBlocksMatchesTheCpuReference) {
  Tensor::manual_seed(13);
  Tensor a = Tensor::randn({37, 53}).realize();
  EXPECT_GE(run_and_compare({(a.permute({1, 0}) * 2).contiguous() + 1}), 1);
  EXPECT_TRUE(gpu_->faults().empty()) << first_fault();
}

TEST_F(MockNvGpuComputeTest, QmdReleaseWritesPayloadAndKernelEndTimestamp) {
  const Block in = take(256 * 4), out = take(256 * 4), done = take(16);
  for (uint32_t i = 0; i < 256; ++i) reinterpret_cast<uint32_t*>(in.cpu)[i] = i;
  KernelLaunch k{kScale3Ptx, {out.va, in.va}, {4, 1, 1}, {64, 1, 1}};
  k.release = release_to(done.va, 0xfeedface00000001ull);
  const int64_t before = monotonic_ns();
  submit(compute_, launch_words(place_launch(k), nv::PcasAction::kPrefetchSchedule));
  ASSERT_TRUE(wait_value(done.cpu, 0xfeedface00000001ull)) << first_fault();
  const auto stamp = static_cast<int64_t>(load64(done.cpu + 8) - static_cast<uint64_t>(gpu_->ptimer().offset_ns()));  // PTIMER
  EXPECT_GT(stamp + int64_t{mockgpu::nv::kPtimerTickNs}, before);  // the timer counts in 32 ns steps
  EXPECT_LE(stamp, monotonic_ns());
  for (uint32_t i = 0; i < 256; ++i) ASSERT_EQ(reinterpret_cast<uint32_t*>(out.cpu)[i], 3 * i) << i;
}

TEST_F(MockNvGpuComputeTest, AllThreeQmdReleasesFireWithTheirStructureSizes) {
  const Block counter = take(16), four = take(16), two = take(16), one = take(16);
  store64(two.cpu + 8, 99);
  store64(one.cpu, 0xffffffff00000000ull);
  KernelLaunch k{kIncrementPtx, {counter.va}};
  k.release = release_to(four.va, 11);
  nv::QmdLaunch q = qmd_launch(k, place_program(k.ptx));
  q.releases[1] = {
      .enable = true, .address = two.va, .payload = 0x2200000022ull, .timestamp = false, .payload64 = true};
  q.releases[2] = {.enable = true, .address = one.va, .payload = 33, .timestamp = false, .payload64 = false};
  submit(compute_, launch_words(place_qmd(nv::encode_qmd_v04(q))));
  // The releases fire in order once the grid completed; GPGet reaching GPPut says only that the host unit fetched
  // the entry (the engine may still hold the grid), so wait for the last release's word.
  ASSERT_TRUE(wait_value(one.cpu, 0xffffffff00000021ull)) << first_fault();
  ASSERT_TRUE(gpu_->faults().empty()) << first_fault();
  EXPECT_EQ(load64(four.cpu), 11u);
  EXPECT_NE(load64(four.cpu + 8), 0u);
  EXPECT_EQ(load64(two.cpu), 0x2200000022ull);
  EXPECT_EQ(load64(two.cpu + 8), 99u) << "a two-word release wrote a timestamp";
  EXPECT_EQ(load64(one.cpu), 0xffffffff00000021ull) << "a one-word release wrote more than 32 bits";
  EXPECT_EQ(gpu_->stats().semaphore_releases, 3u);
}

TEST_F(MockNvGpuComputeTest, DependentQmdRunsAfterTheFirstKernelWithoutHostMethods) {
  constexpr uint32_t kN = 512;
  const Block a = take(kN * 4), b = take(kN * 4), c = take(kN * 4), done = take(16);
  for (uint32_t i = 0; i < kN; ++i) reinterpret_cast<uint32_t*>(a.cpu)[i] = i + 7;
  KernelLaunch second{kAddOnePtx, {c.va, b.va}, {kN / 128, 1, 1}, {128, 1, 1}};
  second.release = release_to(done.va, 2);
  KernelLaunch first{kScale3Ptx, {b.va, a.va}, {kN / 64, 1, 1}, {64, 1, 1}};
  first.dependent_qmd = place_launch(second);
  submit(compute_, launch_words(place_launch(first)));
  ASSERT_TRUE(wait_value(done.cpu, 2)) << first_fault();
  for (uint32_t i = 0; i < kN; ++i) ASSERT_EQ(reinterpret_cast<uint32_t*>(c.cpu)[i], 3 * (i + 7) + 1) << i;
  EXPECT_EQ(gpu_->stats().launches, 2u);
}

TEST_F(MockNvGpuComputeTest, ThousandLaunchesFromOnePushbufferAllRunInOrder) {
  const Block counter = take(16), done = take(16);
  const uint64_t qmd = place_launch({kIncrementPtx, {counter.va}});
  std::vector<uint32_t> words = join({nv::encode_set_object(nv::kSubchannelCompute, nv::HOPPER_COMPUTE_A),
                                      nv::encode_set_shader_memory_windows(0x729400000000ull, 0x729300000000ull),
                                      nv::encode_set_shader_local_memory(nv::HOPPER_COMPUTE_A, {kArenaVa, 0x8000})});
  for (int i = 0; i < 1000; ++i) {
    const auto launch = nv::encode_compute_launch(qmd, nv::PcasAction::kInvalidateCopySchedule);
    words.insert(words.end(), launch.begin(), launch.end());
  }
  const auto release = nv::encode_semaphore_release(nv::HOPPER_CHANNEL_GPFIFO_A, done.va, 1, true);
  words.insert(words.end(), release.begin(), release.end());
  submit(compute_, words);
  ASSERT_TRUE(wait_value(done.cpu, 1)) << first_fault();
  EXPECT_EQ(reinterpret_cast<uint32_t*>(counter.cpu)[0], 1000u);
  EXPECT_EQ(gpu_->stats().launches, 1000u);
}

TEST_F(MockNvGpuComputeTest, ProgramTextChangedAtTheSameAddressIsReparsed) {
  const Block in = take(64 * 4), out = take(64 * 4), done = take(16);
  for (uint32_t i = 0; i < 64; ++i) reinterpret_cast<uint32_t*>(in.cpu)[i] = i;
  const Block text = take(4096, 256);
  std::memcpy(text.cpu, kScale3Ptx, std::strlen(kScale3Ptx) + 1);
  KernelLaunch k{kScale3Ptx, {out.va, in.va}, {1, 1, 1}, {64, 1, 1}};
  k.release = release_to(done.va, 1);
  submit(compute_, launch_words(place_qmd(nv::encode_qmd_v04(qmd_launch(k, text.va)))));
  ASSERT_TRUE(wait_value(done.cpu, 1)) << first_fault();
  EXPECT_EQ(reinterpret_cast<uint32_t*>(out.cpu)[5], 15u);
  std::memcpy(text.cpu, kAddOnePtx, std::strlen(kAddOnePtx) + 1);
  k.release = release_to(done.va, 2);
  submit(compute_, launch_words(place_qmd(nv::encode_qmd_v04(qmd_launch(k, text.va)))));
  ASSERT_TRUE(wait_value(done.cpu, 2)) << first_fault();
  EXPECT_EQ(reinterpret_cast<uint32_t*>(out.cpu)[5], 6u);
}

}  // namespace
}  // namespace doorbell::mockgpu_nv_test

namespace doorbell::mockgpu_nv_test {

// Each thread counts to `n` and stores the count at out[ctaid.x]: a kernel as long as the test asks for.
inline const char* kCountPtx = R"(.version 8.0
.target sm_90
.address_size 64

.visible .entry count(
	.param .u64 out,
	.param .u64 n
)
{
	.reg .pred %p<2>;
	.reg .b32 %r<2>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [out];
	ld.param.u64 %rd2, [n];
	mov.u64 %rd3, 0;
$L__loop:
	add.s64 %rd3, %rd3, 1;
	setp.lt.u64 %p1, %rd3, %rd2;
	@%p1 bra $L__loop;
	mov.u32 %r1, %ctaid.x;
	mul.wide.u32 %rd4, %r1, 8;
	add.s64 %rd5, %rd1, %rd4;
	st.global.u64 [%rd5], %rd3;
	ret;
}
)";

// RM preempts a channel it frees (the GPU stops fetching from it): the kernel running on it is abandoned at its next
// preemption point instead of holding the free until its last block, that is no fault, and the copy channel runs on.
TEST_F(MockNvGpuComputeTest, FreeingAChannelPreemptsTheKernelRunningOnItAndTheOtherChannelRunsOn) {
  constexpr uint32_t kBlocks = 4096;
  const Block out = take(kBlocks * 8);
  KernelLaunch k{kCountPtx, {out.va, 1u << 16}, {kBlocks, 1, 1}, {1, 1, 1}};
  submit(compute_, launch_words(place_launch(k)));
  ASSERT_TRUE(eventually([&] { return gpu_->stats().blocks > 0 || !gpu_->faults().empty(); }));
  ASSERT_EQ(first_fault(), "");
  EXPECT_EQ(load64(out.cpu), 1u << 16) << "block 0 counted to n";
  bring_.rm.free(bring_.compute_channel, bring_.channel_group);
  const mockgpu::nv::MockNvGpuStats after = gpu_->stats();
  EXPECT_LT(after.blocks, kBlocks) << "the free waited for the kernel's last block";
  EXPECT_EQ(after.preemptions, 1u);
  EXPECT_EQ(after.launches, 0u) << "the grid never completed";
  EXPECT_EQ(first_fault(), "") << "a preempted kernel is no fault";
  const Block sem = take(16);
  submit(copy_, join({nv::encode_set_object(nv::kSubchannelCopy, nv::HOPPER_DMA_COPY_A),
                      nv::encode_copy_semaphore_release(nv::HOPPER_DMA_COPY_A, sem.va, 9, true)}));
  EXPECT_TRUE(wait_value(sem.cpu, 9));
}

}  // namespace doorbell::mockgpu_nv_test
