#include "kernel-interface/pci/pci_address.h"

#include <charconv>
#include <cstdio>
#include <stdexcept>

namespace doorbell::kernel_interface::pci {
namespace {

std::uint32_t parse_hex_field(std::string_view field, size_t max_digits, std::uint32_t max_value,
                              std::string_view text) {
  std::uint32_t value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value, 16);
  if (field.empty() || field.size() > max_digits || error != std::errc() || end != field.data() + field.size() ||
      value > max_value) {
    throw std::invalid_argument("PCI address '" + std::string(text) +
                                "': expected domain:bus:device.function in hex, e.g. 0000:18:00.0 (device <= 1f, "
                                "function <= 7)");
  }
  return value;
}

}  // namespace

std::string to_string(const PciAddress& address) {
  char text[32];
  std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", address.domain, address.bus, address.device,
                address.function);
  return text;
}

PciAddress parse_pci_address(std::string_view text) {
  const size_t first_colon = text.find(':');
  const size_t second_colon = first_colon == std::string_view::npos ? first_colon : text.find(':', first_colon + 1);
  const size_t dot = second_colon == std::string_view::npos ? second_colon : text.find('.', second_colon + 1);
  if (dot == std::string_view::npos) parse_hex_field("", 0, 0, text);  // throws the one message
  PciAddress address;
  address.domain = parse_hex_field(text.substr(0, first_colon), 8, UINT32_MAX, text);
  address.bus = static_cast<std::uint8_t>(
      parse_hex_field(text.substr(first_colon + 1, second_colon - first_colon - 1), 2, 0xff, text));
  address.device =
      static_cast<std::uint8_t>(parse_hex_field(text.substr(second_colon + 1, dot - second_colon - 1), 2, 0x1f, text));
  address.function = static_cast<std::uint8_t>(parse_hex_field(text.substr(dot + 1), 1, 7, text));
  return address;
}

}  // namespace doorbell::kernel_interface::pci
