#pragma once
// NV_STATUS codes that RM and UVM calls return, and the exception that carries one.
// Source: NVIDIA/open-gpu-kernel-modules 580.x src/common/sdk/nvidia/inc/nvstatuscodes.h.

#include <stdexcept>
#include <string>

#include "kernel-interface/nvidia/nv_types.h"

namespace doorbell::kernel_interface::nvidia {

inline constexpr NV_STATUS NV_OK = 0x00;
inline constexpr NV_STATUS NV_ERR_BUFFER_TOO_SMALL = 0x02;
inline constexpr NV_STATUS NV_ERR_GPU_UUID_NOT_FOUND = 0x12;
inline constexpr NV_STATUS NV_ERR_ILLEGAL_ACTION = 0x16;
inline constexpr NV_STATUS NV_ERR_IN_USE = 0x17;
inline constexpr NV_STATUS NV_ERR_INSERT_DUPLICATE_NAME = 0x19;
inline constexpr NV_STATUS NV_ERR_INSUFFICIENT_RESOURCES = 0x1a;
inline constexpr NV_STATUS NV_ERR_INVALID_ADDRESS = 0x1e;
inline constexpr NV_STATUS NV_ERR_INVALID_ARGUMENT = 0x1f;
inline constexpr NV_STATUS NV_ERR_INVALID_CLASS = 0x22;
inline constexpr NV_STATUS NV_ERR_INVALID_CLIENT = 0x23;
inline constexpr NV_STATUS NV_ERR_INVALID_COMMAND = 0x24;
inline constexpr NV_STATUS NV_ERR_INVALID_DEVICE = 0x26;
inline constexpr NV_STATUS NV_ERR_INVALID_FLAGS = 0x29;
inline constexpr NV_STATUS NV_ERR_INVALID_LIMIT = 0x2e;
inline constexpr NV_STATUS NV_ERR_INVALID_OBJECT = 0x31;
inline constexpr NV_STATUS NV_ERR_INVALID_OBJECT_HANDLE = 0x33;
inline constexpr NV_STATUS NV_ERR_INVALID_OBJECT_NEW = 0x34;
inline constexpr NV_STATUS NV_ERR_INVALID_OBJECT_PARENT = 0x36;
inline constexpr NV_STATUS NV_ERR_INVALID_OFFSET = 0x37;
inline constexpr NV_STATUS NV_ERR_INVALID_PARAM_STRUCT = 0x3a;
inline constexpr NV_STATUS NV_ERR_INVALID_POINTER = 0x3d;
inline constexpr NV_STATUS NV_ERR_INVALID_STATE = 0x40;
inline constexpr NV_STATUS NV_ERR_NO_MEMORY = 0x51;
inline constexpr NV_STATUS NV_ERR_NOT_SUPPORTED = 0x56;
inline constexpr NV_STATUS NV_ERR_OBJECT_NOT_FOUND = 0x57;
inline constexpr NV_STATUS NV_ERR_OPERATING_SYSTEM = 0x59;
// An fd that already carries an mmap context (nvstatuscodes.h:128; kernel-open/nvidia/nv-usermap.c:53-57).
inline constexpr NV_STATUS NV_ERR_STATE_IN_USE = 0x63;
inline constexpr NV_STATUS NV_ERR_UVM_ADDRESS_IN_USE = 0x68;

// "NV_ERR_INVALID_CLASS" for 0x22; "NV_STATUS" for codes this table does not name.
const char* nv_status_name(NV_STATUS status);
// "NV_ERR_INVALID_CLASS (0x22)".
std::string describe_nv_status(NV_STATUS status);
// "0xcaf00003": how handles, classes and commands appear in messages.
std::string hex(NvU64 value);

// An RM or UVM call that the driver answered with a status other than NV_OK.
class NvStatusError : public std::runtime_error {
 public:
  NvStatusError(const std::string& what_failed, NV_STATUS status)
      : std::runtime_error(what_failed + " failed: " + describe_nv_status(status)), status_(status) {}
  NV_STATUS status() const { return status_; }

 private:
  NV_STATUS status_;
};

// An RM or UVM ioctl that the kernel refused before RM saw it (bad size, wrong fd...): carries the errno.
class NvIoctlError : public std::runtime_error {
 public:
  NvIoctlError(const std::string& what_failed, int error);
  int error() const { return error_; }

 private:
  int error_;
};

}  // namespace doorbell::kernel_interface::nvidia
