#include "kernel-interface/nvidia/driver_version.h"

#include <charconv>
#include <stdexcept>

#include "kernel-interface/device_probe.h"
#include "kernel-interface/nvidia/nv_rm.h"

namespace doorbell::kernel_interface::nvidia {

int nv_driver_major(std::string_view version, std::string_view source) {
  int major = 0;
  const auto [end, error] = std::from_chars(version.data(), version.data() + version.size(), major);
  const bool dotted = end != version.data() && (end == version.data() + version.size() || *end == '.');
  if (error != std::errc() || !dotted || major <= 0) {
    throw std::invalid_argument(std::string(source) + ": driver version '" + std::string(version) +
                                "' is not a dotted decimal version; expected e.g. '580.159'");
  }
  return major;
}

std::string read_nv_driver_version(SyscallSeam& seam, const std::string& path) {
  return parse_nvidia_version(read_text_file(seam, path), path).version;
}

void require_supported_nv_driver(std::string_view version, std::string_view source) {
  const int major = nv_driver_major(version, source);
  if (major != kSupportedNvDriverMajor) {
    throw std::runtime_error("NVIDIA driver " + std::string(version) + " (from " + std::string(source) +
                             ") is not supported: doorbell's RM and UVM struct layouts are driver " +
                             std::to_string(kSupportedNvDriverMajor) + "'s, and driver " + std::to_string(major) +
                             " differs in sizes RM checks or misreads; install a " +
                             std::to_string(kSupportedNvDriverMajor) + ".x driver");
  }
}

std::string check_nv_driver_version(SyscallSeam& seam, NvRm& rm) {
  const std::string path(kProcDriverVersionPath);
  require_supported_nv_driver(read_nv_driver_version(seam, path), path);
  const std::string rm_version = rm.build_version();
  require_supported_nv_driver(rm_version, "NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2");
  return rm_version;
}

}  // namespace doorbell::kernel_interface::nvidia
