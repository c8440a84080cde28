#include "hcq/amd/amd_code_image.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace doorbell::amd {
namespace {

// ELF64 (System V gABI; Linux elf.h): ET_REL, PT_LOAD, SHT_RELA/SHT_REL, the program header fields.
constexpr uint16_t kEtRel = 1;
constexpr uint32_t kPtLoad = 1;
constexpr uint32_t kShtRela = 4, kShtRel = 9;
constexpr uint64_t kMaxAlignment = 1 << 16;  // a larger p_align is a page-size hint; the image needs no more

[[noreturn]] void bad(const std::string& kernel, const std::string& what) {
  throw std::invalid_argument("AMD: program " + kernel + ": " + what);
}

template <class T>
T rd(std::string_view b, uint64_t off, const std::string& kernel, const char* what) {
  if (off > b.size() || b.size() - off < sizeof(T)) bad(kernel, std::string(what) + " lies past the end of the code object");
  T v;
  std::memcpy(&v, b.data() + off, sizeof(T));
  return v;
}

std::string hex(uint64_t v) {
  char s[24];
  std::snprintf(s, sizeof s, "0x%llx", static_cast<unsigned long long>(v));
  return s;
}

}  // namespace

std::string amdgpu_relocation_name(uint32_t type) {
  // LLVM llvm/include/llvm/BinaryFormat/ELFRelocs/AMDGPU.def (firmware-notes/amd-hcq.md §2).
  static const char* const kNames[] = {"R_AMDGPU_NONE",         "R_AMDGPU_ABS32_LO",     "R_AMDGPU_ABS32_HI",
                                       "R_AMDGPU_ABS64",        "R_AMDGPU_REL32",        "R_AMDGPU_REL64",
                                       "R_AMDGPU_ABS32",        "R_AMDGPU_GOTPCREL",     "R_AMDGPU_GOTPCREL32_LO",
                                       "R_AMDGPU_GOTPCREL32_HI", "R_AMDGPU_REL32_LO",    "R_AMDGPU_REL32_HI",
                                       nullptr,                 "R_AMDGPU_RELATIVE64",   "R_AMDGPU_REL16"};
  if (type < std::size(kNames) && kNames[type] != nullptr) return kNames[type];
  return "type " + std::to_string(type);
}

AmdCodeImage make_amd_code_image(std::string_view elf, const std::string& kernel) {
  const AmdCodeObject co = read_amd_code_object(elf);
  if (co.elf_type == kEtRel) bad(kernel, "the code object is relocatable (ET_REL); expected one linked by ld.lld (ET_DYN)");
  AmdCodeImage image;
  // Program headers: e_phoff at 32, e_phentsize at 54, e_phnum at 56; each p_type 0, p_offset 8, p_vaddr 16,
  // p_filesz 32, p_memsz 40, p_align 48.
  const uint64_t phoff = rd<uint64_t>(elf, 32, kernel, "e_phoff");
  const uint16_t phentsize = rd<uint16_t>(elf, 54, kernel, "e_phentsize"), phnum = rd<uint16_t>(elf, 56, kernel, "e_phnum");
  uint64_t end = 0;
  struct Segment {
    uint64_t offset, vaddr, filesz;
  };
  std::vector<Segment> segments;
  for (uint16_t i = 0; i < phnum; i++) {
    const uint64_t at = phoff + uint64_t{i} * phentsize;
    if (rd<uint32_t>(elf, at, kernel, "a program header") != kPtLoad) continue;
    const Segment s{rd<uint64_t>(elf, at + 8, kernel, "p_offset"), rd<uint64_t>(elf, at + 16, kernel, "p_vaddr"),
                    rd<uint64_t>(elf, at + 32, kernel, "p_filesz")};
    const uint64_t memsz = rd<uint64_t>(elf, at + 40, kernel, "p_memsz"), align = rd<uint64_t>(elf, at + 48, kernel, "p_align");
    if (s.filesz > memsz || s.offset > elf.size() || elf.size() - s.offset < s.filesz)
      bad(kernel, "PT_LOAD segment " + std::to_string(i) + " lies outside the file or holds more bytes than its memory size");
    if (s.vaddr > (uint64_t{1} << 32) || memsz > (uint64_t{1} << 32)) bad(kernel, "PT_LOAD segment " + std::to_string(i) + " at " + hex(s.vaddr) + " is too large");
    end = std::max(end, s.vaddr + memsz);
    image.alignment = std::max(image.alignment, std::min(align, kMaxAlignment));
    segments.push_back(s);
  }
  if (segments.empty()) bad(kernel, "the code object has no PT_LOAD segment");
  image.bytes.assign(end, '\0');
  for (const Segment& s : segments) std::memcpy(image.bytes.data() + s.vaddr, elf.data() + s.offset, s.filesz);
  // Relocations: the loader applies none, so any entry but R_AMDGPU_NONE would leave a wrong address in the image.
  for (const ElfSection& sec : co.sections) {
    if (sec.type != kShtRela && sec.type != kShtRel) continue;
    const uint64_t entry = sec.type == kShtRela ? 24 : 16;  // r_offset, r_info (type in the low 32 bits)[, r_addend]
    for (uint64_t at = sec.offset; at + entry <= sec.offset + sec.size; at += entry) {
      const uint32_t type = static_cast<uint32_t>(rd<uint64_t>(elf, at + 8, kernel, "a relocation"));
      if (type != 0)
        bad(kernel, "section " + sec.name + " holds a relocation " + amdgpu_relocation_name(type) + " at offset " +
                        hex(rd<uint64_t>(elf, at, kernel, "a relocation")) + "; the loader applies none (expected only R_AMDGPU_NONE)");
    }
  }
  const AmdKernel& k = co.kernel(kernel);
  image.kd = k.kd;
  image.kd_offset = k.kd_address;
  image.entry_offset = k.entry_address;
  if (image.kd_offset + 64 > end) bad(kernel, "its descriptor at " + hex(image.kd_offset) + " lies outside the image of " + std::to_string(end) + " bytes");
  if (image.entry_offset >= end) bad(kernel, "its entry at " + hex(image.entry_offset) + " lies outside the image of " + std::to_string(end) + " bytes");
  if (image.entry_offset % 256 != 0) bad(kernel, "its entry at " + hex(image.entry_offset) + " is not 256-byte aligned");
  const MsgPack* md = co.kernel_metadata(kernel);
  if (md == nullptr) bad(kernel, "the code object has no metadata (NT_AMDGPU_METADATA) for the kernel");
  auto integer = [&](const MsgPack& m, const char* key) -> std::optional<int64_t> {
    const MsgPack* v = m.find(key);
    if (v == nullptr) return std::nullopt;
    return v->as_int();
  };
  image.kernarg_size = static_cast<uint32_t>(integer(*md, ".kernarg_segment_size").value_or(k.kd.kernarg_size));
  image.kernarg_alignment = static_cast<uint32_t>(std::max<int64_t>(8, integer(*md, ".kernarg_segment_align").value_or(8)));
  if (const MsgPack* args = md->find(".args")) {
    for (const MsgPack& a : args->array()) {
      const std::optional<int64_t> offset = integer(a, ".offset"), size = integer(a, ".size");
      const MsgPack* kind = a.find(".value_kind");
      if (!offset || !size || kind == nullptr) bad(kernel, "a metadata argument lacks .offset, .size or .value_kind");
      AmdKernelArg arg{static_cast<uint32_t>(*offset), static_cast<uint32_t>(*size), kind->as_string()};
      if (arg.offset + uint64_t{arg.size} > image.kernarg_size)
        bad(kernel, "argument " + arg.value_kind + " at " + std::to_string(arg.offset) + " ends past the kernarg segment of " +
                        std::to_string(image.kernarg_size) + " bytes");
      if (arg.value_kind.rfind("hidden_", 0) == 0) {
        image.hidden_offset = std::min(image.hidden_offset.value_or(arg.offset), arg.offset);
      } else {
        image.explicit_args.push_back(std::move(arg));
      }
    }
  }
  return image;
}

}  // namespace doorbell::amd
