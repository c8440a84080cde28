#include "tests/kernel-interface/pci_sysfs_fixture.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

namespace doorbell::kernel_interface::pci {

void PrintTo(const PciBar& bar, std::ostream* out) {
  *out << "BAR" << bar.index << " base 0x" << std::hex << bar.base << " size 0x" << bar.size << std::dec
       << (bar.is_io ? " io" : " mem") << (bar.is_64bit ? " 64-bit" : "") << (bar.is_prefetchable ? " pref" : "");
}

void PrintTo(const PciDevice& device, std::ostream* out) {
  *out << to_string(device.address) << std::hex << " " << device.vendor_id << ":" << device.device_id << " sub "
       << device.subsystem_vendor_id << ":" << device.subsystem_device_id << " class " << device.class_code
       << " rev " << unsigned{device.revision} << std::dec << " [";
  for (const PciBar& bar : device.bars) {
    PrintTo(bar, out);
    *out << "; ";
  }
  *out << "] driver " << device.driver.value_or("none") << " numa " << device.numa_node << " iommu "
       << (device.iommu_group ? std::to_string(*device.iommu_group) : "none");
}

}  // namespace doorbell::kernel_interface::pci

namespace doorbell::kernel_interface::pci::testing {
namespace {

namespace fs = std::filesystem;

// `resource` as pci-sysfs.c resource_show writes it for a non-bridge: BARs 0-5, the ROM, then 6 SR-IOV BARs.
// Flags (include/linux/ioport.h): 0x40200 32-bit memory; 0x14220c 64-bit prefetchable memory (IORESOURCE_MEM_64 |
// SIZEALIGN | PREFETCH | MEM, and the BAR's own low bits 0xc); 0x40101 I/O.
constexpr std::string_view kZeroLine = "0x0000000000000000 0x0000000000000000 0x0000000000000000\n";

std::string zero_lines(int count) {
  std::string lines;
  for (int i = 0; i < count; ++i) lines += kZeroLine;
  return lines;
}

const std::string kH200Resource = std::string("0x00000000fb000000 0x00000000fbffffff 0x0000000000040200\n") +
                                  "0x0000220000000000 0x0000223fffffffff 0x000000000014220c\n" + std::string(kZeroLine) +
                                  "0x0000224000000000 0x0000224001ffffff 0x000000000014220c\n" + zero_lines(9);
const std::string kMi300xResource = std::string("0x0000300000000000 0x0000303fffffffff 0x000000000014220c\n") +
                                    std::string(kZeroLine) +
                                    "0x0000304000000000 0x00003040001fffff 0x000000000014220c\n" +
                                    std::string(kZeroLine) +
                                    "0x000000000000e000 0x000000000000e0ff 0x0000000000040101\n" +
                                    "0x00000000f6000000 0x00000000f607ffff 0x0000000000040200\n" + zero_lines(7);
const std::string kNvmeResource =
    std::string("0x00000000fa000000 0x00000000fa003fff 0x0000000000140204\n") + zero_lines(12);

void write_file(const fs::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("fixture: cannot write " + path.string());
}

}  // namespace

PciSysfsFixture::PciSysfsFixture() {
  std::string pattern = (fs::temp_directory_path() / "doorbell-pci-sysfs-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("fixture: mkdtemp failed for " + pattern);
  root_ = pattern;
  fs::create_directories(root_ / "bus/pci/devices");
  fs::create_directories(root_ / "bus/pci/drivers/nvidia");
  fs::create_directories(root_ / "bus/pci/drivers/nvme");
  fs::create_directories(root_ / "kernel/iommu_groups/17");
  fs::create_directories(root_ / "kernel/iommu_groups/3");

  add_device(kNvmeAddress, "0x144d", "0xa80a", "0x144d", "0xa801", "0x010802", "0x00", kNvmeResource);
  link(device_folder(kNvmeAddress) / "driver", "../../../bus/pci/drivers/nvme");
  link(device_folder(kNvmeAddress) / "iommu_group", "../../../kernel/iommu_groups/3");
  write(kNvmeAddress, "numa_node", "0\n");

  add_device(kH200Address, "0x10de", "0x2335", "0x10de", "0x18be", "0x030200", "0xa1", kH200Resource);
  link(device_folder(kH200Address) / "driver", "../../../bus/pci/drivers/nvidia");
  link(device_folder(kH200Address) / "iommu_group", "../../../kernel/iommu_groups/17");
  write(kH200Address, "numa_node", "1\n");

  add_device(kGaudiAddress, "0x1da3", "0x1020", "0x1da3", "0x1020", "0x120000", "0x01", kNvmeResource);
  write(kGaudiAddress, "numa_node", "0\n");

  add_device(kMi300xAddress, "0x1002", "0x74a1", "0x1002", "0x74a1", "0x120000", "0x00", kMi300xResource);
  write(kMi300xAddress, "numa_node", "-1\n");
}

PciSysfsFixture::~PciSysfsFixture() {
  std::error_code error;
  fs::remove_all(root_, error);
}

fs::path PciSysfsFixture::device_folder(std::string_view address) const {
  const std::string name(address);
  return root_ / "devices" / ("pci" + name.substr(0, 7)) / name;  // devices/pci0000:18/0000:18:00.0
}

void PciSysfsFixture::write(std::string_view address, std::string_view file, std::string_view text) const {
  write_file(device_folder(address) / file, text);
}

void PciSysfsFixture::remove(std::string_view address, std::string_view file) const {
  fs::remove(device_folder(address) / file);
}

void PciSysfsFixture::remove_device(std::string_view address) const {
  fs::remove(root_ / "bus/pci/devices" / address);
}

void PciSysfsFixture::add_device(std::string_view address, std::string_view vendor, std::string_view device,
                                 std::string_view subsystem_vendor, std::string_view subsystem_device,
                                 std::string_view class_code, std::string_view revision,
                                 std::string_view resource) const {
  const fs::path folder = device_folder(address);
  fs::create_directories(folder);
  const auto line = [](std::string_view value) { return std::string(value) + "\n"; };
  write(address, "vendor", line(vendor));
  write(address, "device", line(device));
  write(address, "subsystem_vendor", line(subsystem_vendor));
  write(address, "subsystem_device", line(subsystem_device));
  write(address, "class", line(class_code));
  write(address, "revision", line(revision));
  write(address, "resource", resource);
  // bus/pci/devices/<address> -> ../../../devices/pci<domain:bus>/<address>, as on a live system.
  link(root_ / "bus/pci/devices" / address, fs::path("../../..") / fs::relative(folder, root_));
}

void PciSysfsFixture::link(const fs::path& link, const fs::path& target) const {
  fs::create_symlink(target, link);
}

}  // namespace doorbell::kernel_interface::pci::testing
