#pragma once
// GPU discovery on the PCI bus: every display controller (base class 0x03) and every NVIDIA or AMD processing
// accelerator (base class 0x12, e.g. an MI300X), whether or not a driver is bound, with the names doorbell knows for
// its vendor and device id. This is what `doorbell devices` lists and what a
// driverless path starts from.

#include <optional>
#include <string>
#include <vector>

#include "kernel-interface/pci/pci_device.h"
#include "kernel-interface/pci/pci_ids.h"
#include "kernel-interface/pci/pci_source.h"

namespace doorbell::kernel_interface::pci {

struct PciGpu {
  PciDevice device;
  std::optional<std::string_view> vendor;    // "NVIDIA", "AMD", "Intel"; nullopt for another vendor
  std::optional<KnownProduct> product;       // nullopt for an id not in pci_ids.cpp's table
};

// The GPUs the source finds, by ascending address. Other vendors' accelerators (class 0x12) are not GPUs.
std::vector<PciGpu> discover_pci_gpus(const PciSource& source);

// "NVIDIA H200 SXM 141GB", "NVIDIA device 2b85" (known vendor, unknown id), "vendor 1234 device 5678".
std::string gpu_display_name(const PciGpu& gpu);

}  // namespace doorbell::kernel_interface::pci
