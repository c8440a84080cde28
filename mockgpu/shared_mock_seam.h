// A seam onto an emulated machine others hold too: each device of a several-GPU machine (NV, NV:1, ...; AMD, AMD:1,
// ...) owns one of these, and the machine (mockgpu/nv/mock_nv_seam.h, mockgpu/amd/mock_amd_seam.h) lives as long as
// any of them. Every call goes to the machine.
#pragma once
#include <memory>
#include <string>
#include <utility>

#include "kernel-interface/syscall_seam.h"

namespace doorbell::mockgpu {

template <class Machine>
class SharedMockSeam final : public kernel_interface::SyscallSeam {
 public:
  explicit SharedMockSeam(std::shared_ptr<Machine> machine) : machine_(std::move(machine)) {}

  int open(const std::string& path, int flags) override { return machine_->open(path, flags); }
  int ioctl(int fd, unsigned long request, void* arg) override { return machine_->ioctl(fd, request, arg); }
  ssize_t read(int fd, void* buffer, std::size_t length) override { return machine_->read(fd, buffer, length); }
  void* mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset, int* error) override {
    return machine_->mmap(addr, length, prot, flags, fd, offset, error);
  }
  int munmap(void* addr, std::size_t length) override { return machine_->munmap(addr, length); }
  int close(int fd) override { return machine_->close(fd); }
  bool emulated() const override { return true; }

  Machine& machine() { return *machine_; }

 private:
  std::shared_ptr<Machine> machine_;
};

}  // namespace doorbell::mockgpu
