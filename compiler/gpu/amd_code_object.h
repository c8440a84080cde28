// AMD HSA code object reader (no LLVM): the sections, symbols, kernel descriptors and the NT_AMDGPU_METADATA note
// of an ELF64 amdgcn object, relocatable (.o) or shared (the loadable code object).
// Layouts: ELF64 from the System V gABI (elf.h); the kernel descriptor and its bit fields from LLVM's AMDGPUUsage
// "Kernel Descriptor" tables (code object v5), summarized in firmware-notes/amd-kfd.md §2-4; the note from
// AMDGPUUsage "Code Object V3+ Metadata" (note name "AMDGPU", type NT_AMDGPU_METADATA = 32, a msgpack map).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace doorbell {

struct ElfSection {
  std::string name;
  uint32_t type = 0;
  uint64_t flags = 0, addr = 0, offset = 0, size = 0;
};

struct ElfSymbol {
  std::string name;
  uint64_t value = 0, size = 0;
  uint8_t type = 0;     // STT_*: 1 object, 2 func
  uint8_t binding = 0;  // STB_*: 0 local, 1 global
  uint16_t section = 0;
};

// The 64-byte kernel descriptor (AMDGPUUsage "Kernel Descriptor for GFX6-GFX12"), with the fields decoded.
struct KernelDescriptor {
  uint32_t group_segment_fixed_size = 0;    // offset 0: static LDS bytes
  uint32_t private_segment_fixed_size = 0;  // offset 4: scratch bytes per work-item
  uint32_t kernarg_size = 0;                // offset 8
  int64_t kernel_code_entry_byte_offset = 0;  // offset 16: from the descriptor to the entry (0 in a .o: relocated)
  uint32_t compute_pgm_rsrc3 = 0;           // offset 44
  uint32_t compute_pgm_rsrc1 = 0;           // offset 48
  uint32_t compute_pgm_rsrc2 = 0;           // offset 52
  uint16_t kernel_code_properties = 0;      // offset 56
  uint16_t kernarg_preload = 0;             // offset 58

  // RSRC1
  uint32_t granulated_workitem_vgpr_count() const { return compute_pgm_rsrc1 & 0x3f; }       // [5:0]
  uint32_t granulated_wavefront_sgpr_count() const { return (compute_pgm_rsrc1 >> 6) & 0xf; }  // [9:6]
  // RSRC2
  bool enable_private_segment() const { return compute_pgm_rsrc2 & 1; }
  uint32_t user_sgpr_count() const { return (compute_pgm_rsrc2 >> 1) & 0x1f; }  // [5:1]
  bool enable_sgpr_workgroup_id(int dim) const { return (compute_pgm_rsrc2 >> (7 + dim)) & 1; }  // bits 7, 8, 9
  uint32_t enable_vgpr_workitem_id() const { return (compute_pgm_rsrc2 >> 11) & 3; }  // 0: x, 1: x,y, 2: x,y,z
  // kernel_code_properties
  bool enable_sgpr_private_segment_buffer() const { return kernel_code_properties & (1u << 0); }
  bool enable_sgpr_dispatch_ptr() const { return kernel_code_properties & (1u << 1); }
  bool enable_sgpr_queue_ptr() const { return kernel_code_properties & (1u << 2); }
  bool enable_sgpr_kernarg_segment_ptr() const { return kernel_code_properties & (1u << 3); }
  bool enable_sgpr_dispatch_id() const { return kernel_code_properties & (1u << 4); }
  bool enable_sgpr_flat_scratch_init() const { return kernel_code_properties & (1u << 5); }
  bool enable_sgpr_private_segment_size() const { return kernel_code_properties & (1u << 6); }
  bool enable_wavefront_size32() const { return kernel_code_properties & (1u << 10); }
  bool uses_dynamic_stack() const { return kernel_code_properties & (1u << 11); }
  // User SGPRs the properties ask for (AMDGPUUsage "Initial Kernel Execution State": 4, 2, 2, 2, 2, 2, 1).
  uint32_t user_sgprs_from_properties() const;

  // VGPRs the granule field allows: (granules + 1) * G, with the encoding granule G (AMDGPUUsage
  // compute_pgm_rsrc1 GRANULATED_WORKITEM_VGPR_COUNT): 8 for wave32 on gfx10+/gfx11 and for gfx90a/gfx942,
  // 4 for wave64 on gfx10+/gfx11.
  uint32_t max_vgprs(std::string_view arch) const;
};

struct AmdKernel {
  std::string name;
  KernelDescriptor kd;
  uint64_t kd_address = 0;     // of the <name>.kd symbol
  uint64_t entry_address = 0;  // kd_address + kernel_code_entry_byte_offset, or the <name> symbol in a .o
  bool entry_in_text = false;  // the entry lies inside .text
};

// A decoded msgpack value (the metadata note). Maps keep their keys in order as strings.
struct MsgPack {
  using Array = std::vector<MsgPack>;
  using Map = std::vector<std::pair<std::string, MsgPack>>;
  std::variant<std::monostate, bool, int64_t, uint64_t, double, std::string, std::shared_ptr<Array>, std::shared_ptr<Map>> v;

  const MsgPack* find(std::string_view key) const;  // nullptr when absent or not a map
  const Array& array() const;                        // throws when not an array
  const Map& map() const;
  int64_t as_int() const;  // throws when not an integer
  const std::string& as_string() const;
};

// Decodes one msgpack value; throws std::invalid_argument naming the offset and the byte on malformed input.
MsgPack decode_msgpack(std::string_view bytes);

struct AmdCodeObject {
  uint16_t elf_type = 0;  // 1 ET_REL, 3 ET_DYN
  uint16_t machine = 0;   // 224 EM_AMDGPU
  uint32_t e_flags = 0;   // EF_AMDGPU_MACH in [7:0]
  std::vector<ElfSection> sections;
  std::vector<ElfSymbol> symbols;  // .symtab, else .dynsym
  std::vector<AmdKernel> kernels;  // one per <name>.kd symbol
  std::optional<std::string> metadata;  // the NT_AMDGPU_METADATA note's msgpack bytes
  std::optional<MsgPack> metadata_doc;  // decoded

  const ElfSection* section(std::string_view name) const;
  const ElfSymbol* symbol(std::string_view name) const;
  const AmdKernel& kernel(std::string_view name) const;  // throws naming the kernel and the ones present
  // amdhsa.kernels[] entry of a kernel in the metadata (nullptr without metadata or entry).
  const MsgPack* kernel_metadata(std::string_view name) const;
};

// Throws std::invalid_argument naming the section or symbol and what was expected.
AmdCodeObject read_amd_code_object(std::string_view elf);

}  // namespace doorbell
