#include "hcq/nv/cubin_image.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>

#include "compiler/gpu/cubin_reader.h"

namespace doorbell::nv {
namespace {

constexpr uint32_t kShtNobits = 8;            // ELF SHT_NOBITS
constexpr uint64_t kSectionAlignment = 256;   // every section of the image; constant banks need 64 (V04 addr >> 6)

uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

// ".nv.constant3" -> 3 with an empty owner; ".nv.constant2.k" -> 2 with owner "k"; anything else -> nullopt.
struct BankName {
  uint32_t index;
  std::string_view owner;
};
std::optional<BankName> parse_bank(std::string_view name) {
  constexpr std::string_view kPrefix = ".nv.constant";
  if (name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  std::string_view rest = name.substr(kPrefix.size());
  uint32_t index = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), index);
  if (ec != std::errc() || end == rest.data()) return std::nullopt;
  std::string_view owner(end, rest.data() + rest.size() - end);
  if (!owner.empty()) {
    if (owner.front() != '.') return std::nullopt;
    owner.remove_prefix(1);
  }
  return BankName{index, owner};
}

// Bytes a relocation of this type writes, and where in them the value goes (the upper half of a 64-bit
// instruction word for the ABS32_*_32 forms: tinygrad ops_nv.py writes program[offset/4 + 1]).
struct PatchField {
  uint64_t at;
  uint32_t bytes;
};
std::optional<PatchField> patch_field(uint32_t type) {
  switch (type) {
    case R_CUDA_32: return PatchField{0, 4};
    case R_CUDA_64: return PatchField{0, 8};
    case R_CUDA_ABS32_32:
    case R_CUDA_ABS32_LO_32:
    case R_CUDA_ABS32_HI_32: return PatchField{4, 4};
  }
  return std::nullopt;
}

uint64_t read_le(const std::string& bytes, uint64_t at, uint32_t n) {
  uint64_t v = 0;
  std::memcpy(&v, bytes.data() + at, n);
  return v;
}

}  // namespace

std::string relocation_name(uint32_t type) {
  switch (type) {  // names as NVIDIA's cuobjdump prints them
    case 0x00: return "R_CUDA_NONE";
    case R_CUDA_32: return "R_CUDA_32";
    case R_CUDA_64: return "R_CUDA_64";
    case 0x03: return "R_CUDA_G32";
    case 0x04: return "R_CUDA_G64";
    case 0x06: return "R_CUDA_TEX_HEADER_INDEX";
    case 0x22: return "R_CUDA_FUNC_DESC_32";
    case 0x23: return "R_CUDA_FUNC_DESC_64";
    case 0x2a: return "R_CUDA_ABS32_20";
    case 0x2b: return "R_CUDA_ABS32_LO_20";
    case 0x2c: return "R_CUDA_ABS32_HI_20";
    case 0x34: return "R_CUDA_SURF_HEADER_INDEX";
    case R_CUDA_ABS32_32: return "R_CUDA_ABS32_32";
    case R_CUDA_ABS32_LO_32: return "R_CUDA_ABS32_LO_32";
    case R_CUDA_ABS32_HI_32: return "R_CUDA_ABS32_HI_32";
    case 0x3a: return "R_CUDA_ABS47_34";
    case 0x3d: return "R_CUDA_FUNC_DESC32_32";
    case 0x3e: return "R_CUDA_FUNC_DESC32_LO_32";
    case 0x3f: return "R_CUDA_FUNC_DESC32_HI_32";
  }
  return "R_CUDA type " + hex(type);
}

CubinImage make_cubin_image(std::string_view bytes, std::string_view kernel_name) {
  const Cubin cubin = read_cubin(bytes);
  const CubinKernel& k = cubin.kernel(kernel_name);
  const std::string who = "cubin kernel '" + k.name + "'";
  CubinImage image;
  image.kernel = k.name;

  // Place the sections: the code first, then global data and constant banks 1..7, each 256-byte aligned.
  std::map<std::string, uint64_t> placed;  // section name -> offset in the image
  std::vector<std::pair<uint64_t, const CubinSection*>> order;
  auto place = [&](const CubinSection& s) {
    const uint64_t at = order.empty() ? 0 : round_up(image.size, kSectionAlignment);
    placed[s.name] = at;
    order.emplace_back(at, &s);
    image.size = at + s.size;
  };
  const CubinSection* text = cubin.section(".text." + k.name);
  place(*text);
  image.code_bytes = text->size;
  for (const CubinSection& s : cubin.sections) {
    if (s.name == ".nv.global.init" || s.name == ".nv.global") {
      place(s);
      continue;
    }
    const std::optional<BankName> bank = parse_bank(s.name);
    if (!bank || bank->index == 0 || !(bank->owner.empty() || bank->owner == k.name)) continue;
    if (bank->index > kMaxConstantBank) {
      throw CubinError(who + " reads constant bank " + std::to_string(bank->index) + " (" + s.name +
                       "); a QMD binds banks 0.." + std::to_string(kMaxConstantBank));
    }
    if (s.size > UINT32_MAX) throw CubinError(who + ": " + s.name + " of " + std::to_string(s.size) + " bytes");
    place(s);
    image.constant_banks.push_back({bank->index, s.name, placed[s.name], static_cast<uint32_t>(s.size)});
  }
  std::sort(image.constant_banks.begin(), image.constant_banks.end(),
            [](const CubinConstantBank& a, const CubinConstantBank& b) { return a.index < b.index; });
  for (size_t i = 1; i < image.constant_banks.size(); ++i) {
    if (image.constant_banks[i].index == image.constant_banks[i - 1].index) {
      throw CubinError(who + " has two sections for constant bank " + std::to_string(image.constant_banks[i].index) +
                       ": " + image.constant_banks[i - 1].section + " and " + image.constant_banks[i].section);
    }
  }
  image.unpatched.assign(image.size, '\0');
  for (const auto& [at, s] : order) {
    if (s->type == kShtNobits || s->size == 0) continue;
    std::memcpy(image.unpatched.data() + at, bytes.data() + s->offset, s->size);  // read_cubin checked the range
  }

  // The relocations of the placed sections; those of other sections (.debug_frame, other kernels) do not load.
  for (const CubinRelocation& r : cubin.relocations) {
    auto into = placed.find(r.target);
    if (into == placed.end()) continue;
    const std::string where = relocation_name(r.type) + " in " + r.section + " at " + hex(r.offset);
    const std::optional<PatchField> field = patch_field(r.type);
    if (!field) {
      throw CubinError(who + " has relocation " + where + ", which the loader does not apply; it applies R_CUDA_32, "
                       "R_CUDA_64, R_CUDA_ABS32_32, R_CUDA_ABS32_LO_32 and R_CUDA_ABS32_HI_32");
    }
    const CubinSection& target_section = *cubin.section(r.target);
    if (r.offset + field->at + field->bytes > target_section.size) {
      throw CubinError(who + ": relocation " + where + " patches past the end of " + r.target + " (" +
                       std::to_string(target_section.size) + " bytes)");
    }
    if (r.symbol >= cubin.symbols.size()) {
      throw CubinError(who + ": relocation " + where + " names symbol " + std::to_string(r.symbol) + " of " +
                       std::to_string(cubin.symbols.size()));
    }
    const CubinSymbol& sym = cubin.symbols[r.symbol];
    const std::string symbol_section = sym.shndx < cubin.sections.size() ? cubin.sections[sym.shndx].name : "";
    auto from = placed.find(symbol_section);
    if (sym.shndx == 0 || from == placed.end()) {
      throw CubinError(who + ": relocation " + where + " refers to symbol '" + sym.name + "' in " +
                       (sym.shndx == 0 ? std::string("no section (undefined)") : "section " + symbol_section) +
                       ", which the image does not load");
    }
    CubinImagePatch p;
    p.offset = into->second + r.offset;
    p.type = r.type;
    p.target = from->second + sym.value;
    // RELA carries the addend; REL keeps it in the patched field (the ELF rule).
    const bool rela = r.section.rfind(".rela", 0) == 0;
    p.addend = rela ? r.addend : static_cast<int64_t>(read_le(image.unpatched, p.offset + field->at, field->bytes));
    image.patches.push_back(p);
  }

  image.registers = static_cast<uint32_t>(std::max(k.registers, 1));
  image.shared_bytes = static_cast<uint32_t>(k.shared_bytes);
  image.constant0_bytes = static_cast<uint32_t>(k.constant0_size);
  image.has_param_offset = k.param_cbank_size != 0 || k.param_cbank_offset != 0;
  image.param_offset = k.param_cbank_offset;
  const int64_t stack = std::max<int64_t>({k.min_stack_size, k.frame_size, 0});
  if (stack > 0) {
    if (stack > (int64_t{1} << 23)) throw CubinError(who + " needs a stack of " + std::to_string(stack) + " bytes per thread");
    image.local_bytes_per_thread = static_cast<uint32_t>(round_up(static_cast<uint64_t>(stack) + kLocalMemoryReserve, 32));
  }
  return image;
}

std::string CubinImage::bytes_at(uint64_t va) const {
  if (va % kSectionAlignment != 0) {
    throw std::invalid_argument("cubin image of '" + kernel + "' at " + hex(va) + "; expected a 256-byte aligned address");
  }
  std::string out = unpatched;
  for (const CubinImagePatch& p : patches) {
    const uint64_t value = va + p.target + static_cast<uint64_t>(p.addend);
    const PatchField field = *patch_field(p.type);
    uint64_t word = value;
    if (p.type == R_CUDA_ABS32_LO_32) word = value & 0xffffffffu;
    if (p.type == R_CUDA_ABS32_HI_32) word = value >> 32;
    if (field.bytes == 4 && word > 0xffffffffu) {
      throw std::invalid_argument("cubin image of '" + kernel + "' at " + hex(va) + ": " + relocation_name(p.type) +
                                  " at image offset " + hex(p.offset) + " needs " + hex(value) +
                                  ", which does not fit 32 bits");
    }
    std::memcpy(out.data() + p.offset + field.at, &word, field.bytes);
  }
  return out;
}

}  // namespace doorbell::nv
