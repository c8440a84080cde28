#pragma once
// Makes MOCKGPU=1 reach mockgpu's emulators in this program: registers them with kernel-interface
// (kernel-interface/driver_seams.h), so that a device opened under MOCKGPU=1 runs on an emulated driver and GPU in
// this process: "nvidia" gets a fresh emulated H200 (mockgpu/nv/mock_nv_seam.h, the default MockGpuConfig) per
// open. The runtime links no emulator: the `doorbell` program calls this from main, test binaries and the examples'
// nv.* runs link doorbell_mockgpu_installed, which calls it before main. Calling it again changes nothing.
namespace doorbell::mockgpu {

void install();

}  // namespace doorbell::mockgpu
