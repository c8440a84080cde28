#pragma once
// A PCI function's address, domain:bus:device.function ("0000:18:00.0"), as sysfs names each device's folder.

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace doorbell::kernel_interface::pci {

struct PciAddress {
  std::uint32_t domain = 0;
  std::uint8_t bus = 0;
  std::uint8_t device = 0;    // 0..31
  std::uint8_t function = 0;  // 0..7
  auto operator<=>(const PciAddress&) const = default;
};

// "dddd:bb:dd.f" in lower-case hex, the form of /sys/bus/pci/devices/<address>.
std::string to_string(const PciAddress& address);

// Parses "dddd:bb:dd.f" (hex; the domain may have more than 4 digits, as on VMD domains 10000+). Throws
// std::invalid_argument naming the text and the expected form.
PciAddress parse_pci_address(std::string_view text);

}  // namespace doorbell::kernel_interface::pci
