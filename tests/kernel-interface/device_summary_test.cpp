#include "kernel-interface/device_summary.h"

#include <gtest/gtest.h>

namespace doorbell::kernel_interface {
namespace {

NvidiaInfo nvidia_info(bool control_device_present, std::vector<int> gpu_minors, std::optional<NvidiaDriverVersion> driver) {
  NvidiaInfo info;
  info.control_device_present = control_device_present;
  info.gpu_minors = std::move(gpu_minors);
  info.driver = std::move(driver);
  return info;
}

TEST(SummarizeCpu, ListsCoresModelAndExtensions) {
  EXPECT_EQ(summarize_cpu({2, "AMD EPYC", {"avx2", "fma"}}), "CPU: 2 cores, AMD EPYC, avx2 fma");
}

TEST(SummarizeCpu, SaysWhichExtensionsAreMissing) {
  EXPECT_EQ(summarize_cpu({1, "unknown", {}}), "CPU: 1 core, unknown, no avx2/avx512f/fma");
}

TEST(SummarizeNvidia, NamesTheAbsentControlDevice) {
  EXPECT_EQ(summarize_nvidia({}), "NV: none (/dev/nvidiactl absent)");
}

TEST(SummarizeNvidia, SaysWhenTheControlDeviceHasNoGpu) {
  EXPECT_EQ(summarize_nvidia(nvidia_info(true, {}, std::nullopt)), "NV: none (/dev/nvidiactl present, no /dev/nvidiaN)");
}

TEST(SummarizeNvidia, ListsGpusAndDriver) {
  EXPECT_EQ(summarize_nvidia(nvidia_info(true, {0, 1}, NvidiaDriverVersion{"580.159", true})),
            "NV: 2 GPUs (/dev/nvidia0 /dev/nvidia1), driver 580.159 (open kernel module)");
  EXPECT_EQ(summarize_nvidia(nvidia_info(true, {0}, std::nullopt)),
            "NV: 1 GPU (/dev/nvidia0), driver version unknown (/proc/driver/nvidia/version absent)");
}

TEST(SummarizeAmd, NamesTheAbsentKfdDevice) { EXPECT_EQ(summarize_amd({}), "AMD: none (/dev/kfd absent)"); }

TEST(SummarizeAmd, SaysWhenKfdHasNoGpu) {
  AmdInfo amd;
  amd.kfd_present = true;
  EXPECT_EQ(summarize_amd(amd),
            "AMD: none (/dev/kfd present, no GPU node in /sys/class/kfd/kfd/topology/nodes)");
}

TEST(SummarizeAmd, ListsEachGpu) {
  const AmdGpuNode gpu{.node = 1,
                       .gpu_id = 48326,
                       .gfx_target_version = 110000,
                       .gfx_name = "gfx1100",
                       .simd_count = 192,
                       .simd_per_cu = 2,
                       .drm_render_minor = 128};
  AmdInfo amd;
  amd.kfd_present = true;
  amd.gpus = {gpu};
  EXPECT_EQ(summarize_amd(amd), "AMD: 1 GPU: gfx1100 (node 1, 96 CUs, /dev/dri/renderD128)");
}

TEST(SummarizeDevices, GivesOneLinePerKindOfDevice) {
  const Devices devices{{2, "AMD EPYC", {"avx2", "fma"}}, {}, {}};
  EXPECT_EQ(summarize_devices(devices),
            (std::vector<std::string>{"CPU: 2 cores, AMD EPYC, avx2 fma", "NV: none (/dev/nvidiactl absent)",
                                      "AMD: none (/dev/kfd absent)"}));
}

// The GPUs the driver listed (NV_ESC_CARD_INFO) get a line each, named as devices open them (NV, NV:1).
TEST(SummarizeDevices, ListsEachGpuTheNvidiaDriverReportsUnderItsDeviceName) {
  NvidiaInfo nvidia = nvidia_info(true, {0, 1}, NvidiaDriverVersion{"580.159", true});
  nvidia.emulated = true;
  nvidia.gpus = {{.index = 0, .minor = 0, .gpu_id = 0x100, .pci_bus = 1, .pci_vendor_id = 0x10de, .pci_device_id = 0x2335,
                  .fb_bytes = 141ull << 30},
                 {.index = 1, .minor = 1, .gpu_id = 0x200, .pci_bus = 2, .pci_vendor_id = 0x10de, .pci_device_id = 0x2335,
                  .fb_bytes = 141ull << 30}};
  const Devices devices{{2, "AMD EPYC", {"avx2", "fma"}}, nvidia, {}};
  EXPECT_EQ(summarize_devices(devices),
            (std::vector<std::string>{
                "CPU: 2 cores, AMD EPYC, avx2 fma",
                "NV: 2 GPUs (/dev/nvidia0 /dev/nvidia1), driver 580.159 (open kernel module), emulated (MOCKGPU=1)",
                "  NV /dev/nvidia0, PCI 0000:01:00.0 10de:2335, gpu_id 0x100, 141 GiB",
                "  NV:1 /dev/nvidia1, PCI 0000:02:00.0 10de:2335, gpu_id 0x200, 141 GiB", "AMD: none (/dev/kfd absent)"}));
}

TEST(SummarizeNvidia, SaysWhenTheDriversGpuListFailed) {
  NvidiaInfo nvidia = nvidia_info(true, {0}, NvidiaDriverVersion{"580.159", true});
  nvidia.gpus_error = "open of /dev/nvidiactl failed";
  EXPECT_EQ(summarize_nvidia(nvidia), "NV: 1 GPU (/dev/nvidia0), driver 580.159 (open kernel module); the driver's GPU list failed: open of /dev/nvidiactl failed");
}

}  // namespace
}  // namespace doorbell::kernel_interface
