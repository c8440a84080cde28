// A small stand-in kernel for the AMD kernel-interface tests: files by path (sysfs text), a scripted ioctl handler
// that sees the request number and the bytes the wrapper sends, and recorded mmap/munmap calls with scripted answers.
#pragma once
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kernel-interface/syscall_seam.h"

namespace doorbell::kernel_interface::amd::testing {

// Reads and writes little-endian fields of an ioctl argument by byte offset, so a test states the ABI's offsets
// rather than the wrapper's struct names.
template <class T>
T field_at(const void* arg, std::size_t offset) {
  T value;
  std::memcpy(&value, static_cast<const unsigned char*>(arg) + offset, sizeof value);
  return value;
}
template <class T>
void set_field(void* arg, std::size_t offset, T value) {
  std::memcpy(static_cast<unsigned char*>(arg) + offset, &value, sizeof value);
}

class FakeAmdSeam final : public SyscallSeam {
 public:
  static constexpr int kKfdFd = 3;
  static constexpr const char* kKfdPath = "/dev/kfd";

  struct MmapCall {
    void* addr;
    std::size_t length;
    int prot, flags, fd;
    off_t offset;
  };

  std::map<std::string, std::string> files;           // readable paths and their text
  std::map<std::string, int> open_errors;             // paths whose open fails with this (positive) errno
  uint32_t kfd_major = 1, kfd_minor = 11;             // what GET_VERSION answers
  std::function<int(int, unsigned long, void*)> on_ioctl;  // every ioctl but GET_VERSION; -ENOTTY when unset
  std::function<void*(const MmapCall&, int*)> on_mmap;     // MAP_FAILED with ENODEV when unset
  std::vector<unsigned long> requests;                // every ioctl request, in order
  std::vector<MmapCall> mmaps;
  std::vector<std::pair<uint64_t, std::size_t>> munmaps;
  int munmap_result = 0;

  int open_count() const { return static_cast<int>(open_.size()) + (kfd_open_ ? 1 : 0); }

  int open(const std::string& path, int) override {
    if (auto error = open_errors.find(path); error != open_errors.end()) return -error->second;
    if (path == kKfdPath) {
      kfd_open_ = true;
      return kKfdFd;
    }
    const auto file = files.find(path);
    if (file == files.end()) return -ENOENT;
    const int fd = next_fd_++;
    open_[fd] = {file->second, 0};
    return fd;
  }
  int ioctl(int fd, unsigned long request, void* arg) override {
    requests.push_back(request);
    if (fd == kKfdFd && request == 0x80084b01) {  // AMDKFD_IOC_GET_VERSION
      set_field<uint32_t>(arg, 0, kfd_major);
      set_field<uint32_t>(arg, 4, kfd_minor);
      return 0;
    }
    return on_ioctl ? on_ioctl(fd, request, arg) : -ENOTTY;
  }
  ssize_t read(int fd, void* buffer, std::size_t length) override {
    const auto file = open_.find(fd);
    if (file == open_.end()) return -EBADF;
    auto& [text, position] = file->second;
    const std::size_t count = std::min(length, text.size() - position);
    std::memcpy(buffer, text.data() + position, count);
    position += count;
    return static_cast<ssize_t>(count);
  }
  void* mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset, int* error) override {
    mmaps.push_back({addr, length, prot, flags, fd, offset});
    if (on_mmap) return on_mmap(mmaps.back(), error);
    if (error != nullptr) *error = ENODEV;
    return MAP_FAILED;
  }
  int munmap(void* addr, std::size_t length) override {
    munmaps.emplace_back(reinterpret_cast<uint64_t>(addr), length);
    return munmap_result;
  }
  int close(int fd) override {
    if (fd == kKfdFd && kfd_open_) {
      kfd_open_ = false;
      return 0;
    }
    return open_.erase(fd) == 1 ? 0 : -EBADF;
  }

 private:
  bool kfd_open_ = false;
  int next_fd_ = 100;
  std::map<int, std::pair<std::string, std::size_t>> open_;
};

}  // namespace doorbell::kernel_interface::amd::testing
