// What a GPU target allows a kernel launch: the limits the GPU lowering (compiler/gpu/gpu_dims.h) keeps within,
// and what the renderers emit for. Values from the vendors' documentation:
//  - NVIDIA: CUDA C++ Programming Guide, "Features and Technical Specifications" (compute capability 8.0 and 9.0):
//    1024 threads per block, block (1024, 1024, 64), grid (2^31-1, 65535, 65535), warp 32, 48 KiB static shared
//    memory per block (more only by opt-in, which we do not use).
//  - AMD: LLVM AMDGPU usage ("AMDGPU Processors", "Memory spaces") and the HIP programming guide: 1024 work-items
//    per work-group, work-group (1024, 1024, 1024), grid up to 2^32-1 work-items per dimension, wave64 on gfx942
//    (CDNA3), wave32 by default on gfx1100 (RDNA3), 64 KiB LDS per work-group.
//  - Vulkan: no fixed table; a GpuTarget is made from the device's own limits (VkPhysicalDeviceLimits, subgroup size)
//    by compiler/spirv/spirv_target.cpp, arch "vulkan1.2".
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace doorbell {

enum class GpuVendor : uint8_t { NV, AMD, VK };

struct GpuTarget {
  GpuVendor vendor;
  std::string arch;                      // "sm_80", "sm_90", "gfx1100", "gfx942", "vulkan1.2"
  int warp_size;                         // threads that execute in lockstep
  int64_t max_threads_per_block;         // product of the local sizes
  std::array<int64_t, 3> max_local;      // per dimension x, y, z
  std::array<int64_t, 3> max_global;     // blocks (NV) or work-groups (AMD) per dimension x, y, z
  int64_t max_shared_bytes;              // local (shared) memory per block
};

// The fixed NV and AMD targets. Throws std::invalid_argument naming the arch and the ones that exist.
const GpuTarget& gpu_target(std::string_view arch);

}  // namespace doorbell
