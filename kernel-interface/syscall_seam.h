#pragma once
// The one place where kernel-interface code makes system calls. Every NVIDIA RM/UVM call takes a SyscallSeam& so a
// test can put an emulated driver (mockgpu/nv/mock_nv_driver.h) where the kernel would be; driver_seams.h hands a
// device the seam of its driver: the kernel's, or under MOCKGPU=1 the emulator the program installed.

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace doorbell::kernel_interface {

// Results follow the kernel's convention, not libc's: a negative value is -errno, so no global errno is involved.
class SyscallSeam {
 public:
  virtual ~SyscallSeam() = default;

  // A file descriptor (>= 0), or -errno.
  virtual int open(const std::string& path, int flags) = 0;
  // The ioctl's non-negative result, or -errno.
  virtual int ioctl(int fd, unsigned long request, void* arg) = 0;
  // Bytes read (0 at end of file), or -errno.
  virtual ssize_t read(int fd, void* buffer, std::size_t length) = 0;
  // The mapped address, or MAP_FAILED; *error (when given) receives the errno of a failure.
  virtual void* mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset,
                     int* error = nullptr) = 0;
  // 0, or -errno.
  virtual int munmap(void* addr, std::size_t length) = 0;
  virtual int close(int fd) = 0;

  // True for an emulated driver (mockgpu): its "video memory" is host memory and its GPU runs in this process.
  virtual bool emulated() const { return false; }
};

// Forwards every call to the running kernel.
class LinuxSyscalls final : public SyscallSeam {
 public:
  int open(const std::string& path, int flags) override;
  int ioctl(int fd, unsigned long request, void* arg) override;
  ssize_t read(int fd, void* buffer, std::size_t length) override;
  void* mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset, int* error) override;
  int munmap(void* addr, std::size_t length) override;
  int close(int fd) override;
};

// Owns one descriptor opened through a seam and closes it through the same seam.
class SeamFd {
 public:
  SeamFd() = default;
  // Throws std::runtime_error naming the path and the errno when the open fails.
  SeamFd(SyscallSeam& seam, const std::string& path, int flags);
  SeamFd(SeamFd&& other) noexcept;
  SeamFd& operator=(SeamFd&& other) noexcept;
  SeamFd(const SeamFd&) = delete;
  SeamFd& operator=(const SeamFd&) = delete;
  ~SeamFd();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void reset();

 private:
  SyscallSeam* seam_ = nullptr;
  int fd_ = -1;
};

// The whole content of a (small, text) file read through the seam, e.g. /proc/driver/nvidia/version.
// Throws std::runtime_error naming the path and the errno when it cannot be opened or read.
std::string read_text_file(SyscallSeam& seam, const std::string& path);

// "errno 22 (Invalid argument)" for an errno value, positive or negated.
std::string describe_errno(int error);

}  // namespace doorbell::kernel_interface
