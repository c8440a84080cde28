#pragma once
// Host memory behind an emulated allocation: a memfd, mapped once for the mock's own use. A CPU mapping made through
// RM_MAP_MEMORY + mmap maps the same memfd again (honouring MAP_FIXED), so the caller's view, the mock's view and the
// GPU's view (through GpuMemory) are the same bytes. CPU mappings outlive the object: freeing it closes the memfd and
// unmaps only the mock's own view.

#include <cstddef>
#include <cstdint>
#include <string>

namespace doorbell::mockgpu::nv {

class SharedBacking {
 public:
  // Throws std::runtime_error naming `name`, the size and the errno when the memfd cannot be made.
  SharedBacking(std::size_t size, const std::string& name);
  SharedBacking(const SharedBacking&) = delete;
  SharedBacking& operator=(const SharedBacking&) = delete;
  ~SharedBacking();

  std::uint8_t* data() const { return data_; }
  std::size_t size() const { return size_; }
  int fd() const { return fd_; }

 private:
  std::size_t size_;
  int fd_ = -1;
  std::uint8_t* data_ = nullptr;
};

}  // namespace doorbell::mockgpu::nv
