// The compute registers our PM4 dispatch programs, per graphics IP: gc 11.0 (gfx1100, RDNA3) and gc 9.4.3 (gfx942,
// CDNA3), as data (one table per IP, the way hcq/nv/qmd.cpp keeps QMD versions) with their source in
// firmware-notes/amd-pm4.md. Addresses are absolute dword register addresses; SET_SH_REG carries addr - 0x2C00.
#pragma once
#include <cstdint>
#include <string>

namespace doorbell::amd {

enum class GfxIp { kGc11_0, kGc9_4_3 };

// gfx_target_version (KFD topology, major*10000 + minor*100 + stepping) to its IP: 110000 -> kGc11_0,
// 90402 -> kGc9_4_3. Throws std::invalid_argument naming the version and the supported ones.
GfxIp gfx_ip_from_target_version(uint32_t gfx_target_version);
std::string gfx_ip_name(GfxIp ip);  // "gc 11.0 (gfx1100)"

struct ComputeRegisters {
  uint32_t dispatch_initiator, dim_x, start_x, num_thread_x, pgm_lo, pgm_hi, dispatch_scratch_base_lo,
      pgm_rsrc1, pgm_rsrc2, pgm_rsrc3, resource_limits, static_thread_mgmt_se0, tmpring_size, restart_x,
      user_data_0;
  uint32_t sh_reg_base = 0x2C00, sh_reg_end = 0x2FFF;        // SET_SH_REG window
  uint32_t uconfig_reg_base = 0xC000, uconfig_reg_end = 0xFFFF;  // SET_UCONFIG_REG window
  uint32_t lds_granule_bytes = 512;    // RSRC2.LDS_SIZE unit
  uint32_t tmpring_wavesize_unit = 256;  // COMPUTE_TMPRING_SIZE.WAVESIZE unit in bytes (1024 on gc 9.4.3)
  bool acquire_mem_gcr = true;         // ACQUIRE_MEM is the 8-dword gfx10+ form with GCR_CNTL (else 7-dword gfx9)
  bool wave32_dispatch = true;         // DISPATCH_INITIATOR.CS_W32_EN exists
};
const ComputeRegisters& compute_registers(GfxIp ip);

}  // namespace doorbell::amd
