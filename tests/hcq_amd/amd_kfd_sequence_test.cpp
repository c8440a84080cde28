// The system calls the AMD device makes, in order, as the KFD requires them (firmware-notes/amd-kfd.md "Runtime side",
// firmware-notes/amd-hcq.md §1): a seam that records every call passes it on to the emulated machine, and the test
// checks the order the driver's rules need: the version first, the VM before any memory or queue, the event page
// before the first event, the events before the queues, each allocation mapped for the GPU before a queue uses it,
// the doorbell page mapped after the first CREATE_QUEUE returned its offset; at the end the queues destroyed before
// their memory is freed and /dev/kfd closed last.
#include <gtest/gtest.h>
#include <linux/kfd_ioctl.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "hcq/amd/amd_device.h"
#include "mockgpu/amd/mock_amd_seam.h"
#include "mockgpu/install.h"

namespace doorbell::amd {
namespace {

// The machine's calls, recorded as names: "open /dev/kfd", "GET_VERSION", "mmap kfd", "close kfd", ...
class RecordingSeam final : public kernel_interface::SyscallSeam {
 public:
  explicit RecordingSeam(std::vector<std::string>& log)
      : machine_(mockgpu::amd_machine_options(1)), log_(log) {}
  int open(const std::string& path, int flags) override {
    const int fd = machine_.open(path, flags);
    if (path == "/dev/kfd") kfd_fd_ = fd;
    if (path.rfind("/dev/dri/", 0) == 0) render_fd_ = fd;
    if (path.rfind("/dev/", 0) == 0) log_.push_back("open " + path);
    return fd;
  }
  int ioctl(int fd, unsigned long request, void* arg) override {
    log_.push_back(name(request));
    return machine_.ioctl(fd, request, arg);
  }
  ssize_t read(int fd, void* buffer, std::size_t length) override { return machine_.read(fd, buffer, length); }
  void* mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset, int* error) override {
    if (fd == kfd_fd_ && fd >= 0) log_.push_back("mmap kfd");
    else if (fd == render_fd_ && fd >= 0) log_.push_back("mmap render");
    return machine_.mmap(addr, length, prot, flags, fd, offset, error);
  }
  int munmap(void* addr, std::size_t length) override { return machine_.munmap(addr, length); }
  int close(int fd) override {
    if (fd == kfd_fd_) log_.push_back("close kfd");
    return machine_.close(fd);
  }
  bool emulated() const override { return true; }

 private:
  static std::string name(unsigned long request) {
    switch (request) {
      case AMDKFD_IOC_GET_VERSION: return "GET_VERSION";
      case AMDKFD_IOC_ACQUIRE_VM: return "ACQUIRE_VM";
      case AMDKFD_IOC_GET_PROCESS_APERTURES_NEW: return "GET_PROCESS_APERTURES_NEW";
      case AMDKFD_IOC_ALLOC_MEMORY_OF_GPU: return "ALLOC";
      case AMDKFD_IOC_MAP_MEMORY_TO_GPU: return "MAP";
      case AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU: return "UNMAP";
      case AMDKFD_IOC_FREE_MEMORY_OF_GPU: return "FREE";
      case AMDKFD_IOC_CREATE_EVENT: return "CREATE_EVENT";
      case AMDKFD_IOC_DESTROY_EVENT: return "DESTROY_EVENT";
      case AMDKFD_IOC_WAIT_EVENTS: return "WAIT_EVENTS";
      case AMDKFD_IOC_CREATE_QUEUE: return "CREATE_QUEUE";
      case AMDKFD_IOC_DESTROY_QUEUE: return "DESTROY_QUEUE";
      case AMDKFD_IOC_GET_CLOCK_COUNTERS: return "GET_CLOCK_COUNTERS";
      case 0x40206445: return "AMDGPU_INFO";  // DRM_IOCTL_AMDGPU_INFO on the render node (kernel-interface/amd/amdgpu_drm.h)
      default: return "ioctl " + std::to_string(request);
    }
  }
  mockgpu::amd::MockAmdSeam machine_;
  std::vector<std::string>& log_;
  int kfd_fd_ = -1, render_fd_ = -1;
};

size_t first(const std::vector<std::string>& log, const std::string& call) {
  return static_cast<size_t>(std::find(log.begin(), log.end(), call) - log.begin());
}
size_t last(const std::vector<std::string>& log, const std::string& call) {
  const auto it = std::find(log.rbegin(), log.rend(), call);
  return it == log.rend() ? log.size() : static_cast<size_t>(log.rend() - it - 1);
}
std::string text(const std::vector<std::string>& log) {
  std::string t;
  for (const std::string& s : log) t += s + "\n";
  return t;
}

TEST(AmdKfdSequence, BringUpAndTeardownCallTheKfdInTheOrderItsRulesNeed) {
  std::vector<std::string> log;
  {
    std::unique_ptr<AmdDevice> d = AmdDevice::open(std::make_unique<RecordingSeam>(log));
    Signal& s = d->new_signal("sequence");
    HWQueue().signal(s, 1).submit(*d);
    s.wait(1);
    log.push_back("-- teardown");
  }
  SCOPED_TRACE(text(log));
  if (std::getenv("AMD_SEQUENCE_PRINT")) std::printf("%s", text(log).c_str());
  const size_t teardown = first(log, "-- teardown");
  ASSERT_LT(teardown, log.size());
  // Bring-up.
  EXPECT_EQ(first(log, "open /dev/kfd"), 0u);
  EXPECT_EQ(first(log, "GET_VERSION"), 1u) << "the interface version is checked before anything else";
  EXPECT_LT(first(log, "open /dev/dri/renderD128"), first(log, "ACQUIRE_VM")) << "ACQUIRE_VM takes the render node's fd";
  EXPECT_LT(first(log, "AMDGPU_INFO"), first(log, "ALLOC")) << "the device's INFO (the timestamp frequency, VA range) first";
  for (const char* needs_vm : {"ALLOC", "MAP", "CREATE_EVENT", "CREATE_QUEUE", "GET_PROCESS_APERTURES_NEW"})
    EXPECT_LT(first(log, "ACQUIRE_VM"), first(log, needs_vm)) << needs_vm << " before the VM was acquired";
  EXPECT_LT(first(log, "ALLOC"), first(log, "CREATE_EVENT")) << "the first event passes the event page's handle";
  EXPECT_LT(first(log, "MAP"), first(log, "CREATE_EVENT"));
  EXPECT_LT(last(log, "CREATE_EVENT"), first(log, "CREATE_QUEUE"))
      << "the events exist before any queue can raise one";
  // Every allocation made before a queue is mapped before that queue is created (ring, pointers, EOP, CWSR).
  for (size_t i = 0; i < teardown; i++) {
    if (log[i] != "CREATE_QUEUE") continue;
    size_t allocs = 0, maps = 0;
    for (size_t j = 0; j < i; j++) allocs += log[j] == "ALLOC", maps += log[j] == "MAP";
    EXPECT_EQ(allocs, maps) << "CREATE_QUEUE at call " << i << " with an allocation not mapped for the GPU";
  }
  EXPECT_LT(first(log, "CREATE_QUEUE"), first(log, "mmap kfd")) << "the doorbell offset comes from CREATE_QUEUE";
  EXPECT_EQ(std::count(log.begin(), log.begin() + teardown, "CREATE_QUEUE"), 2) << "a compute and an SDMA queue";
  EXPECT_EQ(std::count(log.begin(), log.begin() + teardown, "mmap kfd"), 1) << "one doorbell page for both queues";
  // Teardown: both queues stop before any memory is unmapped or freed; /dev/kfd goes last.
  const size_t first_destroy = first(log, "DESTROY_QUEUE");
  ASSERT_LT(first_destroy, log.size());
  EXPECT_GT(first_destroy, teardown);
  EXPECT_EQ(std::count(log.begin() + teardown, log.end(), "DESTROY_QUEUE"), 2);
  for (size_t i = teardown; i < first_destroy; i++)
    EXPECT_TRUE(log[i] != "FREE" && log[i] != "UNMAP") << log[i] << " at call " << i << " while a queue may run";
  EXPECT_LT(last(log, "DESTROY_QUEUE"), first(log, "FREE"));
  EXPECT_EQ(log.back(), "close kfd");
}

}  // namespace
}  // namespace doorbell::amd
