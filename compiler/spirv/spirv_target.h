// The SPIR-V target (compiler/target.h) for a Vulkan device (hcq/vk/): the GPU pipeline (compiler/pipeline.h) within
// the device's own limits, the SPIR-V renderer (compiler/spirv/spirv_renderer.h) and our SPIR-V assembler
// (compiler/spirv/spirv_module.h). render() returns the module as SPIR-V assembly text (the PROGRAM's SOURCE, in the
// syntax of spirv-as, what DEBUG=4 prints); compile() assembles exactly that text into the words the device loads
// (compiler/spirv/spirv_kernel_abi.h). No glslang, shaderc or SPIRV-Tools at run time.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "compiler/target.h"

namespace doorbell {

// What the device reports (vkGetPhysicalDeviceProperties2 / Features2) that changes the code: the launch limits
// and the optional types the shaders may use.
struct SpirvDeviceCaps {
  std::string device_name;                 // "llvmpipe (LLVM 15.0.6, 256 bits)": in the target's name and cache key
  std::string driver;                      // "Mesa 22.3.6": in the cache key
  uint32_t subgroup_size = 32;             // VkPhysicalDeviceSubgroupProperties::subgroupSize
  int64_t max_threads_per_block = 128;     // maxComputeWorkGroupInvocations
  std::array<int64_t, 3> max_local{128, 128, 64};          // maxComputeWorkGroupSize
  std::array<int64_t, 3> max_global{65535, 65535, 65535};  // maxComputeWorkGroupCount
  int64_t max_shared_bytes = 16384;        // maxComputeSharedMemorySize
  // Features (Vulkan 1.0 shaderInt64/shaderInt16/shaderFloat64, 1.2 shaderInt8/shaderFloat16,
  // storageBuffer8BitAccess, storageBuffer16BitAccess). A kernel using a type the device lacks is refused at render
  // time, naming the type and the missing feature.
  bool int8 = false, int16 = false, int64 = false, float16 = false, float64 = false;
  bool storage8 = false, storage16 = false;
  // VkPhysicalDeviceFloatControlsProperties::shaderSignedZeroInfNanPreserveFloat{16,32,64}: when true the module
  // declares the SignedZeroInfNanPreserve execution mode for that width, so the driver keeps -0, inf and NaN exact.
  bool preserve_nan16 = false, preserve_nan32 = false, preserve_nan64 = false;
};

// A target for one Vulkan device. Throws std::invalid_argument naming what is missing when the device lacks what
// every kernel needs (int64 addresses: shaderInt64).
std::unique_ptr<Target> make_spirv_target(const SpirvDeviceCaps& caps);

// The caps of Mesa's lavapipe 22.3 as vulkaninfo reports them on Debian 12: for tests that render and validate
// without opening a device.
SpirvDeviceCaps lavapipe_caps();

}  // namespace doorbell
