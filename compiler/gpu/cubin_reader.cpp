#include "compiler/gpu/cubin_reader.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace doorbell {
namespace {

// ELF64 constants (System V gABI): EM_CUDA is 190; section types SHT_SYMTAB 2, SHT_RELA 4, SHT_NOBITS 8, SHT_REL 9;
// NVIDIA's .nv.info sections are SHT_LOPROC (0x70000000).
constexpr uint16_t kEmCuda = 190;
constexpr uint32_t kShtSymtab = 2, kShtRela = 4, kShtNobits = 8, kShtRel = 9;
constexpr uint8_t kEifmtSval = 4;

class Bytes {
 public:
  explicit Bytes(std::string_view b) : b_(b) {}
  template <class T> T at(uint64_t off, const std::string& what) const {
    if (off > b_.size() || b_.size() - off < sizeof(T))
      throw CubinError("read_cubin: " + what + " at offset " + std::to_string(off) + " needs " + std::to_string(sizeof(T)) +
                       " bytes; the cubin has " + std::to_string(b_.size()));
    T v;
    std::memcpy(&v, b_.data() + off, sizeof(T));
    return v;
  }
  std::string_view slice(uint64_t off, uint64_t size, const std::string& what) const {
    if (off > b_.size() || b_.size() - off < size)
      throw CubinError("read_cubin: " + what + " spans bytes [" + std::to_string(off) + ", " + std::to_string(off + size) +
                       ") past the end of the cubin (" + std::to_string(b_.size()) + " bytes)");
    return b_.substr(off, size);
  }
  size_t size() const { return b_.size(); }

 private:
  std::string_view b_;
};

std::string cstring(std::string_view table, uint32_t off, const std::string& what) {
  if (off >= table.size()) throw CubinError("read_cubin: " + what + " name offset " + std::to_string(off) + " is past its string table");
  size_t end = table.find('\0', off);
  if (end == std::string_view::npos) throw CubinError("read_cubin: " + what + " name is not NUL-terminated");
  return std::string(table.substr(off, end - off));
}

template <class T> T get(std::string_view data, size_t off) {
  T v;
  std::memcpy(&v, data.data() + off, sizeof(T));
  return v;
}

std::vector<NvInfoAttribute> parse_nv_info(std::string_view data, const std::string& section) {
  std::vector<NvInfoAttribute> out;
  size_t p = 0;
  while (p < data.size()) {
    if (data.size() - p < 4) throw CubinError("read_cubin: " + section + " ends inside a record header at byte " + std::to_string(p));
    NvInfoAttribute a;
    a.format = static_cast<uint8_t>(data[p]);
    a.id = static_cast<uint8_t>(data[p + 1]);
    uint16_t v = get<uint16_t>(data, p + 2);
    p += 4;
    if (a.format == kEifmtSval) {
      if (data.size() - p < v)
        throw CubinError("read_cubin: " + section + " attribute 0x" + std::to_string(a.id) + " declares " + std::to_string(v) +
                         " bytes of payload; only " + std::to_string(data.size() - p) + " remain");
      a.data = std::string(data.substr(p, v));
      p += v;
    } else if (a.format >= 1 && a.format <= 3) {
      a.value = v;
    } else {
      throw CubinError("read_cubin: " + section + " has a record of unknown format " + std::to_string(a.format) +
                       "; expected 1 (NVAL), 2 (BVAL), 3 (HVAL) or 4 (SVAL)");
    }
    out.push_back(std::move(a));
  }
  return out;
}

void need_size(const NvInfoAttribute& a, size_t n, const std::string& section, const char* name) {
  if (a.format != kEifmtSval || a.data.size() < n)
    throw CubinError("read_cubin: " + section + " " + name + " needs an SVAL payload of at least " + std::to_string(n) +
                     " bytes; got format " + std::to_string(a.format) + " with " + std::to_string(a.data.size()));
}

}  // namespace

const CubinKernel& Cubin::kernel(std::string_view name) const {
  for (const CubinKernel& k : kernels)
    if (k.name == name) return k;
  std::string known;
  for (const CubinKernel& k : kernels) known += (known.empty() ? "" : ", ") + k.name;
  throw CubinError("cubin: no kernel named " + std::string(name) + "; it has " + (known.empty() ? "none" : known));
}

const CubinSection* Cubin::section(std::string_view name) const {
  for (const CubinSection& s : sections)
    if (s.name == name) return &s;
  return nullptr;
}

Cubin read_cubin(std::string_view bytes) {
  Bytes b(bytes);
  if (bytes.size() < 64 || bytes.substr(0, 4) != std::string_view("\x7f" "ELF", 4))
    throw CubinError("read_cubin: not an ELF file (expected the magic 7f 45 4c 46 and a 64-byte header)");
  if (bytes[4] != 2) throw CubinError("read_cubin: ELF class " + std::to_string(int(bytes[4])) + "; expected 2 (ELF64)");
  if (bytes[5] != 1) throw CubinError("read_cubin: ELF data encoding " + std::to_string(int(bytes[5])) + "; expected 1 (little endian)");
  Cubin c;
  c.os_abi = static_cast<uint8_t>(bytes[7]);
  c.abi_version = static_cast<uint8_t>(bytes[8]);
  c.machine = b.at<uint16_t>(18, "e_machine");
  if (c.machine != kEmCuda) throw CubinError("read_cubin: e_machine " + std::to_string(c.machine) + "; expected 190 (EM_CUDA)");
  c.flags = b.at<uint32_t>(48, "e_flags");
  uint64_t shoff = b.at<uint64_t>(40, "e_shoff");
  uint16_t shentsize = b.at<uint16_t>(58, "e_shentsize"), shnum = b.at<uint16_t>(60, "e_shnum"), shstrndx = b.at<uint16_t>(62, "e_shstrndx");
  if (shentsize != 64) throw CubinError("read_cubin: e_shentsize " + std::to_string(shentsize) + "; expected 64");
  if (shstrndx >= shnum) throw CubinError("read_cubin: e_shstrndx " + std::to_string(shstrndx) + " is not one of the " + std::to_string(shnum) + " sections");

  for (uint16_t i = 0; i < shnum; i++) {
    uint64_t h = shoff + uint64_t{i} * 64;
    std::string what = "section header " + std::to_string(i);
    CubinSection s;
    s.name = std::to_string(b.at<uint32_t>(h, what));  // resolved below
    s.type = b.at<uint32_t>(h + 4, what);
    s.flags = b.at<uint64_t>(h + 8, what);
    s.addr = b.at<uint64_t>(h + 16, what);
    s.offset = b.at<uint64_t>(h + 24, what);
    s.size = b.at<uint64_t>(h + 32, what);
    s.link = b.at<uint32_t>(h + 40, what);
    s.info = b.at<uint32_t>(h + 44, what);
    s.align = b.at<uint64_t>(h + 48, what);
    s.entsize = b.at<uint64_t>(h + 56, what);
    c.sections.push_back(std::move(s));
  }
  std::string_view shstr = b.slice(c.sections[shstrndx].offset, c.sections[shstrndx].size, "the section name table");
  for (CubinSection& s : c.sections) s.name = cstring(shstr, static_cast<uint32_t>(std::stoul(s.name)), "a section");
  auto contents = [&](const CubinSection& s) {
    return s.type == kShtNobits ? std::string_view() : b.slice(s.offset, s.size, "section " + s.name);
  };

  // Symbols: the one SHT_SYMTAB, names from the string table it links to.
  for (const CubinSection& s : c.sections) {
    if (s.type != kShtSymtab) continue;
    if (s.entsize != 24) throw CubinError("read_cubin: " + s.name + " entry size " + std::to_string(s.entsize) + "; expected 24");
    if (s.link >= c.sections.size()) throw CubinError("read_cubin: " + s.name + " links to string table " + std::to_string(s.link) + ", which does not exist");
    std::string_view strtab = contents(c.sections[s.link]), data = contents(s);
    for (size_t p = 0; p + 24 <= data.size(); p += 24) {
      CubinSymbol sym;
      sym.name = cstring(strtab, get<uint32_t>(data, p), s.name + " entry " + std::to_string(p / 24));
      uint8_t info = static_cast<uint8_t>(data[p + 4]);
      sym.type = info & 0xf;
      sym.bind = info >> 4;
      sym.other = static_cast<uint8_t>(data[p + 5]);
      sym.shndx = get<uint16_t>(data, p + 6);
      sym.value = get<uint64_t>(data, p + 8);
      sym.size = get<uint64_t>(data, p + 16);
      if (sym.name.empty() && sym.type == 3 /* STT_SECTION */ && sym.shndx < c.sections.size()) sym.name = c.sections[sym.shndx].name;
      c.symbols.push_back(std::move(sym));
    }
  }
  auto symbol_name = [&](uint32_t index, const std::string& where) -> const std::string& {
    if (index >= c.symbols.size())
      throw CubinError("read_cubin: " + where + " names symbol " + std::to_string(index) + "; the symbol table has " + std::to_string(c.symbols.size()));
    return c.symbols[index].name;
  };

  // Relocations.
  for (const CubinSection& s : c.sections) {
    if (s.type != kShtRel && s.type != kShtRela) continue;
    size_t entry = s.type == kShtRela ? 24 : 16;
    if (s.entsize != entry) throw CubinError("read_cubin: " + s.name + " entry size " + std::to_string(s.entsize) + "; expected " + std::to_string(entry));
    std::string_view data = contents(s);
    for (size_t p = 0; p + entry <= data.size(); p += entry) {
      CubinRelocation r;
      r.section = s.name;
      r.target = s.info < c.sections.size() ? c.sections[s.info].name : "";
      r.offset = get<uint64_t>(data, p);
      uint64_t info = get<uint64_t>(data, p + 8);
      r.symbol = static_cast<uint32_t>(info >> 32);
      r.type = static_cast<uint32_t>(info);
      if (entry == 24) r.addend = get<int64_t>(data, p + 16);
      c.relocations.push_back(r);
    }
  }

  // Kernels: one per .text.<name>.
  std::map<std::string, size_t> by_name;
  for (const CubinSection& s : c.sections) {
    if (s.name.rfind(".text.", 0) != 0) continue;
    CubinKernel k;
    k.name = s.name.substr(6);
    k.text_offset = s.offset;
    k.text_size = s.size;
    by_name[k.name] = c.kernels.size();
    c.kernels.push_back(std::move(k));
  }
  auto kernel_named = [&](const std::string& name) -> CubinKernel* {
    auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : &c.kernels[it->second];
  };
  for (const CubinSection& s : c.sections) {
    if (s.name.rfind(".nv.constant0.", 0) == 0) {
      if (CubinKernel* k = kernel_named(s.name.substr(14))) k->constant0_size = s.size;
    } else if (s.name.rfind(".nv.shared.", 0) == 0) {
      if (CubinKernel* k = kernel_named(s.name.substr(11))) k->shared_bytes = s.size;
    } else if (s.name == ".nv.info") {
      c.global_info = parse_nv_info(contents(s), s.name);
    } else if (s.name.rfind(".nv.info.", 0) == 0) {
      CubinKernel* k = kernel_named(s.name.substr(9));
      if (!k) throw CubinError("read_cubin: " + s.name + " describes a kernel without a .text." + s.name.substr(9) + " section");
      k->attributes = parse_nv_info(contents(s), s.name);
      for (const NvInfoAttribute& a : k->attributes) {
        switch (a.id) {
          case eiattr::kParamCbank:
            need_size(a, 8, s.name, "EIATTR_PARAM_CBANK");
            k->param_cbank_offset = get<uint16_t>(a.data, 4);
            k->param_cbank_size = get<uint16_t>(a.data, 6);
            break;
          case eiattr::kCbankParamSize: k->cbank_param_size = a.value; break;
          case eiattr::kMaxregCount: k->max_reg_count = a.value; break;
          case eiattr::kNumBarriers: k->num_barriers = a.value; break;
          case eiattr::kMaxThreads:
            need_size(a, 12, s.name, "EIATTR_MAX_THREADS");
            k->max_threads = std::array<uint32_t, 3>{get<uint32_t>(a.data, 0), get<uint32_t>(a.data, 4), get<uint32_t>(a.data, 8)};
            break;
          case eiattr::kKparamInfo: {
            need_size(a, 12, s.name, "EIATTR_KPARAM_INFO");
            KernelParam p{get<uint32_t>(a.data, 0), get<uint16_t>(a.data, 4), get<uint16_t>(a.data, 6), (get<uint32_t>(a.data, 8) >> 18) & 0x3fff};
            k->params.push_back(p);
            break;
          }
          case eiattr::kExitInstrOffsets:
            if (a.format != kEifmtSval || a.data.size() % 4) throw CubinError("read_cubin: " + s.name + " EIATTR_EXIT_INSTR_OFFSETS needs a payload of u32 offsets");
            for (size_t i = 0; i < a.data.size(); i += 4) k->exit_instr_offsets.push_back(get<uint32_t>(a.data, i));
            break;
          default: break;
        }
      }
      std::sort(k->params.begin(), k->params.end(), [](const KernelParam& x, const KernelParam& y) { return x.ordinal < y.ordinal; });
    }
  }
  // Per-function values in the global .nv.info: (function symbol, value).
  for (const NvInfoAttribute& a : c.global_info) {
    if (a.id != eiattr::kRegcount && a.id != eiattr::kFrameSize && a.id != eiattr::kMinStackSize && a.id != eiattr::kMaxStackSize) continue;
    need_size(a, 8, ".nv.info", "a per-function attribute");
    const std::string& fn = symbol_name(get<uint32_t>(a.data, 0), ".nv.info attribute " + std::to_string(a.id));
    CubinKernel* k = kernel_named(fn);
    if (!k) continue;  // a device function, not a kernel
    uint32_t v = get<uint32_t>(a.data, 4);
    if (a.id == eiattr::kRegcount) k->registers = static_cast<int>(v);
    else if (a.id == eiattr::kFrameSize) k->frame_size = v;
    else if (a.id == eiattr::kMinStackSize) k->min_stack_size = v;
    else k->max_stack_size = v;
  }
  return c;
}

}  // namespace doorbell
