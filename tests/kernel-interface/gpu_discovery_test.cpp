// GPU discovery on the fixture tree, the names it gives, and the lines `doorbell devices` prints for them.

#include "kernel-interface/pci/gpu_discovery.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "kernel-interface/pci/pci_summary.h"
#include "kernel-interface/pci/sysfs_pci_source.h"
#include "tests/kernel-interface/pci_sysfs_fixture.h"

namespace doorbell::kernel_interface::pci {
namespace {

using testing::PciSysfsFixture;

TEST(DiscoverPciGpus, FindsDisplayControllersAndNvidiaOrAmdAcceleratorsWithOrWithoutADriver) {
  PciSysfsFixture fixture;
  const auto gpus = discover_pci_gpus(SysfsPciSource(fixture.root()));
  ASSERT_EQ(gpus.size(), 2u);  // not the NVMe controller (class 0x01) nor the Gaudi (class 0x12, vendor 1da3)
  EXPECT_EQ(to_string(gpus[0].device.address), testing::kH200Address);
  EXPECT_EQ(gpus[0].vendor, "NVIDIA");
  ASSERT_TRUE(gpus[0].product);
  EXPECT_EQ(gpus[0].product->name, "H200 SXM 141GB");
  EXPECT_EQ(gpus[0].device.driver, "nvidia");
  EXPECT_EQ(to_string(gpus[1].device.address), testing::kMi300xAddress);
  EXPECT_EQ(gpu_display_name(gpus[1]), "AMD Instinct MI300X");
  EXPECT_EQ(gpus[1].device.driver, std::nullopt);
}

TEST(DiscoverPciGpus, SummarizesEachGpuOnOneLine) {
  PciSysfsFixture fixture;
  const SysfsPciSource source(fixture.root());
  EXPECT_EQ(summarize_pci_gpus(discover_pci_gpus(source), source.describe()),
            (std::vector<std::string>{
                "PCI: 2 GPUs (via sysfs " + fixture.root().string() + ")",
                "  0000:18:00.0 NVIDIA H200 SXM 141GB [10de:2335 subsystem 10de:18be class 030200 rev a1], BAR0 16 "
                "MiB, BAR1 256 GiB 64-bit prefetchable, BAR3 32 MiB 64-bit prefetchable, driver nvidia, NUMA node 1, "
                "IOMMU group 17",
                "  0000:c1:00.0 AMD Instinct MI300X [1002:74a1 subsystem 1002:74a1 class 120000 rev 00], BAR0 256 GiB "
                "64-bit prefetchable, BAR2 2 MiB 64-bit prefetchable, BAR4 256 B I/O, BAR5 512 KiB, driver none, "
                "NUMA node none"}));
}

TEST(DiscoverPciGpus, SaysInOneLineWhenThereIsNoGpu) {
  PciSysfsFixture fixture;
  fixture.remove_device(testing::kH200Address);
  fixture.remove_device(testing::kMi300xAddress);
  const SysfsPciSource source(fixture.root());
  EXPECT_EQ(summarize_pci_gpus(discover_pci_gpus(source), source.describe()),
            (std::vector<std::string>{"PCI: no GPU (no display controller or NVIDIA/AMD accelerator, via sysfs " +
                                      fixture.root().string() + ")"}));
}

TEST(GpuDisplayName, NamesUnknownIdsByVendorAndHex) {
  PciGpu gpu;
  gpu.device.vendor_id = 0x10de;
  gpu.device.device_id = 0x2b85;
  gpu.vendor = "NVIDIA";
  EXPECT_EQ(gpu_display_name(gpu), "NVIDIA device 2b85");
  gpu.device.vendor_id = 0x1234;
  gpu.device.device_id = 0x1111;
  gpu.vendor = std::nullopt;
  EXPECT_EQ(gpu_display_name(gpu), "vendor 1234 device 1111");
}

TEST(PciIds, NamesTheVendorsAndTheTargetedProducts) {
  EXPECT_EQ(vendor_name(0x10de), "NVIDIA");
  EXPECT_EQ(vendor_name(0x1002), "AMD");
  EXPECT_EQ(vendor_name(0x8086), "Intel");
  EXPECT_EQ(vendor_name(0x1af4), std::nullopt);
  const std::pair<std::uint16_t, std::string_view> nvidia[] = {
      {0x2330, "H100 SXM5 80GB"}, {0x2331, "H100 PCIe"},      {0x2335, "H200 SXM 141GB"},
      {0x233b, "H200 NVL"},       {0x20b2, "A100 SXM4 80GB"}, {0x20f1, "A100 PCIe 40GB"}};
  for (const auto& [id, name] : nvidia) {
    const auto product = find_known_product(kVendorNvidia, id);
    ASSERT_TRUE(product) << std::hex << id;
    EXPECT_EQ(product->name, name);
    EXPECT_TRUE(product->cross_checked);
  }
  EXPECT_EQ(find_known_product(kVendorAmd, 0x74a1)->name, "Instinct MI300X");
  EXPECT_FALSE(find_known_product(kVendorAmd, 0x74a0)->cross_checked);  // pci.ids alone
  EXPECT_EQ(find_known_product(kVendorAmd, 0x2335), std::nullopt);      // the H200's id under another vendor
}

TEST(PciIds, EachIdIsListedOnceAndNamesItsSource) {
  std::set<std::pair<std::uint16_t, std::uint16_t>> seen;
  for (const KnownProduct& product : known_products()) {
    EXPECT_TRUE(seen.insert({product.vendor_id, product.device_id}).second) << std::hex << product.device_id;
    EXPECT_TRUE(vendor_name(product.vendor_id));
    EXPECT_TRUE(product.source.starts_with("pci.ids")) << product.name;
    EXPECT_FALSE(product.name.empty());
  }
}

TEST(FormatBarSize, UsesTheLargestUnitThatDividesTheSize) {
  EXPECT_EQ(format_bar_size(256ull << 30), "256 GiB");
  EXPECT_EQ(format_bar_size(16ull << 20), "16 MiB");
  EXPECT_EQ(format_bar_size(512 * 1024), "512 KiB");
  EXPECT_EQ(format_bar_size(128), "128 B");
  EXPECT_EQ(format_bar_size(1536ull << 20), "1536 MiB");
  EXPECT_EQ(format_bar_size(1ull << 40), "1 TiB");
}

}  // namespace
}  // namespace doorbell::kernel_interface::pci
