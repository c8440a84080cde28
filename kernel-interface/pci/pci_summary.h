#pragma once
// The lines `doorbell devices` prints for the GPUs found on the PCI bus (gpu_discovery.h).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernel-interface/pci/gpu_discovery.h"

namespace doorbell::kernel_interface::pci {

// "PCI: 2 GPUs (via sysfs /sys)" then one indented line per GPU:
// "  0000:18:00.0 NVIDIA H200 SXM 141GB [10de:2335 subsystem 10de:18be class 030200 rev a1], BAR0 16 MiB,
//  BAR1 256 GiB 64-bit prefetchable, driver nvidia, NUMA node 1, IOMMU group 17" (one line).
// No GPU: the single line "PCI: no GPU (no display controller or NVIDIA/AMD accelerator, via <source>)".
std::vector<std::string> summarize_pci_gpus(const std::vector<PciGpu>& gpus, std::string_view source);

// A BAR size in the largest binary unit that divides it: "16 MiB", "256 GiB", "128 B".
std::string format_bar_size(std::uint64_t bytes);

std::string describe_bar(const PciBar& bar);  // "BAR1 256 GiB 64-bit prefetchable", "BAR5 128 B I/O"

}  // namespace doorbell::kernel_interface::pci
