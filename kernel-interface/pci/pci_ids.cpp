#include "kernel-interface/pci/pci_ids.h"

#include <algorithm>
#include <array>

namespace doorbell::kernel_interface::pci {
namespace {

// Sources, each looked up for the id and name:
// - pci.ids: the pci-ids database (pciutils/pciids pci.ids, version 2026.08.22), vendor 10de and 1002 sections.
// - ogkm: NVIDIA/open-gpu-kernel-modules README.md (595.45.04), "Compatible GPUs" table, lines 661-771.
// - tinygrad: tinygrad/runtime/ops_amd.py PCIIface, the device ids its driverless AMD path accepts.
constexpr std::string_view kPciIdsAndOgkm = "pci.ids 10de; open-gpu-kernel-modules README.md compatible GPUs";
constexpr std::string_view kPciIdsAndTinygrad = "pci.ids 1002; tinygrad runtime/ops_amd.py PCIIface";
constexpr std::string_view kPciIdsOnly = "pci.ids 1002";

constexpr std::array kKnownProducts = {
    // Hopper (GH100).
    KnownProduct{kVendorNvidia, 0x2330, "H100 SXM5 80GB", kPciIdsAndOgkm, true},
    KnownProduct{kVendorNvidia, 0x2331, "H100 PCIe", kPciIdsAndOgkm, true},
    KnownProduct{kVendorNvidia, 0x2339, "H100 SXM5 94GB", kPciIdsAndOgkm, true},
    KnownProduct{kVendorNvidia, 0x2321, "H100 NVL", kPciIdsAndOgkm, true},  // pci.ids: "H100L 94GB"
    KnownProduct{kVendorNvidia, 0x2335, "H200 SXM 141GB", kPciIdsAndOgkm, true},
    KnownProduct{kVendorNvidia, 0x233b, "H200 NVL", kPciIdsAndOgkm, true},
    KnownProduct{kVendorNvidia, 0x2342, "GH200 120GB/480GB", kPciIdsAndOgkm, true},
    KnownProduct{kVendorNvidia, 0x2348, "GH200 144GB HBM3e", kPciIdsAndOgkm, true},
    // Ampere (GA100).
    KnownProduct{kVendorNvidia, 0x20b0, "A100 SXM4 40GB", kPciIdsAndOgkm, true},
    KnownProduct{kVendorNvidia, 0x20b2, "A100 SXM4 80GB", kPciIdsAndOgkm, true},
    KnownProduct{kVendorNvidia, 0x20b5, "A100 PCIe 80GB", kPciIdsAndOgkm, true},
    KnownProduct{kVendorNvidia, 0x20f1, "A100 PCIe 40GB", kPciIdsAndOgkm, true},
    // CDNA 3 (Aqua Vanjaram, gfx942), CDNA 4 and CDNA 2; RDNA 3 (Navi 31, gfx1100).
    KnownProduct{kVendorAmd, 0x74a1, "Instinct MI300X", kPciIdsAndTinygrad, true},
    KnownProduct{kVendorAmd, 0x74a0, "Instinct MI300A", kPciIdsOnly, false},
    KnownProduct{kVendorAmd, 0x74a5, "Instinct MI325X", kPciIdsOnly, false},
    KnownProduct{kVendorAmd, 0x75a0, "Instinct MI350X", kPciIdsAndTinygrad, true},
    KnownProduct{kVendorAmd, 0x740c, "Instinct MI250X/MI250", kPciIdsOnly, false},
    KnownProduct{kVendorAmd, 0x740f, "Instinct MI210", kPciIdsOnly, false},
    KnownProduct{kVendorAmd, 0x744c, "Radeon RX 7900 XT/XTX", kPciIdsAndTinygrad, true},
};

}  // namespace

std::optional<std::string_view> vendor_name(std::uint16_t vendor_id) {
  switch (vendor_id) {
    case kVendorNvidia: return "NVIDIA";
    case kVendorAmd: return "AMD";
    case kVendorIntel: return "Intel";
    default: return std::nullopt;
  }
}

std::optional<KnownProduct> find_known_product(std::uint16_t vendor_id, std::uint16_t device_id) {
  const auto found = std::find_if(kKnownProducts.begin(), kKnownProducts.end(), [&](const KnownProduct& product) {
    return product.vendor_id == vendor_id && product.device_id == device_id;
  });
  if (found == kKnownProducts.end()) return std::nullopt;
  return *found;
}

std::span<const KnownProduct> known_products() { return kKnownProducts; }

}  // namespace doorbell::kernel_interface::pci
