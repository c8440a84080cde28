// The emulated KFD's process-wide behaviour: the ioctl dispatcher, ACQUIRE_VM, apertures, clocks, XNACK, the
// topology and the render node's DEV_INFO, through kernel-interface/amd where a call should succeed.
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "kernel-interface/amd/amdgpu_drm.h"
#include "kernel-interface/driver_seams.h"
#include "mockgpu/install.h"
#include "kernel-interface/amd/kfd_topology.h"
#include "mock_kfd_fixture.h"

namespace doorbell::mockgpu::amd::testing {
namespace {

using Process = MockKfdTest;

TEST_F(Process, GetVersionAnswersTheHeadersInterface1_11) {
  ki::Kfd kfd(seam());  // the wrapper refuses anything but 1.x with x >= 11
  EXPECT_EQ(kfd.version().major, 1u);
  EXPECT_EQ(kfd.version().minor, 11u);
}

TEST_F(Process, RequestNumbersOutsideTheTableFail) {
  open_kfd();
  uint64_t args[8] = {};
  // nr at or past AMDKFD_COMMAND_END (0x24 in 1.11), or below AMDKFD_COMMAND_START (1): ENOTTY.
  EXPECT_EQ(raw(_IOWR('K', 0x24, uint64_t[2]), args), -ENOTTY);
  EXPECT_EQ(raw(_IOWR('K', 0x80, uint64_t[2]), args), -ENOTTY);
  EXPECT_EQ(raw(_IOWR('K', 0x00, uint64_t[2]), args), -ENOTTY);
}

TEST_F(Process, StructSizesOtherThanTheKernelsAreCopiedAsFarAsTheCallerPassed) {
  open_kfd();
  // GET_VERSION with a 4-byte struct: only major comes back; the word after it stays as the caller left it.
  uint32_t words[2] = {0xAAAAAAAA, 0xBBBBBBBB};
  EXPECT_EQ(raw(_IOR('K', 0x01, uint32_t), words), 0);
  EXPECT_EQ(words[0], 1u);
  EXPECT_EQ(words[1], 0xBBBBBBBBu);
  // A 1.17-sized (96-byte) CREATE_QUEUE is accepted: the kernel reads its own 88 bytes.
  struct {
    kfd_ioctl_create_queue_args args;
    uint32_t sdma_engine_id, pad;
  } longer{compute_queue_args(), 0, 0};
  static_assert(sizeof(longer) == 96);
  EXPECT_EQ(raw(_IOWR('K', 0x02, decltype(longer)), &longer), 0);
  EXPECT_NE(longer.args.doorbell_offset, 0u);
}

TEST_F(Process, IoctlsOfAnotherProcessAreEBADF) {
  open_kfd();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    kfd_ioctl_get_version_args args{};
    _exit(seam().ioctl(kfd().fd(), AMDKFD_IOC_GET_VERSION, &args) == -EBADF ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child's GET_VERSION was not EBADF";
}

TEST_F(Process, AcquireVmAcceptsTheSameRenderFileTwiceAndRefusesAnother) {
  ki::Kfd& kfd = open_kfd();
  kfd_ioctl_acquire_vm_args args{};
  args.drm_fd = static_cast<uint32_t>(render());
  args.gpu_id = gpu_id();
  EXPECT_EQ(raw(AMDKFD_IOC_ACQUIRE_VM, &args), 0);
  const int other = seam().open(render_path(), O_RDWR);
  args.drm_fd = static_cast<uint32_t>(other);
  EXPECT_EQ(raw(AMDKFD_IOC_ACQUIRE_VM, &args), -EBUSY);
  args.drm_fd = 0x7FFF0000;  // no such descriptor
  EXPECT_EQ(raw(AMDKFD_IOC_ACQUIRE_VM, &args), -EINVAL);
  args.drm_fd = static_cast<uint32_t>(render());
  args.gpu_id = 0x1234;  // no such GPU
  EXPECT_EQ(raw(AMDKFD_IOC_ACQUIRE_VM, &args), -EINVAL);
  // A process whose VM is not acquired yet: a file that is not this GPU's DRM file is EINVAL.
  ki::Kfd fresh(seam());
  args.drm_fd = static_cast<uint32_t>(kfd.fd());
  args.gpu_id = gpu_id();
  EXPECT_EQ(seam().ioctl(fresh.fd(), AMDKFD_IOC_ACQUIRE_VM, &args), -EINVAL);
}

TEST_F(Process, AllocAndQueueBeforeAcquireVmFail) {
  ki::Kfd kfd(seam());
  kfd_ioctl_alloc_memory_of_gpu_args alloc{};
  alloc.va_addr = 0x10000000;
  alloc.size = 4096;
  alloc.gpu_id = gpu_id();
  alloc.flags = KFD_IOC_ALLOC_MEM_FLAGS_GTT;
  EXPECT_EQ(seam().ioctl(kfd.fd(), AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &alloc), -ENODEV);  // kfd_bind_process_to_device
  kfd_ioctl_create_queue_args queue{};
  queue.gpu_id = gpu_id();
  queue.ring_size = 4096;
  queue.queue_percentage = 100;
  EXPECT_EQ(seam().ioctl(kfd.fd(), AMDKFD_IOC_CREATE_QUEUE, &queue), -ESRCH);  // create_queue's own errno for it
}

TEST_F(Process, AperturesComeInTwoCallsWithTheGfx9Layout) {
  ki::Kfd& kfd = open_kfd();
  const auto apertures = kfd.process_apertures();
  ASSERT_EQ(apertures.size(), 1u);
  EXPECT_EQ(apertures[0].gpu_id, gpu_id());
  EXPECT_EQ(apertures[0].lds_base, uint64_t{1} << 48);
  EXPECT_EQ(apertures[0].lds_limit, (uint64_t{1} << 48) + 0xFFFFFFFF);
  EXPECT_EQ(apertures[0].scratch_base, uint64_t{2} << 48);
  EXPECT_EQ(apertures[0].gpuvm_limit, (uint64_t{1} << 47) - 1);
}

TEST_F(Process, ClockCountersReadThe100MHzCounterAndNanosecondClocks) {
  ki::Kfd& kfd = open_kfd();
  const uint64_t before = gpu_clock_100mhz();
  const ki::KfdClockCounters clocks = kfd.clock_counters(gpu_id());
  const uint64_t after = gpu_clock_100mhz();
  EXPECT_GE(clocks.gpu_clock_counter, before);
  EXPECT_LE(clocks.gpu_clock_counter, after);
  EXPECT_EQ(clocks.system_clock_freq, 1000000000u);
  EXPECT_GT(clocks.cpu_clock_counter, 0u);
  EXPECT_EQ(kfd.clock_counters(0x4321).gpu_clock_counter, 0u);  // an unknown GPU reads 0, not an error
}

TEST_F(Process, XnackCannotBeEnabledOnGfx11OrChangedWithQueues) {
  open_kfd();
  kfd_ioctl_set_xnack_mode_args args{};
  args.xnack_enabled = -1;
  EXPECT_EQ(raw(AMDKFD_IOC_SET_XNACK_MODE, &args), 0);
  EXPECT_EQ(args.xnack_enabled, 0);
  args.xnack_enabled = 1;
  EXPECT_EQ(raw(AMDKFD_IOC_SET_XNACK_MODE, &args), -EPERM);
  kfd().create_queue(sdma_queue_args());
  args.xnack_enabled = 0;
  EXPECT_EQ(raw(AMDKFD_IOC_SET_XNACK_MODE, &args), -EBUSY);
}

class Gfx942Process : public MockKfdTest {
 protected:
  Gfx942Process() : MockKfdTest({mock_amd_gfx942()}) {}
};

TEST_F(Gfx942Process, XnackCanBeEnabledOnGfx9WithoutQueues) {
  open_kfd();
  kfd_ioctl_set_xnack_mode_args args{};
  args.xnack_enabled = 1;
  EXPECT_EQ(raw(AMDKFD_IOC_SET_XNACK_MODE, &args), 0);
  args.xnack_enabled = -1;
  EXPECT_EQ(raw(AMDKFD_IOC_SET_XNACK_MODE, &args), 0);
  EXPECT_EQ(args.xnack_enabled, 1);
}

TEST_F(Gfx942Process, QueueBufferSizesMatchTheKfdQueueFormulaForMi300x) {
  const NodeQueueSizes sizes = node_queue_sizes(gpu());
  // cu/xcc 38, waves 1520: ctl_stack 0x3000, cwsr 0x1621000, debug 0xBE00, BO 0xB167000 (firmware-notes §K6).
  EXPECT_EQ(sizes.ctl_stack_bytes, 0x3000u);
  EXPECT_EQ(sizes.cwsr_bytes, 0x1621000u);
  EXPECT_EQ(sizes.debug_memory_bytes, 0xBE00u);
  EXPECT_EQ(sizes.cwsr_allocation_bytes, 0xB167000u);
}

TEST_F(Process, TopologyReadsThroughKernelInterfaceAsA7900Xtx) {
  const auto nodes = ki::read_kfd_topology(seam());
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].gpu_id, 0u);
  const auto gpus = ki::kfd_gpu_nodes(nodes);
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].gpu_id, gpu_id());
  EXPECT_EQ(gpus[0].gfx_arch(), "gfx1100");
  EXPECT_EQ(gpus[0].property("simd_count"), 192u);
  EXPECT_EQ(gpus[0].drm_render_minor(), 128u);
  // kernel-interface's formula and the emulated kernel's agree: 0xA000 / 0x2BEA000 / 0x2C02000 (§K6).
  const ki::QueueBufferSizes sizes = ki::queue_buffer_sizes(gpus[0]);
  EXPECT_EQ(sizes.ctl_stack_bytes, 0xA000u);
  EXPECT_EQ(sizes.cwsr_bytes, 0x2BEA000u);
  EXPECT_EQ(sizes.cwsr_allocation_bytes, 0x2C02000u);
  EXPECT_EQ(sizes.cwsr_bytes, node_queue_sizes(gpu()).cwsr_bytes);
  EXPECT_EQ(sizes.debug_memory_bytes, node_queue_sizes(gpu()).debug_memory_bytes);
  EXPECT_LT(seam().open(std::string(kKfdTopologyNodes) + "/2/properties", O_RDONLY), 0);
}

TEST_F(Process, RenderNodeAnswersDevInfoAndRefusesOtherQueries) {
  const int fd = seam().open(render_path(), O_RDWR);
  const ki::AmdgpuDeviceInfo info = ki::query_amdgpu_device_info(seam(), fd);
  EXPECT_EQ(info.device_id, 0x744Cu);
  EXPECT_EQ(info.family, 145u);
  EXPECT_EQ(info.gpu_counter_freq_khz, 100000u);
  EXPECT_EQ(info.cu_active_number, 96u);
  EXPECT_EQ(info.num_shader_engines, 6u);
  EXPECT_EQ(info.wave_front_size, 32u);
  EXPECT_EQ(info.virtual_address_max, uint64_t{1} << 47);
  uint8_t out[64] = {};
  struct {
    uint64_t return_pointer;
    uint32_t return_size, query;
    uint64_t pad[2];
  } request{reinterpret_cast<uint64_t>(out), sizeof out, 0x0F, {}};  // AMDGPU_INFO_FW_VERSION: not emulated
  EXPECT_EQ(seam().ioctl(fd, 0x40206445, &request), -EINVAL);
  EXPECT_EQ(seam().open("/dev/dri/renderD129", O_RDWR), -ENOENT);
}

TEST_F(Process, AnonymousMappingsAndTheirUnmapsGoToTheKernel) {
  const uint64_t va = ki::reserve_va(seam(), 0x200000, 0x200000);
  EXPECT_EQ(va % 0x200000, 0u);
  EXPECT_EQ(msync(reinterpret_cast<void*>(va), 0x200000, MS_ASYNC), 0);  // the kernel has the range
  ki::release_va(seam(), va, 0x200000);
  EXPECT_NE(msync(reinterpret_cast<void*>(va), 0x200000, MS_ASYNC), 0);
}

}  // namespace
}  // namespace doorbell::mockgpu::amd::testing

namespace doorbell::mockgpu::amd::testing {
namespace {

// Restores an environment variable when it goes.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(MockAmdInstall, MockgpuOpensTheEmulatedAmdMachineWithMockgpuAmdGpusGpus) {
  mockgpu::install();
  ScopedEnv mock("MOCKGPU", "1");
  ScopedEnv gpus("MOCKGPU_AMD_GPUS", "2");
  std::unique_ptr<kernel_interface::SyscallSeam> seam = kernel_interface::open_driver_seam("amd");
  ASSERT_TRUE(seam->emulated());
  const auto nodes = ki::kfd_gpu_nodes(ki::read_kfd_topology(*seam));
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_NE(nodes[0].gpu_id, nodes[1].gpu_id);
  EXPECT_EQ(nodes[1].drm_render_minor(), 129u);
  ki::Kfd kfd(*seam);
  EXPECT_EQ(kfd.process_apertures().size(), 2u);
  ScopedEnv bad("MOCKGPU_AMD_GPUS", "seventeen");
  EXPECT_THROW(amd_gpu_count_from_environment(), std::invalid_argument);
}

}  // namespace
}  // namespace doorbell::mockgpu::amd::testing
