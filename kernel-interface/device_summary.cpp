#include "kernel-interface/device_summary.h"

#include <cstdio>

namespace doorbell::kernel_interface {
namespace {

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string joined;
  for (const auto& part : parts) joined += (joined.empty() ? "" : separator) + part;
  return joined;
}

std::string count_of(size_t count, const std::string& singular) {
  return std::to_string(count) + " " + singular + (count == 1 ? "" : "s");
}

std::string describe_amd_gpu(const AmdGpuNode& gpu) {
  std::vector<std::string> details = {"node " + std::to_string(gpu.node)};
  if (gpu.simd_per_cu != 0) details.push_back(count_of(gpu.simd_count / gpu.simd_per_cu, "CU"));
  details.push_back("/dev/dri/renderD" + std::to_string(gpu.drm_render_minor));
  const std::string name = gpu.gfx_name.empty() ? "unknown gfx" : gpu.gfx_name;
  return name + " (" + join(details, ", ") + ")";
}

}  // namespace

std::string summarize_cpu(const CpuInfo& cpu) {
  std::string extensions = join(cpu.isa_extensions, " ");
  if (extensions.empty()) {
    std::vector<std::string> all(std::begin(kIsaExtensionsOfInterest), std::end(kIsaExtensionsOfInterest));
    extensions = "no " + join(all, "/");
  }
  return "CPU: " + count_of(static_cast<size_t>(cpu.logical_cores), "core") + ", " + cpu.model_name + ", " +
         extensions;
}

std::string summarize_nvidia(const NvidiaInfo& nvidia) {
  if (!nvidia.control_device_present) return "NV: none (/dev/nvidiactl absent)";
  if (nvidia.gpu_minors.empty()) return "NV: none (/dev/nvidiactl present, no /dev/nvidiaN)";
  std::vector<std::string> nodes;
  for (const int minor : nvidia.gpu_minors) nodes.push_back("/dev/nvidia" + std::to_string(minor));
  std::string line = "NV: " + count_of(nodes.size(), "GPU") + " (" + join(nodes, " ") + ")";
  if (nvidia.driver) {
    line += ", driver " + nvidia.driver->version +
            (nvidia.driver->open_kernel_module ? " (open kernel module)" : " (proprietary kernel module)");
  } else {
    line += ", driver version unknown (/proc/driver/nvidia/version absent)";
  }
  if (nvidia.emulated) line += ", emulated (MOCKGPU=1)";
  if (!nvidia.gpus_error.empty()) line += "; the driver's GPU list failed: " + nvidia.gpus_error;
  return line;
}

std::vector<std::string> summarize_nvidia_gpus(const NvidiaInfo& nvidia) {
  std::vector<std::string> lines;
  for (const NvidiaGpu& gpu : nvidia.gpus) {
    const std::string device = gpu.index == 0 ? "NV" : "NV:" + std::to_string(gpu.index);
    char text[160];
    std::snprintf(text, sizeof text, "  %s /dev/nvidia%d, PCI %04x:%02x:%02x.%x %04x:%04x, gpu_id 0x%x, %llu GiB",
                  device.c_str(), gpu.minor, gpu.pci_domain, gpu.pci_bus,
                  gpu.pci_slot, gpu.pci_function, gpu.pci_vendor_id, gpu.pci_device_id, gpu.gpu_id,
                  static_cast<unsigned long long>(gpu.fb_bytes >> 30));
    lines.push_back(text);
  }
  return lines;
}

std::string summarize_amd(const AmdInfo& amd) {
  const std::string emulated = amd.emulated ? ", emulated (MOCKGPU=1)" : "";
  if (!amd.gpus_error.empty()) return "AMD: the emulated KFD's topology could not be read: " + amd.gpus_error;
  if (!amd.kfd_present) return "AMD: none (/dev/kfd absent)";
  if (amd.gpus.empty()) return "AMD: none (/dev/kfd present, no GPU node in /sys/class/kfd/kfd/topology/nodes)" + emulated;
  std::vector<std::string> gpus;
  for (const auto& gpu : amd.gpus) gpus.push_back(describe_amd_gpu(gpu));
  return "AMD: " + count_of(gpus.size(), "GPU") + ": " + join(gpus, "; ") + emulated;
}

std::vector<std::string> summarize_devices(const Devices& devices) {
  std::vector<std::string> lines = {summarize_cpu(devices.cpu), summarize_nvidia(devices.nvidia)};
  for (std::string& gpu : summarize_nvidia_gpus(devices.nvidia)) lines.push_back(std::move(gpu));
  lines.push_back(summarize_amd(devices.amd));
  return lines;
}

}  // namespace doorbell::kernel_interface
