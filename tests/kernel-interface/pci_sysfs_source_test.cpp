// The sysfs PCI source on a fixture tree (pci_sysfs_fixture.h): every field of each device, what is skipped, and
// the errors that name the file and what was expected.

#include "kernel-interface/pci/sysfs_pci_source.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "tests/kernel-interface/pci_sysfs_fixture.h"

namespace doorbell::kernel_interface::pci {
namespace {

using testing::PciSysfsFixture;

constexpr std::uint64_t kGiB = 1ull << 30;
constexpr std::uint64_t kMiB = 1ull << 20;

enum BarKind { kMemory32, kMemory64Prefetchable, kIo };

PciBar bar(int index, std::uint64_t base, std::uint64_t size, BarKind kind) {
  return PciBar{.index = index,
                .base = base,
                .size = size,
                .is_io = kind == kIo,
                .is_64bit = kind == kMemory64Prefetchable,
                .is_prefetchable = kind == kMemory64Prefetchable};
}

// The message of the std::runtime_error that `read` throws, or a failure when it throws none.
template <typename Read>
std::string error_of(Read read) {
  try {
    read();
  } catch (const std::runtime_error& error) {
    return error.what();
  }
  ADD_FAILURE() << "expected a std::runtime_error";
  return "";
}

TEST(SysfsPciSource, ReadsEveryFieldOfAnH200BoundToNvidia) {
  PciSysfsFixture fixture;
  const PciDevice h200 = read_sysfs_pci_device(fixture.root() / "bus/pci/devices" / testing::kH200Address);
  const PciDevice expected{
      .address = {0, 0x18, 0, 0},
      .vendor_id = 0x10de,
      .device_id = 0x2335,
      .subsystem_vendor_id = 0x10de,
      .subsystem_device_id = 0x18be,
      .class_code = 0x030200,
      .revision = 0xa1,
      .bars = {bar(0, 0xfb000000, 16 * kMiB, kMemory32), bar(1, 0x220000000000, 256 * kGiB, kMemory64Prefetchable),
               bar(3, 0x224000000000, 32 * kMiB, kMemory64Prefetchable)},
      .driver = "nvidia",
      .numa_node = 1,
      .iommu_group = 17};
  EXPECT_EQ(h200, expected);
}

TEST(SysfsPciSource, ReadsAnAmdGpuWithNoDriverNoNumaNodeAndNoIommuGroup) {
  PciSysfsFixture fixture;
  const PciDevice mi300x = read_sysfs_pci_device(fixture.root() / "bus/pci/devices" / testing::kMi300xAddress);
  const PciDevice expected{
      .address = {0, 0xc1, 0, 0},
      .vendor_id = 0x1002,
      .device_id = 0x74a1,
      .subsystem_vendor_id = 0x1002,
      .subsystem_device_id = 0x74a1,
      .class_code = 0x120000,
      .revision = 0,
      .bars = {bar(0, 0x300000000000, 256 * kGiB, kMemory64Prefetchable),
               bar(2, 0x304000000000, 2 * kMiB, kMemory64Prefetchable), bar(4, 0xe000, 256, kIo),
               bar(5, 0xf6000000, 512 * 1024, kMemory32)},
      .driver = std::nullopt,
      .numa_node = -1,
      .iommu_group = std::nullopt};
  EXPECT_EQ(mi300x, expected);
}

TEST(SysfsPciSource, ListsEveryFunctionByAddressOrOnlyThoseOfOneClass) {
  PciSysfsFixture fixture;
  const SysfsPciSource source(fixture.root());
  std::vector<std::string> all;
  for (const PciDevice& device : source.read_devices()) all.push_back(to_string(device.address));
  EXPECT_EQ(all, (std::vector<std::string>{"0000:01:00.0", "0000:18:00.0", "0000:3a:00.0", "0000:c1:00.0"}));
  const auto display = source.read_devices(kDisplayControllerClass);
  ASSERT_EQ(display.size(), 1u);
  EXPECT_EQ(display[0].device_id, 0x2335);
  EXPECT_EQ(source.describe(), "sysfs " + fixture.root().string());
}

TEST(SysfsPciSource, AMissingNumaNodeFileMeansNoNode) {
  PciSysfsFixture fixture;
  fixture.remove(testing::kH200Address, "numa_node");
  EXPECT_EQ(read_sysfs_pci_device(fixture.device_folder(testing::kH200Address)).numa_node, -1);
}

TEST(SysfsPciSource, NoPciBusGivesNoDevices) {
  EXPECT_TRUE(SysfsPciSource("/nonexistent-sysfs-root").read_devices().empty());
}

TEST(SysfsPciSource, AMalformedNumaNodeNamesTheFileAndTheExpectation) {
  PciSysfsFixture fixture;
  fixture.write(testing::kH200Address, "numa_node", "one\n");
  const SysfsPciSource source(fixture.root());
  EXPECT_EQ(error_of([&] { source.read_devices(kDisplayControllerClass); }),
            (fixture.root() / "bus/pci/devices" / testing::kH200Address / "numa_node").string() +
                ": is 'one'; expected a NUMA node number, or -1 for none");
}

TEST(SysfsPciSource, AMalformedResourceLineNamesTheFileLineAndForm) {
  PciSysfsFixture fixture;
  fixture.write(testing::kH200Address, "resource", "0x00000000fb000000 0x00000000fbffffff\n");
  const std::string path = (fixture.device_folder(testing::kH200Address) / "resource").string();
  EXPECT_EQ(error_of([&] { read_sysfs_pci_device(fixture.device_folder(testing::kH200Address)); }),
            path + ": line 1 is '0x00000000fb000000 0x00000000fbffffff'; expected three hex numbers 'start end "
                   "flags', e.g. 0x00000000fb000000 0x00000000fbffffff 0x0000000000040200");
}

TEST(SysfsPciSource, AShortResourceFileSaysHowManyLinesWereExpected) {
  EXPECT_EQ(error_of([] { parse_sysfs_resource("0x0 0x0 0x0\n0x0 0x0 0x0\n", "res"); }),
            "res: has 2 lines; expected at least 6, one 'start end flags' line per BAR 0-5");
}

TEST(SysfsPciSource, ABarWithoutATypeOrEndingBeforeItsStartIsAnError) {
  const std::string zeros = "0x0 0x0 0x0\n0x0 0x0 0x0\n0x0 0x0 0x0\n0x0 0x0 0x0\n0x0 0x0 0x0\n";
  EXPECT_EQ(error_of([&] { parse_sysfs_resource("0x1000 0x1fff 0x0\n" + zeros, "res"); }),
            "res: line 1 has flags '0x0' with neither IORESOURCE_IO (0x100) nor IORESOURCE_MEM (0x200); expected a "
            "BAR's type");
  EXPECT_EQ(error_of([&] { parse_sysfs_resource("0x2000 0x1fff 0x200\n" + zeros, "res"); }),
            "res: line 1 ends before it starts; expected start <= end");
}

TEST(SysfsPciSource, AnIdTooWideForItsFieldIsAnError) {
  PciSysfsFixture fixture;
  fixture.write(testing::kH200Address, "vendor", "0x10de0\n");
  EXPECT_EQ(error_of([&] { read_sysfs_pci_device(fixture.device_folder(testing::kH200Address)); }),
            (fixture.device_folder(testing::kH200Address) / "vendor").string() +
                ": is '0x10de0'; expected a 16-bit hex number like 0x10de");
}

TEST(SysfsPciSource, AMissingAttributeIsAnError) {
  PciSysfsFixture fixture;
  fixture.remove(testing::kMi300xAddress, "class");
  EXPECT_EQ(error_of([&] { SysfsPciSource(fixture.root()).read_devices(); }),
            (fixture.root() / "bus/pci/devices" / testing::kMi300xAddress / "class").string() +
                ": absent; expected a 24-bit hex number like 0x030200");
}

TEST(SysfsPciSource, ADeviceOfAnotherClassIsSkippedUnreadWhenOneClassIsAsked) {
  PciSysfsFixture fixture;
  fixture.write(testing::kNvmeAddress, "resource", "garbage\n");  // never parsed: the NVMe is class 0x01
  const auto display = SysfsPciSource(fixture.root()).read_devices(kDisplayControllerClass);
  ASSERT_EQ(display.size(), 1u);
  EXPECT_EQ(to_string(display[0].address), testing::kH200Address);
}

TEST(SysfsPciSource, AnEntryNotNamedByAnAddressIsAnError) {
  PciSysfsFixture fixture;
  std::filesystem::create_directory(fixture.root() / "bus/pci/devices/bogus");
  EXPECT_EQ(error_of([&] { SysfsPciSource(fixture.root()).read_devices(); }),
            (fixture.root() / "bus/pci/devices/bogus").string() +
                ": is not named by a PCI address; expected only dddd:bb:dd.f entries in " +
                (fixture.root() / "bus/pci/devices").string());
}

TEST(PciAddress, PrintsAndParsesDomainBusDeviceFunction) {
  EXPECT_EQ(to_string(PciAddress{0x10000, 0xc1, 0x1f, 7}), "10000:c1:1f.7");
  EXPECT_EQ(parse_pci_address("0000:18:00.0"), (PciAddress{0, 0x18, 0, 0}));
  EXPECT_EQ(parse_pci_address("10000:c1:1f.7"), (PciAddress{0x10000, 0xc1, 0x1f, 7}));
  for (const char* bad : {"", "0000:18:00", "0000:18:20.0", "0000:18:00.8", "0000:118:00.0", "zz:18:00.0"}) {
    try {
      parse_pci_address(bad);
      ADD_FAILURE() << "parsed '" << bad << "'";
    } catch (const std::invalid_argument& error) {
      EXPECT_EQ(std::string(error.what()), "PCI address '" + std::string(bad) +
                                               "': expected domain:bus:device.function in hex, e.g. 0000:18:00.0 "
                                               "(device <= 1f, function <= 7)");
    }
  }
}

}  // namespace
}  // namespace doorbell::kernel_interface::pci
