#pragma once
// An emulated NVIDIA machine behind one SyscallSeam: the emulated kernel driver (mock_nv_driver.h) and the GPU that
// executes what is submitted to it (mock_gpu.h). This is what kernel-interface's open_driver_seam("nvidia") returns
// under MOCKGPU=1 once mockgpu::install() ran, and what a test builds for a GPU of its own (another class list, SM
// or driver version) to open NvDevice on. It owns both: the GPU thread starts after the driver exists and stops
// before the driver goes.
#include <utility>

#include "kernel-interface/syscall_seam.h"
#include "mockgpu/nv/mock_gpu.h"
#include "mockgpu/nv/mock_nv_driver.h"

namespace doorbell::mockgpu::nv {

class MockNvSeam final : public kernel_interface::SyscallSeam {
 public:
  explicit MockNvSeam(MockGpuConfig config = {}) : driver_(std::move(config)) {}

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
  MockNvGpu& gpu() { return gpu_; }

 private:
  MockNvDriver driver_;
  MockNvGpu gpu_{driver_};  // after the driver: its thread starts once the driver exists and stops before it goes
};

}  // namespace doorbell::mockgpu::nv
