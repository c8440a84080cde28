#pragma once
// Makes MOCKGPU=1 reach mockgpu's emulators in this program: registers them with kernel-interface
// (kernel-interface/driver_seams.h), so that a device opened under MOCKGPU=1 runs on an emulated driver and GPU in
// this process: "nvidia" gets an emulated machine of MOCKGPU_NV_GPUS H200s (default 1; mockgpu/nv/mock_nv_seam.h, the
// default MockGpuConfig), one machine shared by the devices open at once (NV is its GPU 0, NV:1 its GPU 1), and a
// fresh one once they are all closed. The runtime links no emulator: the `doorbell` program calls this from main,
// test binaries and the examples' nv.* runs link doorbell_mockgpu_installed, which calls it before main. Calling it
// again changes nothing.
namespace doorbell::mockgpu {

void install();

// MOCKGPU_NV_GPUS: how many GPUs the emulated NVIDIA machine has (1 when unset). Throws std::invalid_argument naming
// the variable when it is not a count from 1 to 16.
int nv_gpu_count_from_environment();

}  // namespace doorbell::mockgpu
