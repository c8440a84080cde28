// NvLaunchVariant (hcq/nv/nv_variants.h): the launch choices the device check's experiments vary on a lent GPU.
// apply_launch_variant's effect on the QMD words and on constant bank 0, and that an NvDevice launches with the
// variant it was given: its QMD fields reach the encoder (a value too wide for the vendor's field is refused naming
// it) and a WAIT_FOR_IDLE follows each compute memory barrier (one more method executed by the emulated GPU).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <memory>
#include <vector>

#include "compiler/program.h"
#include "frontend/tensor.h"
#include "hcq/nv/nv_classes.h"
#include "hcq/nv/nv_device.h"
#include "hcq/nv/nv_variants.h"
#include "hcq/nv/qmd.h"
#include "hcq/wait_primitives.h"
#include "mockgpu/nv/mock_nv_seam.h"

namespace doorbell::nv {
namespace {

QmdLaunch a_launch() {
  QmdLaunch q;
  q.program_address = 0x100000;
  q.grid_x = 4;
  q.block_x = 128;
  q.register_count = 24;
  q.constant_buffer0_address = 0x200000;
  q.constant_buffer0_size = 0x240;
  return q;
}

TEST(NvLaunchVariant, TheDefaultLeavesTheLaunchAsItWas) {
  QmdLaunch q = a_launch();
  std::vector<uint8_t> cbuf0(0x240, 0xab);
  apply_launch_variant(NvLaunchVariant{}, q, cbuf0, 0x210);
  EXPECT_EQ(q, a_launch());
  EXPECT_EQ(q.qmd_type, NVCBC0_QMDV04_00_QMD_TYPE_GRID_CTA);
  uint64_t descriptor = 1;
  std::memcpy(&descriptor, cbuf0.data() + 0x208, 8);
  EXPECT_EQ(descriptor, 0u) << "c[0][0x208] is written 0, as before the variants existed";
  EXPECT_EQ(cbuf0[0x207], 0xab);
  EXPECT_EQ(cbuf0[0x210], 0xab);
}

TEST(NvLaunchVariant, ItsFieldsReachTheV04QmdWordsAndTheDescriptorWord) {
  NvLaunchVariant v;
  v.qmd_type = NVCBC0_QMDV04_00_QMD_TYPE_QUEUE;
  v.register_count_extra = 2;
  v.global_memory_descriptor = kCacheHintSm90EvictNormal;
  QmdLaunch q = a_launch();
  std::vector<uint8_t> cbuf0(0x240, 0xab);
  apply_launch_variant(v, q, cbuf0, 0x210);
  const QmdLaunch decoded = decode_qmd_v04(encode_qmd_v04(q));
  EXPECT_EQ(decoded.qmd_type, 0u);
  EXPECT_EQ(decoded.register_count, 26u);
  uint64_t descriptor = 0;
  std::memcpy(&descriptor, cbuf0.data() + 0x208, 8);
  EXPECT_EQ(descriptor, 0x1000000000000000u);
  EXPECT_EQ(cbuf0[0x207], 0xab) << "the word before it is left alone";
  EXPECT_EQ(cbuf0[0x210], 0xab) << "the parameters after it are left alone";
}

TEST(NvLaunchVariant, TheDescriptorIsNotWrittenWhereSm8xParametersLive) {
  NvLaunchVariant v;
  v.global_memory_descriptor = kCacheHintSm90EvictFirst;
  QmdLaunch q = a_launch();
  std::vector<uint8_t> cbuf0(0x240, 0xab);
  apply_launch_variant(v, q, cbuf0, 0x160);  // sm_80: parameters from 0x160, so 0x208 may be a parameter
  EXPECT_EQ(cbuf0, std::vector<uint8_t>(0x240, 0xab));
  std::vector<uint8_t> small(0x100, 0xab);
  apply_launch_variant(v, q, small, 0x210);  // a bank that ends before 0x210: nothing to write into
  EXPECT_EQ(small, std::vector<uint8_t>(0x100, 0xab));
}

struct VariantDevice {
  mockgpu::nv::MockNvSeam* seam;
  std::unique_ptr<NvDevice> device;
};

VariantDevice open_with(const NvLaunchVariant& v) {
  auto seam = std::make_unique<mockgpu::nv::MockNvSeam>();
  mockgpu::nv::MockNvSeam* raw = seam.get();
  VariantDevice d{raw, NvDevice::open(std::move(seam))};
  d.device->set_launch_variant(v);
  return d;
}

struct Kernel {
  const LoadedProgram* program;
  std::array<uint32_t, 3> grid, block;
};

Kernel add_one(NvDevice& d) {
  UOp linear = (Tensor::empty({64}) + 1).schedule_linear();
  UOp program = compile_program(linear.src(0), d.target()).program;
  const ProgramInfo& info = program_info(program);
  auto dims = [](const std::array<int64_t, 3>& a) {
    return std::array<uint32_t, 3>{static_cast<uint32_t>(a[0]), static_cast<uint32_t>(a[1]), static_cast<uint32_t>(a[2])};
  };
  return Kernel{&d.program(program), dims(info.global_size), dims(info.local_size)};
}

// Submits one exec on a device with `v`; returns what the submit threw ("" when nothing).
std::string submit_one_exec(const NvLaunchVariant& v) {
  VariantDevice d = open_with(v);
  Kernel k = add_one(*d.device);
  NvMemory out = d.device->alloc(256), in = d.device->alloc(256);
  try {
    HWQueue().exec(*k.program, std::vector<uint64_t>{out.va, in.va}, k.grid, k.block).submit(*d.device);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(NvLaunchVariant, TheDeviceEncodesItsQmdTypeAndRegisterCount) {
  EXPECT_EQ(submit_one_exec(NvLaunchVariant{}), "");
  NvLaunchVariant wide_type;
  wide_type.qmd_type = 8;  // QMD_TYPE is 3 bits (clcbc0qmd.h MW(25:23))
  EXPECT_NE(submit_one_exec(wide_type).find("QMD_TYPE"), std::string::npos) << submit_one_exec(wide_type);
  NvLaunchVariant many_registers;
  many_registers.register_count_extra = 600;  // REGISTER_COUNT is 9 bits (MW(1208:1200))
  EXPECT_NE(submit_one_exec(many_registers).find("REGISTER_COUNT"), std::string::npos) << submit_one_exec(many_registers);
}

// Waits until both channels ran every GPFIFO entry submitted (USERD GPGet reached GPPut; the emulated GPU writes GPGet
// back once an entry's last method ran), so the GPU's method count is final.
void wait_until_idle(NvDevice& d) {
  for (NvChannel* c : {&d.session().compute(), &d.session().copy()}) {
    auto word = [&](uint32_t offset) { return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(c->userd + offset)).load(); };
    const int64_t deadline = monotonic_ns() + 20'000'000'000;
    while (word(kUserdGpGetOffset) != word(kUserdGpPutOffset)) {
      ASSERT_LT(monotonic_ns(), deadline) << "the emulated GPU did not finish the submitted entries";
      std::this_thread::yield();
    }
  }
}

// Methods the emulated GPU executed for one submission of: exec, memory barrier, exec, signal.
uint64_t methods_for_barrier_between_kernels(const NvLaunchVariant& v) {
  VariantDevice d = open_with(v);
  Kernel k = add_one(*d.device);
  NvMemory a = d.device->alloc(256), b = d.device->alloc(256);
  Signal& done = d.device->new_signal("variant done");
  wait_until_idle(*d.device);
  const uint64_t before = d.seam->gpu().stats().methods;
  HWQueue()
      .exec(*k.program, std::vector<uint64_t>{a.va, b.va}, k.grid, k.block)
      .memory_barrier()
      .exec(*k.program, std::vector<uint64_t>{b.va, a.va}, k.grid, k.block)
      .signal(done, 1)
      .submit(*d.device);
  done.wait(1, std::chrono::milliseconds(20000));
  wait_until_idle(*d.device);
  return d.seam->gpu().stats().methods - before;
}

TEST(NvLaunchVariant, WaitForIdleFollowsEachComputeMemoryBarrier) {
  NvLaunchVariant no_wfi;
  no_wfi.wait_for_idle_after_barrier = false;
  EXPECT_EQ(methods_for_barrier_between_kernels(NvLaunchVariant{}), methods_for_barrier_between_kernels(no_wfi) + 1)
      << "by default one WAIT_FOR_IDLE (an immediate: one method) comes with the barrier; the variant drops it";
}

}  // namespace
}  // namespace doorbell::nv
