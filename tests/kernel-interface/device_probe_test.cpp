#include "kernel-interface/device_probe.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "tests/common/temp_tree.h"

namespace doorbell::kernel_interface {
namespace {

using doorbell::testing::TempTree;

// Two logical CPUs in the kernel's x86 format (fields trimmed to those the probe reads plus neighbours).
constexpr std::string_view kX86Cpuinfo =
    "processor\t: 0\n"
    "vendor_id\t: AuthenticAMD\n"
    "model name\t: AMD EPYC 7B13\n"
    "flags\t\t: fpu sse sse2 avx fma avx2 bmi2\n"
    "\n"
    "processor\t: 1\n"
    "vendor_id\t: AuthenticAMD\n"
    "model name\t: AMD EPYC 7B13\n"
    "flags\t\t: fpu sse sse2 avx fma avx2 bmi2\n"
    "\n";

constexpr std::string_view kAvx512Cpuinfo =
    "processor\t: 0\n"
    "model name\t: Intel(R) Xeon(R) Platinum 8480+\n"
    "flags\t\t: fpu avx512f avx2 avx512bw fma\n";

// aarch64 kernels name no model and list "Features" instead of "flags".
constexpr std::string_view kArmCpuinfo =
    "processor\t: 0\n"
    "BogoMIPS\t: 50.00\n"
    "Features\t: fp asimd evtstrm aes\n"
    "CPU implementer\t: 0x41\n";

constexpr std::string_view kOpenModuleVersion =
    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159  Release Build  "
    "(dvs-builder@U22-I3-AE18-23-3)  Mon Dec  8 13:05:00 UTC 2025\n"
    "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n";

constexpr std::string_view kProprietaryModuleVersion =
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n"
    "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n";

// A gfx1100 (RX 7900 XTX) node in the KFD topology's "key value" format, keys in the kernel's order.
constexpr std::string_view kGfx1100Properties =
    "cpu_cores_count 0\n"
    "simd_count 192\n"
    "mem_banks_count 1\n"
    "caches_count 206\n"
    "io_links_count 1\n"
    "p2p_links_count 0\n"
    "cpu_core_id_base 0\n"
    "simd_id_base 2147487744\n"
    "max_waves_per_simd 16\n"
    "lds_size_in_kb 64\n"
    "gds_size_in_kb 0\n"
    "num_gws 64\n"
    "wave_front_size 32\n"
    "array_count 12\n"
    "simd_arrays_per_engine 2\n"
    "cu_per_simd_array 8\n"
    "simd_per_cu 2\n"
    "max_slots_scratch_cu 32\n"
    "gfx_target_version 110000\n"
    "vendor_id 4098\n"
    "device_id 29772\n"
    "location_id 768\n"
    "domain 0\n"
    "drm_render_minor 128\n"
    "hive_id 0\n"
    "num_sdma_engines 2\n"
    "num_sdma_xgmi_engines 0\n"
    "num_sdma_queues_per_engine 6\n"
    "num_cp_queues 8\n"
    "max_engine_clk_fcompute 2482\n"
    "local_mem_size 0\n"
    "fw_version 2200\n"
    "capability 671588992\n"
    "debug_prop 1495\n"
    "sdma_fw_version 20\n"
    "unique_id 12345678901234567890\n"
    "num_xcc 1\n"
    "max_engine_clk_ccompute 5300\n";

constexpr std::string_view kCpuNodeProperties =
    "cpu_cores_count 2\n"
    "simd_count 0\n"
    "gfx_target_version 0\n"
    "drm_render_minor 0\n";

template <typename Function>
std::string error_message_of(Function&& function) {
  try {
    function();
  } catch (const std::exception& error) {
    return error.what();
  }
  return "(no exception)";
}

TEST(ParseCpuinfo, CountsProcessorsAndReadsModelAndExtensions) {
  const CpuInfo cpu = parse_cpuinfo(kX86Cpuinfo, "/proc/cpuinfo");
  EXPECT_EQ(cpu.logical_cores, 2);
  EXPECT_EQ(cpu.model_name, "AMD EPYC 7B13");
  EXPECT_EQ(cpu.isa_extensions, (std::vector<std::string>{"avx2", "fma"}));
}

TEST(ParseCpuinfo, ReportsExtensionsInTheFixedOrder) {
  const CpuInfo cpu = parse_cpuinfo(kAvx512Cpuinfo, "/proc/cpuinfo");
  EXPECT_EQ(cpu.logical_cores, 1);
  EXPECT_EQ(cpu.model_name, "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(cpu.isa_extensions, (std::vector<std::string>{"avx2", "avx512f", "fma"}));
}

TEST(ParseCpuinfo, AcceptsACpuinfoWithoutModelName) {
  const CpuInfo cpu = parse_cpuinfo(kArmCpuinfo, "/proc/cpuinfo");
  EXPECT_EQ(cpu.logical_cores, 1);
  EXPECT_EQ(cpu.model_name, "unknown");
  EXPECT_TRUE(cpu.isa_extensions.empty());
}

TEST(ParseCpuinfo, RejectsTextWithoutProcessors) {
  EXPECT_EQ(error_message_of([] { parse_cpuinfo("model name : x\n", "/fake/cpuinfo"); }),
            "/fake/cpuinfo: no 'processor' line; expected one per logical CPU");
}

TEST(ParseNvidiaVersion, ReadsTheOpenKernelModuleVersion) {
  const NvidiaDriverVersion driver = parse_nvidia_version(kOpenModuleVersion, "version");
  EXPECT_EQ(driver.version, "580.159");
  EXPECT_TRUE(driver.open_kernel_module);
}

TEST(ParseNvidiaVersion, ReadsTheProprietaryKernelModuleVersion) {
  const NvidiaDriverVersion driver = parse_nvidia_version(kProprietaryModuleVersion, "version");
  EXPECT_EQ(driver.version, "550.54.15");
  EXPECT_FALSE(driver.open_kernel_module);
}

TEST(ParseNvidiaVersion, RejectsAFileWithoutTheNvrmLine) {
  EXPECT_EQ(error_message_of([] { parse_nvidia_version("GCC version: 12\n", "/fake/version"); }),
            "/fake/version: no line starting with 'NVRM version:'");
}

TEST(ParseNvidiaVersion, RejectsAnNvrmLineWithoutAVersion) {
  EXPECT_TRUE(error_message_of([] { parse_nvidia_version("NVRM version: NVIDIA UNIX x86_64\n", "/fake/version"); })
                  .starts_with("/fake/version: 'NVRM version:' line has no version number"));
}

TEST(ParseKfdNodeProperties, ReadsAGfx1100Node) {
  const AmdGpuNode node = parse_kfd_node_properties(kGfx1100Properties, "properties");
  EXPECT_EQ(node.gfx_target_version, 110000u);
  EXPECT_EQ(node.gfx_name, "gfx1100");
  EXPECT_EQ(node.simd_count, 192u);
  EXPECT_EQ(node.simd_per_cu, 2u);
  EXPECT_EQ(node.drm_render_minor, 128u);
}

TEST(ParseKfdNodeProperties, RejectsAMalformedLine) {
  EXPECT_EQ(error_message_of([] { parse_kfd_node_properties("simd_count 192\ngfx_target_version x\n", "/p"); }),
            "/p: line 2 is 'gfx_target_version x'; expected '<key> <unsigned decimal>'");
}

TEST(ParseKfdNodeProperties, RejectsANodeWithoutTargetVersion) {
  EXPECT_EQ(error_message_of([] { parse_kfd_node_properties("simd_count 192\n", "/p"); }),
            "/p: no 'gfx_target_version' property; expected one on every KFD node");
}

TEST(ParseKfdNodeProperties, RejectsAValueTooLargeForItsField) {
  EXPECT_EQ(error_message_of([] { parse_kfd_node_properties("gfx_target_version 4294967296\n", "/p"); }),
            "/p: property 'gfx_target_version' is 4294967296; expected a value that fits in 32 bits");
}

TEST(GfxName, FormatsMinorAndSteppingAsHexDigits) {
  EXPECT_EQ(gfx_name_from_target_version(110000), "gfx1100");
  EXPECT_EQ(gfx_name_from_target_version(90402), "gfx942");
  EXPECT_EQ(gfx_name_from_target_version(90010), "gfx90a");
  EXPECT_EQ(gfx_name_from_target_version(120001), "gfx1201");
}

TEST(GfxName, RejectsAVersionWhoseDigitsDoNotFitTheName) {
  EXPECT_TRUE(error_message_of([] { gfx_name_from_target_version(91600); })
                  .starts_with("gfx_target_version 91600: expected major*10000 + minor*100 + stepping"));
}

TEST(ProbeDevices, FindsEveryDeviceInAFakeTree) {
  TempTree tree;
  tree.write("proc/cpuinfo", kX86Cpuinfo);
  for (const char* node : {"nvidiactl", "nvidia0", "nvidia1", "nvidia-uvm", "nvidia-modeset"}) {
    tree.write(std::string("dev/") + node, "");
  }
  tree.write("proc/driver/nvidia/version", kOpenModuleVersion);
  tree.write("dev/kfd", "");
  tree.write("sys/class/kfd/kfd/topology/nodes/0/gpu_id", "0\n");
  tree.write("sys/class/kfd/kfd/topology/nodes/0/properties", kCpuNodeProperties);
  tree.write("sys/class/kfd/kfd/topology/nodes/1/gpu_id", "48326\n");
  tree.write("sys/class/kfd/kfd/topology/nodes/1/properties", kGfx1100Properties);

  const Devices devices = probe_devices(tree.root());

  EXPECT_EQ(devices.cpu.logical_cores, 2);
  EXPECT_TRUE(devices.nvidia.control_device_present);
  EXPECT_EQ(devices.nvidia.gpu_minors, (std::vector<int>{0, 1}));
  ASSERT_TRUE(devices.nvidia.driver.has_value());
  EXPECT_EQ(devices.nvidia.driver->version, "580.159");
  EXPECT_TRUE(devices.amd.kfd_present);
  ASSERT_EQ(devices.amd.gpus.size(), 1u);
  EXPECT_EQ(devices.amd.gpus[0].node, 1);
  EXPECT_EQ(devices.amd.gpus[0].gpu_id, 48326u);
  EXPECT_EQ(devices.amd.gpus[0].gfx_target_version, 110000u);
  EXPECT_EQ(devices.amd.gpus[0].gfx_name, "gfx1100");
}

TEST(ProbeDevices, FindsNoGpuInATreeWithOnlyACpu) {
  TempTree tree;
  tree.write("proc/cpuinfo", kArmCpuinfo);
  const Devices devices = probe_devices(tree.root());
  EXPECT_FALSE(devices.nvidia.control_device_present);
  EXPECT_TRUE(devices.nvidia.gpu_minors.empty());
  EXPECT_FALSE(devices.nvidia.driver.has_value());
  EXPECT_FALSE(devices.amd.kfd_present);
  EXPECT_TRUE(devices.amd.gpus.empty());
}

TEST(ProbeDevices, TreatsANodeWithoutGpuIdFileByItsTargetVersion) {
  TempTree tree;
  tree.write("sys/class/kfd/kfd/topology/nodes/0/properties", kCpuNodeProperties);
  tree.write("sys/class/kfd/kfd/topology/nodes/2/properties", kGfx1100Properties);
  const AmdInfo amd = probe_amd(tree.root());
  ASSERT_EQ(amd.gpus.size(), 1u);
  EXPECT_EQ(amd.gpus[0].node, 2);
}

TEST(ProbeDevices, NamesTheMissingCpuinfo) {
  TempTree tree;
  EXPECT_EQ(error_message_of([&] { probe_cpu(tree.root()); }),
            (tree.root() / "proc/cpuinfo").string() + ": absent; expected the kernel's description of the CPUs");
}

TEST(ProbeDevices, NamesTheKfdNodeWhosePropertiesAreMissing) {
  TempTree tree;
  tree.write("sys/class/kfd/kfd/topology/nodes/3/gpu_id", "7\n");
  EXPECT_EQ(error_message_of([&] { probe_amd(tree.root()); }),
            (tree.root() / "sys/class/kfd/kfd/topology/nodes/3/properties").string() +
                ": absent; expected the KFD node's properties");
}

TEST(ProbeDevices, NamesTheNvidiaVersionFileItCannotParse) {
  TempTree tree;
  tree.write("proc/driver/nvidia/version", "garbage\n");
  EXPECT_EQ(error_message_of([&] { probe_nvidia(tree.root()); }),
            (tree.root() / "proc/driver/nvidia/version").string() + ": no line starting with 'NVRM version:'");
}

}  // namespace
}  // namespace doorbell::kernel_interface
