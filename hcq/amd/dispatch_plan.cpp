#include "hcq/amd/dispatch_plan.h"

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "hcq/amd/pm4.h"
#include "hcq/amd/encoder_checks.h"

namespace doorbell::amd {
namespace {

using encoder::hex;
using encoder::hi;
using encoder::lo;
using encoder::require_aligned;

std::string dims(Dim3 d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument("dispatch: " + what); }

void check_dims(Dim3 grid, Dim3 block) {
  for (int i = 0; i < 3; i++)
    if (block[i] == 0) fail("block " + dims(block) + " has an empty dimension (each must be >= 1)");
  const uint64_t threads = uint64_t{block[0]} * block[1] * block[2];
  if (threads > 1024) fail("block " + dims(block) + " is " + std::to_string(threads) + " threads (at most 1024)");
  for (int i = 0; i < 3; i++)
    if (grid[i] == 0) fail("grid " + dims(grid) + " has an empty dimension (each must be >= 1)");
}

// §4 RSRC2 fields.
constexpr uint32_t kRsrc2ScratchEn = 1u << 0;
constexpr uint32_t kRsrc2LdsShift = 15, kRsrc2LdsMask = 0x1FFu << kRsrc2LdsShift;

void put16(uint8_t* p, uint16_t v) { std::memcpy(p, &v, 2); }  // little-endian host, as the GPU reads it
void put32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
void put64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }

uint32_t grid_dims(Dim3 grid, Dim3 block) {
  if (uint64_t{grid[2]} * block[2] > 1) return 3;
  if (uint64_t{grid[1]} * block[1] > 1) return 2;
  return 1;
}

}  // namespace

DispatchPlan plan_dispatch(GfxIp ip, const KernelDescriptor& kd, uint64_t kd_va, const LaunchAddresses& launch,
                           Dim3 grid, Dim3 block) {
  const ComputeRegisters& regs = compute_registers(ip);
  check_dims(grid, block);
  DispatchPlan p;

  // Code address (§9.1): the descriptor is 64-byte aligned; the entry is 256-byte aligned and below 2^48, since
  // PGM_LO/HI hold entry >> 8 in 32 + 8 bits.
  if (kd_va % 64) fail("kernel descriptor address " + hex(kd_va) + " is not 64-byte aligned");
  const uint64_t entry = kd_va + static_cast<uint64_t>(kd.kernel_code_entry_byte_offset);
  if (entry % 256) fail("entry " + hex(entry) + " (descriptor + entry offset) is not 256-byte aligned");
  if (entry >> 48) fail("entry " + hex(entry) + " is not below 2^48 (PGM_HI holds 8 bits of entry >> 8)");
  p.pgm_lo = static_cast<uint32_t>(entry >> 8);
  p.pgm_hi = static_cast<uint32_t>(entry >> 40);

  // Wave size (§10.4): gc 9.4.3 runs wave64 only; on gc 11 the wave32 property needs CS_W32_EN.
  const bool wave32 = kd.enable_wavefront_size32();
  if (wave32 && !regs.wave32_dispatch)
    fail("the descriptor asks for wave32 (kernel_code_properties bit 10) but " + gfx_ip_name(ip) +
         " runs wave64 only");
  // DISPATCH_INITIATOR (§4): COMPUTE_SHADER_EN bit 0, FORCE_START_AT_000 bit 2, CS_W32_EN bit 15.
  p.initiator = 1u | (1u << 2) | (wave32 ? 1u << 15 : 0u);

  // LDS (§9.2): the descriptor leaves LDS_SIZE 0; the dispatch sets ceil(group segment / 512), within 64 KiB.
  if (kd.compute_pgm_rsrc2 & kRsrc2LdsMask)
    fail("the descriptor's RSRC2.LDS_SIZE is " + std::to_string((kd.compute_pgm_rsrc2 & kRsrc2LdsMask) >> kRsrc2LdsShift) +
         " (must be 0: the dispatch sets it)");
  if (kd.group_segment_fixed_size > 65536)
    fail("group segment " + std::to_string(kd.group_segment_fixed_size) + " bytes exceeds the 64 KiB of LDS");
  const uint32_t lds_granules = (kd.group_segment_fixed_size + regs.lds_granule_bytes - 1) / regs.lds_granule_bytes;
  p.rsrc1 = kd.compute_pgm_rsrc1;
  p.rsrc2 = kd.compute_pgm_rsrc2 | (lds_granules << kRsrc2LdsShift);
  p.rsrc3 = kd.compute_pgm_rsrc3;
  p.resource_limits = 0;

  // User SGPRs (§10.1), in property-bit order.
  if (kd.enable_sgpr_private_segment_buffer())
    fail("PRIVATE_SEGMENT_BUFFER (kernel_code_properties bit 0) is not supported: its buffer descriptor is not "
         "recorded for these IPs");
  if (kd.enable_sgpr_flat_scratch_init())
    fail("FLAT_SCRATCH_INIT (kernel_code_properties bit 5) is not supported");
  if (kd.kernarg_preload != 0) fail("kernarg preloading (kernarg_preload " + hex(kd.kernarg_preload) + ") is not supported");
  auto push64 = [&](uint64_t v) {
    p.user_data.push_back(static_cast<uint32_t>(v));
    p.user_data.push_back(static_cast<uint32_t>(v >> 32));
  };
  if (kd.enable_sgpr_dispatch_ptr()) {
    if (launch.dispatch_packet_va == 0 || launch.dispatch_packet_va % 64)
      fail("DISPATCH_PTR is enabled but the dispatch packet address " + hex(launch.dispatch_packet_va) +
           " is not a nonzero 64-byte aligned address");
    push64(launch.dispatch_packet_va);
  }
  if (kd.enable_sgpr_queue_ptr()) {
    if (launch.queue_va == 0) fail("QUEUE_PTR is enabled but the queue address is 0");
    push64(launch.queue_va);
  }
  if (kd.enable_sgpr_kernarg_segment_ptr()) {
    if (kd.kernarg_size != 0 && (launch.kernarg_va == 0 || launch.kernarg_va % 8))
      fail("KERNARG_SEGMENT_PTR is enabled for " + std::to_string(kd.kernarg_size) + " bytes but the kernarg address " +
           hex(launch.kernarg_va) + " is not a nonzero 8-byte aligned address");
    push64(launch.kernarg_va);
  }
  if (kd.enable_sgpr_dispatch_id()) push64(launch.dispatch_id);
  if (kd.enable_sgpr_private_segment_size()) p.user_data.push_back(kd.private_segment_fixed_size);
  const uint32_t enabled = static_cast<uint32_t>(p.user_data.size());
  const uint32_t field = kd.user_sgpr_count();
  if (field > 16) fail("RSRC2.USER_SGPR is " + std::to_string(field) + " (at most 16)");
  if (field != enabled) {
    // gc 11: LLVM pads USER_SGPR so user plus system SGPRs (workgroup id x/y/z, workgroup info) reach 16
    // (firmware-notes/amd-pm4.md §10.1, GCNSubtarget::hasUserSGPRInit16Bug).
    uint32_t system = 0;
    for (int d = 0; d < 3; d++) system += kd.enable_sgpr_workgroup_id(d);
    system += (kd.compute_pgm_rsrc2 >> 10) & 1;
    const bool padded = ip == GfxIp::kGc11_0 && field > enabled && field + system == 16;
    if (!padded)
      fail("the properties enable " + std::to_string(enabled) + " user SGPRs but RSRC2.USER_SGPR is " +
           std::to_string(field) + (ip == GfxIp::kGc11_0 ? " (and user plus system SGPRs are not the padded 16)" : ""));
    p.user_data.resize(field, 0);
  }

  // Scratch (§9.3): TMPRING_SIZE = WAVES | WAVESIZE << 12, WAVESIZE in units of the IP's granule per wave.
  if (kd.compute_pgm_rsrc2 & kRsrc2ScratchEn) {
    const ScratchArea& sc = launch.scratch;
    if (sc.va == 0 || sc.va % 256 || (sc.va >> 48))
      fail("RSRC2.SCRATCH_EN is set but the scratch base " + hex(sc.va) +
           " is not a nonzero 256-byte aligned address below 2^48");
    if (sc.waves == 0 || sc.waves > 0xFFF)
      fail("scratch waves " + std::to_string(sc.waves) + " is outside 1-4095 (TMPRING_SIZE.WAVES 11:0)");
    const uint64_t lanes = wave32 ? 32 : 64;
    const uint64_t wave_bytes = uint64_t{kd.private_segment_fixed_size} * lanes;
    const uint64_t wavesize = (wave_bytes + regs.tmpring_wavesize_unit - 1) / regs.tmpring_wavesize_unit;
    const uint64_t wavesize_max = ip == GfxIp::kGc11_0 ? 0x7FFF : 0x1FFF;  // 26:12 on gc 11, 24:12 on gc 9.4.3
    if (wavesize > wavesize_max)
      fail("scratch of " + std::to_string(wave_bytes) + " bytes per wave exceeds TMPRING_SIZE.WAVESIZE");
    p.tmpring_size = sc.waves | static_cast<uint32_t>(wavesize << 12);
    p.scratch_lo = static_cast<uint32_t>(sc.va >> 8);
    p.scratch_hi = static_cast<uint32_t>(sc.va >> 40);
  }

  p.num_thread = block;
  p.groups = grid;
  return p;
}

size_t dispatch_dwords(const DispatchPlan& plan) {
  size_t n = set_sh_reg_dwords(2) + set_sh_reg_dwords(2) + set_sh_reg_dwords(1) + set_sh_reg_dwords(2) +
             set_sh_reg_dwords(1) + set_sh_reg_dwords(1) + set_sh_reg_dwords(6) + set_sh_reg_dwords(3) +
             kDispatchDirectDwords;
  if (!plan.user_data.empty()) n += set_sh_reg_dwords(plan.user_data.size());
  return n;
}

void write_dispatch(CmdStream& s, GfxIp ip, const DispatchPlan& p) {
  const ComputeRegisters& r = compute_registers(ip);
  if (p.user_data.size() > 16)
    throw std::invalid_argument("dispatch: " + std::to_string(p.user_data.size()) + " user data values (at most 16)");
  // The whole dispatch or nothing: a stream too short for it fails before its first packet.
  if (dispatch_dwords(p) > s.capacity() - s.size())
    throw std::logic_error("dispatch: " + std::to_string(dispatch_dwords(p)) + " dwords at dword " +
                           std::to_string(s.size()) + " pass the end of the stream's " + std::to_string(s.capacity()) +
                           " dwords");
  const uint32_t pgm[] = {p.pgm_lo, p.pgm_hi};
  const uint32_t rsrc12[] = {p.rsrc1, p.rsrc2};
  const uint32_t scratch[] = {p.scratch_lo, p.scratch_hi};
  const uint32_t threads[] = {0, 0, 0, p.num_thread[0], p.num_thread[1], p.num_thread[2]};  // START_X..Z = 0
  const uint32_t restart[] = {0, 0, 0};
  write_set_sh_reg(s, r, r.pgm_lo, pgm);
  write_set_sh_reg(s, r, r.pgm_rsrc1, rsrc12);
  write_set_sh_reg(s, r, r.pgm_rsrc3, std::span<const uint32_t>(&p.rsrc3, 1));
  write_set_sh_reg(s, r, r.dispatch_scratch_base_lo, scratch);
  write_set_sh_reg(s, r, r.resource_limits, std::span<const uint32_t>(&p.resource_limits, 1));
  write_set_sh_reg(s, r, r.tmpring_size, std::span<const uint32_t>(&p.tmpring_size, 1));
  write_set_sh_reg(s, r, r.start_x, threads);
  write_set_sh_reg(s, r, r.restart_x, restart);
  if (!p.user_data.empty()) write_set_sh_reg(s, r, r.user_data_0, p.user_data);
  write_dispatch_direct(s, p.groups[0], p.groups[1], p.groups[2], p.initiator);
}

void write_implicit_kernargs(std::span<uint8_t> at, Dim3 grid, Dim3 block) {
  // §10.3: block_count x/y/z u32 @0/4/8, group_size u16 @12/14/16, remainder u16 @18/20/22, grid_dims u16 @64.
  if (at.size() < 66)
    fail("the hidden kernarg area is " + std::to_string(at.size()) + " bytes (at least 66: grid_dims ends at 66)");
  check_dims(grid, block);
  std::memset(at.data(), 0, at.size());
  for (int i = 0; i < 3; i++) {
    put32(at.data() + 4 * i, grid[i]);
    put16(at.data() + 12 + 2 * i, static_cast<uint16_t>(block[i]));
    put16(at.data() + 18 + 2 * i, 0);  // whole workgroups: no partial last group
  }
  put16(at.data() + 64, static_cast<uint16_t>(grid_dims(grid, block)));
}

std::array<uint8_t, 64> dispatch_packet_bytes(const KernelDescriptor& kd, uint64_t kd_va, uint64_t kernarg_va,
                                              Dim3 grid, Dim3 block) {
  // §10.2: hsa_kernel_dispatch_packet_t.
  check_dims(grid, block);
  uint32_t size[3];
  for (int i = 0; i < 3; i++) {
    const uint64_t items = uint64_t{grid[i]} * block[i];
    if (items > 0xFFFFFFFFu)
      fail("grid " + dims(grid) + " of blocks " + dims(block) + " is more than 2^32-1 work-items in dimension " +
           std::to_string(i) + " (the packet's grid_size is 32 bits)");
    size[i] = static_cast<uint32_t>(items);
  }
  std::array<uint8_t, 64> b{};
  // header: TYPE KERNEL_DISPATCH 2 in 7:0, BARRIER bit 8, ACQUIRE_FENCE_SCOPE 10:9 and RELEASE_FENCE_SCOPE 12:11
  // = SYSTEM 2 -> 0x1502.
  put16(&b[0], 2u | (1u << 8) | (2u << 9) | (2u << 11));
  put16(&b[2], static_cast<uint16_t>(grid_dims(grid, block)));  // setup: DIMENSIONS 1:0
  for (int i = 0; i < 3; i++) put16(&b[4 + 2 * i], static_cast<uint16_t>(block[i]));
  for (int i = 0; i < 3; i++) put32(&b[12 + 4 * i], size[i]);
  put32(&b[24], kd.private_segment_fixed_size);
  put32(&b[28], kd.group_segment_fixed_size);
  put64(&b[32], kd_va);
  put64(&b[40], kernarg_va);
  return b;  // reserved @48 and completion_signal @56 stay 0
}

}  // namespace doorbell::amd
