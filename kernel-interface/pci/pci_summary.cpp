#include "kernel-interface/pci/pci_summary.h"

#include <cstdio>

namespace doorbell::kernel_interface::pci {
namespace {

std::string hex(unsigned value, int digits) {
  char text[16];
  std::snprintf(text, sizeof text, "%0*x", digits, value);
  return text;
}

std::string describe_gpu(const PciGpu& gpu) {
  const PciDevice& d = gpu.device;
  std::string line = "  " + to_string(d.address) + " " + gpu_display_name(gpu) + " [" + hex(d.vendor_id, 4) + ":" +
                     hex(d.device_id, 4) + " subsystem " + hex(d.subsystem_vendor_id, 4) + ":" +
                     hex(d.subsystem_device_id, 4) + " class " + hex(d.class_code, 6) + " rev " +
                     hex(d.revision, 2) + "]";
  for (const PciBar& bar : d.bars) line += ", " + describe_bar(bar);
  if (d.bars.empty()) line += ", no BARs";
  line += ", driver " + d.driver.value_or("none");
  line += ", NUMA node " + (d.numa_node < 0 ? std::string("none") : std::to_string(d.numa_node));
  if (d.iommu_group) line += ", IOMMU group " + std::to_string(*d.iommu_group);
  return line;
}

}  // namespace

std::string format_bar_size(std::uint64_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int unit = 0;
  while (bytes != 0 && bytes % 1024 == 0 && unit + 1 < static_cast<int>(std::size(kUnits))) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + " " + kUnits[unit];
}

std::string describe_bar(const PciBar& bar) {
  std::string text = "BAR" + std::to_string(bar.index) + " " + format_bar_size(bar.size);
  if (bar.is_io) return text + " I/O";
  if (bar.is_64bit) text += " 64-bit";
  if (bar.is_prefetchable) text += " prefetchable";
  return text;
}

std::vector<std::string> summarize_pci_gpus(const std::vector<PciGpu>& gpus, std::string_view source) {
  if (gpus.empty()) return {"PCI: no GPU (no display controller or NVIDIA/AMD accelerator, via " + std::string(source) + ")"};
  std::vector<std::string> lines = {"PCI: " + std::to_string(gpus.size()) + (gpus.size() == 1 ? " GPU" : " GPUs") +
                                    " (via " + std::string(source) + ")"};
  for (const PciGpu& gpu : gpus) lines.push_back(describe_gpu(gpu));
  return lines;
}

}  // namespace doorbell::kernel_interface::pci
