#include "compiler/gpu/amd_code_object.h"

#include <cstring>
#include <stdexcept>

namespace doorbell {
namespace {

// ELF64 constants (System V gABI; Linux elf.h).
constexpr uint32_t kShtSymtab = 2, kShtNote = 7, kShtDynsym = 11;
constexpr uint16_t kEtRel = 1;
constexpr uint16_t kEmAmdgpu = 224;
// AMDGPUUsage "Note Records": name "AMDGPU", type NT_AMDGPU_METADATA.
constexpr uint32_t kNtAmdgpuMetadata = 32;
constexpr size_t kKernelDescriptorSize = 64;

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument("read_amd_code_object: " + what); }

template <class T>
T rd(std::string_view b, uint64_t off, const char* what) {
  if (off > b.size() || b.size() - off < sizeof(T))
    bad(std::string(what) + " at offset " + std::to_string(off) + " lies past the end of the " + std::to_string(b.size()) + "-byte file");
  T v;
  std::memcpy(&v, b.data() + off, sizeof(T));
  return v;
}

std::string cstr(std::string_view b, uint64_t off, uint64_t end, const char* table) {
  if (off >= end || end > b.size()) bad(std::string("name offset ") + std::to_string(off) + " is outside " + table);
  const char* p = b.data() + off;
  size_t n = strnlen(p, end - off);
  if (n == end - off) bad(std::string("a name in ") + table + " is not NUL-terminated");
  return std::string(p, n);
}

class MsgPackReader {
 public:
  explicit MsgPackReader(std::string_view b) : b_(b) {}
  MsgPack read() {
    uint8_t c = byte();
    MsgPack m;
    if (c <= 0x7f) m.v = static_cast<uint64_t>(c);
    else if (c >= 0xe0) m.v = static_cast<int64_t>(static_cast<int8_t>(c));
    else if ((c & 0xf0) == 0x80) m = map(c & 0x0f);
    else if ((c & 0xf0) == 0x90) m = array(c & 0x0f);
    else if ((c & 0xe0) == 0xa0) m.v = str(c & 0x1f);
    else switch (c) {
      case 0xc0: break;
      case 0xc2: m.v = false; break;
      case 0xc3: m.v = true; break;
      case 0xca: { uint32_t u = be(4); float f; std::memcpy(&f, &u, 4); m.v = static_cast<double>(f); break; }
      case 0xcb: { uint64_t u = be(8); double d; std::memcpy(&d, &u, 8); m.v = d; break; }
      case 0xcc: m.v = be(1); break;
      case 0xcd: m.v = be(2); break;
      case 0xce: m.v = be(4); break;
      case 0xcf: m.v = be(8); break;
      case 0xd0: m.v = static_cast<int64_t>(static_cast<int8_t>(be(1))); break;
      case 0xd1: m.v = static_cast<int64_t>(static_cast<int16_t>(be(2))); break;
      case 0xd2: m.v = static_cast<int64_t>(static_cast<int32_t>(be(4))); break;
      case 0xd3: m.v = static_cast<int64_t>(be(8)); break;
      case 0xd9: m.v = str(be(1)); break;
      case 0xda: m.v = str(be(2)); break;
      case 0xdb: m.v = str(be(4)); break;
      case 0xc4: m.v = str(be(1)); break;  // bin: kept as bytes
      case 0xc5: m.v = str(be(2)); break;
      case 0xc6: m.v = str(be(4)); break;
      case 0xdc: m = array(be(2)); break;
      case 0xdd: m = array(be(4)); break;
      case 0xde: m = map(be(2)); break;
      case 0xdf: m = map(be(4)); break;
      default:
        throw std::invalid_argument("decode_msgpack: unsupported type byte 0x" + hex(c) + " at offset " + std::to_string(pos_ - 1));
    }
    return m;
  }
  size_t pos() const { return pos_; }

 private:
  static std::string hex(uint8_t c) {
    const char* d = "0123456789abcdef";
    return std::string{d[c >> 4], d[c & 15]};
  }
  uint8_t byte() {
    if (pos_ >= b_.size()) throw std::invalid_argument("decode_msgpack: truncated at offset " + std::to_string(pos_));
    return static_cast<uint8_t>(b_[pos_++]);
  }
  uint64_t be(int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = (v << 8) | byte();
    return v;
  }
  std::string str(uint64_t n) {
    if (n > b_.size() - pos_) throw std::invalid_argument("decode_msgpack: a string of " + std::to_string(n) + " bytes at offset " + std::to_string(pos_) + " runs past the end");
    std::string s(b_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  MsgPack array(uint64_t n) {
    auto a = std::make_shared<MsgPack::Array>();
    for (uint64_t i = 0; i < n; i++) a->push_back(read());
    MsgPack m;
    m.v = a;
    return m;
  }
  MsgPack map(uint64_t n) {
    auto mp = std::make_shared<MsgPack::Map>();
    for (uint64_t i = 0; i < n; i++) {
      size_t at = pos_;
      MsgPack k = read();
      const std::string* ks = std::get_if<std::string>(&k.v);
      if (!ks) throw std::invalid_argument("decode_msgpack: a map key at offset " + std::to_string(at) + " is not a string");
      std::string key = *ks;
      mp->emplace_back(std::move(key), read());
    }
    MsgPack m;
    m.v = mp;
    return m;
  }
  std::string_view b_;
  size_t pos_ = 0;
};

}  // namespace

uint32_t KernelDescriptor::user_sgprs_from_properties() const {
  uint32_t n = 0;
  const uint32_t sizes[] = {4, 2, 2, 2, 2, 2, 1};
  for (int bit = 0; bit < 7; bit++)
    if (kernel_code_properties & (1u << bit)) n += sizes[bit];
  return n;
}

uint32_t KernelDescriptor::max_vgprs(std::string_view arch) const {
  uint32_t granule = 8;
  if (arch.rfind("gfx1", 0) == 0 && arch.size() >= 5 && !enable_wavefront_size32()) granule = 4;
  return (granulated_workitem_vgpr_count() + 1) * granule;
}

const MsgPack* MsgPack::find(std::string_view key) const {
  const auto* m = std::get_if<std::shared_ptr<Map>>(&v);
  if (!m) return nullptr;
  for (const auto& [k, val] : **m)
    if (k == key) return &val;
  return nullptr;
}
const MsgPack::Array& MsgPack::array() const {
  const auto* a = std::get_if<std::shared_ptr<Array>>(&v);
  if (!a) throw std::invalid_argument("MsgPack: expected an array");
  return **a;
}
const MsgPack::Map& MsgPack::map() const {
  const auto* m = std::get_if<std::shared_ptr<Map>>(&v);
  if (!m) throw std::invalid_argument("MsgPack: expected a map");
  return **m;
}
int64_t MsgPack::as_int() const {
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  if (const auto* u = std::get_if<uint64_t>(&v)) return static_cast<int64_t>(*u);
  throw std::invalid_argument("MsgPack: expected an integer");
}
const std::string& MsgPack::as_string() const {
  const auto* s = std::get_if<std::string>(&v);
  if (!s) throw std::invalid_argument("MsgPack: expected a string");
  return *s;
}

MsgPack decode_msgpack(std::string_view bytes) { return MsgPackReader(bytes).read(); }

const ElfSection* AmdCodeObject::section(std::string_view name) const {
  for (const ElfSection& s : sections)
    if (s.name == name) return &s;
  return nullptr;
}
const ElfSymbol* AmdCodeObject::symbol(std::string_view name) const {
  for (const ElfSymbol& s : symbols)
    if (s.name == name) return &s;
  return nullptr;
}
const AmdKernel& AmdCodeObject::kernel(std::string_view name) const {
  std::string have;
  for (const AmdKernel& k : kernels) {
    if (k.name == name) return k;
    have += (have.empty() ? "" : ", ") + k.name;
  }
  throw std::invalid_argument("AmdCodeObject: no kernel descriptor " + std::string(name) + ".kd; the object has [" + have + "]");
}
const MsgPack* AmdCodeObject::kernel_metadata(std::string_view name) const {
  if (!metadata_doc) return nullptr;
  const MsgPack* ks = metadata_doc->find("amdhsa.kernels");
  if (!ks) return nullptr;
  for (const MsgPack& k : ks->array()) {
    const MsgPack* n = k.find(".name");
    if (n && n->as_string() == name) return &k;
  }
  return nullptr;
}

AmdCodeObject read_amd_code_object(std::string_view b) {
  if (b.size() < 64 || std::memcmp(b.data(), "\x7f" "ELF", 4) != 0) bad("not an ELF file (no \\x7fELF magic in the first 4 bytes)");
  if (b[4] != 2) bad("EI_CLASS is " + std::to_string(static_cast<int>(b[4])) + "; expected 2 (ELF64)");
  if (b[5] != 1) bad("EI_DATA is " + std::to_string(static_cast<int>(b[5])) + "; expected 1 (little-endian)");
  AmdCodeObject co;
  co.elf_type = rd<uint16_t>(b, 16, "e_type");
  co.machine = rd<uint16_t>(b, 18, "e_machine");
  if (co.machine != kEmAmdgpu) bad("e_machine is " + std::to_string(co.machine) + "; expected 224 (EM_AMDGPU)");
  co.e_flags = rd<uint32_t>(b, 48, "e_flags");
  const uint64_t shoff = rd<uint64_t>(b, 40, "e_shoff");
  const uint16_t shentsize = rd<uint16_t>(b, 58, "e_shentsize"), shnum = rd<uint16_t>(b, 60, "e_shnum"),
                 shstrndx = rd<uint16_t>(b, 62, "e_shstrndx");
  if (shnum && shentsize != 64) bad("e_shentsize is " + std::to_string(shentsize) + "; expected 64");
  if (shnum && shstrndx >= shnum) bad("e_shstrndx " + std::to_string(shstrndx) + " is not below e_shnum " + std::to_string(shnum));
  struct Raw { uint32_t name, type, link; uint64_t flags, addr, offset, size, entsize; };
  std::vector<Raw> raw;
  for (uint16_t i = 0; i < shnum; i++) {
    uint64_t h = shoff + uint64_t{i} * 64;
    Raw r{rd<uint32_t>(b, h, "sh_name"), rd<uint32_t>(b, h + 4, "sh_type"), rd<uint32_t>(b, h + 40, "sh_link"),
          rd<uint64_t>(b, h + 8, "sh_flags"), rd<uint64_t>(b, h + 16, "sh_addr"), rd<uint64_t>(b, h + 24, "sh_offset"),
          rd<uint64_t>(b, h + 32, "sh_size"), rd<uint64_t>(b, h + 56, "sh_entsize")};
    if (r.type != 8 /* SHT_NOBITS */ && (r.offset > b.size() || b.size() - r.offset < r.size))
      bad("section " + std::to_string(i) + " [" + std::to_string(r.offset) + ", +" + std::to_string(r.size) + ") lies outside the file");
    raw.push_back(r);
  }
  if (shnum) {
    const Raw& strs = raw[shstrndx];
    for (const Raw& r : raw)
      co.sections.push_back({cstr(b, strs.offset + r.name, strs.offset + strs.size, ".shstrtab"), r.type, r.flags, r.addr, r.offset, r.size});
  }
  // Symbols: .symtab when present (relocatable objects and unstripped shared objects), else .dynsym.
  int symtab = -1;
  for (size_t i = 0; i < raw.size(); i++)
    if (raw[i].type == kShtSymtab) symtab = static_cast<int>(i);
  if (symtab < 0)
    for (size_t i = 0; i < raw.size(); i++)
      if (raw[i].type == kShtDynsym) symtab = static_cast<int>(i);
  if (symtab >= 0) {
    const Raw& st = raw[symtab];
    if (st.entsize != 24) bad("section " + co.sections[symtab].name + " has sh_entsize " + std::to_string(st.entsize) + "; expected 24");
    if (st.link >= raw.size()) bad("section " + co.sections[symtab].name + " links to string table " + std::to_string(st.link) + ", which does not exist");
    const Raw& strs = raw[st.link];
    for (uint64_t off = st.offset + 24; off + 24 <= st.offset + st.size; off += 24) {  // entry 0 is the null symbol
      ElfSymbol s;
      uint32_t name = rd<uint32_t>(b, off, "st_name");
      uint8_t info = rd<uint8_t>(b, off + 4, "st_info");
      s.type = info & 0xf;
      s.binding = info >> 4;
      s.section = rd<uint16_t>(b, off + 6, "st_shndx");
      s.value = rd<uint64_t>(b, off + 8, "st_value");
      s.size = rd<uint64_t>(b, off + 16, "st_size");
      s.name = cstr(b, strs.offset + name, strs.offset + strs.size, co.sections[st.link].name.c_str());
      co.symbols.push_back(std::move(s));
    }
  }
  // The file offset of an address in a section: in a .o, symbol values are offsets into their section.
  const bool rel = co.elf_type == kEtRel;
  auto file_offset = [&](const ElfSymbol& s, uint64_t size) {
    if (s.section == 0 || s.section >= raw.size()) bad("symbol " + s.name + " is not defined in a section (st_shndx " + std::to_string(s.section) + ")");
    const Raw& sec = raw[s.section];
    uint64_t in = rel ? s.value : s.value - sec.addr;
    if ((!rel && s.value < sec.addr) || in > sec.size || sec.size - in < size)
      bad("symbol " + s.name + " at " + std::to_string(s.value) + " (+" + std::to_string(size) + " bytes) lies outside its section " + co.sections[s.section].name);
    return sec.offset + in;
  };
  const ElfSection* text = co.section(".text");
  for (const ElfSymbol& s : co.symbols) {
    if (s.name.size() <= 3 || s.name.compare(s.name.size() - 3, 3, ".kd") != 0) continue;
    if (s.size != 0 && s.size != kKernelDescriptorSize)
      bad("kernel descriptor symbol " + s.name + " has size " + std::to_string(s.size) + "; expected 64");
    uint64_t o = file_offset(s, kKernelDescriptorSize);
    AmdKernel k;
    k.name = s.name.substr(0, s.name.size() - 3);
    k.kd_address = s.value;
    KernelDescriptor& d = k.kd;
    d.group_segment_fixed_size = rd<uint32_t>(b, o + 0, "group_segment_fixed_size");
    d.private_segment_fixed_size = rd<uint32_t>(b, o + 4, "private_segment_fixed_size");
    d.kernarg_size = rd<uint32_t>(b, o + 8, "kernarg_size");
    d.kernel_code_entry_byte_offset = rd<int64_t>(b, o + 16, "kernel_code_entry_byte_offset");
    d.compute_pgm_rsrc3 = rd<uint32_t>(b, o + 44, "compute_pgm_rsrc3");
    d.compute_pgm_rsrc1 = rd<uint32_t>(b, o + 48, "compute_pgm_rsrc1");
    d.compute_pgm_rsrc2 = rd<uint32_t>(b, o + 52, "compute_pgm_rsrc2");
    d.kernel_code_properties = rd<uint16_t>(b, o + 56, "kernel_code_properties");
    d.kernarg_preload = rd<uint16_t>(b, o + 58, "kernarg_preload");
    if (rel) {  // the entry offset is a relocation against the kernel's symbol: take the symbol instead
      const ElfSymbol* entry = co.symbol(k.name);
      if (!entry) bad("kernel descriptor " + s.name + " has no kernel symbol " + k.name + " in the relocatable object");
      k.entry_address = entry->value;
      k.entry_in_text = entry->section < co.sections.size() && co.sections[entry->section].name == ".text";
    } else {
      k.entry_address = static_cast<uint64_t>(static_cast<int64_t>(s.value) + d.kernel_code_entry_byte_offset);
      k.entry_in_text = text && k.entry_address >= text->addr && k.entry_address < text->addr + text->size;
    }
    co.kernels.push_back(std::move(k));
  }
  // Notes: each is namesz, descsz, type, then the name and the descriptor, each padded to 4 bytes.
  for (size_t i = 0; i < raw.size(); i++) {
    if (raw[i].type != kShtNote) continue;
    uint64_t off = raw[i].offset, end = raw[i].offset + raw[i].size;
    while (off + 12 <= end) {
      uint32_t namesz = rd<uint32_t>(b, off, "n_namesz"), descsz = rd<uint32_t>(b, off + 4, "n_descsz"), type = rd<uint32_t>(b, off + 8, "n_type");
      uint64_t name_at = off + 12, desc_at = name_at + ((namesz + 3) & ~3u);
      uint64_t next = desc_at + ((descsz + 3) & ~3u);
      if (next > end) bad("a note in " + co.sections[i].name + " at offset " + std::to_string(off) + " runs past the section's end");
      std::string name(b.substr(name_at, namesz));
      if (!name.empty() && name.back() == '\0') name.pop_back();
      if (name == "AMDGPU" && type == kNtAmdgpuMetadata) co.metadata = std::string(b.substr(desc_at, descsz));
      off = next;
    }
  }
  if (co.metadata) co.metadata_doc = decode_msgpack(*co.metadata);
  return co;
}

}  // namespace doorbell
