#pragma once
// Finds the compute devices present on this machine by reading /proc, /sys and /dev. Every path is taken relative
// to a filesystem root so tests can point the probe at a fake tree.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace doorbell::kernel_interface {

// ISA extensions that change which code the CPU backend may emit, in the order they are reported.
inline constexpr std::string_view kIsaExtensionsOfInterest[] = {"avx2", "avx512f", "fma"};

struct CpuInfo {
  int logical_cores = 0;
  std::string model_name;                   // "unknown" when /proc/cpuinfo names no model (e.g. some ARM kernels)
  std::vector<std::string> isa_extensions;  // the subset of kIsaExtensionsOfInterest this CPU has
};

struct NvidiaDriverVersion {
  std::string version;              // e.g. "580.159"
  bool open_kernel_module = false;  // the open-source kernel module rather than the proprietary one
};

// One GPU as the NVIDIA driver lists it (NV_ESC_CARD_INFO): the device NV:<index> opens it.
struct NvidiaGpu {
  int index = 0;                  // its place in the driver's list: NV, NV:1, ...
  int minor = 0;                  // /dev/nvidia<minor>
  std::uint32_t gpu_id = 0;
  std::uint32_t pci_domain = 0;
  std::uint8_t pci_bus = 0, pci_slot = 0, pci_function = 0;
  std::uint16_t pci_vendor_id = 0, pci_device_id = 0;
  std::uint64_t fb_bytes = 0;     // video memory
};

struct NvidiaInfo {
  bool control_device_present = false;  // /dev/nvidiactl
  std::vector<int> gpu_minors;          // N of each /dev/nvidiaN, ascending
  std::optional<NvidiaDriverVersion> driver;  // from /proc/driver/nvidia/version, when present
  // What the driver itself lists (probe_devices asks it through the "nvidia" seam), empty when it was not asked;
  // why asking failed, if it did.
  std::vector<NvidiaGpu> gpus;
  std::string gpus_error;
  bool emulated = false;  // the driver asked is mockgpu's (MOCKGPU=1)
};

struct AmdGpuNode {
  int node = 0;                         // index of the KFD topology node
  std::uint32_t gpu_id = 0;
  std::uint32_t gfx_target_version = 0;  // major*10000 + minor*100 + stepping, e.g. 110000
  std::string gfx_name;                 // e.g. "gfx1100"
  std::uint32_t simd_count = 0;
  std::uint32_t simd_per_cu = 0;
  std::uint32_t drm_render_minor = 0;   // /dev/dri/renderD<minor>
};

struct AmdInfo {
  bool kfd_present = false;        // /dev/kfd
  std::vector<AmdGpuNode> gpus;    // KFD topology nodes that are GPUs, by node index
  bool emulated = false;           // the topology was read from mockgpu's KFD (MOCKGPU=1)
  std::string gpus_error;          // why reading the emulated topology failed, if it did
};

struct Devices {
  CpuInfo cpu;
  NvidiaInfo nvidia;
  AmdInfo amd;
};

// Probes everything. Throws std::runtime_error naming the file and what was expected when a file that is present
// cannot be read or parsed; an absent device is not an error. On the real root ("/") it also asks the NVIDIA driver
// for its GPUs (probe_nvidia_driver): under MOCKGPU=1 the emulated one, whose GPUs replace what /dev shows.
Devices probe_devices(const std::filesystem::path& root = "/");
// `found` completed by the driver behind kernel-interface's "nvidia" seam (driver_seams.h): under MOCKGPU=1 with the
// emulator installed, the emulated machine's control device, nodes, version and GPUs; else, when /dev/nvidiactl is
// present, the kernel driver's GPU list (a failure is kept in gpus_error, not thrown).
NvidiaInfo probe_nvidia_driver(NvidiaInfo found);
// `found`, or under MOCKGPU=1 with the AMD emulator installed, the emulated machine's KFD topology read through the
// "amd" seam (its GPUs replace what /dev and /sys show; a failure is kept in gpus_error, not thrown).
AmdInfo probe_amd_driver(AmdInfo found);
CpuInfo probe_cpu(const std::filesystem::path& root = "/");
NvidiaInfo probe_nvidia(const std::filesystem::path& root = "/");
AmdInfo probe_amd(const std::filesystem::path& root = "/");

// Parsers of the files' text; `source` names the file in error messages.
CpuInfo parse_cpuinfo(std::string_view text, std::string_view source);
NvidiaDriverVersion parse_nvidia_version(std::string_view text, std::string_view source);
AmdGpuNode parse_kfd_node_properties(std::string_view text, std::string_view source);

// "gfx" + major (decimal) + minor and stepping (one hex digit each): 110000 -> "gfx1100", 90010 -> "gfx90a".
std::string gfx_name_from_target_version(std::uint32_t gfx_target_version);

}  // namespace doorbell::kernel_interface
