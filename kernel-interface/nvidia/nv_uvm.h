#pragma once
// Typed calls into the NVIDIA UVM driver (/dev/nvidia-uvm) through a SyscallSeam. A refused ioctl throws
// NvIoctlError; an rmStatus other than NV_OK throws NvStatusError naming the ioctl and its arguments.

#include <span>

#include "kernel-interface/nvidia/nv_types.h"
#include "kernel-interface/nvidia/rm_status.h"
#include "kernel-interface/nvidia/uvm_ioctl.h"
#include "kernel-interface/syscall_seam.h"

namespace doorbell::kernel_interface::nvidia {

class NvUvm {
 public:
  // uvm_fd: an open /dev/nvidia-uvm; not owned.
  NvUvm(SyscallSeam& seam, int uvm_fd) : seam_(seam), uvm_fd_(uvm_fd) {}

  int fd() const { return uvm_fd_; }

  void initialize(NvU64 flags = 0);
  // Issued on `second_uvm_fd`, naming this (initialized) fd.
  void mm_initialize(int second_uvm_fd);
  // rm_ctl_fd -1: UVM uses its own RM client for the GPU.
  void register_gpu(const NvProcessorUuid& gpu, int rm_ctl_fd = -1, NvHandle client = 0, NvHandle smc_part_ref = 0);
  void register_gpu_vaspace(const NvProcessorUuid& gpu, int rm_ctl_fd, NvHandle client, NvHandle vaspace);
  void register_channel(const NvProcessorUuid& gpu, int rm_ctl_fd, NvHandle client, NvHandle channel, NvU64 base,
                        NvU64 length);
  void enable_peer_access(const NvProcessorUuid& a, const NvProcessorUuid& b);
  void create_external_range(NvU64 base, NvU64 length);
  void map_external_allocation(NvU64 base, NvU64 length, NvU64 offset,
                               std::span<const UvmGpuMappingAttributes> per_gpu, int rm_ctl_fd, NvHandle client,
                               NvHandle memory);
  // One GPU, read-write-atomic mapping: what tinygrad does.
  void map_external_allocation(NvU64 base, NvU64 length, const NvProcessorUuid& gpu, int rm_ctl_fd,
                               NvHandle client, NvHandle memory);
  void free(NvU64 base, NvU64 length);

 private:
  template <class Params>
  void call(int fd, unsigned long request, Params& params, const std::string& what);

  SyscallSeam& seam_;
  int uvm_fd_;
};

}  // namespace doorbell::kernel_interface::nvidia
