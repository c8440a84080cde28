// write_elf_object: assembled code as a relocatable ELF64 x86-64 object (what compiler/cpu/elf_loader.h loads).
// Layout facts (headers, section and symbol fields, R_X86_64_PLT32): firmware-notes/x86-encoding.md §7.
#include <elf.h>

#include <cstring>
#include <string>

#include "compiler/x86/x86_encoder.h"

namespace doorbell::x86 {
namespace {

template <class T> void put(std::string& out, const T& v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }

void pad_to(std::string& out, size_t align) {
  while (out.size() % align) out.push_back('\0');
}

uint32_t add_string(std::string& table, std::string_view s) {
  const uint32_t at = static_cast<uint32_t>(table.size());
  table.append(s);
  table.push_back('\0');
  return at;
}

}  // namespace

std::string write_elf_object(const AssembledCode& code) {
  if (code.name.empty()) throw X86EncodeError("write_elf_object: the function has no name; expected its global symbol");
  if (code.code_bytes > code.bytes.size())
    throw X86EncodeError("write_elf_object: " + code.name + " code_bytes " + std::to_string(code.code_bytes) + " beyond its " +
                         std::to_string(code.bytes.size()) + " bytes");
  // Sections: 0 null, 1 .text, 2 .rela.text, 3 .symtab, 4 .strtab, 5 .shstrtab.
  std::string shstr(1, '\0');
  const uint32_t n_text = add_string(shstr, ".text"), n_rela = add_string(shstr, ".rela.text"), n_symtab = add_string(shstr, ".symtab"),
                 n_strtab = add_string(shstr, ".strtab"), n_shstrtab = add_string(shstr, ".shstrtab");

  // Symbols: null, the .text section symbol (local), then the function and the externs (global): locals first, and
  // .symtab's sh_info is the first global's index.
  std::string strtab(1, '\0');
  std::string symtab;
  put(symtab, Elf64_Sym{});
  Elf64_Sym section{};
  section.st_info = ELF64_ST_INFO(STB_LOCAL, STT_SECTION);
  section.st_shndx = 1;
  put(symtab, section);
  const uint32_t first_global = 2;
  Elf64_Sym func{};
  func.st_name = add_string(strtab, code.name);
  func.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
  func.st_shndx = 1;
  func.st_size = code.code_bytes;
  put(symtab, func);
  std::vector<std::string> externs;
  std::string rela;
  for (const Relocation& r : code.relocations) {
    if (static_cast<uint64_t>(r.offset) + 4 > code.bytes.size())
      throw X86EncodeError("write_elf_object: " + code.name + " relocation against " + r.symbol + " at " + std::to_string(r.offset) +
                           " lies beyond the code's " + std::to_string(code.bytes.size()) + " bytes");
    size_t index = 0;
    while (index < externs.size() && externs[index] != r.symbol) index++;
    if (index == externs.size()) {
      externs.push_back(r.symbol);
      Elf64_Sym ext{};
      ext.st_name = add_string(strtab, r.symbol);
      ext.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_NOTYPE);
      ext.st_shndx = SHN_UNDEF;
      put(symtab, ext);
    }
    Elf64_Rela e{};
    e.r_offset = r.offset;
    e.r_info = ELF64_R_INFO(first_global + 1 + index, R_X86_64_PLT32);
    e.r_addend = r.addend;
    put(rela, e);
  }

  std::string out;
  put(out, Elf64_Ehdr{});
  pad_to(out, 64);
  const size_t text_at = out.size();
  out += code.bytes;
  pad_to(out, 8);
  const size_t rela_at = out.size();
  out += rela;
  const size_t symtab_at = out.size();
  out += symtab;
  const size_t strtab_at = out.size();
  out += strtab;
  const size_t shstrtab_at = out.size();
  out += shstr;
  pad_to(out, 8);
  const size_t sh_at = out.size();

  auto section_header = [&](uint32_t name, uint32_t type, uint64_t flags, size_t offset, size_t size, uint32_t link, uint32_t info,
                            uint64_t align, uint64_t entsize) {
    Elf64_Shdr s{};
    s.sh_name = name;
    s.sh_type = type;
    s.sh_flags = flags;
    s.sh_offset = offset;
    s.sh_size = size;
    s.sh_link = link;
    s.sh_info = info;
    s.sh_addralign = align;
    s.sh_entsize = entsize;
    put(out, s);
  };
  section_header(0, SHT_NULL, 0, 0, 0, 0, 0, 0, 0);
  section_header(n_text, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, text_at, code.bytes.size(), 0, 0, 64, 0);
  section_header(n_rela, SHT_RELA, SHF_INFO_LINK, rela_at, rela.size(), 3, 1, 8, sizeof(Elf64_Rela));
  section_header(n_symtab, SHT_SYMTAB, 0, symtab_at, symtab.size(), 4, first_global, 8, sizeof(Elf64_Sym));
  section_header(n_strtab, SHT_STRTAB, 0, strtab_at, strtab.size(), 0, 0, 1, 0);
  section_header(n_shstrtab, SHT_STRTAB, 0, shstrtab_at, shstr.size(), 0, 0, 1, 0);

  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_ident[EI_OSABI] = ELFOSABI_SYSV;
  eh.e_type = ET_REL;
  eh.e_machine = EM_X86_64;
  eh.e_version = EV_CURRENT;
  eh.e_shoff = sh_at;
  eh.e_ehsize = sizeof(Elf64_Ehdr);
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = 6;
  eh.e_shstrndx = 5;
  std::memcpy(out.data(), &eh, sizeof eh);
  return out;
}

}  // namespace doorbell::x86
