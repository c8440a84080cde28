#pragma once
// Reads PCI functions from sysfs: <root>/bus/pci/devices/<address>/{vendor, device, subsystem_vendor,
// subsystem_device, class, revision, resource, driver, numa_node, iommu_group}, the attributes the kernel writes in
// drivers/pci/pci-sysfs.c. The root is /sys on a live system, or a folder laid out the same way.

#include <filesystem>
#include <string_view>
#include <vector>

#include "kernel-interface/pci/pci_source.h"

namespace doorbell::kernel_interface::pci {

class SysfsPciSource final : public PciSource {
 public:
  explicit SysfsPciSource(std::filesystem::path sysfs_root = "/sys");
  std::vector<PciDevice> read_devices(std::optional<std::uint8_t> base_class = std::nullopt) const override;
  std::string describe() const override;

 private:
  std::filesystem::path sysfs_root_;
};

// What only the kernel knows about a device, from its sysfs folder: the bound driver (the name the `driver` symlink
// points at), numa_node (-1 when absent or "-1") and the IOMMU group (the `iommu_group` symlink's number).
struct KernelView {
  std::optional<std::string> driver;
  int numa_node = -1;
  std::optional<int> iommu_group;
};
KernelView read_kernel_view(const std::filesystem::path& device_folder);

// One device folder, all fields. Throws std::runtime_error naming the file and the expected form.
PciDevice read_sysfs_pci_device(const std::filesystem::path& device_folder);

// The `resource` file: one "start end flags" line of hex per resource, BARs 0-5 first (pci-sysfs.c resource_show).
// A line of zeros is no BAR (absent, or the upper half of a 64-bit BAR). `source` names the file in errors.
std::vector<PciBar> parse_sysfs_resource(std::string_view text, std::string_view source);

}  // namespace doorbell::kernel_interface::pci
