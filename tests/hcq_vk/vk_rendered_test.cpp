// Kernels rendered by the SPIR-V renderer (compiler/spirv/) for the Vulkan device's own target, loaded through
// Device::program and launched by an HWQueue, compared with the reference interpreter (REF) on the same inputs.
#include <gtest/gtest.h>

#include <cstring>

#include "compiler/program.h"
#include "frontend/tensor.h"
#include "hcq/devices.h"
#include "hcq/host_buffers.h"
#include "hcq/hw_queue.h"
#include "hcq/run_linear.h"
#include "ir/environment.h"
#include "tests/hcq_vk/vk_test_support.h"

namespace doorbell::vk::testing {
namespace {

using VkRenderedTest = VkTest;

std::array<uint32_t, 3> dims(const std::array<int64_t, 3>& d) {
  return {static_cast<uint32_t>(d[0]), static_cast<uint32_t>(d[1]), static_cast<uint32_t>(d[2])};
}

// Runs the one kernel of `t`'s schedule on the device and on REF; returns whether the output bytes match exactly.
void expect_same_as_reference(VulkanDevice& d, const Tensor& t) {
  UOp linear = t.schedule_linear();
  ASSERT_EQ(linear.src().size(), 1u);
  const UOp call = linear.src(0);
  const UOp program = compile_program(call, d.target()).program;
  const ProgramInfo& info = program_info(program);
  const LoadedProgram& loaded = d.program(program);
  std::vector<Device::Storage> storage;
  std::vector<uint64_t> addresses;
  for (size_t i = 1; i < call.src().size(); i++) {
    std::span<std::byte> b = buffer_bytes(call.src(i));
    storage.push_back(d.allocate_storage(std::max<size_t>(b.size(), 1)));
    d.copy_in(storage.back(), 0, b.data(), b.size());
    addresses.push_back(storage.back().address);
  }
  run_linear(UOp::make(Ops::LINEAR, dtypes::void_, {call}), on_device("REF"));
  std::span<std::byte> want = buffer_bytes(call.src(1));
  Signal& done = d.new_signal("rendered " + info.name);
  HWQueue().exec(loaded, addresses, dims(info.global_size), dims(info.local_size)).signal(done, 1).submit(d);
  done.wait(1);
  std::vector<std::byte> got(want.size());
  d.copy_out(got.data(), storage[0], 0, got.size());
  EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size()), 0) << "kernel " << info.name;
  for (const Device::Storage& s : storage) d.release_storage(s);
}

TEST_F(VkRenderedTest, AnElementwiseKernelMatchesTheReference) {
  Tensor::manual_seed(11);
  Tensor a = Tensor::randn({1000}).realize(), b = Tensor::randn({1000}).realize();
  expect_same_as_reference(dev(), a * b + 1);
}

TEST_F(VkRenderedTest, AGroupedReductionWithSharedMemoryMatchesTheReference) {
  Tensor x = Tensor::randint({5000}, -9, 9).realize();
  expect_same_as_reference(dev(), x.sum());
}

// The seeds' example with DEV=VK: buffers on the device (host_buffers through allocate_storage and copy_in/copy_out),
// run_linear launching the rendered kernels on its queue.
TEST_F(VkRenderedTest, TheSeedExampleRunsWithVkAsTheDefaultDevice) {
  Device& vk = device("VK");  // the registry's VK (not the suite's own device)
  const uint64_t submitted_before = vk.timeline_value();
  const std::string previous = default_device_name();
  set_default_device_name("VK");
  std::vector<float> got;
  try {
    Tensor x = Tensor({1.f, 2.f, 3.f}).realize();
    Tensor y = (x + 1) * 2;
    run_linear(y.schedule_linear());
    got = y.tolist<float>();
  } catch (...) {
    set_default_device_name(previous);
    throw;
  }
  set_default_device_name(previous);
  EXPECT_EQ(got, (std::vector<float>{4, 6, 8}));
  EXPECT_GT(vk.timeline_value(), submitted_before) << "the kernels ran on VK's queue";
}

}  // namespace
}  // namespace doorbell::vk::testing
