// The emulated AMD GPU's shader core: runs one compute dispatch of real gfx1100 (RDNA3) machine code, as the command
// processor (pm4_engine.h) hands it over after DISPATCH_DIRECT: the program address and RSRC registers, the user
// SGPRs from COMPUTE_USER_DATA_*, the workgroup size and the grid in workgroups. It sets each wave's initial state
// as the hardware does (firmware-notes/amd-rdna3-exec.md, "Initial wave state"): user SGPRs s0.., then the workgroup ids
// X/Y/Z enabled in RSRC2 bits 7-9 and the workgroup info (bit 10); v0 holds the packed work-item ids
// X[9:0] | Y[19:10] | Z[29:20]; EXEC has the live lanes (a partial last wave has fewer); the wave size from `wave32`.
// Waves of one workgroup share its LDS (lds_bytes, zero-filled at the workgroup's start) and meet at s_barrier.
// Instructions come from decode_rdna3 (rdna3_decode.h) reading memory at the program counter; every memory access
// goes through GpuMemory::translate.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#include "mockgpu/amd/amd_memory.h"

namespace doorbell::mockgpu::amd {

struct DispatchState {
  uint64_t code_va = 0;  // COMPUTE_PGM_LO/HI << 8: the kernel's first instruction, 256-byte aligned
  uint32_t rsrc1 = 0, rsrc2 = 0, rsrc3 = 0;  // COMPUTE_PGM_RSRC1/2/3 as programmed (RSRC2 with LDS_SIZE)
  std::array<uint32_t, 16> user_data{};      // COMPUTE_USER_DATA_0..15; RSRC2.USER_SGPR of them are loaded
  std::array<uint32_t, 3> workgroup_size{1, 1, 1};   // COMPUTE_NUM_THREAD_X/Y/Z
  std::array<uint32_t, 3> grid_workgroups{1, 1, 1};  // DISPATCH_DIRECT dim_x/y/z
  bool wave32 = true;      // DISPATCH_INITIATOR.CS_W32_EN
  uint32_t lds_bytes = 0;  // RSRC2.LDS_SIZE * 512
  uint64_t scratch_va = 0;       // COMPUTE_DISPATCH_SCRATCH_BASE << 8 (0: none)
  uint32_t scratch_wave_bytes = 0;  // per wave, from COMPUTE_TMPRING_SIZE.WAVESIZE (256-byte units on gfx11)
};

// A fault of the running program: what it did and where (the instruction's address, its disassembly, and for a
// memory fault the address it touched). The command processor turns it into a queue fault; the device stays usable.
class ShaderFault : public std::runtime_error {
 public:
  ShaderFault(const std::string& message, uint64_t pc, uint64_t address = 0)
      : std::runtime_error(message), pc(pc), address(address) {}
  uint64_t pc;
  uint64_t address;  // the faulting memory address, 0 when the fault is not a memory access
};

struct ShaderCoreOptions {
  // The constant-rate 100 MHz counter (s_sendmsg_rtn_b64 REALTIME); the same counter the CP and SDMA stamp with.
  std::function<uint64_t()> realtime;
  // Instructions one wave may execute before the dispatch is declared hung (a fault naming the pc): a kernel that
  // loops forever must not hang the emulator.
  uint64_t max_instructions_per_wave = uint64_t{1} << 32;
};

// Runs every workgroup of the dispatch to completion, or throws ShaderFault. Thread-compatible: one call per command
// processor at a time (the CP serialises its dispatches); calls from different queues may run at once.
void run_dispatch(const DispatchState& state, const GpuMemory& memory, const ShaderCoreOptions& options);

}  // namespace doorbell::mockgpu::amd
