#include "kernel-interface/device_summary.h"

#include <gtest/gtest.h>

namespace doorbell::kernel_interface {
namespace {

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
  EXPECT_EQ(summarize_nvidia({true, {}, std::nullopt}), "NV: none (/dev/nvidiactl present, no /dev/nvidiaN)");
}

TEST(SummarizeNvidia, ListsGpusAndDriver) {
  EXPECT_EQ(summarize_nvidia({true, {0, 1}, NvidiaDriverVersion{"580.159", true}}),
            "NV: 2 GPUs (/dev/nvidia0 /dev/nvidia1), driver 580.159 (open kernel module)");
  EXPECT_EQ(summarize_nvidia({true, {0}, std::nullopt}),
            "NV: 1 GPU (/dev/nvidia0), driver version unknown (/proc/driver/nvidia/version absent)");
}

TEST(SummarizeAmd, NamesTheAbsentKfdDevice) { EXPECT_EQ(summarize_amd({}), "AMD: none (/dev/kfd absent)"); }

TEST(SummarizeAmd, SaysWhenKfdHasNoGpu) {
  EXPECT_EQ(summarize_amd({true, {}}),
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
  EXPECT_EQ(summarize_amd({true, {gpu}}), "AMD: 1 GPU: gfx1100 (node 1, 96 CUs, /dev/dri/renderD128)");
}

TEST(SummarizeDevices, GivesOneLinePerKindOfDevice) {
  const Devices devices{{2, "AMD EPYC", {"avx2", "fma"}}, {}, {}};
  EXPECT_EQ(summarize_devices(devices),
            (std::vector<std::string>{"CPU: 2 cores, AMD EPYC, avx2 fma", "NV: none (/dev/nvidiactl absent)",
                                      "AMD: none (/dev/kfd absent)"}));
}

}  // namespace
}  // namespace doorbell::kernel_interface
