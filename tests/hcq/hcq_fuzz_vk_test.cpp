// The HCQ fuzzer (hcq_fuzz.h) with a third device: VK (the Vulkan device, lavapipe in CI), whose streams copy with
// vkCmdCopyBuffer and signal and wait with timeline semaphores, on signals the CPU devices' queues and the host also
// wait on and set (Signal::value reads the semaphore's counter, Signal::set signals it from the host). The cells are
// VK storage mapped for the host, which the CPU devices' execs read and write through that mapping: a Vulkan device
// without host-visible device memory cannot take part, and the tests skip saying so. HCQ_FUZZ_VK_COUNT programs (40
// by default) from HCQ_FUZZ_SEED (1); each opens a fresh device. HCQ_FUZZ_DESCRIBE=1 prints each program first.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "hcq/backend.h"
#include "hcq/device.h"
#include "hcq/vk/vk_device.h"
#include "hcq_fuzz.h"

namespace doorbell::hcq_fuzz {
namespace {

uint64_t env_or(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::strtoull(v, nullptr, 10) : fallback;
}

// A fresh VK device from its backend's registration (hcq/backend.h), not the registry's shared one.
std::unique_ptr<Device> open_vk() {
  const Backend* vk = find_backend("VK");
  if (vk == nullptr) throw std::runtime_error("no backend VK is registered in this build (DOORBELL_WITH_VULKAN)");
  return vk->open(parse_device_name("VK"));
}

RunOptions vk_options() {
  RunOptions options{.watchdog = std::chrono::milliseconds(env_or("HCQ_FUZZ_WATCHDOG_MS", 10'000))};
  options.open_gpu = open_vk;
  return options;
}

// "" when a VK device opens and its storage is mapped for the host; else why the fuzzer cannot run on it.
std::string why_vk_cannot_take_part() {
  std::unique_ptr<Device> d;
  try {
    d = open_vk();
  } catch (const std::exception& e) {
    return std::string("DEV=VK does not open here: ") + e.what();
  }
  const Device::Storage s = d->allocate_storage(256);
  if (s.host == nullptr) return d->name() + " has no host-visible device memory; the fuzzer's cells must be reachable by the CPU devices";
  d->release_storage(s);
  return "";
}

#define SKIP_UNLESS_VK_TAKES_PART()                                    \
  do {                                                                 \
    static const std::string why = why_vk_cannot_take_part();          \
    if (!why.empty()) GTEST_SKIP() << why;                             \
  } while (false)

TEST(HcqFuzzVk, RandomProgramsAcrossTwoCpuDevicesAndTheVulkanDeviceRunInOrderAndComplete) {
  SKIP_UNLESS_VK_TAKES_PART();
  const uint64_t count = env_or("HCQ_FUZZ_VK_COUNT", 40);
  const uint64_t seed = env_or("HCQ_FUZZ_SEED", 1);
  const RunOptions options = vk_options();
  size_t vk_submissions = 0, vk_bound = 0, cross_waits = 0, vk_copies = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const Program program = generate(seed + i, "VK");
    const Plan plan = lower(program);
    for (const Submission& s : plan.submissions) {
      if (program.stream_device[s.stream] != kGpuDevice) continue;
      vk_submissions++;
      vk_bound += s.bind;
      for (const LoweredCommand& c : s.commands) vk_copies += c.kind == CommandKind::kCopy;
    }
    cross_waits += plan.cross_waits;
    // HCQ_FUZZ_DESCRIBE=1: each program before it runs (a program that hangs in a driver call never reaches the
    // failure report below).
    // One line per program, so that a run ended by ctest's timeout names the program it hung in.
    std::printf("VK program %llu (HCQ_FUZZ_SEED=%llu HCQ_FUZZ_VK_COUNT=1): %zu ops\n", static_cast<unsigned long long>(i),
                static_cast<unsigned long long>(seed + i), program.ops.size());
    if (env_or("HCQ_FUZZ_DESCRIBE", 0) != 0) std::printf("%s", describe(program).c_str());
    std::fflush(stdout);
    const std::string failure = run(program, options);
    if (failure.empty()) continue;
    int runs = 0;
    const Program small = shrink(program, options, &runs);
    ADD_FAILURE() << "VK program " << i << " (HCQ_FUZZ_SEED=" << seed + i << " HCQ_FUZZ_VK_COUNT=1): " << failure << "\n"
                  << describe(program) << "shrunk in " << runs << " runs to: " << run(small, options) << "\n"
                  << describe(small);
    return;
  }
  std::printf("hcq fuzz with VK: %llu programs from seed %llu: %zu VK submissions (%zu bound, %zu copies), %zu waits "
              "across streams\n",
              static_cast<unsigned long long>(count), static_cast<unsigned long long>(seed), vk_submissions, vk_bound,
              vk_copies, cross_waits);
  if (count >= 20) {  // what a run of this many programs must exercise (a run of one program may put nothing on VK)
    EXPECT_GT(vk_submissions, count / 2) << "the programs must put work on VK";
    EXPECT_GT(vk_copies, 0u) << "the programs must copy on VK";
    EXPECT_GT(vk_bound, 0u) << "the programs must bind VK queues too";
  }
}

TEST(HcqFuzzVk, ACopyOnVulkanBetweenTwoCpuExecsIsOrderedByTimelineSemaphores) {
  SKIP_UNLESS_VK_TAKES_PART();
  Program p;
  p.gpu = "VK";
  p.stream_device = {0, kGpuDevice, 1};
  p.signal_stride = {1, uint64_t{1} << 32, 1};  // the VK stream's semaphore moves only in its high half
  p.cells = 3;
  p.ops = {Op{.kind = OpKind::kExec, .stream = 0, .out = 0, .in1 = 1, .in2 = 2, .k = 7},
           Op{.kind = OpKind::kCopy, .stream = 1, .out = 1, .in1 = 0},
           Op{.kind = OpKind::kExec, .stream = 2, .out = 2, .in1 = 1, .in2 = 1, .k = -3},
           Op{.kind = OpKind::kHostRead, .in1 = 2}};
  EXPECT_EQ(lower(p).cross_waits, 2u);
  EXPECT_EQ(run(p, vk_options()), "") << describe(p);
}

TEST(HcqFuzzVk, AVulkanStreamBehindAHostGateWaitsForTheHostToSignalItsSemaphore) {
  SKIP_UNLESS_VK_TAKES_PART();
  Program p;
  p.gpu = "VK";
  p.stream_device = {kGpuDevice, 0};
  p.signal_stride = {1, 1};
  p.cells = 2;
  // The VK stream waits at the gate (a semaphore the host signals with vkSignalSemaphore) before its copy; the CPU
  // stream's exec reads what the copy wrote.
  p.ops = {Op{.kind = OpKind::kGate, .stream = 0}, Op{.kind = OpKind::kCopy, .stream = 0, .out = 0, .in1 = 1},
           Op{.kind = OpKind::kFlush, .stream = 0},
           Op{.kind = OpKind::kExec, .stream = 1, .out = 1, .in1 = 0, .in2 = 0, .k = 5},
           Op{.kind = OpKind::kHostRead, .in1 = 1}};
  EXPECT_EQ(run(p, vk_options()), "") << describe(p);
}

// The HCQ contract lets the host keep submitting while a VK submission waits for the host's gate (the gate opens
// later): the submit must not wait for the gated work. (Seeds 5 and 73 of the random test hang in such a submit on
// lavapipe: the device reads a completed submission's timestamp queries with vkGetQueryPoolResults, which lavapipe
// starts with DeviceWaitIdle, Mesa src/gallium/frontends/lavapipe/lvp_query.c; this short program does not reach
// that state, the long ones do.)
TEST(HcqFuzzVk, TheHostSubmitsMoreWhileAVulkanSubmissionWaitsForTheHost) {
  SKIP_UNLESS_VK_TAKES_PART();
  Program p;
  p.gpu = "VK";
  p.stream_device = {0, kGpuDevice};
  p.signal_stride = {1, 1};
  p.cells = 3;
  // s1 (VK): a copy the CPU stream s0 waits for (a signal, so a timestamp query); then, behind the host's gate, a
  // copy that waits for the CPU's exec; then a third VK submission, handed over while the gated one waits.
  p.ops = {Op{.kind = OpKind::kCopy, .stream = 1, .out = 0, .in1 = 1},
           Op{.kind = OpKind::kExec, .stream = 0, .out = 2, .in1 = 0, .in2 = 0, .k = 3},
           Op{.kind = OpKind::kGate, .stream = 1},
           Op{.kind = OpKind::kCopy, .stream = 1, .out = 0, .in1 = 2},
           Op{.kind = OpKind::kExec, .stream = 0, .out = 1, .in1 = 0, .in2 = 2, .k = 5},
           Op{.kind = OpKind::kCopy, .stream = 1, .out = 2, .in1 = 1},
           Op{.kind = OpKind::kExec, .stream = 0, .out = 1, .in1 = 2, .in2 = 2, .k = 7},
           Op{.kind = OpKind::kHostRead, .in1 = 1}};
  EXPECT_EQ(run(p, vk_options()), "") << describe(p);
}

// The shape of seeds 5 and 73, without the fuzzer: a signalled submission completes while a later one still waits
// for the host, and then the host submits again. On lavapipe the submit blocks for good (found 2026-12-02): the
// device reads the completed submission's timestamp queries with vkGetQueryPoolResults, and lavapipe's
// lvp_GetQueryPoolResults begins with DeviceWaitIdle (Mesa src/gallium/frontends/lavapipe/lvp_query.c), which waits
// for the gated submission, whose gate only this blocked host thread would set.
TEST(HcqFuzzVk, ASubmissionThatCompletedBeforeAGatedOneDoesNotBlockTheHost) {
  SKIP_UNLESS_VK_TAKES_PART();
  std::unique_ptr<Device> d = open_vk();
  Signal& first_gate = d->new_signal("first gate");
  Signal& second_gate = d->new_signal("second gate");
  Signal& first = d->new_signal("first");
  Signal& second = d->new_signal("second");
  Signal& third = d->new_signal("third");
  HWQueue().wait(first_gate, 1).signal(first, 1).submit(*d);
  HWQueue().wait(second_gate, 1).signal(second, 1).submit(*d);
  first_gate.set(1);
  ASSERT_TRUE(first.wait_for(1, std::chrono::seconds(5)));  // completed; its timestamp query not yet read
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  HWQueue().signal(third, 1).submit(*d);  // must return while the second submission waits for its gate
  second_gate.set(1);
  EXPECT_TRUE(second.wait_for(1, std::chrono::seconds(5)));
  EXPECT_TRUE(third.wait_for(1, std::chrono::seconds(5)));
}

TEST(HcqFuzzVk, ABoundCopyQueueOnVulkanRunsAsTheUnboundOneDoes) {
  SKIP_UNLESS_VK_TAKES_PART();
  Program p;
  p.gpu = "VK";
  p.stream_device = {kGpuDevice};
  p.signal_stride = {1};
  p.cells = 2;
  p.ops = {Op{.kind = OpKind::kCopy, .stream = 0, .out = 0, .in1 = 1}, Op{.kind = OpKind::kFlush, .stream = 0}};
  EXPECT_EQ(run(p, vk_options()), "") << describe(p);
  p.ops[1].bind = true;
  EXPECT_EQ(run(p, vk_options()), "") << describe(p);
}

TEST(HcqFuzzVk, TheCheckCatchesAWrongConstantBehindAVulkanCopy) {
  SKIP_UNLESS_VK_TAKES_PART();
  Program p;
  p.gpu = "VK";
  p.stream_device = {0, kGpuDevice};
  p.signal_stride = {1, 1};
  p.cells = 2;
  p.ops = {Op{.kind = OpKind::kExec, .stream = 0, .out = 0, .in1 = 1, .in2 = 1, .k = 2},
           Op{.kind = OpKind::kCopy, .stream = 1, .out = 1, .in1 = 0}, Op{.kind = OpKind::kHostRead, .in1 = 1}};
  RunOptions options = vk_options();
  options.sabotage = Sabotage::kWrongConstant;
  EXPECT_NE(run(p, options).find("order:"), std::string::npos);
}

// A wait no stream reaches: the watchdog reports the deadlock, and the VK device's destruction releases the stuck
// queue after a short teardown wait (VulkanDevice::set_teardown_wait) instead of the default 5 s.
TEST(HcqFuzzVk, TheCheckCatchesAWaitNoStreamReachesAndTheVulkanDeviceStillTearsDown) {
  SKIP_UNLESS_VK_TAKES_PART();
  Program p;
  p.gpu = "VK";
  p.stream_device = {0, kGpuDevice};
  p.signal_stride = {1, 1};
  p.cells = 2;
  p.ops = {Op{.kind = OpKind::kExec, .stream = 0, .out = 0, .in1 = 1, .in2 = 1, .k = 2},
           Op{.kind = OpKind::kCopy, .stream = 1, .out = 1, .in1 = 0}, Op{.kind = OpKind::kHostRead, .in1 = 1}};
  RunOptions options = vk_options();
  options.open_gpu = [] {
    std::unique_ptr<Device> d = open_vk();
    auto* vk = dynamic_cast<vk::VulkanDevice*>(d.get());
    if (vk == nullptr) throw std::runtime_error("the VK backend opened " + d->name() + ", which is no VulkanDevice");
    vk->set_teardown_wait(std::chrono::milliseconds(100));
    return d;
  };
  options.sabotage = Sabotage::kWaitTooFar;
  options.watchdog = std::chrono::milliseconds(300);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_NE(run(p, options).find("deadlock:"), std::string::npos) << describe(p, Sabotage::kWaitTooFar);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(4)) << "the device's teardown waited its default 5 s";
}

}  // namespace
}  // namespace doorbell::hcq_fuzz
