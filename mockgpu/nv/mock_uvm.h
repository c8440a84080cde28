#pragma once
// The emulated NVIDIA UVM driver (/dev/nvidia-uvm): per-fd state (initialize first, registered GPU, VA space and
// channels, whose VA range UVM reserves), external ranges, and external allocations mapped into the emulated GPU's
// address space (GpuMemory) from RM memory objects. Answers in rmStatus like UVM; a request it does not know is -EINVAL.
// Not thread-safe by itself: MockNvDriver serialises all calls.

#include <functional>
#include <map>
#include <set>
#include <vector>

#include "kernel-interface/nvidia/uvm_ioctl.h"
#include "mockgpu/nv/gpu_memory.h"
#include "mockgpu/nv/mock_rm.h"
#include "mockgpu/nv/mock_rm_gpu.h"

namespace doorbell::mockgpu::nv {

class MockUvm {
 public:
  // is_ctl_fd: whether an fd is an open /dev/nvidiactl of the same mock driver. `gpus[i]` has address space
  // `memories[i]`; an fd may register several of them (one VA space spans the GPUs it registered).
  MockUvm(const std::vector<MockGpuConfig>& gpus, MockRm& rm, const std::vector<GpuMemory*>& memories,
          std::function<bool(int)> is_ctl_fd);

  void open_fd(int fd);
  // Drops the fd's ranges and their GPU mappings, as closing the UVM fd tears down its VA space.
  void close_fd(int fd);
  // 0 with the status in the params' rmStatus, or -errno.
  int ioctl(int fd, unsigned long request, void* arg);

  struct Range {
    NvU64 base = 0;
    NvU64 length = 0;
  };
  std::vector<Range> external_ranges(int fd) const;

 private:
  struct File {
    bool initialized = false;
    NvU64 flags = 0;
    std::set<int> gpus;      // UVM_REGISTER_GPU done, by GPU index
    std::set<int> vaspaces;  // UVM_REGISTER_GPU_VASPACE done, by GPU index
    std::vector<NvHandle> channels;
    std::map<NvU64, NvU64> ranges;          // external ranges: base -> length
    std::map<NvU64, NvU64> channel_ranges;  // VA reserved by UVM_REGISTER_CHANNEL: base -> length
  };

  // The index of the GPU with this UUID, or -1.
  int gpu_index(const kernel_interface::nvidia::NvProcessorUuid& uuid) const;
  bool range_in_use(NvU64 base, NvU64 length) const;
  NV_STATUS check_rm(int rm_ctl_fd, NvHandle client) const;
  NV_STATUS initialize(File& file, kernel_interface::nvidia::UVM_INITIALIZE_PARAMS& p);
  NV_STATUS mm_initialize(File& file, kernel_interface::nvidia::UVM_MM_INITIALIZE_PARAMS& p);
  NV_STATUS register_gpu(File& file, kernel_interface::nvidia::UVM_REGISTER_GPU_PARAMS& p);
  NV_STATUS register_gpu_vaspace(File& file, kernel_interface::nvidia::UVM_REGISTER_GPU_VASPACE_PARAMS& p);
  NV_STATUS register_channel(File& file, kernel_interface::nvidia::UVM_REGISTER_CHANNEL_PARAMS& p);
  NV_STATUS create_external_range(File& file, kernel_interface::nvidia::UVM_CREATE_EXTERNAL_RANGE_PARAMS& p);
  NV_STATUS map_external_allocation(File& file, kernel_interface::nvidia::UVM_MAP_EXTERNAL_ALLOCATION_PARAMS& p);
  NV_STATUS free(File& file, kernel_interface::nvidia::UVM_FREE_PARAMS& p);

  std::vector<MockGpuConfig> gpus_;
  MockRm& rm_;
  std::vector<GpuMemory*> memories_;
  std::function<bool(int)> is_ctl_fd_;
  std::map<int, File> files_;
};

}  // namespace doorbell::mockgpu::nv
