#pragma once
// An emulated AMD machine behind one SyscallSeam: the emulated KFD and render nodes (mock_kfd.h), whose queues run
// on the engines and shader core its options name. This is what kernel-interface's open_driver_seam("amd") returns
// under MOCKGPU=1 once mockgpu::install() ran, and what a test builds for a machine of its own (another GPU, several
// GPUs, its own engines). Queue engines stop before the driver goes (MockKfd's destructor closes every process).
#include <memory>
#include <utility>

#include "kernel-interface/syscall_seam.h"
#include "mockgpu/shared_mock_seam.h"
#include "mockgpu/amd/mock_kfd.h"

namespace doorbell::mockgpu::amd {

class MockAmdSeam final : public kernel_interface::SyscallSeam {
 public:
  explicit MockAmdSeam(MockKfdOptions options = {}) : kfd_(std::move(options)) {}

  int open(const std::string& path, int flags) override { return kfd_.open(path, flags); }
  int ioctl(int fd, unsigned long request, void* arg) override { return kfd_.ioctl(fd, request, arg); }
  ssize_t read(int fd, void* buffer, std::size_t length) override { return kfd_.read(fd, buffer, length); }
  void* mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset, int* error) override {
    return kfd_.mmap(addr, length, prot, flags, fd, offset, error);
  }
  int munmap(void* addr, std::size_t length) override { return kfd_.munmap(addr, length); }
  int close(int fd) override { return kfd_.close(fd); }
  bool emulated() const override { return true; }

  MockKfd& kfd() { return kfd_; }

 private:
  MockKfd kfd_;
};

// A seam onto this machine that other devices hold too (mockgpu/shared_mock_seam.h).
using SharedMockAmdSeam = SharedMockSeam<MockAmdSeam>;

}  // namespace doorbell::mockgpu::amd
