#pragma once
// What discovery knows about one PCI function: its address, ids, class, BARs and how the kernel sees it (bound
// driver, NUMA node, IOMMU group). Filled by either PCI source (pci_source.h); a later driverless path starts here.

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernel-interface/pci/pci_address.h"

namespace doorbell::kernel_interface::pci {

// One base address register. A 64-bit BAR takes two of the six slots; it is reported at the lower index and the
// upper slot has no PciBar.
struct PciBar {
  int index = 0;               // 0..5
  std::uint64_t base = 0;      // CPU physical address; 0 when the kernel assigned none
  std::uint64_t size = 0;      // bytes
  bool is_io = false;          // an I/O port range rather than memory
  bool is_64bit = false;       // a 64-bit memory BAR
  bool is_prefetchable = false;
  bool operator==(const PciBar&) const = default;
};

struct PciDevice {
  PciAddress address;
  std::uint16_t vendor_id = 0;
  std::uint16_t device_id = 0;
  std::uint16_t subsystem_vendor_id = 0;
  std::uint16_t subsystem_device_id = 0;
  std::uint32_t class_code = 0;  // base class << 16 | subclass << 8 | programming interface, e.g. 0x030200
  std::uint8_t revision = 0;
  std::vector<PciBar> bars;      // ascending index, only the BARs the device has
  std::optional<std::string> driver;  // the bound kernel driver's name ("nvidia", "amdgpu", "vfio-pci"); none: unbound
  int numa_node = -1;                 // -1: the kernel reports none (single node, or firmware gave no affinity)
  std::optional<int> iommu_group;     // absent without an IOMMU
  bool operator==(const PciDevice&) const = default;
};

// PCI base class 0x03, display controller: VGA (0x0300), XGA (0x0301), 3D (0x0302, e.g. datacenter GPUs without a
// display engine) and other (0x0380). PCI Code and ID Assignment Specification, base class 03h.
inline constexpr std::uint8_t kDisplayControllerClass = 0x03;

// PCI base class 0x12, processing accelerator: AMD Instinct parts (MI300) may report it instead of 0x03; amdgpu binds
// vendor 0x1002 devices of class 0x1200 (Linux drivers/gpu/drm/amd/amdgpu/amdgpu_drv.c pciidlist, since 2023).
inline constexpr std::uint8_t kProcessingAcceleratorClass = 0x12;

inline std::uint8_t base_class(const PciDevice& device) { return static_cast<std::uint8_t>(device.class_code >> 16); }

}  // namespace doorbell::kernel_interface::pci
