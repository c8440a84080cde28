// The render node's INFO query (kernel-interface/amd/amdgpu_drm.h) against a stand-in seam: the request number and
// argument bytes of DRM_IOCTL_AMDGPU_INFO with AMDGPU_INFO_DEV_INFO, and the drm_amdgpu_info_device fields read back
// (offsets of libdrm 2.4.114's include/drm/amdgpu_drm.h, firmware-notes/amd-kfd.md, Runtime side).
#include <gtest/gtest.h>

#include <cerrno>

#include "kernel-interface/amd/amdgpu_drm.h"
#include "tests/common/error_of.h"
#include "tests/kernel-interface/amd_fake_seam.h"

namespace doorbell::kernel_interface::amd {
namespace {

using testing::FakeAmdSeam;
using testing::field_at;
using testing::set_field;
using doorbell::testing::error_of;

constexpr int kRenderFd = 11;

TEST(AmdgpuDrm, DevInfoQuerySendsTheInfoIoctlAndReadsTheDeviceFields) {
  FakeAmdSeam seam;
  seam.on_ioctl = [](int fd, unsigned long request, void* arg) {
    EXPECT_EQ(fd, kRenderFd);
    // _IOW('d', 0x40 + 0x05, 32 bytes): DRM_COMMAND_BASE + DRM_AMDGPU_INFO, struct drm_amdgpu_info.
    EXPECT_EQ(request, 0x40206445u);
    const uint32_t return_size = field_at<uint32_t>(arg, 8);
    EXPECT_GE(return_size, 368u);                  // all of libdrm 2.4.114's drm_amdgpu_info_device
    EXPECT_EQ(field_at<uint32_t>(arg, 12), 0x16u);  // query AMDGPU_INFO_DEV_INFO
    auto* out = reinterpret_cast<unsigned char*>(field_at<uint64_t>(arg, 0));
    EXPECT_NE(out, nullptr);
    set_field<uint32_t>(out, 0, 0x744C);        // device_id
    set_field<uint32_t>(out, 4, 0);             // chip_rev
    set_field<uint32_t>(out, 8, 1);             // external_rev
    set_field<uint32_t>(out, 12, 0xC8);         // pci_rev
    set_field<uint32_t>(out, 16, 145);          // family: AMDGPU_FAMILY_GC_11_0_0
    set_field<uint32_t>(out, 20, 6);            // num_shader_engines
    set_field<uint32_t>(out, 28, 100000);       // gpu_counter_freq, kHz
    set_field<uint32_t>(out, 48, 96);           // cu_active_number
    set_field<uint64_t>(out, 144, 0x200000);    // virtual_address_offset
    set_field<uint64_t>(out, 152, 0x800000000000);  // virtual_address_max
    set_field<uint32_t>(out, 240, 32);          // wave_front_size
    set_field<uint32_t>(out, 248, 8);           // num_cu_per_sh
    return 0;
  };
  const AmdgpuDeviceInfo info = query_amdgpu_device_info(seam, kRenderFd);
  EXPECT_EQ(info.device_id, 0x744Cu);
  EXPECT_EQ(info.external_rev, 1u);
  EXPECT_EQ(info.pci_rev, 0xC8u);
  EXPECT_EQ(info.family, 145u);
  EXPECT_EQ(info.num_shader_engines, 6u);
  EXPECT_EQ(info.gpu_counter_freq_khz, 100000u);
  EXPECT_EQ(info.cu_active_number, 96u);
  EXPECT_EQ(info.virtual_address_offset, 0x200000u);
  EXPECT_EQ(info.virtual_address_max, 0x800000000000u);
  EXPECT_EQ(info.wave_front_size, 32u);
  EXPECT_EQ(info.num_cu_per_sh, 8u);
}

TEST(AmdgpuDrm, AShorterAnswerFromAnOlderKernelLeavesTheLaterFieldsZero) {
  FakeAmdSeam seam;
  seam.on_ioctl = [](int, unsigned long, void* arg) {
    auto* out = reinterpret_cast<unsigned char*>(field_at<uint64_t>(arg, 0));
    set_field<uint32_t>(out, 28, 25000);  // only the first 64 bytes written
    return 0;
  };
  const AmdgpuDeviceInfo info = query_amdgpu_device_info(seam, kRenderFd);
  EXPECT_EQ(info.gpu_counter_freq_khz, 25000u);
  EXPECT_EQ(info.wave_front_size, 0u);
  EXPECT_EQ(info.virtual_address_max, 0u);
}

TEST(AmdgpuDrm, FailureNamesTheIoctlTheQueryTheFdAndTheErrno) {
  FakeAmdSeam seam;
  seam.on_ioctl = [](int, unsigned long, void*) { return -EACCES; };
  EXPECT_EQ(error_of<std::runtime_error>([&] { query_amdgpu_device_info(seam, kRenderFd); }),
            "DRM_IOCTL_AMDGPU_INFO (0x40206445) query AMDGPU_INFO_DEV_INFO (0x16) of 368 bytes on render fd 11 "
            "failed: errno 13 (Permission denied)");
}

}  // namespace
}  // namespace doorbell::kernel_interface::amd
