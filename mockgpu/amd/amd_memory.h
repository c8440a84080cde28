// The emulated AMD GPU's virtual address space. KFD gives every allocation the same VA on the GPU as on the CPU
// (firmware-notes/amd-kfd.md §K4); the emulated KFD maps each allocation at that VA in this map, onto its own view of
// the BO's memfd (a USERPTR onto the process's pages), and the command processor, the SDMA engine and the shader core
// reach memory only through translate(): an address no live allocation covers is a fault that names it. The map itself is the NV mock's
// (mockgpu/nv/gpu_memory.h): nothing in it is NVIDIA-specific.
#pragma once
#include "mockgpu/nv/gpu_memory.h"

namespace doorbell::mockgpu::amd {
using GpuMemory = nv::GpuMemory;
}  // namespace doorbell::mockgpu::amd
