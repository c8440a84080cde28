#pragma once
// A sysfs tree made in a temporary folder for PCI discovery tests, laid out as the kernel lays out /sys: each
// function's folder under devices/pci<domain>:<bus>/, linked from bus/pci/devices/<address>, with `driver` and
// `iommu_group` symlinks into bus/pci/drivers/ and kernel/iommu_groups/. Removed when the fixture goes.
//
// Devices:
//   0000:01:00.0  NVMe controller (144d:a80a, class 010802), bound to nvme: not a GPU
//   0000:18:00.0  NVIDIA H200 SXM (10de:2335, class 030200), bound to nvidia, NUMA node 1, IOMMU group 17; BAR0
//                 16 MiB, BAR1 256 GiB 64-bit prefetchable, BAR3 32 MiB 64-bit prefetchable
//   0000:3a:00.0  Habana Gaudi2 (1da3:1020, class 120000, an accelerator of another vendor): not a GPU
//   0000:c1:00.0  AMD MI300X (1002:74a1, class 120000), no driver, numa_node -1, no IOMMU group; BAR0 256 GiB
//                 64-bit prefetchable, BAR2 2 MiB 64-bit prefetchable, BAR4 256 B I/O, BAR5 512 KiB

#include <filesystem>
#include <ostream>
#include <string_view>

#include "kernel-interface/pci/pci_device.h"

namespace doorbell::kernel_interface::pci {
// GoogleTest prints a mismatching device field by field instead of as bytes.
void PrintTo(const PciBar& bar, std::ostream* out);
void PrintTo(const PciDevice& device, std::ostream* out);
}  // namespace doorbell::kernel_interface::pci

namespace doorbell::kernel_interface::pci::testing {

inline constexpr std::string_view kNvmeAddress = "0000:01:00.0";
inline constexpr std::string_view kH200Address = "0000:18:00.0";
inline constexpr std::string_view kGaudiAddress = "0000:3a:00.0";
inline constexpr std::string_view kMi300xAddress = "0000:c1:00.0";

class PciSysfsFixture {
 public:
  PciSysfsFixture();
  ~PciSysfsFixture();
  PciSysfsFixture(const PciSysfsFixture&) = delete;
  PciSysfsFixture& operator=(const PciSysfsFixture&) = delete;

  const std::filesystem::path& root() const { return root_; }  // stands for /sys
  std::filesystem::path device_folder(std::string_view address) const;
  // Overwrites (or creates) one attribute file of a device.
  void write(std::string_view address, std::string_view file, std::string_view text) const;
  void remove(std::string_view address, std::string_view file) const;
  // Takes the device off the bus (its bus/pci/devices link).
  void remove_device(std::string_view address) const;

 private:
  void add_device(std::string_view address, std::string_view vendor, std::string_view device,
                  std::string_view subsystem_vendor, std::string_view subsystem_device, std::string_view class_code,
                  std::string_view revision, std::string_view resource) const;
  void link(const std::filesystem::path& link, const std::filesystem::path& target) const;

  std::filesystem::path root_;
};

}  // namespace doorbell::kernel_interface::pci::testing
