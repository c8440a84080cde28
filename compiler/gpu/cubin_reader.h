// cubin_reader: an NVIDIA cubin (the ELF64 that ptxas writes) as typed data: sections, symbols, relocations, the
// global .nv.info and per kernel its code, constant bank 0, shared memory and .nv.info attributes — what a loader
// needs to build a launch (what tinygrad's NVProgram reads, tinygrad runtime/ops_nv.py:260-273: program address,
// registers, stack, parameters' place in constant bank 0; firmware-notes/nvidia-hopper.md §14).
//
// .nv.info records: u8 format, u8 attribute, then for format EIFMT_SVAL (4) a u16 size and that many bytes, else a
// u16 value (EIFMT_NVAL 1: none, EIFMT_BVAL 2, EIFMT_HVAL 3). Attribute ids are the EIATTR_* names NVIDIA's
// cuobjdump -elf prints; the ones below also appear in tinygrad's cubin writer (tinygrad runtime/support, make_cubin:
// MAX_THREADS 0x05, PARAM_CBANK 0x0a, FRAME_SIZE 0x11, MIN_STACK_SIZE 0x12, KPARAM_INFO 0x17, CBANK_PARAM_SIZE 0x19,
// MAXREG_COUNT 0x1b, EXIT_INSTR_OFFSETS 0x1c, REGCOUNT 0x2f, CUDA_API_VERSION 0x37), and in public EIATTR enumerations
// (MAX_STACK_SIZE 0x23, NUM_BARRIERS 0x4c). Payload layouts were checked on ptxas 12/13 output for sm_80 and sm_90.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace doorbell {

class CubinError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace eiattr {
inline constexpr uint8_t kMaxThreads = 0x05;       // SVAL: u32 x, y, z (from .maxntid)
inline constexpr uint8_t kParamCbank = 0x0a;       // SVAL: u32 symbol of .nv.constant0.<name>, u16 offset, u16 size
inline constexpr uint8_t kFrameSize = 0x11;        // SVAL (global .nv.info): u32 function symbol, u32 bytes
inline constexpr uint8_t kMinStackSize = 0x12;     // SVAL (global .nv.info): u32 function symbol, u32 bytes
inline constexpr uint8_t kKparamInfo = 0x17;       // SVAL: u32 index, u16 ordinal, u16 offset, u32 flags (size in bits 18..31)
inline constexpr uint8_t kCbankParamSize = 0x19;   // HVAL: bytes of parameters
inline constexpr uint8_t kMaxregCount = 0x1b;      // HVAL
inline constexpr uint8_t kExitInstrOffsets = 0x1c; // SVAL: u32 offsets into .text.<name>
inline constexpr uint8_t kMaxStackSize = 0x23;     // SVAL (global .nv.info): u32 function symbol, u32 bytes
inline constexpr uint8_t kRegcount = 0x2f;         // SVAL (global .nv.info): u32 function symbol, u32 registers
inline constexpr uint8_t kCudaApiVersion = 0x37;   // SVAL: u32
inline constexpr uint8_t kNumBarriers = 0x4c;      // BVAL
}  // namespace eiattr

struct CubinSection {
  std::string name;
  uint32_t type = 0;
  uint64_t flags = 0, addr = 0, offset = 0, size = 0;
  uint32_t link = 0, info = 0;
  uint64_t align = 0, entsize = 0;
};

struct CubinSymbol {
  std::string name;  // a section symbol without a name of its own takes its section's name (as readelf shows it)
  uint64_t value = 0, size = 0;
  uint8_t type = 0, bind = 0, other = 0;
  uint16_t shndx = 0;
};

struct CubinRelocation {
  std::string section;  // the .rel/.rela section it is in
  std::string target;   // the section it patches
  uint64_t offset = 0;
  uint32_t type = 0;
  uint32_t symbol = 0;
  int64_t addend = 0;   // 0 for .rel
};

struct NvInfoAttribute {
  uint8_t format = 0;
  uint8_t id = 0;
  uint16_t value = 0;  // for NVAL/BVAL/HVAL
  std::string data;    // for SVAL: the payload bytes
};

struct KernelParam {
  uint32_t index = 0;
  uint16_t ordinal = 0, offset = 0;
  uint32_t size = 0;
};

struct CubinKernel {
  std::string name;
  uint64_t text_offset = 0, text_size = 0;  // of .text.<name> in the file
  uint64_t constant0_size = 0;               // .nv.constant0.<name>: driver words and the parameters
  uint64_t shared_bytes = 0;                 // .nv.shared.<name> (on sm_90 it includes 1 KiB the system reserves)
  int registers = -1;                        // EIATTR_REGCOUNT in .nv.info; -1 when absent
  int64_t frame_size = -1, min_stack_size = -1, max_stack_size = -1;
  uint32_t param_cbank_offset = 0, param_cbank_size = 0;  // where the parameters sit in constant bank 0
  int cbank_param_size = -1;
  int max_reg_count = -1;
  int num_barriers = 0;
  std::optional<std::array<uint32_t, 3>> max_threads;
  std::vector<KernelParam> params;  // in ordinal order
  std::vector<uint32_t> exit_instr_offsets;
  std::vector<NvInfoAttribute> attributes;  // everything in .nv.info.<name>, in order
};

struct Cubin {
  uint16_t machine = 0;
  uint32_t flags = 0;
  uint8_t os_abi = 0, abi_version = 0;
  std::vector<CubinSection> sections;
  std::vector<CubinSymbol> symbols;
  std::vector<CubinRelocation> relocations;
  std::vector<NvInfoAttribute> global_info;  // .nv.info
  std::vector<CubinKernel> kernels;          // one per .text.<name>, in section order

  // Throws CubinError naming the kernel and the ones there are.
  const CubinKernel& kernel(std::string_view name) const;
  const CubinSection* section(std::string_view name) const;
};

// Throws CubinError naming the part (header, section, attribute) and what was expected.
Cubin read_cubin(std::string_view bytes);

}  // namespace doorbell
