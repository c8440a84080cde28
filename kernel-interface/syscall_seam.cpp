#include "kernel-interface/syscall_seam.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace doorbell::kernel_interface {

namespace {
// EINTR is retried here so that no caller has to think about signals.
template <class F>
auto retry_on_eintr(F&& call) {
  for (;;) {
    auto result = call();
    if (result >= 0 || errno != EINTR) return result;
  }
}
}  // namespace

int LinuxSyscalls::open(const std::string& path, int flags) {
  const int fd = retry_on_eintr([&] { return ::open(path.c_str(), flags | O_CLOEXEC); });
  return fd >= 0 ? fd : -errno;
}

int LinuxSyscalls::ioctl(int fd, unsigned long request, void* arg) {
  const int result = retry_on_eintr([&] { return ::ioctl(fd, request, arg); });
  return result >= 0 ? result : -errno;
}

ssize_t LinuxSyscalls::read(int fd, void* buffer, std::size_t length) {
  const ssize_t result = retry_on_eintr([&] { return ::read(fd, buffer, length); });
  return result >= 0 ? result : -errno;
}

void* LinuxSyscalls::mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset, int* error) {
  void* result = ::mmap(addr, length, prot, flags, fd, offset);
  if (result == MAP_FAILED && error != nullptr) *error = errno;
  return result;
}

int LinuxSyscalls::munmap(void* addr, std::size_t length) { return ::munmap(addr, length) == 0 ? 0 : -errno; }

int LinuxSyscalls::close(int fd) { return ::close(fd) == 0 ? 0 : -errno; }

SeamFd::SeamFd(SyscallSeam& seam, const std::string& path, int flags) : seam_(&seam), fd_(seam.open(path, flags)) {
  if (fd_ < 0) {
    const int error = fd_;
    fd_ = -1;
    throw std::runtime_error("open of " + path + " failed: " + describe_errno(error));
  }
}

SeamFd::SeamFd(SeamFd&& other) noexcept
    : seam_(std::exchange(other.seam_, nullptr)), fd_(std::exchange(other.fd_, -1)) {}

SeamFd& SeamFd::operator=(SeamFd&& other) noexcept {
  if (this != &other) {
    reset();
    seam_ = std::exchange(other.seam_, nullptr);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

SeamFd::~SeamFd() { reset(); }

void SeamFd::reset() {
  if (seam_ != nullptr && fd_ >= 0) seam_->close(fd_);
  fd_ = -1;
}

std::string read_text_file(SyscallSeam& seam, const std::string& path) {
  SeamFd fd(seam, path, O_RDONLY);
  std::string text;
  char chunk[4096];
  for (;;) {
    const ssize_t got = seam.read(fd.get(), chunk, sizeof chunk);
    if (got < 0) throw std::runtime_error("read of " + path + " failed: " + describe_errno(static_cast<int>(got)));
    if (got == 0) return text;
    text.append(chunk, static_cast<std::size_t>(got));
  }
}

std::string describe_errno(int error) {
  const int positive = error < 0 ? -error : error;
  return "errno " + std::to_string(positive) + " (" + std::strerror(positive) + ")";
}

}  // namespace doorbell::kernel_interface
