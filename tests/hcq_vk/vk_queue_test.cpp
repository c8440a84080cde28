// Kernels, copies, bound queues, memory lifetime and foreign signals on the Vulkan device: the HCQ contract tests of
// tests/hcq_nv/nv_device_test.cpp with hand-written SPIR-V kernels (kernels/*.spvasm).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

#include "hcq/devices.h"
#include "hcq/hw_queue.h"
#include "hcq/wait_primitives.h"
#include "tests/common/error_of.h"
#include "tests/hcq_vk/vk_test_support.h"

namespace doorbell::vk::testing {
namespace {

using doorbell::testing::error_of;
using VkQueueTest = VkTest;

std::vector<float> read_floats(VulkanDevice& d, const Device::Storage& s, size_t n) {
  std::vector<float> out(n);
  d.copy_out(out.data(), s, 0, n * 4);
  return out;
}

void write_floats(VulkanDevice& d, const Device::Storage& s, const std::vector<float>& v) { d.copy_in(s, 0, v.data(), v.size() * 4); }

TEST_F(VkQueueTest, AKernelRunsWithTimestampsAroundItAndItsKernelOnlyTimeIsPositive) {
  constexpr int64_t n = 1 << 16;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  std::vector<float> a(n), b(n);
  for (int64_t i = 0; i < n; i++) a[i] = dist(rng), b[i] = dist(rng);
  Device::Storage out = buffer(n * 4 + 4), sa = buffer(n * 4), sb = buffer(n * 4);
  write_floats(dev(), sa, a);
  write_floats(dev(), sb, b);
  const float sentinel = 1234.5f;
  dev().copy_in(out, n * 4, &sentinel, 4);
  Signal& start = dev().new_signal("kernel start");
  Signal& end = dev().new_signal("kernel end");
  Signal& done = dev().new_signal("kernel done");
  const std::vector<uint64_t> args{out.address, sa.address, sb.address};
  const std::vector<int64_t> vars{n};
  HWQueue().timestamp(start).exec(mul_add(dev()), args, vars, {n / 128, 1, 1}, {128, 1, 1}).timestamp(end).signal(done, 1).submit(dev());
  done.wait(1);
  const std::vector<float> got = read_floats(dev(), out, n + 1);
  // The driver may contract a * b + 1 into one fma (the module does not decorate it NoContraction): either rounding.
  for (int64_t i = 0; i < n; i++)
    ASSERT_TRUE(got[i] == a[i] * b[i] + 1.f || got[i] == std::fma(a[i], b[i], 1.f)) << "element " << i << ": " << got[i];
  EXPECT_EQ(got[n], sentinel) << "the kernel stopped at n";
  EXPECT_GT(start.timestamp(), 0u);
  EXPECT_GT(end.timestamp(), start.timestamp()) << "kernel-only time";
  EXPECT_LE(end.timestamp(), done.timestamp());
}

TEST_F(VkQueueTest, TheVariableBoundsTheKernel) {
  Device::Storage out = buffer(1024), sa = buffer(1024), sb = buffer(1024);
  write_floats(dev(), sa, std::vector<float>(256, 2.f));
  write_floats(dev(), sb, std::vector<float>(256, 3.f));
  Signal& done = dev().new_signal("bounded");
  const std::vector<uint64_t> args{out.address, sa.address, sb.address};
  const std::vector<int64_t> vars{100};
  HWQueue().exec(mul_add(dev()), args, vars, {2, 1, 1}, {128, 1, 1}).signal(done, 1).submit(dev());
  done.wait(1);
  const std::vector<float> got = read_floats(dev(), out, 256);
  EXPECT_EQ(got[99], 7.f);
  EXPECT_EQ(got[100], 0.f);
}

TEST_F(VkQueueTest, AThousandChainedKernelsInOneSubmissionRunInOrder) {
  Device::Storage y = buffer(256 * 4);
  const VulkanProgram& k = add_one(dev());
  HWQueue q;
  const std::vector<uint64_t> args{y.address};
  for (int i = 0; i < 1000; i++) q.exec(k, args, {4, 1, 1}, {64, 1, 1});
  Signal& done = dev().new_signal("thousand done");
  q.signal(done, 1).submit(dev());
  done.wait(1);
  const std::vector<float> got = read_floats(dev(), y, 256);
  for (int i = 0; i < 256; i++) ASSERT_EQ(got[i], 1000.f) << "element " << i;
}

TEST_F(VkQueueTest, AnExecWhoseBlockIsNotTheModulesLocalSizeIsRefused) {
  Device::Storage y = buffer(256);
  const std::vector<uint64_t> args{y.address};
  HWQueue q;
  q.exec(add_one(dev()), args, {1, 1, 1}, {32, 1, 1});
  const std::string m = error_of<std::invalid_argument>([&] { q.submit(dev()); });
  EXPECT_NE(m.find("LocalSize is [64,1,1]"), std::string::npos) << m;
}

TEST_F(VkQueueTest, AnExecOnAnAddressTheDeviceDidNotAllocateIsRefusedNamingIt) {
  const std::vector<uint64_t> args{0xdead0000};
  HWQueue q;
  q.exec(add_one(dev()), args, {1, 1, 1}, {64, 1, 1});
  const std::string m = error_of<std::invalid_argument>([&] { q.submit(dev()); });
  EXPECT_NE(m.find("0xdead0000"), std::string::npos) << m;
}

TEST_F(VkQueueTest, CopiesBetweenBuffersAndBetweenTwoSubAllocationsOfOneBlock) {
  Device::Storage src = buffer(1 << 20), dst = buffer(1 << 20);
  std::vector<uint8_t> bytes(1 << 20);
  for (size_t i = 0; i < bytes.size(); i++) bytes[i] = static_cast<uint8_t>(i * 7 + 3);
  dev().copy_in(src, 0, bytes.data(), bytes.size());
  Device::Storage small_a = buffer(64), small_b = buffer(64);  // neighbours in one chunk
  Signal& done = dev().new_signal("copied");
  HWQueue()
      .copy(reinterpret_cast<void*>(dst.address), reinterpret_cast<const void*>(src.address), 1 << 20)
      .copy(reinterpret_cast<void*>(small_b.address + 8), reinterpret_cast<const void*>(src.address + 100), 32)
      .copy(reinterpret_cast<void*>(small_a.address), reinterpret_cast<const void*>(small_b.address + 8), 32)
      .signal(done, 1)
      .submit(dev());
  done.wait(1);
  std::vector<uint8_t> got(1 << 20);
  dev().copy_out(got.data(), dst, 0, got.size());
  EXPECT_EQ(got, bytes);
  std::vector<uint8_t> a(32);
  dev().copy_out(a.data(), small_a, 0, 32);
  EXPECT_EQ(std::memcmp(a.data(), bytes.data() + 100, 32), 0) << "the second copy read what the first wrote";
}

TEST_F(VkQueueTest, ACopyFromMemoryTheDeviceDidNotAllocateIsRefusedNamingTheAddress) {
  Device::Storage dst = buffer(256);
  HWQueue q;
  q.copy(reinterpret_cast<void*>(dst.address), reinterpret_cast<const void*>(0x7400000000ull), 256);
  const std::string m = error_of<std::invalid_argument>([&] { q.submit(dev()); });
  EXPECT_NE(m.find("0x7400000000"), std::string::npos) << m;
  EXPECT_NE(m.find("not in memory this device allocated"), std::string::npos) << m;
}

TEST_F(VkQueueTest, BoundQueueResubmitsAndAPatchedSignalValueBufferAndCopyTakeEffect) {
  Device::Storage a = buffer(256), b = buffer(256), c = buffer(256);
  const std::vector<uint64_t> args{a.address};
  Signal& done = dev().new_signal("bound done");
  HWQueue q;
  q.exec(add_one(dev()), args, {1, 1, 1}, {64, 1, 1}).copy(reinterpret_cast<void*>(c.address), reinterpret_cast<void*>(a.address), 4).signal(done, 1);
  q.bind(dev());
  q.submit(dev());
  done.wait(1);
  EXPECT_EQ(q.patch_value(2, 2), 1u) << "the submit-time semaphore value";
  q.submit(dev());
  done.wait(2);
  EXPECT_EQ(read_floats(dev(), a, 1)[0], 2.f);
  EXPECT_EQ(q.patch_buffer(0, 0, reinterpret_cast<void*>(b.address)), 1u) << "one word of the argument block";
  EXPECT_EQ(q.patch_copy(1, reinterpret_cast<void*>(c.address + 4), reinterpret_cast<void*>(b.address)), 1u) << "the copy's batch re-recorded";
  q.patch_value(2, 3);
  q.submit(dev());
  done.wait(3);
  EXPECT_EQ(read_floats(dev(), a, 1)[0], 2.f);
  EXPECT_EQ(read_floats(dev(), b, 1)[0], 1.f);
  EXPECT_EQ(read_floats(dev(), c, 2), (std::vector<float>{2.f, 1.f}));
  EXPECT_GT(done.timestamp(), 0u) << "the bound queue's own query slots";
}

TEST_F(VkQueueTest, AWaitInTheMiddleSplitsTheQueueIntoBatchesThatKeepItsOrder) {
  Device::Storage y = buffer(256);
  const std::vector<uint64_t> args{y.address};
  Signal& mid = dev().new_signal("middle");
  Signal& gate = dev().new_signal("middle gate");
  Signal& done = dev().new_signal("middle done");
  const VulkanProgram& k = add_one(dev());
  HWQueue().exec(k, args, {1, 1, 1}, {64, 1, 1}).signal(mid, 1).wait(gate, 1).exec(k, args, {1, 1, 1}, {64, 1, 1}).signal(done, 1).submit(dev());
  mid.wait(1);
  EXPECT_EQ(read_floats(dev(), y, 1)[0], 1.f);
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(done.value(), 0u) << "the second batch ran before its wait passed";
  gate.set(1);
  done.wait(1);
  EXPECT_EQ(read_floats(dev(), y, 1)[0], 2.f);
  EXPECT_LE(mid.timestamp(), done.timestamp());
}

TEST_F(VkQueueTest, ABoundQueuesPatchedScalarIsTheKernelsNewVariable) {
  Device::Storage out = buffer(1024), sa = buffer(1024), sb = buffer(1024);
  write_floats(dev(), sa, std::vector<float>(256, 1.f));
  write_floats(dev(), sb, std::vector<float>(256, 1.f));
  const std::vector<uint64_t> args{out.address, sa.address, sb.address};
  const std::vector<int64_t> vars{10};
  Signal& done = dev().new_signal("scalar done");
  HWQueue q;
  q.exec(mul_add(dev()), args, vars, {2, 1, 1}, {128, 1, 1}).signal(done, 1).bind(dev());
  q.submit(dev());
  done.wait(1);
  EXPECT_EQ(read_floats(dev(), out, 256)[10], 0.f);
  EXPECT_EQ(q.patch_scalar(0, 0, 200), 1u);
  q.patch_value(1, 2);
  q.submit(dev());
  done.wait(2);
  const std::vector<float> got = read_floats(dev(), out, 256);
  EXPECT_EQ(got[199], 2.f);
  EXPECT_EQ(got[200], 0.f);
}

TEST_F(VkQueueTest, BuffersFreedWhileAQueuedKernelWaitsAreKeptUntilItRan) {
  Signal& gate = dev().new_signal("free gate");
  Signal& done = dev().new_signal("free done");
  Device::Storage y = dev().allocate_storage(256);
  const size_t before = dev().retired_count();
  const std::vector<uint64_t> args{y.address};
  HWQueue().wait(gate, 1).exec(add_one(dev()), args, {1, 1, 1}, {64, 1, 1}).signal(done, 1).submit(dev());
  dev().release_storage(y);
  EXPECT_EQ(dev().retired_count(), before + 1) << "kept: the queued kernel will write it";
  gate.set(1);
  dev().progress().wait(dev().submissions());  // the submission's end, signalled with `done` in its last batch
  EXPECT_EQ(dev().retired_count(), 0u);
}

TEST_F(VkQueueTest, ABoundQueueOutlivingItsDeviceIsDestroyedWithoutTouchingIt) {
  auto own = VulkanDevice::open(0);
  Device::Storage y = own->allocate_storage(256);
  const std::vector<uint64_t> args{y.address};
  Signal& done = own->new_signal("outlived");
  auto q = std::make_unique<HWQueue>();
  q->exec(add_one(*own), args, {1, 1, 1}, {64, 1, 1}).signal(done, 1);
  q->bind(*own);
  q->submit(*own);
  done.wait(1);
  own.reset();
  const std::string m = error_of<std::logic_error>([&] { q->patch_buffer(0, 0, nullptr); });
  EXPECT_NE(m.find("destroyed"), std::string::npos) << m;
  q.reset();  // must not touch the device
}

TEST_F(VkQueueTest, DestroyingTheDeviceWithAQueueWaitingForeverReleasesItInsteadOfHanging) {
  auto own = VulkanDevice::open(0);
  own->set_teardown_wait(std::chrono::milliseconds(50));
  Signal& gate = own->new_signal("never set");
  Device::Storage y = own->allocate_storage(256);
  const std::vector<uint64_t> args{y.address};
  HWQueue().wait(gate, 1).exec(add_one(*own), args, {1, 1, 1}, {64, 1, 1}).submit(*own);
  const int64_t t0 = monotonic_ns();
  own.reset();
  EXPECT_LT(monotonic_ns() - t0, int64_t{2'000'000'000});
}

TEST_F(VkQueueTest, AQueueWaitsOnACpuSignalThroughTheHostBridge) {
  Device& cpu = device("CPU");
  Signal& cpu_gate = cpu.new_signal("cpu gate");
  Signal& done = dev().new_signal("after cpu");
  HWQueue().wait(cpu_gate, 1).signal(done, 1).submit(dev());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(done.value(), 0u);
  cpu_gate.set(1);
  done.wait(1);
}

TEST_F(VkQueueTest, ACpuQueueWaitsOnThisDevicesSignalAndThisDeviceSignalsACpuSignal) {
  Device& cpu = device("CPU");
  Signal& vk_gate = dev().new_signal("vk gate");
  Signal& cpu_done = cpu.new_signal("cpu done");
  HWQueue().wait(vk_gate, 1).signal(cpu_done, 1).submit(cpu);
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(cpu_done.value(), 0u);
  HWQueue().signal(vk_gate, 1).submit(dev());
  cpu_done.wait(1);
  // And the other way: a VK queue signals a CPU signal (the bridge sets it once the batch ran).
  Signal& cpu_flag = cpu.new_signal("set by vk");
  Signal& vk_gate2 = dev().new_signal("vk gate 2");
  HWQueue().wait(vk_gate2, 1).signal(cpu_flag, 4).submit(dev());
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(cpu_flag.value(), 0u);
  vk_gate2.set(1);
  cpu_flag.wait(4);
}

TEST(VkStaging, WithStagingForcedBuffersAreUnmappedAndCopiesGoThroughTheQueue) {
  std::string why;
  if (shared_device(&why) == nullptr) GTEST_SKIP() << "no Vulkan device: " << why;
  setenv("DOORBELL_VK_STAGING", "1", 1);
  std::unique_ptr<VulkanDevice> d;
  try {
    d = VulkanDevice::open(0);
  } catch (...) {
    unsetenv("DOORBELL_VK_STAGING");
    throw;
  }
  unsetenv("DOORBELL_VK_STAGING");
  EXPECT_TRUE(d->staging());
  Device::Storage y = d->allocate_storage(256 * 4);
  EXPECT_EQ(y.host, nullptr);
  std::vector<float> zero(256, -1.f);
  d->copy_out(zero.data(), y, 0, 256 * 4);
  EXPECT_EQ(zero, std::vector<float>(256, 0.f)) << "zero-filled";
  std::vector<float> in(256);
  for (int i = 0; i < 256; i++) in[i] = static_cast<float>(i);
  d->copy_in(y, 0, in.data(), in.size() * 4);
  const std::vector<uint64_t> args{y.address};
  Signal& done = d->new_signal("staged done");
  HWQueue().exec(add_one(*d), args, {4, 1, 1}, {64, 1, 1}).signal(done, 1).submit(*d);
  done.wait(1);
  std::vector<float> out(256);
  d->copy_out(out.data(), y, 16, 252 * 4);
  for (int i = 0; i < 252; i++) ASSERT_EQ(out[i], static_cast<float>(i + 4) + 1.f) << i;
  const std::string m = error_of<std::invalid_argument>([&] { d->copy_out(out.data(), y, 16, 255 * 4); });
  EXPECT_NE(m.find("expected the range inside it"), std::string::npos) << m;
  d->release_storage(y);
}

}  // namespace
}  // namespace doorbell::vk::testing
