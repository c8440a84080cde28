// The AMD HCQ device (hcq/amd/amd_device.h) on the emulated KFD and GPU (mockgpu/amd): the same bring-up, packets
// and doorbell writes a real 7900 XTX gets, run by the emulated command processor, SDMA engine and shader core. The
// HCQ contract (signal, wait, a wait the host satisfies later, 64-bit waits, timestamps bracketing a kernel, kernels
// in order, copies, bind and patched resubmits, a timeout naming the signal, a fault naming the address as the KFD
// reports it) with kernels rendered as LLVM IR and compiled by LLVM 19, checked against the reference interpreter.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "compiler/program.h"
#include "frontend/tensor.h"
#include "hcq/host_buffers.h"
#include "hcq/run_linear.h"
#include "hcq/wait_primitives.h"
#include "tests/hcq_amd/amd_test_machine.h"

namespace doorbell::amd {
namespace {

std::string hex_text(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

AmdDevice& device() {
  // One emulated GPU for the whole suite.
  static AmdDevice* dev = open_amd_test_device().release();
  return *dev;
}

std::array<uint32_t, 3> dims(const std::array<int64_t, 3>& d) {
  return {static_cast<uint32_t>(d[0]), static_cast<uint32_t>(d[1]), static_cast<uint32_t>(d[2])};
}

struct Loaded {
  const LoadedProgram* program;
  std::array<uint32_t, 3> grid, block;
  UOp call;
};

Loaded load_on(AmdDevice& d, const UOp& call) {
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
std::vector<AmdMemory> upload(AmdDevice& d, const UOp& call) {
  std::vector<AmdMemory> out;
  for (size_t i = 1; i < call.src().size(); i++) {
    std::span<std::byte> b = buffer_bytes(call.src(i));
    AmdMemory m = d.alloc(std::max<size_t>(b.size(), 1));
    std::memcpy(m.cpu, b.data(), b.size());
    out.push_back(m);
  }
  return out;
}

std::vector<uint64_t> vas(const std::vector<AmdMemory>& ms) {
  std::vector<uint64_t> v;
  for (const AmdMemory& m : ms) v.push_back(m.va);
  return v;
}

void free_all(AmdDevice& d, const std::vector<AmdMemory>& ms) {
  for (const AmdMemory& m : ms) d.free(m);
}

TEST(AmdDevice, WithoutAKfdOpeningTheRealDeviceNamesTheMissingFile) {
  if (access("/dev/kfd", F_OK) == 0) GTEST_SKIP() << "this machine has a KFD";
  try {
    AmdDevice::open(std::make_unique<kernel_interface::LinuxSyscalls>());
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/kfd"), std::string::npos) << e.what();
  }
}

TEST(AmdDevice, BringsUpOnTheEmulatedKfdWithAComputeAndAnSdmaQueue) {
  AmdDevice& d = device();
  EXPECT_EQ(d.name(), "AMD");
  EXPECT_EQ(d.arch(), "gfx1100");
  EXPECT_TRUE(d.emulated());
  EXPECT_TRUE(d.separate_copy_queue());
  EXPECT_NE(d.session().compute().doorbell, nullptr);
  EXPECT_NE(d.session().sdma().doorbell, nullptr);
  EXPECT_NE(d.session().compute().queue_id, d.session().sdma().queue_id);
  EXPECT_EQ(d.ns_per_tick_num(), 10u) << "a 100 MHz counter: 10 ns per tick";
  EXPECT_EQ(d.ns_per_tick_den(), 1u);
  EXPECT_NE(d.target().name().find("gfx1100"), std::string::npos) << d.target().name();
}

TEST(AmdDevice, AMachineWithoutQueueEnginesFailsTheOpenAtCreateQueueAndTheProcessGoesOn) {
  mockgpu::amd::MockKfdOptions bare;  // the KFD validates CREATE_QUEUE, then answers ENODEV: no engine to run it
  auto machine = std::make_shared<mockgpu::amd::MockAmdSeam>(std::move(bare));
  try {
    AmdDevice::open(std::make_unique<mockgpu::amd::SharedMockAmdSeam>(machine));
    ADD_FAILURE() << "the device opened without queues";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("CREATE_QUEUE"), std::string::npos) << e.what();
  }
  Signal& s = device().new_signal("after a failed open");
  HWQueue().signal(s, 1).submit(device());
  s.wait(1);
}

TEST(AmdDevice, SignalWrittenByTheQueueReachesTheHostWithItsTimestamp) {
  AmdDevice& d = device();
  Signal& s = d.new_signal("signalled");
  const ClockCalibration clock = d.clock_calibration();
  const int64_t before = monotonic_ns();
  HWQueue().signal(s, 7).submit(d);
  s.wait(7);
  const int64_t after = monotonic_ns();
  EXPECT_EQ(s.value(), 7u);
  // The GPU's counter in ns, on the host's clock within the calibration's bound.
  EXPECT_GE(d.host_time_ns(s.timestamp()), before - clock.uncertainty_ns);
  EXPECT_LE(d.host_time_ns(s.timestamp()), after + clock.uncertainty_ns);
}

// A host waiter sleeps on the KFD's signal event (Signal's interrupt wait), and the KFD fires a signal event only when
// the queue wrote its mailbox slot before the interrupt (kfd_events.c): a queue's signal must do both, on the compute
// queue and on the copy queue, or every sleeping waiter wakes only when its sleep times out.
TEST(AmdDevice, ASignalFromEitherQueueFiresTheKfdEventHostWaitersSleepOn) {
  AmdDevice& d = device();
  Signal& s = d.new_signal("wakes");
  Signal& drained = d.new_signal("drained");
  HWQueue().signal(drained, 1).submit(d);
  drained.wait(1);
  // Consume whatever the submissions so far fired, then one signal from each queue.
  kfd_event_data e{};
  e.event_id = d.session().signal_event_id();
  d.session().kfd().wait_events(std::span<kfd_event_data>(&e, 1), false, 0);
  for (bool copy_queue : {false, true}) {
    HWQueue q;
    if (copy_queue) {
      AmdMemory m = d.alloc(64);
      q.copy(reinterpret_cast<void*>(m.va + 32), reinterpret_cast<const void*>(m.va), 16);
    }
    const uint64_t v = s.value() + 1;
    q.signal(s, v).submit(d);
    while (s.value() < v) std::this_thread::yield();  // polling: nothing here consumes the event
    e = kfd_event_data{};
    e.event_id = d.session().signal_event_id();
    EXPECT_EQ(d.session().kfd().wait_events(std::span<kfd_event_data>(&e, 1), false, 5000),
              kernel_interface::amd::KfdWaitResult::kComplete)
        << (copy_queue ? "the copy queue's" : "the compute queue's") << " signal fired no event";
  }
}

// From kSdmaTransferThreshold on, copy_in/copy_out move the bytes with the SDMA engine straight from and into the
// host's own pages (registered with the KFD as USERPTR for the transfer); below it, through the buffer's mapping.
// Unaligned host pointers and odd sizes: the registration covers the whole pages around the range.
TEST(AmdDevice, LargeTransfersGoThroughTheSdmaEngineFromTheHostsOwnPagesAndSmallOnesThroughTheMapping) {
  AmdDevice& d = device();
  const size_t bytes = (3 << 20) + 123;
  const Device::Storage st = d.allocate_storage(bytes + 64);
  std::vector<uint8_t> in(bytes + 1), out(bytes + 3, 0);
  for (size_t i = 0; i < in.size(); i++) in[i] = static_cast<uint8_t>(i * 7 + 3);
  const uint64_t before = d.sdma_transfers();
  d.copy_in(st, 5, in.data() + 1, bytes);
  d.copy_out(out.data() + 3, st, 5, bytes);
  EXPECT_EQ(d.sdma_transfers(), before + 2);
  EXPECT_EQ(std::memcmp(out.data() + 3, in.data() + 1, bytes), 0);
  // The bytes really are in the buffer (its own mapping shows them), not only passed through.
  EXPECT_EQ(std::memcmp(static_cast<const uint8_t*>(st.host) + 5, in.data() + 1, bytes), 0);
  std::vector<uint8_t> small(1000, 0x5a), back(1000, 0);
  d.copy_in(st, 0, small.data(), small.size());
  d.copy_out(back.data(), st, 0, back.size());
  EXPECT_EQ(back, small);
  EXPECT_EQ(d.sdma_transfers(), before + 2) << "a small transfer took the SDMA path";
  d.release_storage(st);
}

TEST(AmdDevice, AQueueWaitsUntilTheHostSetsTheSignalLater) {
  AmdDevice& d = device();
  Signal& gate = d.new_signal("gate");
  Signal& done = d.new_signal("done");
  HWQueue().wait(gate, 1).signal(done, 1).submit(d);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(done.value(), 0u) << "the wait let the signal through before the host set the gate";
  gate.set(1);
  done.wait(1);
  EXPECT_EQ(done.value(), 1u);
}

TEST(AmdDevice, ComputeQueueWaitsCompareAllSixtyFourBitsAcrossTwoToThe31And32) {
  AmdDevice& d = device();
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

TEST(AmdDevice, AKernelRendersRunsAndMatchesTheReferenceWithTimestampsAroundIt) {
  Tensor::manual_seed(11);
  Tensor a = Tensor::randn({1000}).realize(), b = Tensor::randn({1000}).realize();
  Loaded l = load(a * b + 1);
  AmdDevice& d = device();
  std::vector<AmdMemory> bufs = upload(d, l.call);
  run_linear(UOp::make(Ops::LINEAR, dtypes::void_, {l.call}), on_device("REF"));
  std::span<std::byte> want = buffer_bytes(l.call.src(1));
  std::memset(bufs[0].cpu, 0xAB, want.size());
  Signal& start = d.new_signal("kernel start");
  Signal& end = d.new_signal("kernel end");
  Signal& done = d.new_signal("kernel done");
  HWQueue().timestamp(start).exec(*l.program, vas(bufs), l.grid, l.block).timestamp(end).signal(done, 1).submit(d);
  done.wait(1);
  EXPECT_EQ(std::memcmp(bufs[0].cpu, want.data(), want.size()), 0);
  EXPECT_GT(start.timestamp(), 0u);
  EXPECT_LE(start.timestamp(), end.timestamp());
  EXPECT_LE(end.timestamp(), done.timestamp());
  free_all(d, bufs);
}

TEST(AmdDevice, AHundredKernelsInOneSubmissionRunInOrder) {
  // y = y + 1 a hundred times: each kernel reads what the previous one wrote, so they must run in order.
  Tensor y = Tensor::zeros({256}).contiguous().realize();
  Loaded l = load(y.assign(y + 1));
  AmdDevice& d = device();
  std::vector<AmdMemory> bufs = upload(d, l.call);
  std::memset(bufs[0].cpu, 0, 256 * 4);
  HWQueue q;
  std::vector<uint64_t> args = vas(bufs);
  for (int i = 0; i < 100; i++) q.exec(*l.program, args, l.grid, l.block);
  Signal& done = d.new_signal("hundred done");
  q.signal(done, 1).submit(d);
  done.wait(1);
  const float* out = reinterpret_cast<const float*>(bufs[0].cpu);
  for (int i = 0; i < 256; i++) ASSERT_EQ(out[i], 100.0f) << "element " << i;
  free_all(d, bufs);
}

TEST(AmdDevice, SdmaCopiesAndSignalsOnItsOwnQueue) {
  AmdDevice& d = device();
  AmdMemory src = d.alloc(1 << 20), dst = d.alloc(1 << 20);
  for (int i = 0; i < (1 << 20); i++) src.cpu[i] = static_cast<uint8_t>(i * 7 + 3);
  std::memset(dst.cpu, 0, 1 << 20);
  Signal& done = d.new_signal("copied");
  Signal& stamp = d.new_signal("copy stamp");
  HWQueue().copy(reinterpret_cast<void*>(dst.va), reinterpret_cast<const void*>(src.va), 1 << 20).timestamp(stamp).signal(done, 1).submit(d);
  done.wait(1);
  EXPECT_EQ(std::memcmp(src.cpu, dst.cpu, 1 << 20), 0);
  EXPECT_GT(stamp.timestamp(), 0u);
  EXPECT_LE(stamp.timestamp(), done.timestamp());
  d.free(src);
  d.free(dst);
}

TEST(AmdDevice, ManySubmissionsWrapBothRings) {
  // More submissions than either ring has slots (1 MiB rings: 16384 PM4 slots of 16 dwords, 8192 SDMA slots of 32), and
  // than the compute IB ring has 256-byte pieces (4 MiB: 16384).
  AmdDevice& d = device();
  Signal& s = d.new_signal("wrap compute");
  Signal& c = d.new_signal("wrap sdma");
  AmdMemory a = d.alloc(64), b = d.alloc(64);
  for (uint64_t i = 1; i <= 17000; i++) {
    HWQueue().signal(s, i).submit(d);
    HWQueue().copy(reinterpret_cast<void*>(b.va), reinterpret_cast<const void*>(a.va), 64).signal(c, i).submit(d);
  }
  s.wait(17000);
  c.wait(17000);
  d.free(a);
  d.free(b);
}

TEST(AmdDevice, AQueueMixingExecAndCopyIsRejectedSayingWhy) {
  Loaded l = load(Tensor::empty({64}) + 1);
  AmdDevice& d = device();
  std::vector<AmdMemory> bufs = upload(d, l.call);
  HWQueue q;
  q.exec(*l.program, vas(bufs), {1, 1, 1}, {64, 1, 1}).copy(reinterpret_cast<void*>(bufs[0].va), reinterpret_cast<void*>(bufs[1].va), 4);
  try {
    q.submit(d);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("both exec and copy"), std::string::npos) << e.what();
  }
  free_all(d, bufs);
}

TEST(AmdDevice, BoundQueueResubmitsAndPatchedSignalValueAndBufferTakeEffect) {
  Tensor y = Tensor::zeros({64}).contiguous().realize();
  Loaded l = load(y.assign(y + 1));
  AmdDevice& d = device();
  std::vector<AmdMemory> a = upload(d, l.call), b = upload(d, l.call);
  std::memset(a[0].cpu, 0, 256);
  std::memset(b[0].cpu, 0, 256);
  Signal& done = d.new_signal("bound done");
  HWQueue q;
  q.exec(*l.program, vas(a), l.grid, l.block).signal(done, 1);
  q.bind(d);
  q.submit(d);
  done.wait(1);
  EXPECT_EQ(q.patch_value(1, 2), 1u) << "one dword of the RELEASE_MEM's data changed";
  q.submit(d);
  done.wait(2);
  EXPECT_EQ(reinterpret_cast<const float*>(a[0].cpu)[0], 2.0f);
  ASSERT_EQ(b.size(), 1u) << "y.assign(y + 1) reads and writes one buffer";
  EXPECT_GE(q.patch_buffer(0, 0, reinterpret_cast<void*>(b[0].va)), 1u);
  EXPECT_EQ(q.patch_buffer(0, 0, reinterpret_cast<void*>(b[0].va)), 0u) << "the same address again changes nothing";
  q.patch_value(1, 3);
  q.submit(d);
  done.wait(3);
  EXPECT_EQ(reinterpret_cast<const float*>(a[0].cpu)[0], 2.0f);
  EXPECT_EQ(reinterpret_cast<const float*>(b[0].cpu)[0], 1.0f);
  const AmdDevice::BoundMemory m = d.bound_memory(*q.bound_queue());
  EXPECT_GT(m.dwords, 0u);
  EXPECT_GT(m.kernargs.size, 0u);
  free_all(d, a);
  free_all(d, b);
}

TEST(AmdDevice, ABoundCopyQueuePatchesItsAddressesAndValue) {
  AmdDevice& d = device();
  AmdMemory src = d.alloc(4096), dst1 = d.alloc(4096), dst2 = d.alloc(4096);
  std::memset(src.cpu, 0x5A, 4096);
  std::memset(dst1.cpu, 0, 4096);
  std::memset(dst2.cpu, 0, 4096);
  Signal& done = d.new_signal("bound copy done");
  HWQueue q;
  q.copy(reinterpret_cast<void*>(dst1.va), reinterpret_cast<const void*>(src.va), 4096).signal(done, 1);
  q.bind(d);
  q.submit(d);
  done.wait(1);
  EXPECT_EQ(dst1.cpu[4095], 0x5A);
  EXPECT_GE(q.patch_copy(0, reinterpret_cast<void*>(dst2.va), reinterpret_cast<const void*>(src.va)), 1u);
  q.patch_value(1, 2);
  q.submit(d);
  done.wait(2);
  EXPECT_EQ(dst2.cpu[0], 0x5A);
  EXPECT_EQ(dst2.cpu[4095], 0x5A);
  d.free(src);
  d.free(dst1);
  d.free(dst2);
}

TEST(AmdDevice, ThreadsSubmittingOnTheTimelineAtOnceAllCompleteInOrder) {
  AmdDevice& d = device();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++)
    threads.emplace_back([&d] {
      for (int i = 0; i < 300; i++) {
        HWQueue q;
        d.submit_on_timeline(q);
      }
    });
  for (std::thread& t : threads) t.join();
  d.synchronize();
  EXPECT_EQ(d.timeline_signal().value(), d.timeline_value() - 1);
}

TEST(AmdDevice, AKernelAfterAMemoryBarrierReadsWhatTheKernelBeforeWrote) {
  // y = y + 1, a barrier, then y = y * 3 on the same buffer, in one submission: 3 * (0 + 1).
  Tensor y = Tensor::zeros({256}).contiguous().realize();
  Loaded inc = load(y.assign(y + 1)), triple = load(y.assign(y * 3));
  AmdDevice& d = device();
  std::vector<AmdMemory> bufs = upload(d, inc.call);
  std::memset(bufs[0].cpu, 0, 256 * 4);
  Signal& done = d.new_signal("barrier done");
  HWQueue().exec(*inc.program, vas(bufs), inc.grid, inc.block).memory_barrier()
      .exec(*triple.program, vas(bufs), triple.grid, triple.block).signal(done, 1).submit(d);
  done.wait(1);
  for (int i = 0; i < 256; i++) ASSERT_EQ(reinterpret_cast<const float*>(bufs[0].cpu)[i], 3.0f) << i;
  free_all(d, bufs);
}

TEST(AmdDevice, AWaitThatNeverPassesTimesOutNamingTheDeviceAndSignal) {
  Signal& s = device().new_signal("never");
  try {
    s.wait(1, std::chrono::milliseconds(50));
    ADD_FAILURE() << "no timeout";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("AMD"), std::string::npos) << m;
    EXPECT_NE(m.find("'never'"), std::string::npos) << m;
  }
}

TEST(AmdDevice, BuffersFreedWhileAQueuedKernelWaitsAreKeptUntilItRan) {
  AmdDevice& d = device();
  Signal& gate = d.new_signal("retire gate");
  Signal& done = d.new_signal("retire done");
  AmdMemory m = d.alloc(4096);
  const size_t before = d.retired_count();
  HWQueue().wait(gate, 1).signal(done, 1).submit(d);
  d.free(m);
  EXPECT_EQ(d.retired_count(), before + 1) << "freed while a submission that may use it waits";
  gate.set(1);
  done.wait(1);
  // The queue's progress release follows the submission's last command: poll until the retirement sees it.
  const int64_t deadline = monotonic_ns() + 5'000'000'000;
  while (d.retired_count() != before && monotonic_ns() < deadline) std::this_thread::yield();
  EXPECT_EQ(d.retired_count(), before) << "freed once the submission completed";
}

TEST(AmdDevice, WithoutAFaultTheReportIsEmpty) { EXPECT_EQ(device().fault_report(), ""); }

TEST(AmdDevice, AKernelReadingUnmappedMemoryFaultsNamingTheAddressAndTheDeviceRunsNewWorkAfterIt) {
  // A fresh device: the fault stops its compute queue.
  std::unique_ptr<AmdDevice> d = open_amd_test_device();
  UOp linear = (Tensor::empty({64}) + 1).schedule_linear();
  Loaded k = load_on(*d, linear.src(0));
  AmdMemory out = d->alloc(256), in = d->alloc(256);
  for (uint64_t bad : {uint64_t{0xdead0000}, uint64_t{0xbeef0000}}) {  // twice: the device recovers every time
    Signal& done = d->new_signal("after fault");
    HWQueue().exec(*k.program, std::vector<uint64_t>{out.va, bad}, k.grid, k.block).signal(done, 1).submit(*d);
    try {
      done.wait(1, std::chrono::milliseconds(20000));
      ADD_FAILURE() << "the wait passed";
    } catch (const std::runtime_error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("the device faulted"), std::string::npos) << m << " (a timeout instead of the fault)";
      EXPECT_NE(m.find("KFD memory exception at VA " + hex_text(bad)), std::string::npos) << m;
    }
    EXPECT_NE(d->fault_report().find(hex_text(bad)), std::string::npos) << d->fault_report();
    // Memory freed behind the faulted queue waits; the next submission rebuilds the queues and frees it.
    AmdMemory scratch = d->alloc(4096);
    d->free(scratch);
    EXPECT_EQ(d->retired_count(), 1u);
    for (int i = 0; i < 64; i++) reinterpret_cast<float*>(in.cpu)[i] = static_cast<float>(i);
    Signal& after = d->new_signal("after recovery");
    HWQueue().exec(*k.program, std::vector<uint64_t>{out.va, in.va}, k.grid, k.block).signal(after, 1).submit(*d);
    after.wait(1);
    EXPECT_EQ(d->fault_report(), "");
    EXPECT_EQ(d->retired_count(), 0u);
    for (int i = 0; i < 64; i++) ASSERT_EQ(reinterpret_cast<const float*>(out.cpu)[i], i + 1.0f) << "element " << i;
    // The copy queue was rebuilt too.
    Signal& copied = d->new_signal("copy after recovery");
    HWQueue().copy(reinterpret_cast<void*>(out.va), reinterpret_cast<const void*>(in.va), 256).signal(copied, 1).submit(*d);
    copied.wait(1);
    EXPECT_EQ(reinterpret_cast<const float*>(out.cpu)[5], 5.0f);
  }
  EXPECT_EQ(d->recovered_faults(), 2u);
}


// SDMA's POLL_REGMEM compares one 32-bit word: a target below 2^32 is compared on the low word, a multiple of 2^32
// on the high word; a target with both halves set is refused before anything is submitted.
TEST(AmdDeviceSdma, WaitsBelowTwoToThe32AndOnMultiplesOfItHoldTheCopyQueueAndOthersAreRefused) {
  AmdDevice& d = device();
  AmdMemory a = d.alloc(64), b = d.alloc(64);
  Signal& gate = d.new_signal("sdma gate");
  Signal& done = d.new_signal("sdma done");
  for (uint64_t v : {uint64_t{7}, (uint64_t{1} << 31) + 3, uint64_t{1} << 32, uint64_t{5} << 32}) {
    HWQueue().wait(gate, v).copy(reinterpret_cast<void*>(b.va), reinterpret_cast<const void*>(a.va), 64).signal(done, v).submit(d);
    gate.set(v - 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_LT(done.value(), v) << "a wait for " << v << " passed at " << v - 1;
    gate.set(v);
    done.wait(v);
  }
  try {
    HWQueue().wait(gate, (uint64_t{6} << 32) + 1).copy(reinterpret_cast<void*>(b.va), reinterpret_cast<const void*>(a.va), 64).submit(d);
    ADD_FAILURE() << "a wait the SDMA queue cannot compare was submitted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("must be a multiple of 2^32 there"), std::string::npos) << e.what();
  }
  d.free(a);
  d.free(b);
}


// An MI300X-like gfx942 node (gc 9.4.3: the gfx9 ACQUIRE_MEM and RELEASE_MEM forms, wave64 kernels, SDMA 4.4.2 with
// 4 MiB per COPY_LINEAR): signals, waits and copies run; a kernel compiles for gfx942 and loads (its dispatch is
// planned for gc 9.4.3), but the emulated shader core runs RDNA3 (wave32) code only, so none is launched here.
TEST(AmdDeviceGfx942, SignalsWaitsAndAMultiChunkCopyRunAndAKernelLoads) {
  mockgpu::amd::MockKfdOptions options = mockgpu::amd_machine_options(1);
  options.gpus = mockgpu::amd::mock_amd_configs(1, mockgpu::amd::mock_amd_gfx942());
  std::unique_ptr<AmdDevice> d = AmdDevice::open(std::make_unique<mockgpu::amd::MockAmdSeam>(std::move(options)));
  EXPECT_EQ(d->arch(), "gfx942");
  EXPECT_EQ(d->ip(), GfxIp::kGc9_4_3);
  Loaded l = load_on(*d, (Tensor::empty({300}) * 2 + 1).schedule_linear().src(0));
  EXPECT_FALSE(static_cast<const AmdProgram*>(l.program)->kd.enable_wavefront_size32()) << "gfx942 is wave64";
  Signal& gate = d->new_signal("gfx942 gate");
  Signal& stamped = d->new_signal("gfx942 stamp");
  HWQueue().wait(gate, uint64_t{3} << 32).timestamp(stamped).signal(stamped, 1).submit(*d);
  gate.set(uint64_t{3} << 32);
  stamped.wait(1);
  EXPECT_GT(stamped.timestamp(), 0u);
  const uint64_t bytes = (9 << 20) + 12;  // three COPY_LINEARs at 4 MiB each
  AmdMemory src = d->alloc(bytes), dst = d->alloc(bytes);
  for (uint64_t i = 0; i < bytes; i++) src.cpu[i] = static_cast<uint8_t>(i * 13 + 1);
  Signal& copied = d->new_signal("gfx942 copy");
  HWQueue().copy(reinterpret_cast<void*>(dst.va), reinterpret_cast<const void*>(src.va), bytes).signal(copied, 1).submit(*d);
  copied.wait(1);
  EXPECT_EQ(std::memcmp(src.cpu, dst.cpu, bytes), 0);
}

}  // namespace
}  // namespace doorbell::amd
