#pragma once
// Where PCI devices are read from. Two sources give the same PciDevice records: libpciaccess (ids and BARs; where
// it is installed, DOORBELL_HAVE_PCIACCESS) completed from sysfs, and sysfs alone under any root (a GPU machine
// without libpciaccess, and tests on a fixture tree).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernel-interface/pci/pci_device.h"

namespace doorbell::kernel_interface::pci {

class PciSource {
 public:
  virtual ~PciSource() = default;
  // Every PCI function (or those of one base class, e.g. kDisplayControllerClass), by ascending address. No PCI bus
  // (no <sysfs>/bus/pci/devices) gives none. Throws std::runtime_error naming the file or call that failed and what
  // was expected.
  virtual std::vector<PciDevice> read_devices(std::optional<std::uint8_t> base_class = std::nullopt) const = 0;
  // Names the source for people, e.g. "libpciaccess + /sys" or "sysfs /tmp/fixture".
  virtual std::string describe() const = 0;
};

// The environment variable that points discovery at another sysfs root (a folder laid out like /sys), read by
// default_pci_source; `doorbell devices` honours it, so its output can be checked on a fixture tree.
inline constexpr const char* kSysfsRootVariable = "DOORBELL_SYSFS_ROOT";

// Whether this build has the libpciaccess source (configure option DOORBELL_WITH_PCIACCESS).
bool pciaccess_available();

// DOORBELL_SYSFS_ROOT set and not empty: the sysfs source under that root. Otherwise libpciaccess where this build
// has it, else the sysfs source under /sys.
std::unique_ptr<PciSource> default_pci_source();

}  // namespace doorbell::kernel_interface::pci
