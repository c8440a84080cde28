#pragma once
// An emulated NVIDIA machine behind one SyscallSeam: the emulated kernel driver (mock_nv_driver.h) and the GPU that
// executes what is submitted to it (mock_gpu.h). This is what kernel-interface's open_driver_seam("nvidia") returns
// under MOCKGPU=1 once mockgpu::install() ran, and what a test builds for a GPU of its own (another class list, SM
// or driver version, or several GPUs) to open NvDevice on. It owns both: the GPU threads start after the driver exists
// and stop before the driver goes.
#include <memory>
#include <utility>
#include <vector>

#include "kernel-interface/syscall_seam.h"
#include "mockgpu/shared_mock_seam.h"
#include "mockgpu/nv/mock_gpu.h"
#include "mockgpu/nv/mock_nv_driver.h"

namespace doorbell::mockgpu::nv {

class MockNvSeam final : public kernel_interface::SyscallSeam {
 public:
  explicit MockNvSeam(MockGpuConfig config = {}) : MockNvSeam(std::vector<MockGpuConfig>{std::move(config)}) {}
  // A machine of several GPUs (mock_gpu_configs(n)): one driver, one executing GPU per config.
  explicit MockNvSeam(std::vector<MockGpuConfig> gpus) : driver_(std::move(gpus)) {
    for (int i = 0; i < driver_.gpu_count(); ++i) {
      MockNvGpu::Options options;
      options.gpu = i;
      gpus_.push_back(std::make_unique<MockNvGpu>(driver_, options));
    }
  }
  ~MockNvSeam() override { gpus_.clear(); }  // every GPU thread stops before the driver goes

  int open(const std::string& path, int flags) override { return driver_.open(path, flags); }
  int ioctl(int fd, unsigned long request, void* arg) override { return driver_.ioctl(fd, request, arg); }
  ssize_t read(int fd, void* buffer, std::size_t length) override { return driver_.read(fd, buffer, length); }
  void* mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset, int* error) override {
    return driver_.mmap(addr, length, prot, flags, fd, offset, error);
  }
  int munmap(void* addr, std::size_t length) override { return driver_.munmap(addr, length); }
  int close(int fd) override { return driver_.close(fd); }
  bool emulated() const override { return true; }

  // For tests of the emulator itself.
  MockNvDriver& driver() { return driver_; }
  MockNvGpu& gpu(int index = 0) { return *gpus_.at(static_cast<std::size_t>(index)); }

 private:
  MockNvDriver driver_;
  std::vector<std::unique_ptr<MockNvGpu>> gpus_;  // after the driver: their threads start once it exists
};

// A seam onto this machine that other devices hold too (mockgpu/shared_mock_seam.h).
using SharedMockNvSeam = SharedMockSeam<MockNvSeam>;

}  // namespace doorbell::mockgpu::nv
