// How a SPIR-V kernel (compiler/spirv/spirv_target.h) receives its arguments from the Vulkan device (hcq/vk/): the one
// contract between the SPIR-V renderer and the device's launch. Both sides include this header and nothing else of
// each other.
//
// Addressing: physical storage buffer pointers (SPIR-V `OpMemoryModel PhysicalStorageBuffer64 GLSL450`, capability
// PhysicalStorageBufferAddresses; Vulkan 1.2 core feature bufferDeviceAddress), not the logical model with
// descriptor sets. Why: an HCQ buffer is a 64-bit device address, possibly inside a memory-planner arena at an
// offset (hcq/hw_queue.h exec takes addresses). With pointers, a buffer argument is one 64-bit word in memory that a
// bound queue patches in place, as NV patches its constant bank; there are no descriptor sets to allocate, update
// or re-bind per launch, no limit of maxPerStageDescriptorStorageBuffers (32 on lavapipe) buffers per kernel, and
// no maxStorageBufferRange (128 MiB on lavapipe) per binding.
//
// The launch:
//  - Push constants: kSpirvPushConstantBytes bytes at offset 0, stage COMPUTE: one uint64, the device address of the
//    launch's argument block. The device records it once per exec command (vkCmdPushConstants) and never changes it:
//    each exec of a recorded command buffer has an argument block of its own.
//  - The argument block: 8-byte words, 8-byte aligned. Word i for i < ProgramInfo::buffers is buffer slot i's device
//    address (the slot order of ProgramInfo, i.e. the kernel's PARAM slots). Then one word per ProgramInfo::vars
//    entry, in that order: the variable's value as int64 (two's complement); a kernel whose variable is 32-bit reads
//    the low word. Patching a bound queue's buffer or scalar rewrites one word of this block.
//  - The entry point: `OpEntryPoint GLCompute %fn "<ProgramInfo::name>"`, with `OpExecutionMode %fn LocalSize x y z`
//    equal to ProgramInfo::local_size, so the pipeline needs no specialization constants; the device dispatches
//    ProgramInfo::global_size workgroups (vkCmdDispatch).
//  - The binary (CompiledBinary::bytes, the PROGRAM's BINARY) is the module's 32-bit words, little-endian, starting
//    with the magic number 0x07230203.
#pragma once
#include <cstdint>

namespace doorbell {

inline constexpr uint32_t kSpirvPushConstantBytes = 8;  // one uint64: the argument block's device address
inline constexpr uint32_t kSpirvArgumentWordBytes = 8;  // each buffer address and each variable
inline constexpr uint32_t kSpirvArgumentBlockAlign = 16;
// The SPIR-V version every module declares: 1.5 is Vulkan 1.2's, the oldest Vulkan with timeline semaphores and
// buffer device addresses in core.
inline constexpr uint32_t kSpirvVersionWord = 0x00010500;

}  // namespace doorbell
