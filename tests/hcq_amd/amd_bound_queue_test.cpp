// The AMD device's bound queues and teardown (hcq/amd/amd_device.h) on the emulated machine: a patch waits for the
// previous run and leaves the words alone when that run never completes; a bound queue destroyed while its run waits
// keeps its IB until the run passed; one that outlives its device does not touch it; bound memory of another
// device's queue is refused; a second GPU is AMD:1; a device destroyed mid-kernel leaves the machine usable.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "compiler/program.h"
#include "frontend/tensor.h"
#include "hcq/wait_primitives.h"
#include "tests/hcq_amd/amd_test_machine.h"

namespace doorbell::amd {
namespace {

struct Kernel {
  const LoadedProgram* program;
  std::array<uint32_t, 3> grid, block;
};

Kernel load_kernel(AmdDevice& d, const Tensor& t) {
  UOp linear = t.schedule_linear();
  UOp program = compile_program(linear.src(0), d.target()).program;
  const ProgramInfo& info = program_info(program);
  auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
  return {&d.program(program), {u(info.global_size[0]), u(info.global_size[1]), u(info.global_size[2])},
          {u(info.local_size[0]), u(info.local_size[1]), u(info.local_size[2])}};
}

AmdMemory floats(AmdDevice& d, float first) {
  AmdMemory m = d.alloc(64 * 4);
  for (int i = 0; i < 64; i++) reinterpret_cast<float*>(m.cpu)[i] = first + static_cast<float>(i);
  return m;
}
float float_at(const AmdMemory& m, int i) { return reinterpret_cast<const float*>(m.cpu)[i]; }

std::vector<uint8_t> bytes_of(const AmdMemory& m) { return std::vector<uint8_t>(m.cpu, m.cpu + m.size); }

// The previous run is blocked on a wait: a patch must not write under it. It waits until the run passed, so that run
// still writes out1, and only the next run writes out2.
TEST(AmdBoundQueue, APatchWaitsUntilThePreviousRunOfTheQueuePassed) {
  std::unique_ptr<AmdDevice> d = open_amd_test_device();
  const Kernel k = load_kernel(*d, Tensor::empty({64}) + 1);
  AmdMemory in = floats(*d, 10), out1 = floats(*d, 0), out2 = floats(*d, 0);
  Signal& gate = d->new_signal("gate");
  Signal& done = d->new_signal("bound done");
  HWQueue q;
  q.wait(gate, 1).exec(*k.program, std::vector<uint64_t>{out1.va, in.va}, k.grid, k.block).signal(done, 1).bind(*d);
  const AmdDevice::BoundMemory memory = d->bound_memory(*q.bound_queue());
  q.submit(*d);
  const std::vector<uint8_t> before = bytes_of(memory.kernargs);
  std::atomic<bool> patched{false};
  std::thread patcher([&] {
    q.patch_buffer(1, 0, reinterpret_cast<void*>(out2.va));
    patched = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(patched.load()) << "the patch did not wait for the blocked run";
  EXPECT_EQ(bytes_of(memory.kernargs), before) << "the patch wrote under the blocked run";
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

TEST(AmdBoundQueue, APatchedScalarReachesTheKernelsArguments) {
  std::unique_ptr<AmdDevice> d = open_amd_test_device();
  // A window at a symbolic offset: out[i] = in[s + i] + 1, with the start s a kernel variable (a scalar argument).
  const Kernel k = load_kernel(*d, Tensor::empty({128}).narrow(0, UOp::variable("s", 0, 64).bind(5), 64) + 1);
  AmdMemory src = d->alloc(128 * 4), out = floats(*d, 0);
  for (int i = 0; i < 128; i++) reinterpret_cast<float*>(src.cpu)[i] = static_cast<float>(i);
  Signal& done = d->new_signal("scalar done");
  HWQueue q;
  const std::vector<uint64_t> bufs{out.va, src.va};
  const std::vector<int64_t> vars{5};
  q.exec(*k.program, bufs, vars, k.grid, k.block).signal(done, 1).bind(*d);
  q.submit(*d);
  done.wait(1);
  EXPECT_EQ(float_at(out, 3), 9.0f);  // in[5 + 3] + 1
  EXPECT_EQ(q.patch_scalar(0, 0, 40), 1u) << "one 32-bit word of the 8-byte argument changed";
  q.patch_value(1, 2);
  q.submit(*d);
  done.wait(2);
  EXPECT_EQ(float_at(out, 3), 44.0f);  // in[40 + 3] + 1
}

// A previous run that never completes (its kernel faults) makes the patch throw, naming the queue's run, and leaves
// the words alone.
TEST(AmdBoundQueue, APatchBehindARunThatNeverCompletesThrowsSayingWhy) {
  std::unique_ptr<AmdDevice> d = open_amd_test_device();
  const Kernel k = load_kernel(*d, Tensor::empty({64}) + 1);
  AmdMemory out = floats(*d, 0);
  Signal& done = d->new_signal("bound done");
  HWQueue q;
  q.exec(*k.program, std::vector<uint64_t>{out.va, 0xdead0000}, k.grid, k.block).signal(done, 1).bind(*d);
  const AmdDevice::BoundMemory memory = d->bound_memory(*q.bound_queue());
  q.submit(*d);
  const std::vector<uint8_t> before = bytes_of(memory.ib);
  try {
    q.patch_value(1, 2);
    ADD_FAILURE() << "the patch did not throw";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("HWQueue::patch_value on AMD: the previous run of the bound queue"), std::string::npos) << m;
    EXPECT_NE(m.find("the device faulted"), std::string::npos) << m;
  }
  EXPECT_EQ(bytes_of(memory.ib), before);
  EXPECT_EQ(q.commands()[1].value, 1u) << "a failed patch leaves the recorded value";
}

TEST(AmdBoundQueue, BoundMemoryOfAQueueBoundElsewhereIsRefused) {
  std::unique_ptr<AmdDevice> a = open_amd_test_device(), b = open_amd_test_device();
  Signal& s = a->new_signal("s");
  HWQueue q;
  q.signal(s, 1).bind(*a);
  EXPECT_EQ(a->bound_memory(*q.bound_queue()).dwords, 24u) << "three RELEASE_MEMs of 8 dwords: timestamp, value, event mailbox";
  EXPECT_THROW(b->bound_memory(*q.bound_queue()), std::invalid_argument);
  EXPECT_THROW(q.submit(*b), std::invalid_argument);
}

// A bound queue's IB lives in GPU-visible memory: destroying the queue while the GPU waits inside it must not free
// the IB from under the queue.
TEST(AmdBoundQueue, ABoundQueueDestroyedWhileItsSubmissionWaitsStillRunsToItsEnd) {
  std::unique_ptr<AmdDevice> d = open_amd_test_device();
  Signal& gate = d->new_signal("gate");
  Signal& done = d->new_signal("after the bound queue's wait");
  {
    HWQueue q;
    q.wait(gate, 1).signal(done, 1).bind(*d);
    q.submit(*d);
  }
  EXPECT_EQ(d->retired_count(), 1u) << "the IB is retired, not freed";
  gate.set(1);
  done.wait(1, std::chrono::milliseconds(20000));
  EXPECT_EQ(d->fault_report(), "");
}

TEST(AmdBoundQueue, ABoundQueueOutlivingItsDeviceIsDestroyedWithoutTouchingIt) {
  auto q = std::make_unique<HWQueue>();
  {
    std::unique_ptr<AmdDevice> d = open_amd_test_device();
    AmdMemory src = d->alloc(256), dst = d->alloc(256);
    std::memset(src.cpu, 0x5a, 256);
    Signal& done = d->new_signal("bound copy");
    q->copy(reinterpret_cast<void*>(dst.va), reinterpret_cast<const void*>(src.va), 256).signal(done, 1).bind(*d);
    q->submit(*d);
    done.wait(1, std::chrono::milliseconds(20000));
    EXPECT_EQ(dst.cpu[255], 0x5a);
  }
  EXPECT_THROW(q->patch_value(1, 2), std::logic_error) << "the device and its bound copy are gone";
  q.reset();
  std::unique_ptr<AmdDevice> other = open_amd_test_device();
  Signal& after = other->new_signal("after the queue");
  HWQueue().signal(after, 1).submit(*other);
  after.wait(1, std::chrono::milliseconds(20000));
  EXPECT_EQ(other->fault_report(), "");
}

TEST(AmdDeviceMachine, TheSecondGpuIsAmd1AndAMissingOneIsAnErrorCountingTheGpus) {
  auto machine = std::make_shared<mockgpu::amd::MockAmdSeam>(mockgpu::amd_machine_options(2));
  std::unique_ptr<AmdDevice> second = AmdDevice::open(std::make_unique<mockgpu::amd::SharedMockAmdSeam>(machine), 1);
  EXPECT_EQ(second->name(), "AMD:1");
  Signal& s = second->new_signal("on the second GPU");
  HWQueue().signal(s, 2).submit(*second);
  s.wait(2);
  try {
    AmdDevice::open(std::make_unique<mockgpu::amd::SharedMockAmdSeam>(machine), 2);
    ADD_FAILURE() << "a third GPU opened";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("AMD: GPU 2 asked for; the KFD topology lists 2 GPU node(s)"), std::string::npos) << e.what();
  }
}

// A device destroyed while a long kernel runs: the KFD destroys its queues (the engines stop, the kernel is
// abandoned), teardown does not wait for it, and the machine takes a new device.
TEST(AmdDeviceMachine, DestroyingTheDeviceMidKernelLeavesTheMachineUsable) {
  auto machine = std::make_shared<mockgpu::amd::MockAmdSeam>(mockgpu::amd_machine_options(1));
  auto d = AmdDevice::open(std::make_unique<mockgpu::amd::SharedMockAmdSeam>(machine));
  const Kernel k = load_kernel(*d, Tensor::empty({256, 256}).matmul(Tensor::empty({256, 256})));
  AmdMemory out = d->alloc(256 * 256 * 4), x = d->alloc(256 * 256 * 4), y = d->alloc(256 * 256 * 4);
  Signal& done = d->new_signal("long kernel done");
  HWQueue().exec(*k.program, std::vector<uint64_t>{out.va, x.va, y.va}, k.grid, k.block).signal(done, 1).submit(*d);
  const int64_t t0 = monotonic_ns();
  d.reset();
  EXPECT_LT(monotonic_ns() - t0, int64_t{10'000'000'000}) << "teardown waited too long";
  auto again = AmdDevice::open(std::make_unique<mockgpu::amd::SharedMockAmdSeam>(machine));
  Signal& s = again->new_signal("after teardown");
  HWQueue().signal(s, 7).submit(*again);
  s.wait(7);
}

}  // namespace
}  // namespace doorbell::amd
