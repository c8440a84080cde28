// What one emulated AMD GPU is: the values its KFD topology node reports (sysfs properties), its render node's
// AMDGPU_INFO_DEV_INFO answer, and its memory. The default is a Radeon RX 7900 XTX (gfx1100, Navi 31) with the values
// of a real topology dump (firmware-notes/amd-kfd.md §K9); mock_amd_gfx942() is an MI300X-like gfx942 node whose
// topology values are inferred, not dumped (same section).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace doorbell::mockgpu::amd {

struct MockAmdGpuConfig {
  std::string name = "gfx1100";        // the node's `name` file (tinygrad's dump: the gfx target)
  uint32_t gpu_id = 0xb6c4;            // the node's gpu_id: KFD's 16-bit hash of the device (any nonzero value)
  uint32_t gfx_target_version = 110000;  // major*10000 + minor*100 + stepping (kfd_device.c: GC 11.0.0 -> 110000)
  uint32_t vendor_id = 0x1002, device_id = 0x744c;  // PCI ids: AMD, Navi 31 XTX
  uint32_t family = 145;               // AMDGPU_FAMILY_GC_11_0_0 (linux uapi amdgpu_drm.h; newer than libdrm 2.4.114)
  uint32_t chip_rev = 0, external_rev = 0x10, pci_rev = 0xc8;
  // Shader array layout (the dump's properties): CUs = simd_count / simd_per_cu.
  uint32_t simd_count = 192, simd_per_cu = 2, array_count = 12, simd_arrays_per_engine = 2, cu_per_simd_array = 8;
  uint32_t max_waves_per_simd = 16, lds_size_in_kb = 64, gds_size_in_kb = 0, wave_front_size = 32;
  uint32_t max_slots_scratch_cu = 32, num_xcc = 1;
  uint32_t num_sdma_engines = 2, num_sdma_xgmi_engines = 0, num_sdma_queues_per_engine = 6, num_cp_queues = 8;
  uint32_t max_engine_clk_fcompute = 2482, max_engine_clk_ccompute = 2400;  // MHz
  uint64_t vram_bytes = uint64_t{24} << 30;  // mem_banks/0 size_in_bytes
  uint32_t drm_render_minor = 128;           // /dev/dri/renderD<minor>
  uint32_t location_id = 0x0300, domain = 0;

  uint32_t cu_count() const { return simd_count / simd_per_cu; }
  uint32_t shader_engines() const { return array_count / simd_arrays_per_engine; }
};

// An MI300X-like gfx942 node (gfx_target_version 90402, 8 XCCs, wave64). Topology values inferred
// (firmware-notes/amd-kfd.md §K9).
inline MockAmdGpuConfig mock_amd_gfx942() {
  MockAmdGpuConfig c;
  c.name = "gfx942";
  c.gpu_id = 0x5e2a;
  c.gfx_target_version = 90402;
  c.device_id = 0x74a1;
  c.family = 141;  // AMDGPU_FAMILY_AI (libdrm amdgpu_drm.h:1151)
  c.simd_count = 1216;
  c.simd_per_cu = 4;
  c.array_count = 32;
  c.simd_arrays_per_engine = 1;
  c.cu_per_simd_array = 10;
  c.max_waves_per_simd = 8;
  c.wave_front_size = 64;
  c.num_xcc = 8;
  c.num_sdma_engines = 2;
  c.num_sdma_xgmi_engines = 14;
  c.num_sdma_queues_per_engine = 8;
  c.num_cp_queues = 24;
  c.max_engine_clk_fcompute = 2100;
  c.max_engine_clk_ccompute = 2100;
  c.vram_bytes = uint64_t{192} << 30;
  return c;
}

// `count` GPUs of the default kind: distinct gpu_ids, render minors 128, 129, ... and PCI locations.
inline std::vector<MockAmdGpuConfig> mock_amd_configs(int count, const MockAmdGpuConfig& base = {}) {
  std::vector<MockAmdGpuConfig> gpus;
  for (int i = 0; i < count; ++i) {
    MockAmdGpuConfig c = base;
    c.gpu_id = base.gpu_id + static_cast<uint32_t>(i) * 0x111;
    c.drm_render_minor = base.drm_render_minor + static_cast<uint32_t>(i);
    c.location_id = base.location_id + static_cast<uint32_t>(i) * 0x100;
    gpus.push_back(c);
  }
  return gpus;
}

}  // namespace doorbell::mockgpu::amd
