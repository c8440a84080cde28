#include "kernel-interface/pci/pciaccess_pci_source.h"

#include <pciaccess.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <system_error>

#include "kernel-interface/pci/sysfs_pci_source.h"

namespace doorbell::kernel_interface::pci {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSysfsDevices = "/sys/bus/pci/devices";

// libpciaccess keeps one process-wide device list (pci_system_init / pci_system_cleanup), so one reader at a time.
std::mutex& pciaccess_mutex() {
  static std::mutex mutex;
  return mutex;
}

struct SystemSession {
  SystemSession() {
    if (const int error = pci_system_init(); error != 0) {
      throw std::runtime_error(std::string("libpciaccess: pci_system_init failed (") + std::strerror(error) +
                               "); expected to list " + kSysfsDevices);
    }
  }
  ~SystemSession() { pci_system_cleanup(); }
  SystemSession(const SystemSession&) = delete;
  SystemSession& operator=(const SystemSession&) = delete;
};

struct MatchIterator {
  explicit MatchIterator(const pci_id_match& match) : iterator(pci_id_match_iterator_create(&match)) {
    if (iterator == nullptr) throw std::runtime_error("libpciaccess: pci_id_match_iterator_create returned null");
  }
  ~MatchIterator() { pci_iterator_destroy(iterator); }
  MatchIterator(const MatchIterator&) = delete;
  MatchIterator& operator=(const MatchIterator&) = delete;
  pci_device_iterator* iterator;
};

PciDevice to_pci_device(pci_device& raw) {
  PciDevice device;
  device.address = PciAddress{raw.domain, raw.bus, raw.dev, raw.func};
  // pci_device_probe reads the BARs (on Linux from the same sysfs `resource` file); ids come from config space.
  if (const int error = pci_device_probe(&raw); error != 0) {
    throw std::runtime_error("libpciaccess: pci_device_probe(" + to_string(device.address) + ") failed (" +
                             std::strerror(error) + "); expected its config space and resource file to be readable");
  }
  device.vendor_id = raw.vendor_id;
  device.device_id = raw.device_id;
  device.subsystem_vendor_id = raw.subvendor_id;
  device.subsystem_device_id = raw.subdevice_id;
  device.class_code = raw.device_class;
  device.revision = raw.revision;
  for (int index = 0; index < 6; ++index) {
    const pci_mem_region& region = raw.regions[index];
    if (region.size == 0) continue;  // libpciaccess leaves unassigned BARs and 64-bit upper halves empty
    device.bars.push_back(PciBar{.index = index,
                                 .base = region.base_addr,
                                 .size = region.size,
                                 .is_io = region.is_IO != 0,
                                 .is_64bit = region.is_64 != 0,
                                 .is_prefetchable = region.is_prefetchable != 0});
  }
  KernelView view = read_kernel_view(fs::path(kSysfsDevices) / to_string(device.address));
  device.driver = std::move(view.driver);
  device.numa_node = view.numa_node;
  device.iommu_group = view.iommu_group;
  return device;
}

}  // namespace

std::vector<PciDevice> PciaccessPciSource::read_devices(std::optional<std::uint8_t> base_class) const {
  std::error_code error;
  if (!fs::exists(kSysfsDevices, error)) return {};  // no PCI bus (e.g. a container without /sys/bus/pci)
  std::lock_guard lock(pciaccess_mutex());
  SystemSession session;
  pci_id_match match{};
  match.vendor_id = match.device_id = match.subvendor_id = match.subdevice_id = PCI_MATCH_ANY;
  if (base_class) {
    match.device_class = static_cast<std::uint32_t>(*base_class) << 16;
    match.device_class_mask = 0xff0000;
  }
  MatchIterator devices(match);
  std::vector<PciDevice> found;
  while (pci_device* raw = pci_device_next(devices.iterator)) found.push_back(to_pci_device(*raw));
  std::sort(found.begin(), found.end(),
            [](const PciDevice& a, const PciDevice& b) { return a.address < b.address; });
  return found;
}

std::string PciaccessPciSource::describe() const { return "libpciaccess + /sys"; }

}  // namespace doorbell::kernel_interface::pci
