#include "compiler/cpu/elf_loader.h"

#include <dlfcn.h>
#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace doorbell {
namespace {

[[noreturn]] void fail(const std::string& what) { throw ElfLoadError("elf_loader: " + what); }

// Structs are copied out with memcpy: offsets in a file need not be aligned for the struct.
template <class T> T read_at(std::string_view elf, uint64_t offset, const std::string& what) {
  if (offset > elf.size() || elf.size() - offset < sizeof(T))
    fail(what + " at offset " + std::to_string(offset) + " lies beyond the end of the " + std::to_string(elf.size()) + "-byte object (truncated?)");
  T t;
  std::memcpy(&t, elf.data() + offset, sizeof(T));
  return t;
}

uint64_t align_up(uint64_t v, uint64_t a) { return a <= 1 ? v : (v + a - 1) / a * a; }

// A jump stub: `jmp *0(%rip)` followed by the 64-bit target it reads.
constexpr size_t kStubSize = 16;
constexpr unsigned char kStubJump[6] = {0xff, 0x25, 0, 0, 0, 0};

struct Parsed {
  std::string_view elf;
  Elf64_Ehdr eh{};
  std::vector<Elf64_Shdr> sections;
  std::string section_name(size_t i) const {
    if (eh.e_shstrndx >= sections.size()) return "#" + std::to_string(i);
    const Elf64_Shdr& names = sections[eh.e_shstrndx];
    uint64_t off = names.sh_offset + sections[i].sh_name;
    if (sections[i].sh_name >= names.sh_size || off >= elf.size()) return "#" + std::to_string(i);
    return std::string(elf.data() + off, strnlen(elf.data() + off, elf.size() - off));
  }
};

Parsed parse_headers(std::string_view elf) {
  Parsed p;
  p.elf = elf;
  p.eh = read_at<Elf64_Ehdr>(elf, 0, "the ELF header");
  if (std::memcmp(p.eh.e_ident, ELFMAG, SELFMAG) != 0) fail("not an ELF object: the magic bytes are wrong");
  if (p.eh.e_ident[EI_CLASS] != ELFCLASS64 || p.eh.e_ident[EI_DATA] != ELFDATA2LSB)
    fail("expected a 64-bit little-endian ELF object");
  if (p.eh.e_type != ET_REL) fail("expected a relocatable object (ET_REL), got e_type " + std::to_string(p.eh.e_type));
  if (p.eh.e_machine != EM_X86_64) fail("expected an x86-64 object (EM_X86_64), got e_machine " + std::to_string(p.eh.e_machine));
  if (p.eh.e_shentsize != sizeof(Elf64_Shdr)) fail("section header size " + std::to_string(p.eh.e_shentsize) + ", expected " + std::to_string(sizeof(Elf64_Shdr)));
  for (size_t i = 0; i < p.eh.e_shnum; i++)
    p.sections.push_back(read_at<Elf64_Shdr>(elf, p.eh.e_shoff + i * sizeof(Elf64_Shdr), "section header " + std::to_string(i)));
  for (size_t i = 0; i < p.sections.size(); i++) {
    const Elf64_Shdr& s = p.sections[i];
    if (s.sh_type != SHT_NOBITS && (s.sh_offset > elf.size() || elf.size() - s.sh_offset < s.sh_size))
      fail("section " + p.section_name(i) + " (" + std::to_string(s.sh_size) + " bytes at offset " + std::to_string(s.sh_offset) +
           ") lies beyond the end of the " + std::to_string(elf.size()) + "-byte object (truncated?)");
  }
  return p;
}

std::string relocation_name(uint32_t type) {
  switch (type) {
    case R_X86_64_64: return "R_X86_64_64";
    case R_X86_64_PC32: return "R_X86_64_PC32";
    case R_X86_64_PLT32: return "R_X86_64_PLT32";
    case R_X86_64_GOTPCREL: return "R_X86_64_GOTPCREL";
    case R_X86_64_GOTPCRELX: return "R_X86_64_GOTPCRELX";
    case R_X86_64_REX_GOTPCRELX: return "R_X86_64_REX_GOTPCRELX";
    case R_X86_64_32: return "R_X86_64_32";
    case R_X86_64_32S: return "R_X86_64_32S";
    default: return "relocation type " + std::to_string(type);
  }
}

}  // namespace

LoadedObject::~LoadedObject() {
  if (base_) munmap(base_, size_);
}

void* LoadedObject::symbol(const std::string& name) const {
  auto it = symbols_.find(name);
  if (it == symbols_.end()) fail("the object defines no global symbol '" + name + "'");
  return it->second;
}

std::shared_ptr<LoadedObject> LoadedObject::load(std::string_view elf) {
  Parsed p = parse_headers(elf);
  const std::vector<Elf64_Shdr>& sh = p.sections;

  // The symbol table and its names.
  size_t symtab_index = 0;
  for (size_t i = 0; i < sh.size(); i++)
    if (sh[i].sh_type == SHT_SYMTAB) symtab_index = i;
  if (symtab_index == 0) fail("the object has no .symtab section");
  const Elf64_Shdr& symtab = sh[symtab_index];
  if (symtab.sh_link >= sh.size()) fail("section .symtab links to string table " + std::to_string(symtab.sh_link) + ", which does not exist");
  const Elf64_Shdr& strtab = sh[symtab.sh_link];
  if (strtab.sh_type != SHT_STRTAB) fail("section " + p.section_name(symtab.sh_link) + " linked from .symtab is not a string table");
  std::vector<Elf64_Sym> syms;
  for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= symtab.sh_size; off += sizeof(Elf64_Sym))
    syms.push_back(read_at<Elf64_Sym>(elf, symtab.sh_offset + off, "a symbol of .symtab"));
  auto sym_name = [&](const Elf64_Sym& s) {
    if (s.st_name >= strtab.sh_size) fail("a symbol name lies outside the string table");
    const char* c = elf.data() + strtab.sh_offset + s.st_name;
    return std::string(c, strnlen(c, strtab.sh_size - s.st_name));
  };

  // Layout: read-only and executable sections first, then stubs and GOT slots, then writable sections on their own pages.
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  std::vector<uint64_t> where(sh.size(), UINT64_MAX);
  uint64_t size = 0, stubs = 0;
  for (bool writable : {false, true}) {
    if (writable) size = align_up(size, page);
    for (size_t i = 0; i < sh.size(); i++) {
      if (!(sh[i].sh_flags & SHF_ALLOC) || ((sh[i].sh_flags & SHF_WRITE) != 0) != writable) continue;
      size = align_up(size, sh[i].sh_addralign);
      where[i] = size;
      size += sh[i].sh_size;
    }
    if (!writable) {  // one stub and one GOT slot per symbol: simple, and a kernel has few symbols
      size = align_up(size, 16);
      stubs = size;
      size += syms.size() * (kStubSize + 8);
    }
  }
  uint64_t writable_start = 0;
  for (size_t i = 0; i < sh.size(); i++)
    if (where[i] != UINT64_MAX && (sh[i].sh_flags & SHF_WRITE)) writable_start = writable_start ? std::min(writable_start, where[i]) : where[i];
  size = align_up(std::max<uint64_t>(size, 1), page);

  void* mem = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) fail("cannot map " + std::to_string(size) + " bytes: " + std::strerror(errno));
  std::shared_ptr<LoadedObject> obj(new LoadedObject());
  obj->base_ = static_cast<std::byte*>(mem);
  obj->size_ = size;
  std::byte* base = obj->base_;
  for (size_t i = 0; i < sh.size(); i++)
    if (where[i] != UINT64_MAX && sh[i].sh_type != SHT_NOBITS) std::memcpy(base + where[i], elf.data() + sh[i].sh_offset, sh[i].sh_size);

  // Symbol addresses: defined ones in their loaded section, undefined ones from this process (dlsym).
  std::vector<uint64_t> addr(syms.size(), 0);
  std::vector<bool> resolved(syms.size(), false);  // a relocation against an unresolved symbol is an error
  if (!syms.empty()) resolved[0] = true;           // the null symbol: address 0
  for (size_t k = 1; k < syms.size(); k++) {
    const Elf64_Sym& s = syms[k];
    if (s.st_shndx == SHN_UNDEF) {
      std::string n = sym_name(s);
      if (n.empty()) continue;
      void* a = dlsym(RTLD_DEFAULT, n.c_str());
      if (!a) fail("undefined symbol '" + n + "' is not found in this process (dlsym)");
      addr[k] = reinterpret_cast<uint64_t>(a);
      resolved[k] = true;
    } else if (s.st_shndx == SHN_ABS) {
      addr[k] = s.st_value;
      resolved[k] = true;
    } else if (s.st_shndx < sh.size() && where[s.st_shndx] != UINT64_MAX) {
      addr[k] = reinterpret_cast<uint64_t>(base + where[s.st_shndx]) + s.st_value;
      resolved[k] = true;
      if (ELF64_ST_BIND(s.st_info) != STB_LOCAL && ELF64_ST_TYPE(s.st_info) != STT_SECTION)
        obj->symbols_[sym_name(s)] = reinterpret_cast<void*>(addr[k]);
    } else if (s.st_shndx == SHN_COMMON) {
      fail("common symbol '" + sym_name(s) + "' is not supported; compile with -fno-common");
    }
  }
  auto stub_for = [&](size_t k) {
    std::byte* stub = base + stubs + k * (kStubSize + 8);
    std::memcpy(stub, kStubJump, sizeof kStubJump);
    std::memcpy(stub + sizeof kStubJump, &addr[k], 8);
    return reinterpret_cast<uint64_t>(stub);
  };
  auto got_for = [&](size_t k) {
    std::byte* slot = base + stubs + k * (kStubSize + 8) + kStubSize;
    std::memcpy(slot, &addr[k], 8);
    return reinterpret_cast<uint64_t>(slot);
  };

  // Relocations (System V AMD64 ABI, §4.4.1 "Relocation Types", table "Relocation Types"; S: the symbol's
  // address, A: the addend, P: the place being relocated, L: the symbol's PLT entry (here: our stub),
  // G + GOT: the symbol's GOT slot (here: our slot)):
  //   R_X86_64_64 = 1: S + A (64 bits); R_X86_64_PC32 = 2: S + A - P (32 bits, signed);
  //   R_X86_64_PLT32 = 4: L + A - P; R_X86_64_GOTPCREL = 9, R_X86_64_GOTPCRELX = 41,
  //   R_X86_64_REX_GOTPCRELX = 42: G + GOT + A - P; R_X86_64_32 = 10 / R_X86_64_32S = 11: S + A zero/sign-extended.
  for (size_t ri = 0; ri < sh.size(); ri++) {
    if (sh[ri].sh_type == SHT_REL) fail("section " + p.section_name(ri) + " holds REL relocations; x86-64 objects use RELA");
    if (sh[ri].sh_type != SHT_RELA) continue;
    size_t target = sh[ri].sh_info;
    if (target >= sh.size()) fail("section " + p.section_name(ri) + " relocates section " + std::to_string(target) + ", which does not exist");
    if (where[target] == UINT64_MAX) continue;  // relocations of debug info and other unloaded sections
    std::string sec = p.section_name(target);
    for (uint64_t off = 0; off + sizeof(Elf64_Rela) <= sh[ri].sh_size; off += sizeof(Elf64_Rela)) {
      Elf64_Rela r = read_at<Elf64_Rela>(elf, sh[ri].sh_offset + off, "a relocation of " + p.section_name(ri));
      uint32_t type = ELF64_R_TYPE(r.r_info);
      size_t k = ELF64_R_SYM(r.r_info);
      if (type == R_X86_64_NONE) continue;
      if (k >= syms.size()) fail("a " + relocation_name(type) + " in " + sec + " names symbol " + std::to_string(k) + ", beyond .symtab");
      std::string what = relocation_name(type) + " at " + sec + "+" + std::to_string(r.r_offset) + " against '" + sym_name(syms[k]) + "'";
      if (!resolved[k]) fail(what + ": the symbol lives in no loaded section");
      size_t width = type == R_X86_64_64 ? 8 : 4;
      if (r.r_offset > sh[target].sh_size || sh[target].sh_size - r.r_offset < width) fail(what + " patches bytes outside its section");
      std::byte* place = base + where[target] + r.r_offset;
      uint64_t P = reinterpret_cast<uint64_t>(place), S = addr[k];
      int64_t A = r.r_addend;
      bool external = syms[k].st_shndx == SHN_UNDEF;
      auto put32 = [&](int64_t v, bool is_signed) {
        if (is_signed ? (v < INT32_MIN || v > INT32_MAX) : (v < 0 || v > static_cast<int64_t>(UINT32_MAX)))
          fail(what + ": value " + std::to_string(v) + " does not fit in 32 bits");
        uint32_t w = static_cast<uint32_t>(v);
        std::memcpy(place, &w, 4);
      };
      switch (type) {
        case R_X86_64_64: { uint64_t v = S + A; std::memcpy(place, &v, 8); break; }
        case R_X86_64_PC32: put32(static_cast<int64_t>(S + A - P), true); break;
        case R_X86_64_PLT32: put32(static_cast<int64_t>((external ? stub_for(k) : S) + A - P), true); break;
        case R_X86_64_GOTPCREL: case R_X86_64_GOTPCRELX: case R_X86_64_REX_GOTPCRELX:
          put32(static_cast<int64_t>(got_for(k) + A - P), true);
          break;
        case R_X86_64_32: put32(static_cast<int64_t>(S + A), false); break;
        case R_X86_64_32S: put32(static_cast<int64_t>(S + A), true); break;
        default: fail("unsupported " + what + "; expected R_X86_64_64, PC32, PLT32, GOTPCREL(X), 32 or 32S");
      }
    }
  }

  uint64_t exec_end = writable_start ? writable_start : size;
  if (mprotect(base, exec_end, PROT_READ | PROT_EXEC) != 0) fail(std::string("mprotect to read+execute failed: ") + std::strerror(errno));
  return obj;
}

}  // namespace doorbell
