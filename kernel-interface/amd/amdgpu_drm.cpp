#include "kernel-interface/amd/amdgpu_drm.h"

#include <linux/ioctl.h>

#include <array>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>

#if __has_include(<libdrm/amdgpu_drm.h>)
#include <libdrm/amdgpu_drm.h>
#define DOORBELL_HAVE_LIBDRM_AMDGPU 1
#else
#define DOORBELL_HAVE_LIBDRM_AMDGPU 0
#endif

#include "kernel-interface/amd/amd_hex.h"

namespace doorbell::kernel_interface::amd {

namespace {

// Our own copy of libdrm's include/drm/amdgpu_drm.h (firmware-notes/amd-kfd.md, Runtime side, "The render node's
// INFO query"): the GPU build machine has no libdrm, so the numbers live here and are checked against libdrm's
// header wherever it is installed.
constexpr unsigned kDrmCommandBase = 0x40;  // drm.h DRM_COMMAND_BASE
constexpr unsigned kDrmAmdgpuInfo = 0x05;   // amdgpu_drm.h DRM_AMDGPU_INFO
constexpr std::size_t kInfoArgsBytes = 32;  // sizeof(struct drm_amdgpu_info)
// DRM_IOW(DRM_COMMAND_BASE + DRM_AMDGPU_INFO, struct drm_amdgpu_info): the kernel writes through return_pointer,
// not through the argument, so the direction is write-only.
constexpr unsigned long kDrmIoctlAmdgpuInfo = 0x40206445;
static_assert(kDrmIoctlAmdgpuInfo == _IOC(_IOC_WRITE, 'd', kDrmCommandBase + kDrmAmdgpuInfo, kInfoArgsBytes));
constexpr uint32_t kAmdgpuInfoDevInfo = 0x16;  // AMDGPU_INFO_DEV_INFO

// struct drm_amdgpu_info: return_pointer u64 @0, return_size u32 @8, query u32 @12, a 16-byte union @16.
struct InfoArgs {
  uint64_t return_pointer;
  uint32_t return_size;
  uint32_t query;
  uint32_t query_union[4];
};
static_assert(sizeof(InfoArgs) == kInfoArgsBytes && offsetof(InfoArgs, query) == 12);

// Offsets in struct drm_amdgpu_info_device (368 bytes in libdrm 2.4.114; older kernels fill a shorter prefix and
// leave the rest zero).
namespace dev_info {
constexpr std::size_t device_id = 0, chip_rev = 4, external_rev = 8, pci_rev = 12, family = 16,
                      num_shader_engines = 20, gpu_counter_freq = 28, cu_active_number = 48,
                      virtual_address_offset = 144, virtual_address_max = 152, wave_front_size = 240,
                      num_cu_per_sh = 248, size = 368;
}  // namespace dev_info

#if DOORBELL_HAVE_LIBDRM_AMDGPU
static_assert(DRM_IOCTL_AMDGPU_INFO == kDrmIoctlAmdgpuInfo);
static_assert(AMDGPU_INFO_DEV_INFO == kAmdgpuInfoDevInfo);
static_assert(sizeof(drm_amdgpu_info) == sizeof(InfoArgs));
static_assert(offsetof(drm_amdgpu_info, return_pointer) == offsetof(InfoArgs, return_pointer));
static_assert(offsetof(drm_amdgpu_info, return_size) == offsetof(InfoArgs, return_size));
static_assert(offsetof(drm_amdgpu_info, query) == offsetof(InfoArgs, query));
static_assert(offsetof(drm_amdgpu_info_device, device_id) == dev_info::device_id);
static_assert(offsetof(drm_amdgpu_info_device, chip_rev) == dev_info::chip_rev);
static_assert(offsetof(drm_amdgpu_info_device, external_rev) == dev_info::external_rev);
static_assert(offsetof(drm_amdgpu_info_device, pci_rev) == dev_info::pci_rev);
static_assert(offsetof(drm_amdgpu_info_device, family) == dev_info::family);
static_assert(offsetof(drm_amdgpu_info_device, num_shader_engines) == dev_info::num_shader_engines);
static_assert(offsetof(drm_amdgpu_info_device, gpu_counter_freq) == dev_info::gpu_counter_freq);
static_assert(offsetof(drm_amdgpu_info_device, cu_active_number) == dev_info::cu_active_number);
static_assert(offsetof(drm_amdgpu_info_device, virtual_address_offset) == dev_info::virtual_address_offset);
static_assert(offsetof(drm_amdgpu_info_device, virtual_address_max) == dev_info::virtual_address_max);
static_assert(offsetof(drm_amdgpu_info_device, wave_front_size) == dev_info::wave_front_size);
static_assert(offsetof(drm_amdgpu_info_device, num_cu_per_sh) == dev_info::num_cu_per_sh);
static_assert(sizeof(drm_amdgpu_info_device) >= dev_info::size);
#endif

template <class T>
T field(const std::array<unsigned char, dev_info::size>& bytes, std::size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

}  // namespace

AmdgpuDeviceInfo query_amdgpu_device_info(SyscallSeam& seam, int render_fd) {
  std::array<unsigned char, dev_info::size> bytes{};
  InfoArgs args{};
  args.return_pointer = reinterpret_cast<uint64_t>(bytes.data());
  args.return_size = static_cast<uint32_t>(bytes.size());
  args.query = kAmdgpuInfoDevInfo;
  const int result = seam.ioctl(render_fd, kDrmIoctlAmdgpuInfo, &args);
  if (result < 0) {
    throw std::runtime_error("DRM_IOCTL_AMDGPU_INFO (" + hex(kDrmIoctlAmdgpuInfo) + ") query AMDGPU_INFO_DEV_INFO (" +
                             hex(kAmdgpuInfoDevInfo) + ") of " + std::to_string(bytes.size()) + " bytes on render fd " +
                             std::to_string(render_fd) + " failed: " + describe_errno(result));
  }
  AmdgpuDeviceInfo info;
  info.device_id = field<uint32_t>(bytes, dev_info::device_id);
  info.chip_rev = field<uint32_t>(bytes, dev_info::chip_rev);
  info.external_rev = field<uint32_t>(bytes, dev_info::external_rev);
  info.pci_rev = field<uint32_t>(bytes, dev_info::pci_rev);
  info.family = field<uint32_t>(bytes, dev_info::family);
  info.num_shader_engines = field<uint32_t>(bytes, dev_info::num_shader_engines);
  info.gpu_counter_freq_khz = field<uint32_t>(bytes, dev_info::gpu_counter_freq);
  info.cu_active_number = field<uint32_t>(bytes, dev_info::cu_active_number);
  info.virtual_address_offset = field<uint64_t>(bytes, dev_info::virtual_address_offset);
  info.virtual_address_max = field<uint64_t>(bytes, dev_info::virtual_address_max);
  info.wave_front_size = field<uint32_t>(bytes, dev_info::wave_front_size);
  info.num_cu_per_sh = field<uint32_t>(bytes, dev_info::num_cu_per_sh);
  return info;
}

}  // namespace doorbell::kernel_interface::amd
