#include "hcq/amd/amd_registers.h"

#include <stdexcept>
#include <string>

namespace doorbell::amd {
namespace {

// Absolute dword addresses: firmware-notes/amd-pm4.md §3 (gc_11_0_0_offset.h / gc_9_4_3_offset.h, SEG0 + offset).
// Only COMPUTE_PGM_RSRC3 differs between the two IPs.
constexpr ComputeRegisters kGc11 = [] {
  ComputeRegisters r{0x2E00, 0x2E01, 0x2E04, 0x2E07, 0x2E0C, 0x2E0D, 0x2E10, 0x2E12, 0x2E13, 0x2E28,
                     0x2E15, 0x2E16, 0x2E18, 0x2E1B, 0x2E40};
  r.tmpring_wavesize_unit = 256;
  r.acquire_mem_gcr = true;
  r.wave32_dispatch = true;
  return r;
}();

constexpr ComputeRegisters kGc943 = [] {
  ComputeRegisters r{0x2E00, 0x2E01, 0x2E04, 0x2E07, 0x2E0C, 0x2E0D, 0x2E10, 0x2E12, 0x2E13, 0x2E2D,
                     0x2E15, 0x2E16, 0x2E18, 0x2E1B, 0x2E40};
  r.tmpring_wavesize_unit = 1024;
  r.acquire_mem_gcr = false;
  r.wave32_dispatch = false;
  return r;
}();

}  // namespace

GfxIp gfx_ip_from_target_version(uint32_t gfx_target_version) {
  // KFD's gfx_target_version (kfd_device.c): gfx1100 is 110000, gfx942 is 90402.
  if (gfx_target_version == 110000) return GfxIp::kGc11_0;
  if (gfx_target_version == 90402) return GfxIp::kGc9_4_3;
  throw std::invalid_argument("gfx_target_version " + std::to_string(gfx_target_version) +
                              " is not supported: expected 110000 (gc 11.0, gfx1100) or 90402 (gc 9.4.3, gfx942)");
}

std::string gfx_ip_name(GfxIp ip) { return ip == GfxIp::kGc11_0 ? "gc 11.0 (gfx1100)" : "gc 9.4.3 (gfx942)"; }

const ComputeRegisters& compute_registers(GfxIp ip) { return ip == GfxIp::kGc11_0 ? kGc11 : kGc943; }

}  // namespace doorbell::amd
