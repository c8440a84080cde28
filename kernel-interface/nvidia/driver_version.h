#pragma once
// The NVIDIA driver version, and the refusal of any major other than the one whose struct layouts
// kernel-interface/nvidia/ encodes (580). Other majors differ in sizes RM checks or silently misreads
// (NVOS46, NV_VASPACE_ALLOCATION_PARAMETERS, GET_CLASSLIST_V2, GPFIFO_SCHEDULE, UVM_FREE_PARAMS,
// NV_CHANNEL_ALLOC_PARAMS; firmware-notes/nvidia-hopper.md §7).

#include <string>
#include <string_view>

#include "kernel-interface/syscall_seam.h"

namespace doorbell::kernel_interface::nvidia {

class NvRm;

inline constexpr int kSupportedNvDriverMajor = 580;
inline constexpr std::string_view kProcDriverVersionPath = "/proc/driver/nvidia/version";

// 580 for "580.159" or "580.65.06". Throws std::invalid_argument naming `source` when `version` is not dotted decimal.
int nv_driver_major(std::string_view version, std::string_view source);

// The version in /proc/driver/nvidia/version ("NVRM version: ... 580.159 ..."), read through the seam.
std::string read_nv_driver_version(SyscallSeam& seam, const std::string& path = std::string(kProcDriverVersionPath));

// Throws std::runtime_error naming the version found, where it came from and the supported major, unless the major
// is kSupportedNvDriverMajor.
void require_supported_nv_driver(std::string_view version, std::string_view source);

// Checks both the /proc text and RM's own build version (NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2; needs a root
// client in `rm`); returns RM's version.
std::string check_nv_driver_version(SyscallSeam& seam, NvRm& rm);

}  // namespace doorbell::kernel_interface::nvidia
