#pragma once
// Reads PCI functions through libpciaccess (ids, class, revision, BARs) and completes each from its sysfs folder
// under /sys (bound driver, NUMA node, IOMMU group), which libpciaccess does not report. Built only where
// libpciaccess is installed (DOORBELL_HAVE_PCIACCESS); libpciaccess itself always reads /sys.

#include "kernel-interface/pci/pci_source.h"

namespace doorbell::kernel_interface::pci {

class PciaccessPciSource final : public PciSource {
 public:
  std::vector<PciDevice> read_devices(std::optional<std::uint8_t> base_class = std::nullopt) const override;
  std::string describe() const override;
};

}  // namespace doorbell::kernel_interface::pci
