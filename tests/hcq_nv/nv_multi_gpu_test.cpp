// More than one NVIDIA GPU on the emulated driver: one machine of two GPUs (mock_gpu_configs(2)), each with its own
// card, memory, channels and executing GPU thread; NV and NV:1 are devices on its GPUs 0 and 1. Copies between them go
// through host memory (no peer access). This binary runs under MOCKGPU=1 with MOCKGPU_NV_GPUS=2 whatever the
// environment says, so the registry's NV and NV:1 are the two GPUs of one emulated machine.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <numeric>
#include <vector>

#include "compiler/program.h"
#include "frontend/tensor.h"
#include "hcq/devices.h"
#include "hcq/nv/nv_device.h"
#include "mockgpu/nv/mock_nv_seam.h"

namespace doorbell::nv {
namespace {

const bool kEmulatedTwoGpuMachine = [] {
  setenv("MOCKGPU", "1", 1);
  setenv("MOCKGPU_NV_GPUS", "2", 1);
  return true;
}();

using mockgpu::nv::MockNvSeam;
using mockgpu::nv::SharedMockNvSeam;

constexpr auto kWait = std::chrono::milliseconds(20000);

std::unique_ptr<NvDevice> open_on(const std::shared_ptr<MockNvSeam>& machine, int gpu) {
  return NvDevice::open(std::make_unique<SharedMockNvSeam>(machine), gpu);
}

// Copies `bytes` from `from`'s video memory to `to`'s through host memory: `from`'s copy engine into its own
// GPU-visible host memory, the host into `to`'s, `to`'s copy engine into its video memory.
void copy_between(NvDevice& from, const NvMemory& source, NvDevice& to, const NvMemory& destination, uint64_t bytes) {
  NvMemory out_staging = from.alloc(bytes, /*system_memory=*/true), in_staging = to.alloc(bytes, /*system_memory=*/true);
  Signal& sent = from.new_signal("sent to host");
  HWQueue().copy(reinterpret_cast<void*>(out_staging.va), reinterpret_cast<const void*>(source.va), bytes).signal(sent, 1).submit(from);
  sent.wait(1, kWait);
  std::memcpy(in_staging.cpu, out_staging.cpu, bytes);
  Signal& received = to.new_signal("received from host");
  HWQueue().copy(reinterpret_cast<void*>(destination.va), reinterpret_cast<const void*>(in_staging.va), bytes).signal(received, 1).submit(to);
  received.wait(1, kWait);
  from.free(out_staging);
  to.free(in_staging);
}

TEST(NvMultiGpu, TwoDevicesOnOneTwoGpuMachineCopyToEachOtherAndComputeOnTheirOwnGpus) {
  auto machine = std::make_shared<MockNvSeam>(mockgpu::nv::mock_gpu_configs(2));
  std::unique_ptr<NvDevice> a = open_on(machine, 0), b = open_on(machine, 1);
  EXPECT_EQ(a->name(), "NV");
  EXPECT_EQ(b->name(), "NV:1");
  constexpr uint64_t kBytes = 64 * sizeof(float);
  NvMemory on_a = a->alloc(kBytes), on_b = b->alloc(kBytes), back_on_a = a->alloc(kBytes);
  // Each GPU has its own address space: a's memory is mapped in GPU 0's and not in GPU 1's.
  EXPECT_TRUE(machine->driver().gpu_memory(0).overlaps(on_a.va, kBytes));
  EXPECT_FALSE(machine->driver().gpu_memory(1).overlaps(on_a.va, kBytes));
  EXPECT_TRUE(machine->driver().gpu_memory(1).overlaps(on_b.va, kBytes));

  std::vector<float> values(64);
  std::iota(values.begin(), values.end(), 0.5f);
  std::memcpy(on_a.cpu, values.data(), kBytes);
  copy_between(*a, on_a, *b, on_b, kBytes);
  ASSERT_EQ(std::memcmp(on_b.cpu, values.data(), kBytes), 0) << "NV -> NV:1";

  // A kernel on NV:1 adds 1 in place of the copy, then the result goes back to NV.
  UOp linear = (Tensor::empty({64}) + 1).schedule_linear();
  UOp program = compile_program(linear.src(0), b->target()).program;
  const ProgramInfo& info = program_info(program);
  auto dims = [](const std::array<int64_t, 3>& d) {
    return std::array<uint32_t, 3>{static_cast<uint32_t>(d[0]), static_cast<uint32_t>(d[1]), static_cast<uint32_t>(d[2])};
  };
  Signal& computed = b->new_signal("computed");
  HWQueue().exec(b->program(program), std::vector<uint64_t>{on_b.va, on_b.va}, dims(info.global_size), dims(info.local_size))
      .signal(computed, 1)
      .submit(*b);
  computed.wait(1, kWait);
  copy_between(*b, on_b, *a, back_on_a, kBytes);
  std::vector<float> back(64);
  std::memcpy(back.data(), back_on_a.cpu, kBytes);
  for (size_t i = 0; i < back.size(); ++i) EXPECT_EQ(back[i], values[i] + 1) << "element " << i;

  // Each GPU's own thread ran its device's work.
  EXPECT_EQ(machine->gpu(0).stats().copies, 2u) << "NV: out to host, in from host";
  EXPECT_EQ(machine->gpu(1).stats().copies, 2u) << "NV:1: in from host, out to host";
  EXPECT_EQ(machine->gpu(0).stats().launches, 0u);
  EXPECT_EQ(machine->gpu(1).stats().launches, 1u);
  EXPECT_TRUE(a->fault_report().empty()) << a->fault_report();
  EXPECT_TRUE(b->fault_report().empty()) << b->fault_report();
}

// Every session of the process takes VA windows of its own (UVM ranges may not overlap across the process): two
// devices on one GPU of one machine, open at once, both run.
TEST(NvMultiGpu, TwoDevicesOnTheSameGpuOfOneMachineBothRun) {
  auto machine = std::make_shared<MockNvSeam>(mockgpu::nv::mock_gpu_configs(2));
  std::unique_ptr<NvDevice> a = open_on(machine, 0), again = open_on(machine, 0);
  for (NvDevice* d : {a.get(), again.get()}) {
    Signal& s = d->new_signal("on GPU 0");
    HWQueue().signal(s, 7).submit(*d);
    s.wait(7, kWait);
    EXPECT_EQ(s.value(), 7u);
  }
  EXPECT_EQ(machine->driver().channels(0).size(), 4u);
  EXPECT_TRUE(machine->driver().channels(1).empty());
}

// The process has 16 slots of VA windows: a device past them is refused with a message, and closing one frees its slot.
TEST(NvMultiGpu, DevicesPastTheProcesssVaWindowsAreRefusedUntilOneCloses) {
  auto machine = std::make_shared<MockNvSeam>(mockgpu::nv::mock_gpu_configs(2));
  std::vector<std::unique_ptr<NvDevice>> open;
  std::string refusal;
  for (int i = 0; i < 17 && refusal.empty(); ++i) {
    try {
      open.push_back(open_on(machine, i % 2));
    } catch (const std::runtime_error& e) {
      refusal = e.what();
    }
  }
  EXPECT_NE(refusal.find("GPU VA windows of this process are held by open NV devices"), std::string::npos) << refusal;
  EXPECT_LE(open.size(), 16u);
  ASSERT_FALSE(open.empty());
  open.pop_back();
  EXPECT_NO_THROW(open.push_back(open_on(machine, 1))) << "the closed device's slot";
}

TEST(NvMultiGpu, OpeningAGpuPastTheLastNamesHowManyThereAre) {
  auto machine = std::make_shared<MockNvSeam>(mockgpu::nv::mock_gpu_configs(2));
  try {
    open_on(machine, 2);
    ADD_FAILURE() << "NV:2 opened on a machine of two GPUs";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("NV:2"), std::string::npos) << m;
    EXPECT_NE(m.find("the driver reports 2 GPUs"), std::string::npos) << m;
  }
}

// The emulated driver gives each GPU its own card (NV_ESC_CARD_INFO): PCI bus, gpu_id, /dev/nvidiaN, and UUID.
TEST(NvMultiGpu, EachGpuHasItsOwnCardAndUuid) {
  auto machine = std::make_shared<MockNvSeam>(mockgpu::nv::mock_gpu_configs(2));
  const auto& g0 = machine->driver().gpu_config(0);
  const auto& g1 = machine->driver().gpu_config(1);
  EXPECT_NE(g0.pci_bus, g1.pci_bus);
  EXPECT_NE(g0.gpu_id, g1.gpu_id);
  EXPECT_NE(g0.uuid, g1.uuid);
  std::unique_ptr<NvDevice> a = open_on(machine, 0), b = open_on(machine, 1);
  // Tokens are per GPU: both GPUs' compute channels may carry the same one, each rung on its own doorbell.
  EXPECT_EQ(machine->driver().channels(0).size(), 2u);
  EXPECT_EQ(machine->driver().channels(1).size(), 2u);
}

// DEV-independent: the tensor starts wherever DEV puts it, goes to NV, is computed there, moves to NV:1, is computed
// there, and comes back to the CPU.
TEST(NvMultiGpu, ATensorMovesFromNvToNv1IsComputedThereAndComesBackToTheCpu) {
  Tensor on_nv = (Tensor({1.f, 2.f, 3.f, 4.f}).to("NV") * 3).realize();
  EXPECT_EQ(on_nv.device(), "NV");
  Tensor on_nv1 = on_nv.to("NV:1");
  EXPECT_EQ(on_nv1.device(), "NV:1");
  Tensor computed = (on_nv1 + 1).realize();
  EXPECT_EQ(computed.device(), "NV:1") << "a result of NV:1 buffers is stored on NV:1";
  Tensor on_cpu = computed.to("CPU");
  EXPECT_EQ(on_cpu.device(), "CPU");
  EXPECT_EQ(on_cpu.tolist<float>(), (std::vector<float>{4, 7, 10, 13}));
  EXPECT_EQ(on_nv.tolist<float>(), (std::vector<float>{3, 6, 9, 12})) << "the source is unchanged";
  EXPECT_EQ(&device("NV:1"), &device("NV:1"));
  EXPECT_NE(&device("NV"), &device("NV:1"));
}

TEST(NvMultiGpu, TheRegistrysNv2OnATwoGpuMachineNamesHowManyGpusThereAre) {
  try {
    device("NV:2");
    ADD_FAILURE() << "NV:2 opened";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("the driver reports 2 GPUs"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace doorbell::nv
