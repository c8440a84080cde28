#include "kernel-interface/pci/pci_source.h"

#include <cstdlib>

#include "kernel-interface/pci/sysfs_pci_source.h"
#if DOORBELL_HAVE_PCIACCESS
#include "kernel-interface/pci/pciaccess_pci_source.h"
#endif

namespace doorbell::kernel_interface::pci {

bool pciaccess_available() { return DOORBELL_HAVE_PCIACCESS != 0; }

std::unique_ptr<PciSource> default_pci_source() {
  if (const char* root = std::getenv(kSysfsRootVariable); root != nullptr && *root != '\0') {
    return std::make_unique<SysfsPciSource>(root);
  }
#if DOORBELL_HAVE_PCIACCESS
  return std::make_unique<PciaccessPciSource>();
#else
  return std::make_unique<SysfsPciSource>("/sys");
#endif
}

}  // namespace doorbell::kernel_interface::pci
