// What orders an NV queue's grids, checked on the emulated GPU, whose compute engine enforces the rules: grids of
// separate SEND_PCAS may overlap unless WAIT_FOR_IDLE separates them (the emulator runs the later one first), and
// SKED launches a QMD it cached at an address unless the launch invalidates and copies it.
#include <gtest/gtest.h>

#include "hcq/nv/nv_classes.h"
#include "hcq/nv/pushbuffer.h"
#include "mockgpu/nv/mock_nv_seam.h"
#include "nv_test_kernels.h"

namespace doorbell::nv {
namespace {

using test::float_at;
using test::floats;
using test::load_kernel;

// Kernel 2 reads what kernel 1 wrote across memory_barrier(), which breaks the QMD chain: kernel 2 is a fresh
// SEND_PCAS, and only the barrier's WAIT_FOR_IDLE keeps it from running before kernel 1.
TEST(NvSubmissionOrder, AKernelAfterAMemoryBarrierReadsWhatTheKernelBeforeWrote) {
  std::unique_ptr<NvDevice> d = NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>());
  const test::NvKernel add1 = load_kernel(*d, Tensor::empty({64}) + 1);
  std::vector<float> a_values(64);
  for (int i = 0; i < 64; i++) a_values[i] = static_cast<float>(3 * i);
  NvMemory a = floats(*d, a_values), b = floats(*d, std::vector<float>(64, 0)), c = floats(*d, std::vector<float>(64, 0));
  Signal& done = d->new_signal("after the barrier");
  HWQueue q;
  q.exec(*add1.program, std::vector<uint64_t>{b.va, a.va}, add1.grid, add1.block)
      .memory_barrier()
      .exec(*add1.program, std::vector<uint64_t>{c.va, b.va}, add1.grid, add1.block)
      .signal(done, 1)
      .bind(*d);
  // The words: SKED invalidation, launch 1, WAIT_FOR_IDLE, the cache invalidation, launch 2, the signal.
  const NvDevice::BoundMemory memory = d->bound_memory(*q.bound_queue());
  std::vector<uint32_t> methods;
  for (const DecodedMethod& m : decode_pushbuffer({reinterpret_cast<const uint32_t*>(memory.pushbuffer.cpu), memory.words}))
    methods.push_back(m.method);
  EXPECT_EQ(methods, (std::vector<uint32_t>{NVCBC0_INVALIDATE_SKED_CACHES, NVCBC0_SEND_PCAS_A, NVCBC0_SEND_SIGNALING_PCAS2_B,
                                            NVCBC0_WAIT_FOR_IDLE, NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI, NVCBC0_SEND_PCAS_A,
                                            NVCBC0_SEND_SIGNALING_PCAS2_B, NVC86F_SEM_ADDR_LO}));
  q.submit(*d);
  done.wait(1);
  for (int i = 0; i < 64; i++) ASSERT_EQ(float_at(c, i), 3.0f * i + 2) << "element " << i << ": kernel 2 ran before kernel 1";
}

// Kernel arguments and QMDs live in a ring that is reused once its submissions completed, so a chained QMD lands
// at an address where an older QMD (another kernel's) was launched. A chained launch that takes SKED's cached copy
// runs the older kernel: here x + 1 instead of x * 2.
TEST(NvSubmissionOrder, ChainedQmdsAtRecycledKernelArgumentMemoryRunTheKernelNowThere) {
  std::unique_ptr<NvDevice> d = NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>());
  const test::NvKernel add1 = load_kernel(*d, Tensor::empty({64}) + 1);
  const test::NvKernel mul2 = load_kernel(*d, Tensor::empty({64}) * 2);
  NvMemory x = floats(*d, std::vector<float>(64, 3)), y = floats(*d, std::vector<float>(64, 0)), z = floats(*d, std::vector<float>(64, 0));
  Signal& done = d->new_signal("ring lap");
  const std::vector<uint64_t> into_y{y.va, x.va}, into_z{z.va, x.va};
  // 14000 chained launches of x + 1 take more than the 16 MiB kernel argument ring (about 1.25 KiB each), so the
  // ring wraps and the x * 2 launches below reuse addresses that held x + 1's QMDs.
  uint64_t value = 0;
  for (int round = 0; round < 14; round++) {
    HWQueue q;
    for (int i = 0; i < 1000; i++) q.exec(*add1.program, into_y, add1.grid, add1.block);
    q.signal(done, ++value).submit(*d);
  }
  HWQueue q;
  for (int i = 0; i < 1000; i++) q.exec(*mul2.program, into_z, mul2.grid, mul2.block);
  q.signal(done, ++value).submit(*d);
  done.wait(value);
  EXPECT_EQ(float_at(y, 0), 4.0f);
  for (int i = 0; i < 64; i++) ASSERT_EQ(float_at(z, i), 6.0f) << "element " << i << ": a stale QMD (x + 1) ran";
}

}  // namespace
}  // namespace doorbell::nv
