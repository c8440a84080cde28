// DEV=AMD end to end on the emulated machine MOCKGPU=1 installs (mockgpu/install.h): the backend registry opens the
// AMD device, tensors realize on it through host_buffers (storage in video memory), kernels are rendered as LLVM IR
// and compiled for gfx1100, run by the emulated shader core, and read back; results match the CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "frontend/tensor.h"
#include "hcq/amd/amd_device.h"
#include "hcq/backend.h"
#include "hcq/devices.h"
#include "hcq/ref/ref_interpreter.h"
#include "ir/environment.h"
#include "mockgpu/install.h"

namespace doorbell {
namespace {

// MOCKGPU is set on every call: another test may unset it.
Device& amd_device() {
  setenv("MOCKGPU", "1", 1);
  static Device& d = device("AMD");
  return d;
}

Tensor on_amd(std::vector<float> values, std::vector<int64_t> shape) {
  amd_device();
  const std::string saved = default_device_name();
  set_default_device_name("AMD");
  Tensor t = Tensor(std::move(values)).reshape(shape);
  t.realize();
  set_default_device_name(saved);
  return t;
}

TEST(AmdFrontend, AnElementwiseKernelRunsOnTheEmulatedGpuNotTheInterpreter) {
  Tensor x = on_amd({1, 2, 3, 4}, {4});
  const uint64_t interpreted_before = interpreted_kernels();
  Tensor y = (x * 7.25f - 3).exp2();
  EXPECT_EQ(y.device(), "AMD");
  std::vector<float> got = y.tolist<float>();
  EXPECT_EQ(interpreted_kernels(), interpreted_before) << "run on the (emulated) GPU, not interpreted";
  ASSERT_EQ(got.size(), 4u);
  for (int i = 0; i < 4; i++) EXPECT_NEAR(got[i], std::exp2((i + 1) * 7.25f - 3), 1e-5 * std::exp2((i + 1) * 7.25f - 3));
}

TEST(AmdFrontend, AReductionAndAMatmulMatchTheCpu) {
  std::vector<float> a(64 * 48), b(48 * 32);
  for (size_t i = 0; i < a.size(); i++) a[i] = static_cast<float>((i * 37) % 17) - 8;
  for (size_t i = 0; i < b.size(); i++) b[i] = static_cast<float>((i * 11) % 13) - 6;
  Tensor ta = on_amd(a, {64, 48}), tb = on_amd(b, {48, 32});
  std::vector<float> sum = ta.sum().tolist<float>();
  std::vector<float> mm = ta.matmul(tb).tolist<float>();
  float want_sum = 0;
  for (float v : a) want_sum += v;
  ASSERT_EQ(sum.size(), 1u);
  EXPECT_EQ(sum[0], want_sum);
  ASSERT_EQ(mm.size(), 64u * 32u);
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < 32; j++) {
      float want = 0;
      for (int k = 0; k < 48; k++) want += a[i * 48 + k] * b[k * 32 + j];
      ASSERT_EQ(mm[i * 32 + j], want) << i << "," << j;
    }
}

TEST(AmdFrontend, TensorsMoveBetweenTheCpuAndAmd) {
  Tensor x = on_amd({5, 6, 7}, {3});
  Tensor c = x.to("CPU");
  EXPECT_EQ(c.device(), "CPU");
  EXPECT_EQ((c + 1).tolist<float>(), (std::vector<float>{6, 7, 8}));
  Tensor back = (c * 2).to("AMD");
  EXPECT_EQ(back.device(), "AMD");
  EXPECT_EQ((back + x).tolist<float>(), (std::vector<float>{15, 18, 21}));
}

TEST(AmdFrontend, TheRegistryNamesTheBackendAndItsLlvmRenderer) {
  amd_device();
  const DeviceName n = parse_device_name("AMD");
  EXPECT_EQ(n.renderer, "LLVM");
  EXPECT_EQ(parse_device_name("AMD:0:LLVM").canonical(), "AMD");
  EXPECT_TRUE(dynamic_cast<amd::AmdDevice*>(&amd_device()) != nullptr);
}

}  // namespace
}  // namespace doorbell
