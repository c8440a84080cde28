// The emulated AMD shader core (shader_core.h): the dispatch loop, each wave's initial state, the decoded-program
// cache and the cooperative scheduling of a workgroup's waves. The instruction families run in rdna3_exec_*.cpp.
// firmware-notes/amd-rdna3-exec.md records the initial state and the choices made here.
#include "mockgpu/amd/shader_core.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "mockgpu/amd/rdna3_decode.h"
#include "mockgpu/amd/wave_state.h"

namespace doorbell::mockgpu::amd {
namespace {

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Instructions decoded once per dispatch, indexed by their dword offset from the kernel's first instruction: the
// per-instruction path is one vector lookup, no allocation. A deque keeps references stable as it grows.
class Program {
 public:
  Program(uint64_t base, const GpuMemory& memory) : base_(base), memory_(memory) {}

  const Rdna3Inst& at(uint64_t pc) {
    if (pc < base_ || (pc & 3) != 0) {
      throw ShaderFault("program counter " + hex(pc) + " is before the kernel's first instruction " + hex(base_) +
                            " or not dword-aligned",
                        pc);
    }
    uint64_t index = (pc - base_) / 4;
    if (index < slots_.size() && slots_[index] >= 0) return insts_[static_cast<std::size_t>(slots_[index])];
    return decode_at(pc, index);
  }

 private:
  const Rdna3Inst& decode_at(uint64_t pc, uint64_t index) {
    // An instruction is at most 3 dwords (a 64-bit encoding with a literal); read fewer where the mapping ends.
    const uint32_t* words = nullptr;
    std::size_t available = 0;
    for (std::size_t n = 3; n >= 1 && words == nullptr; --n) {
      try {
        words = reinterpret_cast<const uint32_t*>(memory_.translate(pc, n * 4));
        available = n;
      } catch (const std::exception&) {
        if (n == 1) throw ShaderFault("instruction fetch at " + hex(pc) + ": address not mapped", pc, pc);
      }
    }
    Rdna3Inst inst;
    try {
      inst = decode_rdna3(words, available);
    } catch (const std::exception& e) {
      throw ShaderFault("pc " + hex(pc) + ": cannot decode: " + e.what(), pc);
    }
    if (index >= slots_.size()) slots_.resize(static_cast<std::size_t>(index) + 256, -1);
    slots_[index] = static_cast<int32_t>(insts_.size());
    insts_.push_back(inst);
    return insts_.back();
  }

  uint64_t base_;
  const GpuMemory& memory_;
  std::vector<int32_t> slots_;
  std::deque<Rdna3Inst> insts_;
};

// The instruction as fault messages name it: llvm-objdump-19's text.
std::string inst_text(const Rdna3Inst& inst) {
  try {
    return disassemble_rdna3(inst);
  } catch (const std::exception& e) {
    const char* m = rdna3_mnemonic(inst.format, inst.op);
    return std::string(m ? m : "?") + " (" + rdna3_format_name(inst.format) + "; not disassembled: " + e.what() + ")";
  }
}

// Runs one wave until it ends, reaches s_barrier, or faults.
void run_wave(Wave& w, Program& program, WaveContext& ctx) {
  const uint64_t limit = ctx.options.max_instructions_per_wave;
  while (!w.done && !w.at_barrier) {
    const Rdna3Inst& inst = program.at(w.pc);
    if (++w.executed > limit) {
      throw ShaderFault("wave " + std::to_string(w.index) + " ran past " + std::to_string(limit) +
                            " instructions (the dispatch is hung) at pc " + hex(w.pc) + ": " + inst_text(inst),
                        w.pc);
    }
    try {
      bool branched = false;
      switch (inst.format) {
        case Rdna3Format::SOP2: case Rdna3Format::SOPK: case Rdna3Format::SOP1: case Rdna3Format::SOPC:
        case Rdna3Format::SOPP: case Rdna3Format::SMEM:
          branched = exec_scalar(w, inst, ctx);
          break;
        case Rdna3Format::VOP1: case Rdna3Format::VOP2: case Rdna3Format::VOPC: case Rdna3Format::VOP3:
        case Rdna3Format::VOP3P: case Rdna3Format::VOPD:
          exec_vector(w, inst, ctx);
          break;
        case Rdna3Format::DS: case Rdna3Format::FLAT: case Rdna3Format::GLOBAL: case Rdna3Format::SCRATCH:
          exec_memory(w, inst, ctx);
          break;
        case Rdna3Format::MUBUF:
          // BUFFER_GL0_INV / BUFFER_GL1_INV invalidate caches the emulator does not have; buffer loads and stores
          // (resource descriptors) are not emitted by LLVM for our kernels and are refused by name.
          if (inst.op != 43 && inst.op != 44) unimplemented(inst);
          break;
      }
      if (!branched) w.pc += 4u * inst.words;
    } catch (const ExecError& e) {
      throw ShaderFault("pc " + hex(w.pc) + ": " + inst_text(inst) + ": " + e.message, w.pc, e.address);
    }
  }
}

}  // namespace

uint8_t* translate_or_fault(const GpuMemory& memory, uint64_t va, std::size_t bytes) {
  try {
    return memory.translate(va, bytes);
  } catch (const std::exception& e) {
    throw ExecError{"memory fault at " + hex(va) + " (" + std::to_string(bytes) + " bytes): " + e.what(), va};
  }
}

void unimplemented(const Rdna3Inst& inst) {
  throw ExecError{std::string("instruction not implemented by the emulated shader core (") + rdna3_format_name(inst.format) +
                  " opcode " + std::to_string(inst.op) + ")"};
}

void run_dispatch(const DispatchState& state, const GpuMemory& memory, const ShaderCoreOptions& options) {
  if (!state.wave32) {
    throw ShaderFault("wave64 dispatch: the emulated shader core runs wave32 only (gfx1100 kernels are compiled wave32; "
                      "DISPATCH_INITIATOR.CS_W32_EN must be set)",
                      state.code_va);
  }
  const auto& wg = state.workgroup_size;
  const uint64_t threads = uint64_t{wg[0]} * wg[1] * wg[2];
  if (threads == 0 || threads > 1024 || wg[0] > 1024 || wg[1] > 1024 || wg[2] > 1024) {
    throw ShaderFault("workgroup size " + std::to_string(wg[0]) + "x" + std::to_string(wg[1]) + "x" +
                          std::to_string(wg[2]) + " must have 1..1024 threads",
                      state.code_va);
  }
  const uint32_t waves_per_group = static_cast<uint32_t>((threads + kWaveLanes - 1) / kWaveLanes);
  // COMPUTE_PGM_RSRC2 fields (firmware-notes/amd-rdna3-exec.md, "Initial wave state").
  const uint32_t user_sgprs = (state.rsrc2 >> 1) & 0x1f;
  const bool tgid_x = (state.rsrc2 >> 7) & 1, tgid_y = (state.rsrc2 >> 8) & 1, tgid_z = (state.rsrc2 >> 9) & 1;
  const bool tg_size = (state.rsrc2 >> 10) & 1;
  if (user_sgprs > 16) throw ShaderFault("RSRC2.USER_SGPR " + std::to_string(user_sgprs) + " exceeds 16", state.code_va);

  // VGPRs the kernel allocates: (RSRC1.VGPRS + 1) * 8 in wave32 on gfx11 (AMDGPUUsage, compute_pgm_rsrc1
  // GRANULATED_WORKITEM_VGPR_COUNT). Only these are cleared per workgroup: a large grid would otherwise spend its
  // time zeroing 32 KiB per wave.
  const std::size_t vgpr_words = std::min<std::size_t>(kMaxVgprs, ((state.rsrc1 & 0x3f) + 1) * 8) * kWaveLanes;
  Program program(state.code_va, memory);
  std::vector<uint8_t> lds(state.lds_bytes);
  WaveContext ctx{state, memory, options, lds};
  std::vector<Wave> waves(waves_per_group);
  for (Wave& w : waves) w.v.assign(static_cast<std::size_t>(kMaxVgprs) * kWaveLanes, 0);

  for (uint32_t gz = 0; gz < state.grid_workgroups[2]; ++gz) {
    for (uint32_t gy = 0; gy < state.grid_workgroups[1]; ++gy) {
      for (uint32_t gx = 0; gx < state.grid_workgroups[0]; ++gx) {
        std::fill(lds.begin(), lds.end(), 0);
        for (uint32_t i = 0; i < waves_per_group; ++i) {
          Wave& w = waves[i];
          w.s.fill(0);
          std::fill(w.v.begin(), w.v.begin() + static_cast<std::ptrdiff_t>(vgpr_words), 0);
          w.scc = false;
          w.pc = state.code_va;
          w.executed = 0;
          w.done = w.at_barrier = false;
          w.index = i;
          w.scratch_va = state.scratch_va == 0 ? 0 : state.scratch_va + uint64_t{i} * state.scratch_wave_bytes;
          uint32_t n = 0;
          for (; n < user_sgprs; ++n) w.s[n] = state.user_data[n];
          if (tgid_x) w.s[n++] = gx;
          if (tgid_y) w.s[n++] = gy;
          if (tgid_z) w.s[n++] = gz;
          if (tg_size) w.s[n++] = waves_per_group;  // TG_SIZE[5:0]: waves in the workgroup
          uint32_t exec = 0;
          for (uint32_t lane = 0; lane < kWaveLanes; ++lane) {
            uint64_t t = uint64_t{i} * kWaveLanes + lane;
            if (t >= threads) break;
            exec |= 1u << lane;
            uint32_t x = static_cast<uint32_t>(t % wg[0]), y = static_cast<uint32_t>((t / wg[0]) % wg[1]),
                     z = static_cast<uint32_t>(t / (uint64_t{wg[0]} * wg[1]));
            w.v[lane] = x | (y << 10) | (z << 20);
          }
          w.s[operand::kExecLo] = exec;
        }
        // Cooperative scheduling: each live wave runs to s_barrier or s_endpgm; when every live wave waits at the
        // barrier it is released and the round repeats.
        for (;;) {
          bool any_waiting = false;
          for (Wave& w : waves) {
            if (w.done) continue;
            run_wave(w, program, ctx);
            any_waiting |= w.at_barrier;
          }
          if (!any_waiting) break;
          for (Wave& w : waves) w.at_barrier = false;
        }
      }
    }
  }
}

}  // namespace doorbell::mockgpu::amd
