// cubin_image: what one kernel of a cubin needs in GPU memory and from its launch. In: the cubin and the kernel's
// name. Out: one image (its code first, then the module's global data and the constant banks other than 0 it reads)
// whose bytes, once the image's GPU address is known, carry every relocation applied; where in the image each
// constant bank c[N] (N = 1..7) lies, for the QMD's CONSTANT_BUFFER(N); and the kernel's needs (registers, shared
// memory, constant bank 0, local memory per thread). Pure: nothing here touches a device.
//
// What ptxas (CUDA 13.0) emits for sm_90 and sm_80, measured: PTX .const data goes to module bank .nv.constant3
// (read in place, no relocation); a .global symbol's address goes to bank .nv.constant4 as an R_CUDA_64 relocation
// (RELA on sm_90, REL on sm_80) against the symbol in .nv.global.init (initialized) or .nv.global (zeroed); a brx.idx
// jump table goes to the kernel's own bank .nv.constant2.<name>, as code offsets without relocations. Code that takes
// an address into an instruction gets R_CUDA_ABS32_LO_32/HI_32 in .rel(a).text.<name> (tinygrad ops_nv.py applies
// those two to the instruction's upper 32 bits). Relocation type numbers follow NVIDIA's cuobjdump names
// (R_CUDA_32 1, R_CUDA_64 2, R_CUDA_ABS32_32 0x37, R_CUDA_ABS32_LO_32 0x38, R_CUDA_ABS32_HI_32 0x39).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace doorbell::nv {

inline constexpr uint32_t R_CUDA_32 = 0x01;
inline constexpr uint32_t R_CUDA_64 = 0x02;
inline constexpr uint32_t R_CUDA_ABS32_32 = 0x37;
inline constexpr uint32_t R_CUDA_ABS32_LO_32 = 0x38;
inline constexpr uint32_t R_CUDA_ABS32_HI_32 = 0x39;

// The highest constant bank a QMD binds (CONSTANT_BUFFER_*(i), i = 0..7: qmd.h kQmdConstantBuffers).
inline constexpr uint32_t kMaxConstantBank = 7;
// Bytes above the stack pointer's start that sm_8x/sm_90 code keeps in local memory: R1 starts at c[0][0x28] =
// 0xfffdc0, 0x240 below the top of the 16 MiB local window (tinygrad ops_nv.py:272 adds 0x240 to MIN_STACK_SIZE).
inline constexpr uint32_t kLocalMemoryReserve = 0x240;

struct CubinConstantBank {
  uint32_t index = 0;      // c[index], 1..kMaxConstantBank
  std::string section;     // ".nv.constant3" or ".nv.constant2.<kernel>"
  uint64_t offset = 0;     // in the image; 256-byte aligned (a V04 QMD stores the address >> 6)
  uint32_t size = 0;
};

// One relocation as the image applies it: at `offset` in the image, the address of image offset `target` + addend.
struct CubinImagePatch {
  uint64_t offset = 0;
  uint32_t type = 0;
  uint64_t target = 0;
  int64_t addend = 0;
};

struct CubinImage {
  std::string kernel;
  uint64_t code_bytes = 0;  // .text.<kernel>, at offset 0
  uint64_t size = 0;        // the whole image
  std::vector<CubinConstantBank> constant_banks;  // in bank order
  std::vector<CubinImagePatch> patches;
  uint32_t registers = 0;        // EIATTR_REGCOUNT (at least 1)
  uint32_t shared_bytes = 0;     // .nv.shared.<kernel>
  uint32_t constant0_bytes = 0;  // .nv.constant0.<kernel>
  uint32_t param_offset = 0;     // EIATTR_PARAM_CBANK's offset; 0 when the cubin has none
  bool has_param_offset = false;
  // Local memory per thread the launch must provide (QMD SHADER_LOCAL_MEMORY_HIGH_SIZE): 0 for a kernel without a
  // stack; else its stack (the larger of EIATTR_MIN_STACK_SIZE and EIATTR_FRAME_SIZE) plus kLocalMemoryReserve,
  // rounded up to 32 bytes (tinygrad ops_nv.py:699).
  uint32_t local_bytes_per_thread = 0;

  // The image's bytes for GPU address `va` (256-byte aligned): the sections in place, relocations applied. Throws
  // std::invalid_argument when a 32-bit relocation's value does not fit.
  std::string bytes_at(uint64_t va) const;

  std::string unpatched;  // the sections in place, relocations not applied
};

// Throws CubinError (compiler/gpu/cubin_reader.h) naming the kernel and what is not supported: a relocation of a type
// the loader does not apply (by name), a relocation against a symbol in a section the image does not load, a
// constant bank above kMaxConstantBank.
CubinImage make_cubin_image(std::string_view cubin, std::string_view kernel);

// The vendor's name of a relocation type ("R_CUDA_ABS32_LO_32"), or "R_CUDA type 0x.." for one not named here.
std::string relocation_name(uint32_t type);

}  // namespace doorbell::nv
