#pragma once
// Makes MOCKGPU=1 reach mockgpu's emulators in this program: registers them with kernel-interface
// (kernel-interface/driver_seams.h), so that a device opened under MOCKGPU=1 runs on an emulated driver and GPU in
// this process: "nvidia" gets an emulated machine of MOCKGPU_NV_GPUS H200s (default 1; mockgpu/nv/mock_nv_seam.h, the
// default MockGpuConfig), one machine shared by the devices open at once (NV is its GPU 0, NV:1 its GPU 1), and a
// fresh one once they are all closed; "amd" likewise gets an emulated KFD machine of MOCKGPU_AMD_GPUS 7900 XTXs
// (mockgpu/amd/mock_amd_seam.h, amd_machine_options). The runtime links no emulator: the `doorbell` program calls
// this from main, test binaries and the examples' nv.* runs link doorbell_mockgpu_installed, which calls it before
// main. Calling it again changes nothing.
#include "mockgpu/amd/mock_kfd.h"

namespace doorbell::mockgpu {

void install();

// MOCKGPU_NV_GPUS: how many GPUs the emulated NVIDIA machine has (1 when unset). Throws std::invalid_argument naming
// the variable when it is not a count from 1 to 16.
int nv_gpu_count_from_environment();
// MOCKGPU_AMD_GPUS: the same for the emulated AMD machine.
int amd_gpu_count_from_environment();
// The emulated AMD machine install() registers: `gpus` 7900 XTXs with the engines and shader core this build has.
amd::MockKfdOptions amd_machine_options(int gpus);

}  // namespace doorbell::mockgpu
