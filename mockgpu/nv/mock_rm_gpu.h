#pragma once
// What the emulated driver reports about a GPU: an H200 (GH100, SM 9.0) behind driver 580.159 unless a test asks for
// something else (e.g. driver 575 to check the version refusal). A machine of several GPUs is a list of these
// (mock_gpu_configs).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace doorbell::mockgpu::nv {

struct MockGpuConfig {
  std::string driver_version = "580.159";
  bool open_kernel_module = true;
  std::uint32_t gpu_id = 0x100;  // NV_ESC_CARD_INFO gpu_id (RM derives it from the PCI location: bus 1)
  std::uint32_t pci_domain = 0;
  std::uint8_t pci_bus = 1;
  std::uint16_t pci_vendor_id = 0x10de;
  std::uint16_t pci_device_id = 0x2335;  // H200 SXM (not checked against a PCI id database)
  std::array<std::uint8_t, 16> uuid = {0xd0, 0x0b, 0xe1, 0x10, 0x00, 0x00, 0x4e, 0x5e,
                                       0x90, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01};
  std::uint64_t vram_bytes = 141ull << 30;
  // GR info (NV2080_CTRL_CMD_GR_GET_INFO): SM 9.0 and the full GH100 floorplan (8 GPCs x 9 TPCs x 2 SMs).
  std::uint32_t sm_version = 0x900;
  std::uint32_t max_warps_per_sm = 64;
  std::uint32_t num_gpcs = 8;
  std::uint32_t num_tpc_per_gpc = 9;
  std::uint32_t num_sm_per_tpc = 2;
  // The classes the GPU offers (NV0080_CTRL_CMD_GPU_GET_CLASSLIST); empty: gh100_class_list(). A test sets an
  // Ampere/Ada list to check the backend's fallbacks.
  std::vector<std::uint32_t> class_list;
  // What the GPU's timer (PTIMER, the time a semaphore release stamps) reads ahead of the host's CLOCK_MONOTONIC;
  // unset: the wall-clock epoch RM gives it (mockgpu/nv/ptimer.h). A test sets it to check a calibration.
  std::optional<std::int64_t> ptimer_offset_ns;
};

// A machine of `count` GPUs like `first`: GPU i sits on PCI bus first.pci_bus + i, with gpu_id (bus << 8, as RM
// derives it from the PCI location) and a UUID of its own (the last byte plus i). Throws std::invalid_argument for a
// count outside 1..16.
std::vector<MockGpuConfig> mock_gpu_configs(int count, const MockGpuConfig& first = {});

// The classes a GH100 offers (NV0080_CTRL_CMD_GPU_GET_CLASSLIST), after RM580 g_gpu_class_list.c
// gpuGetEngClassDescriptorList_GH100 / gpuGetNoEngClassList_GH100 (firmware-notes/nvidia-hopper.md §4): the Hopper
// compute, copy, GPFIFO and usermode classes plus the legacy GPFIFO and usermode ones, and no Ampere/Ada compute or
// copy class. Abridged to the classes those notes name.
std::vector<std::uint32_t> gh100_class_list();
// An Ampere GA10x (SM 8.6) list: AMPERE_COMPUTE_B, AMPERE_DMA_COPY_B, the Ampere GPFIFO and usermode classes.
std::vector<std::uint32_t> ga10x_class_list();

}  // namespace doorbell::mockgpu::nv
