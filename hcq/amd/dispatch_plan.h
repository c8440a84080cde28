// What a PM4 dispatch programs, as a pure function of the kernel descriptor and the launch: the COMPUTE_* register
// values, the user SGPRs (COMPUTE_USER_DATA_*) in the order the descriptor's properties enable them, and the
// DISPATCH_DIRECT grid and initiator. Also the bytes a kernel reads through its pointers: the COV5 hidden kernargs
// and the HSA kernel dispatch packet (for descriptors that enable DISPATCH_PTR).
// Facts: firmware-notes/amd-pm4.md §9 (what a dispatch programs), §3-§4 (registers and fields), §10 (user SGPRs,
// hidden kernargs, the dispatch packet). Invalid input throws std::invalid_argument naming the rule it breaks.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "compiler/gpu/amd_code_object.h"
#include "hcq/amd/amd_registers.h"
#include "hcq/amd/cmd_stream.h"

namespace doorbell::amd {

using Dim3 = std::array<uint32_t, 3>;

// The per-queue scratch (private segment) a kernel with RSRC2.SCRATCH_EN uses: its base (256-byte aligned, below
// 2^48) and how many waves it holds slots for (COMPUTE_TMPRING_SIZE.WAVES, 1-4095).
struct ScratchArea {
  uint64_t va = 0;
  uint32_t waves = 0;
};

// The addresses and ids a dispatch hands its kernel, each used only if the descriptor enables it.
struct LaunchAddresses {
  uint64_t kernarg_va = 0;          // KERNARG_SEGMENT_PTR (8-byte aligned when the kernel has kernargs)
  uint64_t dispatch_packet_va = 0;  // DISPATCH_PTR: where dispatch_packet_bytes() were written
  uint64_t queue_va = 0;            // QUEUE_PTR (code objects before v5 only)
  uint64_t dispatch_id = 0;         // DISPATCH_ID
  ScratchArea scratch;              // with RSRC2.SCRATCH_EN
};

struct DispatchPlan {
  uint32_t pgm_lo = 0, pgm_hi = 0;  // entry >> 8
  uint32_t rsrc1 = 0, rsrc2 = 0, rsrc3 = 0;  // the descriptor's, RSRC2 with LDS_SIZE
  uint32_t resource_limits = 0;     // 0: no limit
  uint32_t tmpring_size = 0;        // WAVES | WAVESIZE << 12 (0 without scratch)
  uint32_t scratch_lo = 0, scratch_hi = 0;  // scratch base >> 8
  uint32_t initiator = 0;           // COMPUTE_SHADER_EN | FORCE_START_AT_000 | CS_W32_EN (wave32 on gc 11)
  Dim3 num_thread{};                // the workgroup size
  Dim3 groups{};                    // the grid in workgroups
  std::vector<uint32_t> user_data;  // COMPUTE_USER_DATA_0.., RSRC2.USER_SGPR values
};

// The rules (each error names its rule): the user SGPRs the properties enable must equal RSRC2.USER_SGPR (<= 16),
// except that on gc 11 LLVM pads USER_SGPR so user plus system SGPRs reach 16 (the padding is written as zeros);
// PRIVATE_SEGMENT_BUFFER, FLAT_SCRATCH_INIT and kernarg preloading are not supported; the descriptor is 64-byte
// aligned; the entry (kd_va + entry offset) is 256-byte aligned and below 2^48; the descriptor's LDS_SIZE is 0 and
// ceil(group segment / 512) granules fit 64 KiB; the wave32 property needs gc 11 (gc 9.4.3 is wave64 only); every
// block dimension >= 1 with at most 1024 threads in all; every grid dimension >= 1; scratch as ScratchArea says.
DispatchPlan plan_dispatch(GfxIp ip, const KernelDescriptor& kd, uint64_t kd_va, const LaunchAddresses& launch,
                           Dim3 grid, Dim3 block);

// The dwords write_dispatch writes: SET_SH_REGs for PGM_LO/HI, RSRC1/2, RSRC3, SCRATCH_BASE_LO/HI,
// RESOURCE_LIMITS, TMPRING_SIZE, START_X..Z with NUM_THREAD_X..Z, RESTART_X..Z, USER_DATA (when any), then
// DISPATCH_DIRECT.
size_t dispatch_dwords(const DispatchPlan& plan);
void write_dispatch(CmdStream& s, GfxIp ip, const DispatchPlan& plan);

// COV5 hidden kernargs at `at` (the implicit area after the explicit arguments, at least 66 bytes): block_count
// (workgroups), group_size, remainder (0: whole workgroups only), grid_dims (1-3, the highest dimension with more
// than one work-item); every other byte of `at` zero.
void write_implicit_kernargs(std::span<uint8_t> at, Dim3 grid, Dim3 block);

// The 64-byte hsa_kernel_dispatch_packet_t a DISPATCH_PTR kernel reads: header (KERNEL_DISPATCH, barrier, system
// scope acquire and release), setup dimensions, workgroup size, grid in work-items (must fit 32 bits), segment
// sizes from the descriptor, kernel object kd_va, kernarg address, no completion signal.
std::array<uint8_t, 64> dispatch_packet_bytes(const KernelDescriptor& kd, uint64_t kd_va, uint64_t kernarg_va,
                                              Dim3 grid, Dim3 block);

}  // namespace doorbell::amd
