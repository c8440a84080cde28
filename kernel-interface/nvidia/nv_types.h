#pragma once
// NVIDIA's fixed-width type names, as the RM headers spell them (src/common/sdk/nvidia/inc/nvtypes.h). NvP64 is a
// user pointer carried as a 64-bit integer, so the struct layouts do not depend on the pointer size.

#include <cstdint>

namespace doorbell::kernel_interface::nvidia {

using NvU8 = std::uint8_t;
using NvU16 = std::uint16_t;
using NvU32 = std::uint32_t;
using NvS32 = std::int32_t;
using NvU64 = std::uint64_t;
using NvV32 = std::uint32_t;
using NvBool = std::uint8_t;
using NvHandle = std::uint32_t;
using NvP64 = std::uint64_t;
using NV_STATUS = std::uint32_t;

// A user pointer as RM expects it in an NvP64 field.
template <class T>
inline NvP64 nv_p64(T* pointer) {
  return static_cast<NvP64>(reinterpret_cast<std::uintptr_t>(pointer));
}

}  // namespace doorbell::kernel_interface::nvidia
