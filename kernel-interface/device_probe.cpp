#include "kernel-interface/device_probe.h"

#include <fcntl.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "kernel-interface/driver_seams.h"
#include "kernel-interface/nvidia/nv_rm.h"

namespace doorbell::kernel_interface {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kCpuinfoPath = "proc/cpuinfo";
constexpr std::string_view kNvidiaControlPath = "dev/nvidiactl";
constexpr std::string_view kNvidiaVersionPath = "proc/driver/nvidia/version";
constexpr std::string_view kKfdPath = "dev/kfd";
constexpr std::string_view kKfdNodesPath = "sys/class/kfd/kfd/topology/nodes";

[[noreturn]] void fail(std::string_view source, std::string_view problem) {
  throw std::runtime_error(std::string(source) + ": " + std::string(problem));
}

bool path_exists(const fs::path& path) {
  std::error_code error;
  return fs::exists(path, error);
}

// The whole file, or nothing when it does not exist. /proc files report size 0, so this reads until EOF.
std::optional<std::string> read_file_if_present(const fs::path& path) {
  if (!path_exists(path)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (!in || !(text << in.rdbuf()) || in.bad()) fail(path.string(), "exists but cannot be read");
  return text.str();
}

std::string_view trim(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

std::vector<std::string_view> split_words(std::string_view text) {
  std::vector<std::string_view> words;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t start = text.find_first_not_of(" \t", pos);
    if (start == std::string_view::npos) break;
    const size_t end = std::min(text.find_first_of(" \t", start), text.size());
    words.push_back(text.substr(start, end - start));
    pos = end;
  }
  return words;
}

std::optional<std::uint64_t> parse_unsigned(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// /proc/cpuinfo is "key<tabs>: value" lines, one block per logical CPU, each block starting with "processor".
struct CpuinfoLine {
  std::string_view key;
  std::string_view value;
};

std::optional<CpuinfoLine> split_cpuinfo_line(std::string_view line) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  return CpuinfoLine{trim(line.substr(0, colon)), trim(line.substr(colon + 1))};
}

// A driver version is dotted decimal numbers, e.g. "580.159" or "550.54.15"; "x86_64" is not one.
bool looks_like_driver_version(std::string_view word) {
  if (word.empty() || word.find('.') == std::string_view::npos) return false;
  if (word.front() == '.' || word.back() == '.' || word.find("..") != std::string_view::npos) return false;
  return std::all_of(word.begin(), word.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

std::uint32_t property_as_u32(std::string_view key, std::uint64_t value, std::string_view source) {
  if (value > UINT32_MAX) fail(source, "property '" + std::string(key) + "' is " + std::to_string(value) +
                                           "; expected a value that fits in 32 bits");
  return static_cast<std::uint32_t>(value);
}

std::vector<int> nvidia_gpu_minors(const fs::path& dev) {
  std::vector<int> minors;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dev, error)) {
    const std::string name = entry.path().filename().string();
    constexpr std::string_view kPrefix = "nvidia";
    if (!name.starts_with(kPrefix)) continue;
    // Only /dev/nvidiaN are GPUs; nvidiactl, nvidia-uvm and nvidia-modeset are not.
    if (const auto minor = parse_unsigned(std::string_view(name).substr(kPrefix.size()))) {
      minors.push_back(static_cast<int>(*minor));
    }
  }
  std::sort(minors.begin(), minors.end());
  return minors;
}

std::vector<std::pair<int, fs::path>> kfd_node_dirs(const fs::path& nodes) {
  std::vector<std::pair<int, fs::path>> dirs;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(nodes, error)) {
    if (const auto index = parse_unsigned(entry.path().filename().string())) {
      dirs.emplace_back(static_cast<int>(*index), entry.path());
    }
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

}  // namespace

CpuInfo parse_cpuinfo(std::string_view text, std::string_view source) {
  CpuInfo cpu;
  std::vector<std::string_view> flags;
  for (const std::string_view line : split_lines(text)) {
    const auto field = split_cpuinfo_line(line);
    if (!field) continue;
    if (field->key == "processor") {
      ++cpu.logical_cores;
    } else if (field->key == "model name" && cpu.model_name.empty()) {
      cpu.model_name = field->value;
    } else if ((field->key == "flags" || field->key == "Features") && flags.empty()) {
      flags = split_words(field->value);
    }
  }
  if (cpu.logical_cores == 0) fail(source, "no 'processor' line; expected one per logical CPU");
  if (cpu.model_name.empty()) cpu.model_name = "unknown";
  for (const std::string_view extension : kIsaExtensionsOfInterest) {
    if (std::find(flags.begin(), flags.end(), extension) != flags.end()) cpu.isa_extensions.emplace_back(extension);
  }
  return cpu;
}

// The file's first line is "NVRM version: <module description>  <version>  <build info>", written by
// nv_procfs_read_version() in NVIDIA/open-gpu-kernel-modules kernel-open/nvidia/nv-procfs.c. Descriptions seen:
// "NVIDIA UNIX Open Kernel Module for x86_64" (open module) and "NVIDIA UNIX x86_64 Kernel Module" (proprietary).
NvidiaDriverVersion parse_nvidia_version(std::string_view text, std::string_view source) {
  constexpr std::string_view kPrefix = "NVRM version:";
  for (const std::string_view line : split_lines(text)) {
    if (!line.starts_with(kPrefix)) continue;
    const std::string_view description = line.substr(kPrefix.size());
    for (const std::string_view word : split_words(description)) {
      if (looks_like_driver_version(word)) {
        return {std::string(word), description.find("Open Kernel Module") != std::string_view::npos};
      }
    }
    fail(source, "'NVRM version:' line has no version number; expected e.g. 'NVRM version: NVIDIA UNIX Open "
                 "Kernel Module for x86_64  580.159 ...'");
  }
  fail(source, "no line starting with 'NVRM version:'");
}

AmdGpuNode parse_kfd_node_properties(std::string_view text, std::string_view source) {
  AmdGpuNode node;
  bool has_target_version = false;
  int line_number = 0;
  for (const std::string_view line : split_lines(text)) {
    ++line_number;
    if (trim(line).empty()) continue;
    const auto words = split_words(line);
    const auto value = words.size() == 2 ? parse_unsigned(words[1]) : std::nullopt;
    if (!value) {
      fail(source, "line " + std::to_string(line_number) + " is '" + std::string(line) +
                       "'; expected '<key> <unsigned decimal>'");
    }
    const std::string_view key = words[0];
    if (key == "gfx_target_version") {
      node.gfx_target_version = property_as_u32(key, *value, source);
      has_target_version = true;
    } else if (key == "simd_count") {
      node.simd_count = property_as_u32(key, *value, source);
    } else if (key == "simd_per_cu") {
      node.simd_per_cu = property_as_u32(key, *value, source);
    } else if (key == "drm_render_minor") {
      node.drm_render_minor = property_as_u32(key, *value, source);
    }
  }
  if (!has_target_version) fail(source, "no 'gfx_target_version' property; expected one on every KFD node");
  if (node.gfx_target_version != 0) {
    try {
      node.gfx_name = gfx_name_from_target_version(node.gfx_target_version);
    } catch (const std::invalid_argument& error) {
      fail(source, error.what());
    }
  }
  return node;
}

std::string gfx_name_from_target_version(std::uint32_t gfx_target_version) {
  const std::uint32_t major = gfx_target_version / 10000;
  const std::uint32_t minor = gfx_target_version / 100 % 100;
  const std::uint32_t stepping = gfx_target_version % 100;
  if (major == 0 || minor > 15 || stepping > 15) {
    throw std::invalid_argument("gfx_target_version " + std::to_string(gfx_target_version) +
                                ": expected major*10000 + minor*100 + stepping with major >= 1 and minor, "
                                "stepping <= 15");
  }
  constexpr char kHex[] = "0123456789abcdef";
  return "gfx" + std::to_string(major) + kHex[minor] + kHex[stepping];
}

CpuInfo probe_cpu(const fs::path& root) {
  const fs::path path = root / kCpuinfoPath;
  const auto text = read_file_if_present(path);
  if (!text) fail(path.string(), "absent; expected the kernel's description of the CPUs");
  return parse_cpuinfo(*text, path.string());
}

NvidiaInfo probe_nvidia(const fs::path& root) {
  NvidiaInfo nvidia;
  nvidia.control_device_present = path_exists(root / kNvidiaControlPath);
  nvidia.gpu_minors = nvidia_gpu_minors(root / "dev");
  const fs::path version_path = root / kNvidiaVersionPath;
  if (const auto text = read_file_if_present(version_path)) {
    nvidia.driver = parse_nvidia_version(*text, version_path.string());
  }
  return nvidia;
}

AmdInfo probe_amd(const fs::path& root) {
  AmdInfo amd;
  amd.kfd_present = path_exists(root / kKfdPath);
  for (const auto& [index, dir] : kfd_node_dirs(root / kKfdNodesPath)) {
    const fs::path properties_path = dir / "properties";
    const auto properties = read_file_if_present(properties_path);
    if (!properties) fail(properties_path.string(), "absent; expected the KFD node's properties");
    AmdGpuNode node = parse_kfd_node_properties(*properties, properties_path.string());
    node.node = index;
    // CPU nodes have gpu_id 0; a kernel without the gpu_id file still gives them gfx_target_version 0.
    const fs::path gpu_id_path = dir / "gpu_id";
    if (const auto gpu_id_text = read_file_if_present(gpu_id_path)) {
      const auto gpu_id = parse_unsigned(trim(*gpu_id_text));
      if (!gpu_id) fail(gpu_id_path.string(), "is '" + std::string(trim(*gpu_id_text)) + "'; expected a decimal id");
      node.gpu_id = property_as_u32("gpu_id", *gpu_id, gpu_id_path.string());
      if (node.gpu_id == 0) continue;
    } else if (node.gfx_target_version == 0) {
      continue;
    }
    amd.gpus.push_back(std::move(node));
  }
  return amd;
}

namespace {

// The driver's GPU list through a fresh /dev/nvidiactl fd of `seam`.
std::vector<NvidiaGpu> list_nvidia_gpus(SyscallSeam& seam) {
  SeamFd ctl(seam, "/dev/nvidiactl", O_RDWR | O_CLOEXEC);
  nvidia::NvRm rm(seam, ctl.get());
  std::vector<NvidiaGpu> gpus;
  for (const nvidia::nv_ioctl_card_info_t& card : rm.card_info()) {
    NvidiaGpu gpu;
    gpu.index = static_cast<int>(gpus.size());
    gpu.minor = static_cast<int>(card.minor_number);
    gpu.gpu_id = card.gpu_id;
    gpu.pci_domain = card.pci_info.domain;
    gpu.pci_bus = card.pci_info.bus;
    gpu.pci_slot = card.pci_info.slot;
    gpu.pci_function = card.pci_info.function;
    gpu.pci_vendor_id = card.pci_info.vendor_id;
    gpu.pci_device_id = card.pci_info.device_id;
    gpu.fb_bytes = card.fb_size;
    gpus.push_back(gpu);
  }
  return gpus;
}

}  // namespace

NvidiaInfo probe_nvidia_driver(NvidiaInfo found) {
  const bool emulated = mockgpu_requested() && emulated_driver_registered("nvidia");
  if (!emulated && !found.control_device_present) return found;
  try {
    std::unique_ptr<SyscallSeam> seam = open_driver_seam("nvidia");
    found.gpus = list_nvidia_gpus(*seam);
    if (emulated) {  // the emulated machine's files, not this machine's /dev and /proc
      found.emulated = true;
      found.control_device_present = true;
      found.gpu_minors.clear();
      for (const NvidiaGpu& gpu : found.gpus) found.gpu_minors.push_back(gpu.minor);
      found.driver = parse_nvidia_version(read_text_file(*seam, "/proc/driver/nvidia/version"), "/proc/driver/nvidia/version (emulated)");
    }
  } catch (const std::exception& e) {
    found.gpus_error = e.what();
  }
  return found;
}

AmdInfo probe_amd_driver(AmdInfo found) {
  if (!mockgpu_requested() || !emulated_driver_registered("amd")) return found;
  AmdInfo amd;
  amd.emulated = true;
  amd.kfd_present = true;
  try {
    std::unique_ptr<SyscallSeam> seam = open_driver_seam("amd");
    // The emulated machine's sysfs (the path the KFD's topology has under /sys/devices; /sys/class/kfd links to it):
    // nodes 0, 1, ... until one has no gpu_id file.
    for (int n = 0;; n++) {
      const std::string dir = "/sys/devices/virtual/kfd/kfd/topology/nodes/" + std::to_string(n);
      std::string gpu_id_text;
      try {
        gpu_id_text = read_text_file(*seam, dir + "/gpu_id");
      } catch (const std::runtime_error&) {
        break;
      }
      const std::string properties_path = dir + "/properties (emulated)";
      AmdGpuNode node = parse_kfd_node_properties(read_text_file(*seam, dir + "/properties"), properties_path);
      node.node = n;
      const auto gpu_id = parse_unsigned(trim(gpu_id_text));
      if (!gpu_id) fail(dir + "/gpu_id (emulated)", "is '" + std::string(trim(gpu_id_text)) + "'; expected a decimal id");
      node.gpu_id = property_as_u32("gpu_id", *gpu_id, dir + "/gpu_id (emulated)");
      if (node.gpu_id != 0) amd.gpus.push_back(std::move(node));
    }
  } catch (const std::exception& e) {
    amd.gpus_error = e.what();
  }
  return amd;
}

Devices probe_devices(const fs::path& root) {
  NvidiaInfo nvidia = probe_nvidia(root);
  AmdInfo amd = probe_amd(root);
  if (root == fs::path("/")) nvidia = probe_nvidia_driver(std::move(nvidia)), amd = probe_amd_driver(std::move(amd));
  return {probe_cpu(root), std::move(nvidia), std::move(amd)};
}

}  // namespace doorbell::kernel_interface
