// The NV HCQ device (hcq/nv/nv_device.h) on the emulated driver and GPU (mockgpu/nv): the same bring-up, packets,
// QMDs and doorbell writes a real H200 gets, executed by the mock's command processor and PTX SM. The HCQ contract
// (signal, wait, a wait the host satisfies later, timestamps bracketing a kernel, 1000 kernels, copies, bind and a
// patched resubmit, values near 2^31 and 2^32, a timeout naming the signal, a fault naming the address as the
// hardware reports it: error notifier and debugger object) and kernels rendered by the PTX renderer checked against
// the CPU. Each device is opened on a seam of its own (mockgpu/nv/mock_nv_seam.h); open() under MOCKGPU=1 is checked
// with the installed emulator.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <thread>

#include "compiler/program.h"
#include "compiler/gpu/ptx_renderer.h"
#include "frontend/tensor.h"
#include "hcq/host_buffers.h"
#include "hcq/nv/nv_device.h"
#include "hcq/run_linear.h"
#include "hcq/wait_primitives.h"
#include "kernel-interface/driver_seams.h"
#include "mockgpu/install.h"
#include "mockgpu/nv/mock_nv_seam.h"

namespace doorbell::nv {
namespace {

NvDevice& device() {
  // One emulated GPU for the whole suite.
  static NvDevice* dev = NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>()).release();
  return *dev;
}

std::array<uint32_t, 3> dims(const std::array<int64_t, 3>& d) {
  return {static_cast<uint32_t>(d[0]), static_cast<uint32_t>(d[1]), static_cast<uint32_t>(d[2])};
}

// The kernel of a one-kernel program compiled for the device's target (sm_90) and loaded, with its launch dims.
struct Loaded {
  const LoadedProgram* program;
  std::array<uint32_t, 3> grid, block;
  UOp call;
};

Loaded load_on(NvDevice& d, const UOp& call) {
  UOp program = compile_program(call, d.target()).program;
  const ProgramInfo& info = program_info(program);
  return Loaded{&d.program(program), dims(info.global_size), dims(info.local_size), call};
}

Loaded load(const Tensor& t) {
  UOp linear = t.schedule_linear();
  EXPECT_EQ(linear.src().size(), 1u);
  return load_on(device(), linear.src(0));
}

// Device copies of the call's buffers, filled with their host contents.
std::vector<NvMemory> upload(const UOp& call) {
  std::vector<NvMemory> out;
  for (size_t i = 1; i < call.src().size(); i++) {
    std::span<std::byte> b = buffer_bytes(call.src(i));
    NvMemory m = device().alloc(std::max<size_t>(b.size(), 1));
    std::memcpy(m.cpu, b.data(), b.size());
    out.push_back(m);
  }
  return out;
}

std::vector<uint64_t> vas(const std::vector<NvMemory>& ms) {
  std::vector<uint64_t> v;
  for (const NvMemory& m : ms) v.push_back(m.va);
  return v;
}

void free_all(const std::vector<NvMemory>& ms) {
  for (const NvMemory& m : ms) device().free(m);
}

TEST(NvDevice, WithoutAnNvidiaDriverOpeningTheRealDeviceNamesTheMissingFile) {
  if (access("/dev/nvidiactl", F_OK) == 0) GTEST_SKIP() << "this machine has an NVIDIA driver";
  try {
    NvDevice::open(std::make_unique<kernel_interface::LinuxSyscalls>());
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/nvidiactl"), std::string::npos) << e.what();
  }
}

TEST(NvDevice, BringsUpOnTheEmulatedDriverWithTwoChannelsAndTokens) {
  NvDevice& d = device();
  EXPECT_TRUE(d.emulated());
  EXPECT_EQ(d.session().gpu_arch(), 0x900u);
  EXPECT_EQ(d.session().driver_version().rfind("580.", 0), 0u);
  EXPECT_NE(d.session().compute().token, d.session().copy().token);
  EXPECT_EQ(d.session().compute().engine_class, 0xcbc0u);
  EXPECT_EQ(d.session().copy().engine_class, 0xc8b5u);
}

TEST(NvDevice, SignalWrittenByTheQueueReachesTheHostWithItsTimestamp) {
  NvDevice& d = device();
  Signal& s = d.new_signal("signalled");
  const ClockCalibration clock = d.clock_calibration();
  const int64_t before = monotonic_ns();
  HWQueue().signal(s, 7).submit(d);
  s.wait(7);
  const int64_t after = monotonic_ns();
  EXPECT_EQ(s.value(), 7u);
  // The GPU's timer, on the host's clock within the calibration's bound.
  EXPECT_GE(d.host_time_ns(s.timestamp()), before - clock.uncertainty_ns);
  EXPECT_LE(d.host_time_ns(s.timestamp()), after + clock.uncertainty_ns);
  EXPECT_NE(s.device_address() % 16, 8u);
}

TEST(NvDevice, AQueueWaitsUntilTheHostSetsTheSignalLater) {
  NvDevice& d = device();
  Signal& gate = d.new_signal("gate");
  Signal& done = d.new_signal("done");
  HWQueue().wait(gate, 1).signal(done, 1).submit(d);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(done.value(), 0u) << "the wait let the signal through before the host set the gate";
  gate.set(1);
  done.wait(1);
  EXPECT_EQ(done.value(), 1u);
}

TEST(NvDevice, WaitsCompareAllSixtyFourBitsAcrossTwoToThe31And32) {
  NvDevice& d = device();
  Signal& gate = d.new_signal("wide gate");
  Signal& done = d.new_signal("wide done");
  for (uint64_t v : {(uint64_t{1} << 31) - 1, uint64_t{1} << 31, (uint64_t{1} << 32) + 5, (uint64_t{1} << 40) + 1}) {
    HWQueue().wait(gate, v).signal(done, v).submit(d);
    gate.set(v - 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_LT(done.value(), v) << "a wait for " << v << " passed at " << v - 1;
    gate.set(v);
    done.wait(v);
  }
}

TEST(NvDevice, AKernelRendersRunsAndMatchesTheCpuWithTimestampsAroundIt) {
  Tensor::manual_seed(11);
  Tensor a = Tensor::randn({1000}).realize(), b = Tensor::randn({1000}).realize();
  Loaded l = load(a * b + 1);
  std::vector<NvMemory> bufs = upload(l.call);
  run_linear(UOp::make(Ops::LINEAR, dtypes::void_, {l.call}), on_device("REF"));  // the reference, on the CPU
  std::span<std::byte> want = buffer_bytes(l.call.src(1));
  std::memset(bufs[0].cpu, 0xAB, want.size());
  NvDevice& d = device();
  Signal& start = d.new_signal("kernel start");
  Signal& end = d.new_signal("kernel end");
  Signal& done = d.new_signal("kernel done");
  HWQueue().timestamp(start).exec(*l.program, vas(bufs), l.grid, l.block)
      .timestamp(end).signal(done, 1).submit(d);
  done.wait(1);
  EXPECT_EQ(std::memcmp(bufs[0].cpu, want.data(), want.size()), 0);
  EXPECT_GT(start.timestamp(), 0u);
  EXPECT_LE(start.timestamp(), end.timestamp());
  EXPECT_LE(end.timestamp(), done.timestamp());
  free_all(bufs);
}

TEST(NvDevice, GroupedReductionWithSharedMemoryAndABarrierRuns) {
  Tensor x = Tensor::randint({5000}, -9, 9).realize();
  Loaded l = load(x.sum());
  std::vector<NvMemory> bufs = upload(l.call);
  run_linear(UOp::make(Ops::LINEAR, dtypes::void_, {l.call}), on_device("REF"));
  std::span<std::byte> want = buffer_bytes(l.call.src(1));
  std::memset(bufs[0].cpu, 0, want.size());
  NvDevice& d = device();
  Signal& done = d.new_signal("grouped done");
  EXPECT_GT(static_cast<const NvProgram*>(l.program)->shared_bytes, 0u);
  HWQueue().exec(*l.program, vas(bufs), l.grid, l.block).signal(done, 1).submit(d);
  done.wait(1);
  EXPECT_EQ(std::memcmp(bufs[0].cpu, want.data(), want.size()), 0);
  free_all(bufs);
}

TEST(NvDevice, AThousandChainedKernelsInOneSubmissionRunInOrder) {
  // y = y + 1 a thousand times: each kernel reads what the previous one wrote, so they must run in order.
  Tensor y = Tensor::zeros({256}).contiguous().realize();
  Loaded l = load(y.assign(y + 1));
  std::vector<NvMemory> bufs = upload(l.call);
  std::memset(bufs[0].cpu, 0, 256 * 4);
  HWQueue q;
  std::vector<uint64_t> args = vas(bufs);
  for (int i = 0; i < 1000; i++) q.exec(*l.program, args, l.grid, l.block);
  NvDevice& d = device();
  Signal& done = d.new_signal("thousand done");
  q.signal(done, 1).submit(d);
  done.wait(1);
  const float* out = reinterpret_cast<const float*>(bufs[0].cpu);
  for (int i = 0; i < 256; i++) ASSERT_EQ(out[i], 1000.0f) << "element " << i;
  free_all(bufs);
}

TEST(NvDevice, CopyEngineCopiesAndSignalsOnItsOwnChannel) {
  NvDevice& d = device();
  NvMemory src = d.alloc(1 << 20), dst = d.alloc(1 << 20);
  for (int i = 0; i < (1 << 20); i++) src.cpu[i] = static_cast<uint8_t>(i * 7 + 3);
  std::memset(dst.cpu, 0, 1 << 20);
  Signal& done = d.new_signal("copied");
  HWQueue().copy(reinterpret_cast<void*>(dst.va), reinterpret_cast<const void*>(src.va), 1 << 20).signal(done, 1).submit(d);
  done.wait(1);
  EXPECT_EQ(std::memcmp(src.cpu, dst.cpu, 1 << 20), 0);
  d.free(src);
  d.free(dst);
}

TEST(NvDevice, AQueueMixingExecAndCopyIsRejectedSayingWhy) {
  Loaded l = load(Tensor::empty({64}) + 1);
  std::vector<NvMemory> bufs = upload(l.call);
  HWQueue q;
  q.exec(*l.program, vas(bufs), {1, 1, 1}, {64, 1, 1}).copy(reinterpret_cast<void*>(bufs[0].va), reinterpret_cast<void*>(bufs[1].va), 4);
  try {
    q.submit(device());
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("both exec and copy"), std::string::npos) << e.what();
  }
  free_all(bufs);
}

TEST(NvDevice, BoundQueueResubmitsAndAPatchedSignalValueAndBufferTakeEffect) {
  Tensor y = Tensor::zeros({64}).contiguous().realize();
  Loaded l = load(y.assign(y + 1));
  std::vector<NvMemory> a = upload(l.call), b = upload(l.call);
  std::memset(a[0].cpu, 0, 256);
  std::memset(b[0].cpu, 0, 256);
  NvDevice& d = device();
  Signal& done = d.new_signal("bound done");
  HWQueue q;
  q.exec(*l.program, vas(a), l.grid, l.block).signal(done, 1);
  q.bind(d);
  q.submit(d);
  done.wait(1);
  q.patch_value(1, 2);
  q.submit(d);
  done.wait(2);
  EXPECT_EQ(reinterpret_cast<const float*>(a[0].cpu)[0], 2.0f);
  ASSERT_EQ(b.size(), 1u) << "y.assign(y + 1) reads and writes one buffer";
  q.patch_buffer(0, 0, reinterpret_cast<void*>(b[0].va));
  q.patch_value(1, 3);
  q.submit(d);
  done.wait(3);
  EXPECT_EQ(reinterpret_cast<const float*>(a[0].cpu)[0], 2.0f);
  EXPECT_EQ(reinterpret_cast<const float*>(b[0].cpu)[0], 1.0f);
  free_all(a);
  free_all(b);
}

TEST(NvDevice, AWaitThatNeverPassesTimesOutNamingTheDeviceAndSignal) {
  NvDevice& d = device();
  Signal& s = d.new_signal("never");
  try {
    s.wait(1, std::chrono::milliseconds(50));
    ADD_FAILURE() << "no timeout";
  } catch (const std::runtime_error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("NV"), std::string::npos) << m;
    EXPECT_NE(m.find("'never'"), std::string::npos) << m;
  }
}

TEST(NvDevice, AKernelReadingUnmappedMemoryFaultsNamingTheAddress) {
  // A fresh device: the fault stops its compute channel.
  std::unique_ptr<NvDevice> d = NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>());
  UOp linear = (Tensor::empty({64}) + 1).schedule_linear();
  Loaded k = load_on(*d, linear.src(0));
  NvMemory out = d->alloc(256);
  const uint64_t bad = 0xdead0000;
  Signal& done = d->new_signal("after fault");
  HWQueue().exec(*k.program, std::vector<uint64_t>{out.va, bad}, k.grid, k.block).signal(done, 1).submit(*d);
  const int64_t t0 = monotonic_ns();
  try {
    done.wait(1, std::chrono::milliseconds(20000));
    ADD_FAILURE() << "the wait passed";
  } catch (const std::runtime_error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("the device faulted"), std::string::npos) << m;
    EXPECT_NE(m.find("compute channel error notifier status 0xffff, error 31 (Xid)"), std::string::npos) << "read from the notifier memory: " << m;
    EXPECT_NE(m.find("MMU fault at 0xdead0000 (fault_invalidPte, VIRT_READ)"), std::string::npos) << "read from the debugger object: " << m;
  }
  EXPECT_LT(monotonic_ns() - t0, int64_t{10'000'000'000}) << "the fault ended the wait, not the timeout";
  EXPECT_NE(d->fault_report().find("MMU fault at 0xdead0000"), std::string::npos) << d->fault_report();
  EXPECT_EQ(d->session().mmu_faults().size(), 1u) << "the debugger object's answer, which the report was built from";
}

// The copy engine's faults leave their address in the kernel log only (RM records a GPC's fault for the debugger):
// the report says the copy channel faulted, from its own error notifier, and claims no address; the compute
// channel's notifier stays clean (each channel has its own, as tinygrad gives each GPFIFO one).
TEST(NvDevice, ACopyFromUnmappedMemoryFaultsThroughTheCopyChannelsNotifierWithoutAnAddress) {
  std::unique_ptr<NvDevice> d = NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>());
  NvMemory out = d->alloc(256);
  Signal& done = d->new_signal("after copy fault");
  HWQueue().copy(reinterpret_cast<void*>(out.va), reinterpret_cast<const void*>(0x7400000000ull), 256).signal(done, 1).submit(*d);
  try {
    done.wait(1, std::chrono::milliseconds(20000));
    ADD_FAILURE() << "the wait passed";
  } catch (const std::runtime_error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("the device faulted: copy channel error notifier status 0xffff, error 13 (Xid)"), std::string::npos) << m;
    EXPECT_NE(m.find("a copy-engine fault's address is in the kernel log"), std::string::npos) << m;
    EXPECT_EQ(m.find("MMU fault at"), std::string::npos) << m;
  }
  const uint8_t* copy_notifier = d->session().copy().error_notifier;
  const uint8_t* compute_notifier = d->session().compute().error_notifier;
  ASSERT_NE(copy_notifier, compute_notifier) << "the two channels share one notifier";
  uint16_t copy_status = 0;
  std::memcpy(&copy_status, copy_notifier + 14, 2);
  EXPECT_EQ(copy_status, 0xffff) << "the copy channel's NvNotification status";
  const std::vector<uint8_t> clean(16, 0);
  EXPECT_EQ(std::memcmp(compute_notifier, clean.data(), clean.size()), 0) << "the compute channel's notifier was written";
}

// Memory is let go while a submitted kernel may still touch it (as unwinding does after a wait timed out): the
// device keeps it until the signal after that submission passed, so the kernel runs on live memory.
TEST(NvDevice, BuffersFreedWhileAQueuedKernelWaitsAreKeptUntilItRan) {
  std::unique_ptr<NvDevice> d = NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>());
  UOp linear = (Tensor::empty({64}) + 1).schedule_linear();
  Loaded k = load_on(*d, linear.src(0));
  NvMemory out = d->alloc(256), in = d->alloc(256);
  Signal& gate = d->new_signal("gate");
  Signal& done = d->new_signal("kernel after the frees");
  HWQueue().wait(gate, 1).exec(*k.program, std::vector<uint64_t>{out.va, in.va}, k.grid, k.block).signal(done, 1).submit(*d);
  d->free(out);
  d->free(in);
  EXPECT_EQ(d->retired_count(), 2u) << "the queued kernel may still touch them";
  EXPECT_THROW(d->free(out), std::invalid_argument) << "a second free of the same memory";
  gate.set(1);
  done.wait(1, std::chrono::milliseconds(20000));  // threw "the device faulted" when the frees unmapped them at once
  EXPECT_EQ(d->fault_report(), "");
  Signal& later = d->new_signal("a later submission");
  HWQueue().signal(later, 1).submit(*d);
  later.wait(1, std::chrono::milliseconds(20000));  // the progress release of the kernel's submission came before it
  EXPECT_EQ(d->retired_count(), 0u) << "freed once the submission that could touch them completed";
}

// A bound queue's pushbuffer lives in GPU memory: destroying the queue while the GPU waits inside it must not pull
// the pushbuffer from under the channel.
TEST(NvDevice, ABoundQueueDestroyedWhileItsSubmissionWaitsStillRunsToItsEnd) {
  std::unique_ptr<NvDevice> d = NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>());
  Signal& gate = d->new_signal("gate");
  Signal& done = d->new_signal("after the bound queue's wait");
  {
    HWQueue q;
    q.wait(gate, 1).signal(done, 1).bind(*d);
    q.submit(*d);
  }
  gate.set(1);
  done.wait(1, std::chrono::milliseconds(20000));  // threw "the device faulted" when the pushbuffer was freed at once
  EXPECT_EQ(d->fault_report(), "");
}

// The queue holds the device's life, not the device: a bound queue that outlives its NvDevice skips the frees of
// its pushbuffer and kernel arguments (the device's teardown released them) instead of calling into the destroyed
// device (which read freed memory: a crash here, a heap-use-after-free under ASan).
TEST(NvDevice, ABoundQueueOutlivingItsDeviceIsDestroyedWithoutTouchingIt) {
  auto q = std::make_unique<HWQueue>();
  {
    std::unique_ptr<NvDevice> d = NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>());
    NvMemory src = d->alloc(256), dst = d->alloc(256);
    std::memset(src.cpu, 0x5a, 256);
    Signal& done = d->new_signal("bound copy");
    q->copy(reinterpret_cast<void*>(dst.va), reinterpret_cast<const void*>(src.va), 256).signal(done, 1).bind(*d);
    q->submit(*d);
    done.wait(1, std::chrono::milliseconds(20000));
    EXPECT_EQ(dst.cpu[255], 0x5a);
  }
  q.reset();  // NvBoundQueue's destructor: the device is gone, so nothing is freed through it
  // The emulated GPU of a new device runs (nothing of it was freed by the old queue).
  std::unique_ptr<NvDevice> other = NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>());
  Signal& after = other->new_signal("after the queue");
  HWQueue().signal(after, 1).submit(*other);
  after.wait(1, std::chrono::milliseconds(20000));
  EXPECT_EQ(other->fault_report(), "");
}

// What a faulted channel may touch is never known to be done with: it stays until the device is destroyed.
TEST(NvDevice, MemoryFreedBehindAFaultedKernelIsKeptUntilTheDeviceIsDestroyed) {
  std::unique_ptr<NvDevice> d = NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>());
  UOp linear = (Tensor::empty({64}) + 1).schedule_linear();
  Loaded k = load_on(*d, linear.src(0));
  NvMemory out = d->alloc(256);
  Signal& done = d->new_signal("after fault");
  HWQueue().exec(*k.program, std::vector<uint64_t>{out.va, 0xdead0000}, k.grid, k.block).signal(done, 1).submit(*d);
  d->free(out);
  EXPECT_THROW(done.wait(1, std::chrono::milliseconds(20000)), std::runtime_error);
  EXPECT_EQ(d->retired_count(), 1u);
}

TEST(NvDevice, WithoutAFaultTheReportIsEmpty) {
  EXPECT_EQ(device().fault_report(), "");
  EXPECT_TRUE(device().session().mmu_faults().empty());
}

// MOCKGPU=1 reaches the emulator through kernel-interface's driver seams once mockgpu::install() ran.
TEST(NvDevice, OpenUnderMockgpuRunsOnTheInstalledEmulator) {
  mockgpu::install();
  ASSERT_EQ(setenv("MOCKGPU", "1", 1), 0);
  std::unique_ptr<NvDevice> d;
  try {
    d = NvDevice::open();
  } catch (...) {
    unsetenv("MOCKGPU");
    throw;
  }
  unsetenv("MOCKGPU");
  EXPECT_TRUE(d->emulated());
  Signal& s = d->new_signal("on the installed emulator");
  HWQueue().signal(s, 3).submit(*d);
  s.wait(3);
  EXPECT_EQ(s.value(), 3u);
}

}  // namespace
}  // namespace doorbell::nv

namespace doorbell::nv {
namespace {

// An Ampere GA10x (no Hopper classes): the device falls back to AMPERE_CHANNEL_GPFIFO_A, AMPERE_COMPUTE_B with QMD
// V03 and AMPERE_DMA_COPY_B, renders sm_80 PTX, and the same queue runs.
TEST(NvDeviceAmpere, FallsBackToTheAmpereClassesAndRunsAKernelWithQmdV03) {
  mockgpu::nv::MockGpuConfig config;
  config.class_list = mockgpu::nv::ga10x_class_list();
  config.sm_version = 0x806;
  config.pci_device_id = 0x2204;
  std::unique_ptr<NvDevice> d = NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>(config));
  EXPECT_EQ(d->session().classes().compute, 0xc7c0u);
  EXPECT_EQ(d->session().classes().copy, 0xc7b5u);
  EXPECT_EQ(d->session().classes().gpfifo, 0xc56fu);
  EXPECT_EQ(d->arch(), "sm_86");
  EXPECT_EQ(d->ptx_target(), "sm_80");
  Tensor::manual_seed(12);
  Tensor a = Tensor::randn({3000}).realize();
  UOp linear = (a * 3 + 1).schedule_linear();
  UOp call = linear.src(0);
  Loaded k = load_on(*d, call);
  EXPECT_EQ(program_info(compile_program(call, d->target()).program).target.rfind("PTX sm_80", 0), 0u);
  NvMemory out = d->alloc(3000 * 4), in = d->alloc(3000 * 4);
  std::memcpy(in.cpu, buffer_bytes(call.src(2)).data(), 3000 * 4);
  run_linear(UOp::make(Ops::LINEAR, dtypes::void_, {call}), on_device("REF"));
  Signal& done = d->new_signal("ampere done");
  HWQueue().exec(*k.program, std::vector<uint64_t>{out.va, in.va}, k.grid, k.block).signal(done, 1).submit(*d);
  done.wait(1);
  EXPECT_EQ(std::memcmp(out.cpu, buffer_bytes(call.src(1)).data(), 3000 * 4), 0);
  NvMemory copy = d->alloc(3000 * 4);
  HWQueue().copy(reinterpret_cast<void*>(copy.va), reinterpret_cast<const void*>(out.va), 3000 * 4).signal(done, 2).submit(*d);
  done.wait(2);
  EXPECT_EQ(std::memcmp(copy.cpu, out.cpu, 3000 * 4), 0);
  EXPECT_EQ(d->fault_report(), "");
}

TEST(NvDeviceAmpere, AGpuWithoutAnyClassWeDriveIsAnErrorListingItsClasses) {
  mockgpu::nv::MockGpuConfig config;
  config.class_list = {0xc36f, 0xc361, 0x90f1, 0xa06c, 0x9067, 0x70, 0x40, 0x3e};  // Volta-era GPFIFO and usermode only
  try {
    NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>(config));
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("no GPFIFO channel class"), std::string::npos) << m;
    EXPECT_NE(m.find("0xc36f"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace doorbell::nv

namespace doorbell::nv {
namespace {

// The device's seam onto an emulated machine the test keeps (mockgpu's SharedMockNvSeam): the driver's and GPU's
// counters outlive the device.
std::unique_ptr<NvDevice> open_on(const std::shared_ptr<mockgpu::nv::MockNvSeam>& machine) {
  return NvDevice::open(std::make_unique<mockgpu::nv::SharedMockNvSeam>(machine));
}

// A device destroyed while a kernel runs stops its channels the way RM does when it frees them: the emulator
// preempts the kernel, teardown does not wait for it, nothing faults, and the machine takes a new device.
TEST(NvDeviceTeardown, DestroyingTheDeviceMidKernelPreemptsTheKernelAndTheGpuTakesANewDevice) {
  auto machine = std::make_shared<mockgpu::nv::MockNvSeam>();
  auto d = open_on(machine);
  // 512x512 by 512x512: seconds of interpretation, in many blocks.
  UOp linear = Tensor::empty({512, 512}).matmul(Tensor::empty({512, 512})).schedule_linear();
  Loaded k = load_on(*d, linear.src(0));
  const uint64_t blocks = uint64_t{k.grid[0]} * k.grid[1] * k.grid[2];
  ASSERT_GE(blocks, 16u);
  NvMemory out = d->alloc(512 * 512 * 4), x = d->alloc(512 * 512 * 4), y = d->alloc(512 * 512 * 4);
  Signal& done = d->new_signal("long kernel done");
  HWQueue().exec(*k.program, std::vector<uint64_t>{out.va, x.va, y.va}, k.grid, k.block).signal(done, 1).submit(*d);
  // The kernel is running once its first block completed (bounded, so that a GPU that never starts fails the test).
  const int64_t give_up = monotonic_ns() + int64_t{20'000'000'000};
  while (machine->gpu().stats().blocks == 0 && machine->gpu().faults().empty() && monotonic_ns() < give_up)
    std::this_thread::yield();
  ASSERT_TRUE(machine->gpu().faults().empty()) << machine->gpu().faults().front();
  ASSERT_GT(machine->gpu().stats().blocks, 0u) << "the kernel never started";
  d.reset();
  const mockgpu::nv::MockNvGpuStats after = machine->gpu().stats();
  EXPECT_LT(after.blocks, blocks) << "teardown waited for the kernel to finish all its blocks";
  EXPECT_EQ(after.preemptions, 1u) << "the kernel was preempted when RM freed its channel";
  EXPECT_TRUE(machine->gpu().faults().empty()) << machine->gpu().faults().front();
  EXPECT_EQ(machine->driver().rm_object_count(), 0u) << "the device freed everything it allocated";

  auto again = open_on(machine);
  Signal& s = again->new_signal("after teardown");
  HWQueue().signal(s, 7).submit(*again);
  s.wait(7);
  EXPECT_EQ(s.value(), 7u);
}

}  // namespace
}  // namespace doorbell::nv
