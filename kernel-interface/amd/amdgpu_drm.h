// The amdgpu DRM render node's INFO ioctl (DRM_IOCTL_AMDGPU_INFO, query AMDGPU_INFO_DEV_INFO), through the syscall
// seam. The request number and the fields read are libdrm's include/drm/amdgpu_drm.h (libdrm 2.4.114), recorded in
// firmware-notes/amd-kfd.md; when libdrm's header is installed the offsets are checked against it at compile time,
// so the build needs no libdrm.
#pragma once
#include <cstdint>

#include "kernel-interface/syscall_seam.h"

namespace doorbell::kernel_interface::amd {

struct AmdgpuDeviceInfo {
  uint32_t device_id = 0, chip_rev = 0, external_rev = 0, pci_rev = 0, family = 0, num_shader_engines = 0;
  uint64_t gpu_counter_freq_khz = 0;  // the timestamp counter's frequency (100000 = 100 MHz)
  uint64_t virtual_address_offset = 0, virtual_address_max = 0;
  uint32_t cu_active_number = 0, num_cu_per_sh = 0, wave_front_size = 0;
};

// Throws std::runtime_error naming the query and the errno.
AmdgpuDeviceInfo query_amdgpu_device_info(SyscallSeam& seam, int render_fd);

}  // namespace doorbell::kernel_interface::amd
