#include "kernel-interface/pci/sysfs_pci_source.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace doorbell::kernel_interface::pci {
namespace {

namespace fs = std::filesystem;

// Resource flags the kernel exposes in `resource` (include/linux/ioport.h: "PCI devices expose these flags to
// userspace in the resource sysfs file, so don't move them").
constexpr std::uint64_t kIoresourceIo = 0x100;
constexpr std::uint64_t kIoresourceMem = 0x200;
constexpr std::uint64_t kIoresourcePrefetch = 0x2000;
constexpr std::uint64_t kIoresourceMem64 = 0x100000;
constexpr int kBarCount = 6;

[[noreturn]] void fail(const fs::path& path, const std::string& problem) {
  throw std::runtime_error(path.string() + ": " + problem);
}

bool exists_no_follow(const fs::path& path) {
  std::error_code error;
  return fs::exists(fs::symlink_status(path, error));
}

std::string_view trim(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::optional<std::string> read_if_present(const fs::path& path) {
  if (!exists_no_follow(path)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (!in || !(text << in.rdbuf()) || in.bad()) fail(path, "exists but cannot be read");
  return text.str();
}

std::string read_required(const fs::path& path, std::string_view expected) {
  auto text = read_if_present(path);
  if (!text) fail(path, "absent; expected " + std::string(expected));
  return std::move(*text);
}

std::optional<std::uint64_t> parse_hex(std::string_view text) {
  if (text.starts_with("0x") || text.starts_with("0X")) text.remove_prefix(2);
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// vendor, device, class...: one hex number ("0x10de\n", pci-sysfs.c pci_config_attr) of at most `bits` bits.
std::uint64_t read_hex_attribute(const fs::path& folder, std::string_view name, int bits, std::string_view example) {
  const fs::path path = folder / name;
  const std::string text = read_required(path, "a " + std::to_string(bits) + "-bit hex number like " +
                                                   std::string(example));
  const auto value = parse_hex(trim(text));
  if (!value || *value >> bits != 0) {
    fail(path, "is '" + std::string(trim(text)) + "'; expected a " + std::to_string(bits) +
                   "-bit hex number like " + std::string(example));
  }
  return *value;
}

std::optional<int> parse_int(std::string_view text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The last path component a symlink points at: driver -> .../bus/pci/drivers/nvidia, iommu_group ->
// .../kernel/iommu_groups/17.
std::optional<std::string> symlink_target_name(const fs::path& link) {
  std::error_code error;
  const fs::file_status status = fs::symlink_status(link, error);
  if (!fs::exists(status)) return std::nullopt;
  if (!fs::is_symlink(status)) fail(link, "is not a symbolic link; expected one to the kernel object");
  const fs::path target = fs::read_symlink(link, error);
  if (error) fail(link, "cannot be read (" + error.message() + ")");
  const std::string name = target.filename().string();
  if (name.empty() || name == "." || name == "..") {
    fail(link, "points at '" + target.string() + "'; expected a path ending in a name");
  }
  return name;
}

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t pos = 0;
  while (pos < line.size()) {
    const size_t start = line.find_first_not_of(" \t\r", pos);
    if (start == std::string_view::npos) break;
    const size_t end = std::min(line.find_first_of(" \t\r", start), line.size());
    words.push_back(line.substr(start, end - start));
    pos = end;
  }
  return words;
}

}  // namespace

std::vector<PciBar> parse_sysfs_resource(std::string_view text, std::string_view source) {
  const auto fail_at = [&](int line_number, std::string_view problem) {
    throw std::runtime_error(std::string(source) + ": line " + std::to_string(line_number) + " " +
                             std::string(problem));
  };
  std::vector<PciBar> bars;
  int line_number = 0;
  while (line_number < kBarCount) {
    if (text.empty()) {
      throw std::runtime_error(std::string(source) + ": has " + std::to_string(line_number) +
                               " lines; expected at least 6, one 'start end flags' line per BAR 0-5");
    }
    const size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    const int index = line_number++;
    const auto words = split_words(line);
    std::optional<std::uint64_t> start, end, flags;
    if (words.size() == 3) start = parse_hex(words[0]), end = parse_hex(words[1]), flags = parse_hex(words[2]);
    if (!start || !end || !flags) {
      fail_at(line_number, "is '" + std::string(line) +
                               "'; expected three hex numbers 'start end flags', e.g. 0x00000000fb000000 "
                               "0x00000000fbffffff 0x0000000000040200");
    }
    if (*start == 0 && *end == 0) continue;  // no BAR here, or the upper half of the 64-bit BAR before it
    if (*end < *start) fail_at(line_number, "ends before it starts; expected start <= end");
    const bool is_io = (*flags & kIoresourceIo) != 0;
    if (!is_io && (*flags & kIoresourceMem) == 0) {
      fail_at(line_number, "has flags '" + std::string(words[2]) +
                               "' with neither IORESOURCE_IO (0x100) nor IORESOURCE_MEM (0x200); expected a BAR's type");
    }
    bars.push_back(PciBar{.index = index,
                          .base = *start,
                          .size = *end - *start + 1,
                          .is_io = is_io,
                          .is_64bit = (*flags & kIoresourceMem64) != 0,
                          .is_prefetchable = (*flags & kIoresourcePrefetch) != 0});
  }
  return bars;
}

KernelView read_kernel_view(const fs::path& folder) {
  KernelView view;
  view.driver = symlink_target_name(folder / "driver");
  // numa_node exists only in kernels built with CONFIG_NUMA; "-1" when the firmware gave the device no node.
  const fs::path numa_path = folder / "numa_node";
  if (const auto text = read_if_present(numa_path)) {
    const auto node = parse_int(trim(*text));
    if (!node || *node < -1) {
      fail(numa_path, "is '" + std::string(trim(*text)) + "'; expected a NUMA node number, or -1 for none");
    }
    view.numa_node = *node;
  }
  const fs::path group_path = folder / "iommu_group";
  if (const auto group_name = symlink_target_name(group_path)) {
    const auto group = parse_int(*group_name);
    if (!group || *group < 0) {
      fail(group_path, "points at '" + *group_name + "'; expected .../iommu_groups/<number>");
    }
    view.iommu_group = *group;
  }
  return view;
}

PciDevice read_sysfs_pci_device(const fs::path& folder) {
  PciDevice device;
  device.address = parse_pci_address(folder.filename().string());
  device.vendor_id = static_cast<std::uint16_t>(read_hex_attribute(folder, "vendor", 16, "0x10de"));
  device.device_id = static_cast<std::uint16_t>(read_hex_attribute(folder, "device", 16, "0x2335"));
  device.subsystem_vendor_id = static_cast<std::uint16_t>(read_hex_attribute(folder, "subsystem_vendor", 16, "0x10de"));
  device.subsystem_device_id = static_cast<std::uint16_t>(read_hex_attribute(folder, "subsystem_device", 16, "0x18be"));
  device.class_code = static_cast<std::uint32_t>(read_hex_attribute(folder, "class", 24, "0x030200"));
  device.revision = static_cast<std::uint8_t>(read_hex_attribute(folder, "revision", 8, "0xa1"));
  const fs::path resource_path = folder / "resource";
  device.bars = parse_sysfs_resource(read_required(resource_path, "one 'start end flags' line per BAR"),
                                     resource_path.string());
  KernelView view = read_kernel_view(folder);
  device.driver = std::move(view.driver);
  device.numa_node = view.numa_node;
  device.iommu_group = view.iommu_group;
  return device;
}

SysfsPciSource::SysfsPciSource(fs::path sysfs_root) : sysfs_root_(std::move(sysfs_root)) {}

std::vector<PciDevice> SysfsPciSource::read_devices(std::optional<std::uint8_t> base_class) const {
  const fs::path devices_folder = sysfs_root_ / "bus/pci/devices";
  std::error_code error;
  if (!fs::exists(devices_folder, error)) return {};
  std::vector<std::pair<PciAddress, fs::path>> folders;
  for (const auto& entry : fs::directory_iterator(devices_folder, error)) {
    const std::string name = entry.path().filename().string();
    try {
      folders.emplace_back(parse_pci_address(name), entry.path());
    } catch (const std::invalid_argument&) {
      fail(entry.path(), "is not named by a PCI address; expected only dddd:bb:dd.f entries in " +
                             devices_folder.string());
    }
  }
  if (error) fail(devices_folder, "cannot be listed (" + error.message() + ")");
  std::sort(folders.begin(), folders.end());
  std::vector<PciDevice> devices;
  for (const auto& [address, folder] : folders) {
    // Only the class is read for devices of other classes, so a device we do not want cannot stop discovery.
    if (base_class && read_hex_attribute(folder, "class", 24, "0x030200") >> 16 != *base_class) continue;
    devices.push_back(read_sysfs_pci_device(folder));
  }
  return devices;
}

std::string SysfsPciSource::describe() const { return "sysfs " + sysfs_root_.string(); }

}  // namespace doorbell::kernel_interface::pci
