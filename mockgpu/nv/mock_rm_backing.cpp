#include "mockgpu/nv/mock_rm_backing.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace doorbell::mockgpu::nv {

SharedBacking::SharedBacking(std::size_t size, const std::string& name) : size_(size) {
  fd_ = memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd_ < 0) {
    throw std::runtime_error("memfd_create for emulated memory '" + name + "' failed: " + std::strerror(errno));
  }
  void* mapped = MAP_FAILED;
  if (ftruncate(fd_, static_cast<off_t>(size)) == 0) {
    mapped = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  }
  if (mapped == MAP_FAILED) {
    const int error = errno;
    ::close(fd_);
    throw std::runtime_error("backing " + std::to_string(size) + " bytes of emulated memory '" + name +
                             "' failed: " + std::strerror(error));
  }
  data_ = static_cast<std::uint8_t*>(mapped);
}

SharedBacking::~SharedBacking() {
  ::munmap(data_, size_);
  ::close(fd_);
}

}  // namespace doorbell::mockgpu::nv
