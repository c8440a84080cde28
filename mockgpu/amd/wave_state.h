// The state of one RDNA3 wave in the emulated shader core (shader_core.h) and the executor's internal seams: the
// scalar file indexed by the hardware's operand code, the VGPR file, and the per-workgroup context (LDS, memory).
// firmware-notes/amd-rdna3-exec.md records the initial state and what each instruction family does.
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "mockgpu/amd/rdna3_inst.h"
#include "mockgpu/amd/shader_core.h"

namespace doorbell::mockgpu::amd {

inline constexpr uint32_t kWaveLanes = 32;  // gfx1100 kernels run wave32 (DispatchState.wave32)
inline constexpr uint32_t kMaxVgprs = 256;

// KFD's flat apertures on gfx9+ (linux drivers/gpu/drm/amd/amdkfd/kfd_flat_memory.c, MAKE_LDS_APP_BASE_V9 and
// MAKE_SCRATCH_APP_BASE_V9): what src_shared_base / src_private_base read, and how a flat address reaches LDS.
inline constexpr uint64_t kSharedApertureBase = uint64_t{1} << 48;
inline constexpr uint64_t kPrivateApertureBase = uint64_t{2} << 48;
inline constexpr uint64_t kApertureSize = uint64_t{1} << 32;

struct Wave {
  // Scalar registers by operand code: 0-105 s0-s105, 106/107 VCC_LO/HI, 124 NULL (reads 0, writes dropped),
  // 125 M0, 126/127 EXEC_LO/HI. EXEC_HI stays 0 in wave32.
  std::array<uint32_t, 128> s{};
  bool scc = false;
  uint64_t pc = 0;
  std::vector<uint32_t> v;  // kMaxVgprs x kWaveLanes, v[reg * 32 + lane]
  uint64_t executed = 0;
  uint64_t scratch_va = 0;  // this wave's private slice (0: none)
  bool done = false, at_barrier = false;
  uint32_t index = 0;  // wave number inside its workgroup

  uint32_t exec() const { return s[operand::kExecLo]; }
  uint32_t* vreg(uint32_t reg) { return &v[static_cast<std::size_t>(reg) * kWaveLanes]; }
};

struct WaveContext {
  const DispatchState& state;
  const GpuMemory& memory;
  const ShaderCoreOptions& options;
  std::vector<uint8_t>& lds;
};

// Thrown by the executors with only the message; the dispatcher adds the pc and the instruction's text.
struct ExecError {
  std::string message;
  uint64_t address = 0;
};

// The instruction families (rdna3_exec_*.cpp). Each executes `inst` on `w`; branches set w.pc themselves and return
// true, the others return false (the caller then advances pc by inst.words).
bool exec_scalar(Wave& w, const Rdna3Inst& inst, WaveContext& ctx);
void exec_vector(Wave& w, const Rdna3Inst& inst, WaveContext& ctx);
void exec_memory(Wave& w, const Rdna3Inst& inst, WaveContext& ctx);

// Memory access through GpuMemory::translate; an unmapped address throws ExecError naming it.
uint8_t* translate_or_fault(const GpuMemory& memory, uint64_t va, std::size_t bytes);

// Scalar operand reads shared by the scalar and vector executors (operand codes of rdna3_inst.h).
uint32_t read_scalar32(const Wave& w, uint16_t code, uint32_t literal);
uint64_t read_scalar64(const Wave& w, uint16_t code, uint32_t literal, bool f64);
void write_scalar32(Wave& w, uint16_t code, uint32_t value);
void write_scalar64(Wave& w, uint16_t code, uint64_t value);

[[noreturn]] void unimplemented(const Rdna3Inst& inst);

}  // namespace doorbell::mockgpu::amd

#include "mockgpu/amd/rdna3_opcodes.h"

namespace doorbell::mockgpu::amd {
// Opcode enums from the X-macro lists (rdna3_opcodes.h), one per encoding.
#define DOORBELL_RDNA3_ENUM_ENTRY(name, value) name = value,
enum class Sop2 : uint16_t { DOORBELL_RDNA3_SOP2(DOORBELL_RDNA3_ENUM_ENTRY) };
enum class Sopk : uint16_t { DOORBELL_RDNA3_SOPK(DOORBELL_RDNA3_ENUM_ENTRY) };
enum class Sop1 : uint16_t { DOORBELL_RDNA3_SOP1(DOORBELL_RDNA3_ENUM_ENTRY) };
enum class Sopc : uint16_t { DOORBELL_RDNA3_SOPC(DOORBELL_RDNA3_ENUM_ENTRY) };
enum class Sopp : uint16_t { DOORBELL_RDNA3_SOPP(DOORBELL_RDNA3_ENUM_ENTRY) };
enum class Smem : uint16_t { DOORBELL_RDNA3_SMEM(DOORBELL_RDNA3_ENUM_ENTRY) };
enum class Vop3 : uint16_t { DOORBELL_RDNA3_VOP3(DOORBELL_RDNA3_ENUM_ENTRY) };
enum class Vop3p : uint16_t { DOORBELL_RDNA3_VOP3P(DOORBELL_RDNA3_ENUM_ENTRY) };
enum class Ds : uint16_t { DOORBELL_RDNA3_DS(DOORBELL_RDNA3_ENUM_ENTRY) };
enum class Flat : uint16_t { DOORBELL_RDNA3_FLAT(DOORBELL_RDNA3_ENUM_ENTRY) };
enum class Global : uint16_t { DOORBELL_RDNA3_GLOBAL(DOORBELL_RDNA3_ENUM_ENTRY) };
enum class Scratch : uint16_t { DOORBELL_RDNA3_SCRATCH(DOORBELL_RDNA3_ENUM_ENTRY) };
#undef DOORBELL_RDNA3_ENUM_ENTRY
}  // namespace doorbell::mockgpu::amd
