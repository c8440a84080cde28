// What the AMD device loads from a PROGRAM's code object (compiler/gpu/amd_code_object.h reads the ELF): the image
// its PT_LOAD segments make when copied to one base address (each at base + p_vaddr, zero-filled to p_memsz), the
// kernel's descriptor (<name>.kd) and entry relative to that base, and the kernarg segment as the metadata note lays
// it out (amdhsa.kernels[].args: explicit arguments, then COV5 hidden ones). Pure: no device, so it is tested alone.
// Layouts: ELF64 program headers and relocations (System V gABI; LLVM's ELF.h for the R_AMDGPU_* types), recorded
// in firmware-notes/amd-hcq.md §2.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/gpu/amd_code_object.h"

namespace doorbell::amd {

struct AmdKernelArg {
  uint32_t offset = 0, size = 0;
  std::string value_kind;  // "global_buffer", "by_value", "hidden_block_count_x", ...
};

struct AmdCodeImage {
  std::string bytes;         // the image from its base: every PT_LOAD segment at its p_vaddr
  uint64_t alignment = 256;  // the base's alignment: the segments' largest p_align, at least 256 (entry alignment)
  KernelDescriptor kd;
  uint64_t kd_offset = 0;     // of the descriptor, from the base
  uint64_t entry_offset = 0;  // of the first instruction, from the base (kd_offset + kernel_code_entry_byte_offset)
  std::vector<AmdKernelArg> explicit_args;  // in order: the buffers, then the variables
  std::optional<uint32_t> hidden_offset;    // where the COV5 implicit arguments start, when the kernel has any
  uint32_t kernarg_size = 0;                // .kernarg_segment_size
  uint32_t kernarg_alignment = 8;           // .kernarg_segment_align (at least 8)
};

// The image of `kernel` in `elf`. Throws std::invalid_argument naming the program and what is wrong: not a linked
// code object (ET_REL: ld.lld did not run), no PT_LOAD segment, a relocation other than R_AMDGPU_NONE (the loader
// applies none: named with its type and offset), a descriptor or entry outside the image, an entry that is not
// 256-byte aligned, no metadata for the kernel, an argument without offset or size.
AmdCodeImage make_amd_code_image(std::string_view elf, const std::string& kernel);

// "R_AMDGPU_ABS64" for 3, ... (LLVM ELFRelocs/AMDGPU.def); "type N" for one it does not know.
std::string amdgpu_relocation_name(uint32_t type);

}  // namespace doorbell::amd
