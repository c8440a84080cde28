#pragma once
// Names for the PCI vendor and device ids of the GPUs doorbell targets. A small table, not the pci-ids database:
// only ids we check against a public source, each with where it is listed.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace doorbell::kernel_interface::pci {

inline constexpr std::uint16_t kVendorNvidia = 0x10de;
inline constexpr std::uint16_t kVendorAmd = 0x1002;
inline constexpr std::uint16_t kVendorIntel = 0x8086;

struct KnownProduct {
  std::uint16_t vendor_id;
  std::uint16_t device_id;
  std::string_view name;      // e.g. "H200 SXM 141GB"
  std::string_view source;    // the public tables that list the id under this name
  bool cross_checked;         // listed by two independent tables; false: one table only (treat as unverified)
};

// "NVIDIA", "AMD", "Intel"; nullopt for any other vendor.
std::optional<std::string_view> vendor_name(std::uint16_t vendor_id);

// The entry for the id, or nullopt when it is not in the table.
std::optional<KnownProduct> find_known_product(std::uint16_t vendor_id, std::uint16_t device_id);

std::span<const KnownProduct> known_products();

}  // namespace doorbell::kernel_interface::pci
