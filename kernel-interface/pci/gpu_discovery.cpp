#include "kernel-interface/pci/gpu_discovery.h"

#include <algorithm>
#include <cstdio>

namespace doorbell::kernel_interface::pci {
namespace {

std::string hex4(std::uint16_t value) {
  char text[8];
  std::snprintf(text, sizeof text, "%04x", value);
  return text;
}

}  // namespace

std::vector<PciGpu> discover_pci_gpus(const PciSource& source) {
  std::vector<PciDevice> devices = source.read_devices(kDisplayControllerClass);
  for (PciDevice& device : source.read_devices(kProcessingAcceleratorClass)) {
    if (device.vendor_id == kVendorAmd || device.vendor_id == kVendorNvidia) devices.push_back(std::move(device));
  }
  std::sort(devices.begin(), devices.end(),
            [](const PciDevice& a, const PciDevice& b) { return a.address < b.address; });
  std::vector<PciGpu> gpus;
  for (PciDevice& device : devices) {
    const auto vendor = vendor_name(device.vendor_id);
    const auto product = find_known_product(device.vendor_id, device.device_id);
    gpus.push_back(PciGpu{std::move(device), vendor, product});
  }
  return gpus;
}

std::string gpu_display_name(const PciGpu& gpu) {
  if (!gpu.vendor) return "vendor " + hex4(gpu.device.vendor_id) + " device " + hex4(gpu.device.device_id);
  if (!gpu.product) return std::string(*gpu.vendor) + " device " + hex4(gpu.device.device_id);
  return std::string(*gpu.vendor) + " " + std::string(gpu.product->name);
}

}  // namespace doorbell::kernel_interface::pci
