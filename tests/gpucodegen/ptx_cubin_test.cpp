// The cubin reader against NVIDIA's and LLVM's own views of the same objects: every section name, offset and size
// and every symbol as llvm-readelf -S -s -r prints them; registers, stack frame, barriers and shared memory as
// ptxas -v reports them; parameters and launch bounds as the PTX declared them. Cubins come from the PTX renderer
// (a few fixed kernels) and from hand-written PTX that uses shared memory, barriers and a stack frame.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "compiler/gpu/cubin_reader.h"
#include "compiler/gpu/ptx_renderer.h"
#include "compiler/gpu/ptxas.h"
#include "frontend/tensor.h"

namespace doorbell {
namespace {

std::optional<std::string> find_readelf() {
  const char* path = std::getenv("PATH");
  std::istringstream in(path ? path : "");
  for (const char* name : {"llvm-readelf-19", "llvm-readelf"}) {
    in.clear();
    in.seekg(0);
    for (std::string dir; std::getline(in, dir, ':');)
      if (!dir.empty() && access((std::filesystem::path(dir) / name).c_str(), X_OK) == 0) return (std::filesystem::path(dir) / name).string();
  }
  return std::nullopt;
}

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  pclose(p);
  return out;
}

struct ReadelfView {
  struct Section { std::string name; uint64_t offset, size; };
  struct Symbol { uint64_t value, size; std::string type, bind, name; };
  std::vector<Section> sections;  // without the null section
  std::vector<Symbol> symbols;    // with the null symbol
  std::map<std::string, int> relocations;  // section -> entries
};

std::vector<std::string> tokens(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> t;
  for (std::string w; in >> w;) t.push_back(w);
  return t;
}

// Parses llvm-readelf -S -s -r (GNU style output).
ReadelfView parse_readelf(const std::string& text) {
  ReadelfView v;
  std::istringstream in(text);
  enum { None, Sections, Symbols } mode = None;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Section Headers:", 0) == 0) { mode = Sections; continue; }
    if (line.rfind("Symbol table", 0) == 0) { mode = Symbols; continue; }
    if (line.rfind("Relocation section '", 0) == 0) {
      mode = None;
      size_t s = 20, e = line.find('\'', s);
      std::vector<std::string> t = tokens(line.substr(e + 1));
      for (size_t i = 0; i + 1 < t.size(); i++)
        if (t[i] == "contains") v.relocations[line.substr(s, e - s)] = std::stoi(t[i + 1]);
      continue;
    }
    if (line.rfind("Key to Flags", 0) == 0) { mode = None; continue; }
    if (mode == Sections) {
      size_t close = line.find(']');
      if (line.find('[') == std::string::npos || close == std::string::npos || line.find("Nr]") != std::string::npos) continue;
      std::vector<std::string> t = tokens(line.substr(close + 1));
      if (t.size() < 5 || t[1] == "0000000000000000" ) continue;  // the null section has no name: its first token is NULL
      v.sections.push_back({t[0], std::stoull(t[3], nullptr, 16), std::stoull(t[4], nullptr, 16)});
    } else if (mode == Symbols) {
      std::vector<std::string> t = tokens(line);
      if (t.size() < 7 || t[0] == "Num:") continue;
      ReadelfView::Symbol s{std::stoull(t[1], nullptr, 16), std::stoull(t[2]), t[3], t[4], ""};
      // Num Value Size Type Bind Vis [<other: ..>] Ndx [Name]: the name is there when the line has one more token than Ndx
      size_t ndx = t[6] == "[<other:" ? 8 : 6;
      if (t.size() > ndx + 1) s.name = t.back();
      v.symbols.push_back(s);
    }
  }
  return v;
}

void expect_matches_readelf(const Cubin& c, const std::string& cubin, const std::string& what) {
  std::optional<std::string> readelf = find_readelf();
  if (!readelf) {
    std::printf("llvm-readelf not found on PATH: %s not compared with it\n", what.c_str());
    return;
  }
  std::filesystem::path file = std::filesystem::temp_directory_path() / ("doorbell-cubin-" + std::to_string(getpid()) + ".cubin");
  std::ofstream(file, std::ios::binary) << cubin;
  ReadelfView v = parse_readelf(run(*readelf + " -S -s -r " + file.string() + " 2>&1"));
  std::filesystem::remove(file);
  ASSERT_EQ(v.sections.size() + 1, c.sections.size()) << what;
  for (size_t i = 0; i < v.sections.size(); i++) {
    const CubinSection& s = c.sections[i + 1];
    EXPECT_EQ(s.name, v.sections[i].name) << what << " section " << i + 1;
    EXPECT_EQ(s.offset, v.sections[i].offset) << what << " " << s.name;
    EXPECT_EQ(s.size, v.sections[i].size) << what << " " << s.name;
  }
  ASSERT_EQ(v.symbols.size(), c.symbols.size()) << what;
  for (size_t i = 0; i < v.symbols.size(); i++) {
    EXPECT_EQ(c.symbols[i].value, v.symbols[i].value) << what << " symbol " << i;
    EXPECT_EQ(c.symbols[i].size, v.symbols[i].size) << what << " symbol " << i;
    EXPECT_EQ(c.symbols[i].name, v.symbols[i].name) << what << " symbol " << i;
  }
  std::map<std::string, int> relocs;  // every .rel/.rela section, empty ones too
  for (const CubinSection& s : c.sections)
    if (s.type == 4 || s.type == 9) relocs[s.name] = 0;
  for (const CubinRelocation& r : c.relocations) relocs[r.section]++;
  EXPECT_EQ(relocs, v.relocations) << what;
}

void expect_matches_ptxas(const Cubin& c, const PtxasReport& report, const std::string& arch, const std::string& what) {
  ASSERT_FALSE(report.functions.empty()) << what << ": ptxas -v reported no function:\n" << report.text;
  for (const auto& [name, f] : report.functions) {
    const CubinKernel& k = c.kernel(name);
    EXPECT_EQ(k.registers, f.registers) << what << " " << name;
    EXPECT_EQ(k.frame_size, f.stack_frame_bytes) << what << " " << name;
    EXPECT_EQ(k.num_barriers, f.barriers) << what << " " << name;
    // sm_90's .nv.shared.<name> also holds the 1 KiB the system reserves per block; ptxas counts the kernel's own
    uint64_t reserved = arch == "sm_90" && k.shared_bytes ? 1024 : 0;
    EXPECT_EQ(k.shared_bytes, static_cast<uint64_t>(f.shared_bytes) + reserved) << what << " " << name;
    if (f.cmem0_bytes >= 0) {  // ptxas 13 prints cmem[0] for sm_80 only
      EXPECT_EQ(static_cast<int64_t>(k.constant0_size), f.cmem0_bytes) << what << " " << name;
    }
  }
}

// Parameters: one u64 per slot, packed from the PARAM_CBANK offset (where CUDA puts them on each arch:
// firmware-notes/nvidia-hopper.md §14, measured 0x160 on sm_80 and 0x210 on sm_90).
void expect_kernel_shape(const Cubin& c, const std::string& name, int slots, const std::array<int64_t, 3>& local, const std::string& arch) {
  const CubinKernel& k = c.kernel(name);
  EXPECT_EQ(k.param_cbank_offset, arch == "sm_90" ? 0x210u : 0x160u) << name;
  EXPECT_EQ(k.param_cbank_size, 8u * slots) << name;
  EXPECT_EQ(k.cbank_param_size, 8 * slots) << name;
  EXPECT_EQ(k.constant0_size, k.param_cbank_offset + k.param_cbank_size) << name;
  ASSERT_EQ(static_cast<int>(k.params.size()), slots) << name;
  for (int i = 0; i < slots; i++) {
    EXPECT_EQ(k.params[i].ordinal, i) << name;
    EXPECT_EQ(k.params[i].offset, 8 * i) << name;
    EXPECT_EQ(k.params[i].size, 8u) << name;
  }
  ASSERT_TRUE(k.max_threads.has_value()) << name << ": .maxntid gives EIATTR_MAX_THREADS";
  for (int d = 0; d < 3; d++) EXPECT_EQ((*k.max_threads)[d], static_cast<uint32_t>(local[d])) << name;
  EXPECT_FALSE(k.exit_instr_offsets.empty()) << name;
  for (uint32_t off : k.exit_instr_offsets) EXPECT_LT(off, k.text_size) << name;
  bool found = false;
  for (const CubinSymbol& s : c.symbols)
    if (s.name == name && s.type == 2 /* STT_FUNC */) {
      found = true;
      EXPECT_EQ(s.size, k.text_size) << name;
    }
  EXPECT_TRUE(found) << name << " has no function symbol";
}

TEST(CubinReader, RenderedKernelsMatchReadelfAndPtxasReports) {
  if (!ptxas_available()) GTEST_SKIP() << "ptxas not found on PATH or in /usr/local/cuda/bin: no cubins to read";
  struct Program { const char* name; Tensor t; };
  std::vector<Program> programs{
      {"add_f32", Tensor::empty({1000}) + Tensor::empty({1000})},
      {"pad_gated", Tensor::empty({6}).pad({{2, 3}}) + 1},
      {"sum_reduce", Tensor::empty({8, 100}).sum(1)},
      {"mul_f16", Tensor::empty({64}, dtypes::float16) * Tensor::empty({64}, dtypes::float16)},
      {"where_i8", Tensor::empty({5, 7}, dtypes::int8).lt(0).where(Tensor::empty({5, 7}, dtypes::int8), 3).permute({1, 0}).contiguous()},
  };
  // scheduling repoints a tensor at its result: each program is scheduled once, for both targets
  std::vector<std::pair<UOp, int>> kernels;  // the program's last kernel and its buffer count
  for (const Program& p : programs) {
    UOp linear = p.t.schedule_linear();
    ASSERT_FALSE(linear.src().empty()) << p.name;
    const UOp& call = linear.src(linear.src().size() - 1);
    kernels.emplace_back(call.src(0), static_cast<int>(call.src().size()) - 1);
  }
  int checked = 0;
  for (const char* arch : {"sm_90", "sm_80"}) {
    const GpuTarget& target = gpu_target(arch);
    for (size_t i = 0; i < programs.size(); i++) {
      const char* name = programs[i].name;
      GpuKernel k = prepare_gpu_kernel(kernels[i].first, target);
      PtxasResult r = assemble_ptx(render_ptx(name, k, target), arch);
      Cubin c = read_cubin(r.cubin);
      std::string what = std::string(name) + " " + arch;
      ASSERT_EQ(c.kernels.size(), 1u) << what;
      expect_kernel_shape(c, name, kernels[i].second, k.local_size, arch);
      expect_matches_ptxas(c, r.report, arch, what);
      expect_matches_readelf(c, r.cubin, what);
      checked++;
    }
  }
  EXPECT_EQ(checked, 10);
}

// Shared memory, named barriers and a stack frame (a local array indexed by the thread), which rendered kernels do
// not use yet; two entries in one module.
constexpr const char* kHandWritten = R"(.version 8.0
.target ARCH
.address_size 64
.visible .entry with_shared(.param .u64 out)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<6>;
	.shared .align 4 .b8 tile[1000];
	mov.u32 %r1, %tid.x;
	mov.u64 %rd1, tile;
	mul.wide.u32 %rd2, %r1, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.shared.u32 [%rd3], %r1;
	bar.sync 0;
	bar.sync 3;
	ld.shared.u32 %r2, [%rd3+4];
	ld.param.u64 %rd4, [out];
	cvta.to.global.u64 %rd5, %rd4;
	st.global.u32 [%rd5], %r2;
	ret;
}
.visible .entry with_stack(.param .u64 out, .param .u64 in)
.maxntid 64, 1, 1
{
	.reg .b32 %r<6>;
	.reg .b64 %rd<8>;
	.local .align 4 .b8 scratch[256];
	mov.u32 %r1, %tid.x;
	and.b32 %r2, %r1, 63;
	mov.u64 %rd1, scratch;
	mul.wide.u32 %rd2, %r2, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.local.u32 [%rd3], %r1;
	xor.b32 %r3, %r2, 5;
	mul.wide.u32 %rd4, %r3, 4;
	add.s64 %rd5, %rd1, %rd4;
	ld.local.u32 %r4, [%rd5];
	ld.param.u64 %rd6, [out];
	cvta.to.global.u64 %rd7, %rd6;
	st.global.u32 [%rd7], %r4;
	ret;
}
)";

TEST(CubinReader, SharedMemoryBarriersAndStackMatchPtxasReport) {
  if (!ptxas_available()) GTEST_SKIP() << "ptxas not found on PATH or in /usr/local/cuda/bin: no cubins to read";
  for (std::string arch : {"sm_90", "sm_80"}) {
    std::string ptx = kHandWritten;
    ptx.replace(ptx.find("ARCH"), 4, arch);
    PtxasResult r = assemble_ptx(ptx, arch);
    Cubin c = read_cubin(r.cubin);
    ASSERT_EQ(c.kernels.size(), 2u) << arch;
    expect_matches_ptxas(c, r.report, arch, "hand-written " + arch);
    expect_matches_readelf(c, r.cubin, "hand-written " + arch);
    const CubinKernel& s = c.kernel("with_shared");
    EXPECT_EQ(s.num_barriers, 4) << arch << ": barriers 0 and 3 mean four";
    EXPECT_EQ(s.shared_bytes, arch == "sm_90" ? 2024u : 1000u) << arch;
    EXPECT_FALSE(s.max_threads.has_value()) << arch << ": no .maxntid, no EIATTR_MAX_THREADS";
    const CubinKernel& t = c.kernel("with_stack");
    EXPECT_EQ(t.frame_size, 256) << arch;
    EXPECT_GE(t.min_stack_size, 256) << arch;
    EXPECT_EQ(t.params.size(), 2u) << arch;
    EXPECT_EQ(r.report.functions.at("with_stack").stack_frame_bytes, 256) << arch;
  }
}

std::string error_of(std::string_view bytes) {
  try {
    read_cubin(bytes);
  } catch (const CubinError& e) {
    return e.what();
  }
  return "";
}

TEST(CubinReader, MalformedInputIsAnErrorNamingThePartAndTheExpectation) {
  EXPECT_NE(error_of("not an elf").find("not an ELF file"), std::string::npos);
  if (!ptxas_available()) GTEST_SKIP() << "ptxas not found on PATH or in /usr/local/cuda/bin: no cubin to corrupt";
  std::string ptx = kHandWritten;
  ptx.replace(ptx.find("ARCH"), 4, "sm_90");
  std::string cubin = assemble_ptx(ptx, "sm_90").cubin;
  std::string wrong_machine = cubin;
  wrong_machine[18] = 62;  // EM_X86_64
  EXPECT_NE(error_of(wrong_machine).find("expected 190 (EM_CUDA)"), std::string::npos) << error_of(wrong_machine);
  std::string truncated = cubin.substr(0, cubin.size() / 2);
  EXPECT_NE(error_of(truncated).find("section header"), std::string::npos) << error_of(truncated);
  // an .nv.info record whose SVAL payload runs past the section's end
  Cubin c = read_cubin(cubin);
  const CubinSection* info = c.section(".nv.info.with_stack");
  ASSERT_NE(info, nullptr);
  std::string bad = cubin;
  bad[info->offset] = 4;
  bad[info->offset + 2] = static_cast<char>(0xff);
  bad[info->offset + 3] = static_cast<char>(0x7f);
  EXPECT_NE(error_of(bad).find(".nv.info.with_stack attribute"), std::string::npos) << error_of(bad);
  std::string odd = cubin;
  odd[info->offset] = 9;
  EXPECT_NE(error_of(odd).find("unknown format 9"), std::string::npos) << error_of(odd);
}

}  // namespace
}  // namespace doorbell
