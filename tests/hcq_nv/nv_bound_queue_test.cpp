// A queue bound to an NV device is encoded once into GPU memory; HWQueue::patch_value/patch_buffer/patch_scalar
// rewrite exactly the recorded words there (a signal's or wait's payload in the pushbuffer, a parameter in the
// kernel's constant bank 0), only after the previous run of the queue passed, and the resubmitted queue computes
// with the new values. Checked on the emulated GPU by snapshotting the bound memory around each patch.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "mockgpu/nv/mock_nv_seam.h"
#include "nv_test_kernels.h"

namespace doorbell::nv {
namespace {

using test::float_at;
using test::floats;
using test::load_kernel;

struct Snapshot {
  std::vector<uint32_t> pushbuffer, kernargs;
};

Snapshot snapshot(const NvDevice::BoundMemory& m) {
  const auto* pb = reinterpret_cast<const uint32_t*>(m.pushbuffer.cpu);
  const auto* ka = reinterpret_cast<const uint32_t*>(m.kernargs.cpu);
  return {std::vector<uint32_t>(pb, pb + m.words), std::vector<uint32_t>(ka, ka + m.kernargs.size / 4)};
}

// The indices of the words that differ.
std::vector<size_t> changed(const std::vector<uint32_t>& before, const std::vector<uint32_t>& after) {
  std::vector<size_t> out;
  for (size_t i = 0; i < before.size(); i++)
    if (before[i] != after[i]) out.push_back(i);
  return out;
}

uint64_t u64_at(const std::vector<uint32_t>& words, size_t i) { return uint64_t{words[i + 1]} << 32 | words[i]; }

std::vector<float> iota(float first, size_t n = 64) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; i++) v[i] = first + static_cast<float>(i);
  return v;
}

TEST(NvBoundQueue, EachPatchRewritesExactlyItsWordsInPlaceAndTheResubmitComputesWithThem) {
  std::unique_ptr<NvDevice> d = NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>());
  const test::NvKernel k = load_kernel(*d, Tensor::empty({64}) + 1);  // out = in + 1
  NvMemory in1 = floats(*d, iota(10)), in2 = floats(*d, iota(500)), out1 = floats(*d, iota(0)), out2 = floats(*d, iota(0));
  Signal& done = d->new_signal("bound done");
  // The input address goes in as the kernel's second parameter by patch_scalar's slot: 8 bytes after the buffer.
  const std::vector<uint64_t> buffers{out1.va};
  const std::vector<int64_t> scalars{static_cast<int64_t>(in1.va)};
  HWQueue q;
  q.exec(*k.program, buffers, scalars, k.grid, k.block).signal(done, 1).bind(*d);
  const NvDevice::BoundMemory memory = d->bound_memory(*q.bound_queue());
  q.submit(*d);
  done.wait(1);
  EXPECT_EQ(float_at(out1, 7), 18.0f);

  Snapshot before = snapshot(memory);
  const uint64_t value = (uint64_t{1} << 32) + 2;  // both payload words change
  q.patch_value(1, value);
  Snapshot after = snapshot(memory);
  std::vector<size_t> words = changed(before.pushbuffer, after.pushbuffer);
  ASSERT_EQ(words.size(), 2u) << "a value patch rewrites SEM_PAYLOAD_LO and _HI";
  EXPECT_EQ(words[1], words[0] + 1);
  EXPECT_EQ(u64_at(after.pushbuffer, words[0]), value);
  EXPECT_TRUE(changed(before.kernargs, after.kernargs).empty());

  before = after;
  q.patch_buffer(0, 0, reinterpret_cast<void*>(out2.va));
  after = snapshot(memory);
  EXPECT_TRUE(changed(before.pushbuffer, after.pushbuffer).empty()) << "a buffer patch re-encoded the pushbuffer";
  words = changed(before.kernargs, after.kernargs);
  ASSERT_FALSE(words.empty());
  ASSERT_LE(words.size(), 2u) << "a buffer patch rewrites the 8 bytes of its parameter in cbuf 0";
  const size_t slot = words[0] - words[0] % 2;
  EXPECT_EQ(u64_at(after.kernargs, slot), out2.va);
  EXPECT_EQ(u64_at(before.kernargs, slot), out1.va);

  before = after;
  const int64_t wide = 0x1234567800000000;  // differs from an address in both words
  q.patch_scalar(0, 0, wide);
  after = snapshot(memory);
  words = changed(before.kernargs, after.kernargs);
  ASSERT_EQ(words.size(), 2u) << "a scalar patch rewrites its 8 bytes";
  EXPECT_EQ(words[0], slot + 2) << "the scalar follows the buffer in cbuf 0";
  EXPECT_EQ(u64_at(after.kernargs, words[0]), static_cast<uint64_t>(wide));
  q.patch_scalar(0, 0, static_cast<int64_t>(in2.va));

  q.submit(*d);
  done.wait(value);
  EXPECT_EQ(float_at(out2, 7), 508.0f) << "the resubmitted queue read in2 and wrote out2";
  EXPECT_EQ(float_at(out1, 7), 18.0f);
  EXPECT_EQ(q.commands()[1].value, value);
  EXPECT_EQ(q.bound_queue()->commands[1].value, value) << "the plain copy follows too";
}

// The previous run is blocked on a wait: a patch must not write under it. It waits until the run passed, so that run
// still writes out1, and only the next run writes out2.
TEST(NvBoundQueue, APatchWaitsUntilThePreviousRunOfTheQueuePassed) {
  std::unique_ptr<NvDevice> d = NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>());
  const test::NvKernel k = load_kernel(*d, Tensor::empty({64}) + 1);
  NvMemory in = floats(*d, iota(10)), out1 = floats(*d, iota(0)), out2 = floats(*d, iota(0));
  Signal& gate = d->new_signal("gate");
  Signal& done = d->new_signal("bound done");
  HWQueue q;
  q.wait(gate, 1).exec(*k.program, std::vector<uint64_t>{out1.va, in.va}, k.grid, k.block).signal(done, 1).bind(*d);
  const NvDevice::BoundMemory memory = d->bound_memory(*q.bound_queue());
  q.submit(*d);
  const Snapshot before = snapshot(memory);
  std::atomic<bool> patched{false};
  std::thread patcher([&] {
    q.patch_buffer(1, 0, reinterpret_cast<void*>(out2.va));
    patched = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(patched.load()) << "the patch did not wait for the blocked run";
  EXPECT_EQ(snapshot(memory).kernargs, before.kernargs) << "the patch wrote under the blocked run";
  gate.set(1);
  patcher.join();
  done.wait(1);
  EXPECT_EQ(float_at(out1, 3), 14.0f) << "the blocked run used the buffer it was submitted with";
  EXPECT_EQ(float_at(out2, 3), 3.0f);
  q.patch_value(2, 2);
  q.submit(*d);
  done.wait(2);
  EXPECT_EQ(float_at(out2, 3), 14.0f);
}

// A previous run that never completes (here its kernel faults) makes the patch throw, naming the queue's run, and
// leaves the words alone.
TEST(NvBoundQueue, APatchBehindARunThatNeverCompletesThrowsSayingWhy) {
  std::unique_ptr<NvDevice> d = NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>());
  const test::NvKernel k = load_kernel(*d, Tensor::empty({64}) + 1);
  NvMemory out = floats(*d, iota(0));
  Signal& done = d->new_signal("bound done");
  HWQueue q;
  q.exec(*k.program, std::vector<uint64_t>{out.va, 0xdead0000}, k.grid, k.block).signal(done, 1).bind(*d);
  const NvDevice::BoundMemory memory = d->bound_memory(*q.bound_queue());
  q.submit(*d);
  const Snapshot before = snapshot(memory);
  try {
    q.patch_value(1, 2);
    ADD_FAILURE() << "the patch did not throw";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("HWQueue::patch_value on NV: the previous run of the bound queue"), std::string::npos) << m;
    EXPECT_NE(m.find("the device faulted"), std::string::npos) << m;
  }
  EXPECT_EQ(snapshot(memory).pushbuffer, before.pushbuffer);
  EXPECT_EQ(q.commands()[1].value, 1u) << "a failed patch leaves the recorded value";
}

TEST(NvBoundQueue, BoundMemoryOfAQueueBoundElsewhereIsRefused) {
  std::unique_ptr<NvDevice> a = NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>());
  std::unique_ptr<NvDevice> b = NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>());
  Signal& s = a->new_signal("s");
  HWQueue q;
  q.signal(s, 1).bind(*a);
  EXPECT_EQ(a->bound_memory(*q.bound_queue()).words, 6u);
  EXPECT_THROW(b->bound_memory(*q.bound_queue()), std::invalid_argument);
}

// A bound copy on the copy engine's channel: patch_copy rewrites the OFFSET_IN/OUT words that changed (a 64-float copy
// is one chunk: the upper and lower word of each address; buffers in the same 4 GiB differ in the lower words only)
// and the resubmitted copy moves the new source into the new destination.
TEST(NvBoundQueue, ACopyPatchRewritesTheAddressWordsThatChanged) {
  std::unique_ptr<NvDevice> d = NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>());
  NvMemory a = floats(*d, iota(10)), b = floats(*d, iota(500)), out1 = floats(*d, iota(0)), out2 = floats(*d, iota(0));
  Signal& done = d->new_signal("bound done");
  HWQueue q;
  q.copy(reinterpret_cast<void*>(out1.va), reinterpret_cast<const void*>(a.va), 64 * 4).signal(done, 1).bind(*d);
  const NvDevice::BoundMemory memory = d->bound_memory(*q.bound_queue());
  q.submit(*d);
  done.wait(1);
  EXPECT_EQ(float_at(out1, 5), 15.0f);
  const Snapshot before = snapshot(memory);
  ASSERT_EQ(a.va >> 32, b.va >> 32);
  ASSERT_EQ(out1.va >> 32, out2.va >> 32);
  EXPECT_EQ(q.patch_copy(0, reinterpret_cast<void*>(out2.va), reinterpret_cast<const void*>(b.va)), 2u);
  EXPECT_EQ(changed(before.pushbuffer, snapshot(memory).pushbuffer).size(), 2u);
  EXPECT_EQ(q.patch_copy(0, reinterpret_cast<void*>(out2.va), reinterpret_cast<const void*>(b.va)), 0u) << "nothing changed";
  q.patch_value(1, 2);
  q.submit(*d);
  done.wait(2);
  EXPECT_EQ(float_at(out2, 5), 505.0f);
  EXPECT_EQ(float_at(out1, 5), 15.0f);
  EXPECT_THROW(q.patch_copy(1, nullptr, nullptr), std::invalid_argument) << "command 1 is a signal";
}

}  // namespace
}  // namespace doorbell::nv
