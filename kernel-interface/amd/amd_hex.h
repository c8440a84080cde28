// "0x2bea000": how the AMD kernel-interface messages print addresses, sizes, handles and request numbers.
#pragma once
#include <cstdint>
#include <string>

namespace doorbell::kernel_interface::amd {

inline std::string hex(uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string digits;
  do {
    digits.insert(digits.begin(), kDigits[value & 0xF]);
    value >>= 4;
  } while (value != 0);
  return "0x" + digits;
}

}  // namespace doorbell::kernel_interface::amd
