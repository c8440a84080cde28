// AMDGPU compilation with LLVM 19 in process (compiler/gpu/llvm/amdgpu_compiler.h) and the code object reader
// (compiler/gpu/amd_code_object.h): every corpus kernel compiles for gfx1100 and gfx942, the kernel descriptors
// say what the target needs (wave32 / wave64, 8 kernarg bytes per buffer slot), and the reader's sections,
// symbols and descriptor fields equal what llvm-readelf-19 reports for the same objects.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "compiler/c_renderer.h"
#include "compiler/gpu/amd_code_object.h"
#include "compiler/gpu/gpu_optimizer.h"
#include "compiler/gpu/llvmir_renderer.h"
#include "tests/gpucodegen/amdgpu_corpus.h"
#if DOORBELL_HAVE_LLVM
#include "compiler/gpu/llvm/amdgpu_compiler.h"
#endif
#include "tests/scheduler/fusion_corpus_cases.h"

namespace doorbell {
namespace {

using amdgpu_test::E;

// ---- reader tests that need no LLVM ----

TEST(AmdCodeObject, RejectsANonElfFileSayingWhatItExpected) {
  try {
    read_amd_code_object("not an elf file at all, but long enough to have a header of sixty-four bytes......");
    FAIL() << "accepted a non-ELF file";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ELF"), std::string::npos) << e.what();
  }
}

TEST(AmdCodeObject, DecodesMsgPackMapsArraysStringsAndIntegers) {
  // {"a": [1, -2, 300], "b": "xy", "c": true}
  const std::string bytes = "\x83\xa1" "a\x93\x01\xfe\xcd\x01\x2c\xa1" "b\xa2" "xy\xa1" "c\xc3";
  MsgPack m = decode_msgpack(bytes);
  ASSERT_NE(m.find("a"), nullptr);
  EXPECT_EQ(m.find("a")->array().size(), 3u);
  EXPECT_EQ(m.find("a")->array()[1].as_int(), -2);
  EXPECT_EQ(m.find("a")->array()[2].as_int(), 300);
  EXPECT_EQ(m.find("b")->as_string(), "xy");
  EXPECT_EQ(m.find("zz"), nullptr);
  EXPECT_THROW(decode_msgpack("\x92\x01"), std::invalid_argument) << "a truncated array";
}

#if DOORBELL_HAVE_LLVM

struct Built {
  std::string name, arch;
  GpuKernel kernel;
  int64_t slots = 0;
  AmdgpuCompiled compiled;
};

int64_t buffer_slots(const UOp& sink) {
  int64_t n = 0;
  for (const UOp& u : sink.toposort())
    if (u.op() == Ops::PARAM) n = std::max(n, u.arg_as<ParamArg>().slot + 1);
  return n;
}

Built build(const UOp& sink, const std::string& arch, bool link = true) {
  Built b;
  b.name = c_kernel_name(sink);
  b.arch = arch;
  b.kernel = lower_for_gpu(sink, gpu_target(arch));
  b.slots = buffer_slots(sink);
  std::string ir = render_llvm_ir(b.name, b.kernel, gpu_target(arch));
  AmdgpuCompileOptions o;
  o.link = link;
  b.compiled = compile_amdgpu(ir, arch, o);
  return b;
}

// A few fixed kernels, compiled once for both targets: the descriptor tests look at these. Never destroyed: the
// kernels hold UOps, which must not outlive the UOp intern table at exit.
const std::vector<Built>& sample() {
  static const std::vector<Built>* s = new std::vector<Built>([] {
    std::vector<Built> out;
    std::vector<std::vector<Tensor>> progs{{E({1000}) * E({1000}) + 1},
                                           {E({300, 4}).sum(1)},
                                           {E({17, 33}).matmul(E({33, 9}))},
                                           {E({7, 33}, dtypes::float16).softmax(-1)},
                                           {E({8, 9, 10}, dtypes::int64).floordiv(E({10}, dtypes::int64)), E({8, 9, 10}) + 2}};
    for (const auto& p : progs)
      for (const UOp& sink : amdgpu_test::kernels_of(p))
        for (const char* arch : {"gfx1100", "gfx942"}) out.push_back(build(sink, arch));
    return out;
  }());
  return *s;
}

struct Tally {
  int ok = 0, failed = 0;
  double ms = 0, max_ms = 0, parse = 0, opt = 0, codegen = 0, link = 0;
  std::string failures;
};

// link: also run ld.lld on each (a subprocess, ~4x the in-process compile time); without it the reader checks the
// relocatable object.
void compile_all(const std::string& what, const std::vector<std::pair<std::string, std::vector<UOp>>>& programs,
                 std::map<std::string, Tally>& tally, bool link) {
  for (const auto& [name, sinks] : programs)
    for (const UOp& sink : sinks)
      for (const char* arch : {"gfx1100", "gfx942"}) {
        Tally& t = tally[arch];
        try {
          Built b = build(sink, arch, link);
          EXPECT_EQ(b.compiled.linked, link);
          AmdCodeObject co = read_amd_code_object(b.compiled.object);
          const AmdKernel& k = co.kernel(b.name);
          EXPECT_EQ(k.kd.enable_wavefront_size32(), std::string(arch) == "gfx1100") << name;
          EXPECT_TRUE(k.entry_in_text) << name;
          t.ok++;
          t.ms += b.compiled.total_ms();
          t.parse += b.compiled.parse_ms;
          t.opt += b.compiled.optimize_ms;
          t.codegen += b.compiled.codegen_ms;
          t.link += b.compiled.link_ms;
          t.max_ms = std::max(t.max_ms, b.compiled.total_ms());
        } catch (const std::exception& e) {
          t.failed++;
          if (t.failed <= 20) t.failures += name + " (" + arch + "): " + e.what() + "\n";
        }
      }
  for (const auto& [arch, t] : tally)
    std::printf("[ %s ] %s: %d kernels compiled%s, %d failed; %.1f ms per kernel on average (max %.1f ms): "
                "parse %.1f, O2 %.1f, codegen %.1f, ld.lld %.1f\n",
                what.c_str(), arch.c_str(), t.ok, link ? " and linked" : " (relocatable)", t.failed, t.ok ? t.ms / t.ok : 0.0, t.max_ms, t.parse / std::max(1, t.ok),
                t.opt / std::max(1, t.ok), t.codegen / std::max(1, t.ok), t.link / std::max(1, t.ok));
}

TEST(AmdgpuCompile, EveryCorpusKernelCompilesForGfx1100AndGfx942) {
  std::vector<std::pair<std::string, std::vector<UOp>>> programs;
  for (const auto& p : amdgpu_test::corpus_programs()) programs.push_back({p.name, amdgpu_test::kernels_of(p.outputs)});
  std::map<std::string, Tally> tally;
  compile_all("corpus", programs, tally, /*link=*/std::getenv("DOORBELL_AMDGPU_LINK_ALL") != nullptr);
  for (const auto& [arch, t] : tally) {
    EXPECT_EQ(t.failed, 0) << arch << ":\n" << t.failures;
    EXPECT_GT(t.ok, 200) << arch;
  }
}

TEST(AmdgpuCompile, EveryFusionCorpusKernelCompiles) {
  std::vector<std::pair<std::string, std::vector<UOp>>> programs;
  for (const auto& c : fusion_corpus::corpus()) programs.push_back({c.name, amdgpu_test::kernels_of(c.build())});
  std::map<std::string, Tally> tally;
  compile_all("fusion corpus", programs, tally, /*link=*/true);
  for (const auto& [arch, t] : tally) EXPECT_EQ(t.failed, 0) << arch << ":\n" << t.failures;
}

// The op conformance suite's kernels compile for both targets too: gpucodegen_conformance (conformance_gpu_harvest.cpp).

TEST(AmdgpuCompile, WavefrontSizeIs32OnGfx1100And64OnGfx942) {
  for (const Built& b : sample()) {
    AmdCodeObject co = read_amd_code_object(b.compiled.object);
    const AmdKernel& k = co.kernel(b.name);
    const bool gfx11 = b.arch == "gfx1100";
    EXPECT_EQ(k.kd.enable_wavefront_size32(), gfx11) << b.arch;
    const MsgPack* md = co.kernel_metadata(b.name);
    ASSERT_NE(md, nullptr) << "no amdhsa.kernels entry for " << b.name;
    EXPECT_EQ(md->find(".wavefront_size")->as_int(), gfx11 ? 32 : 64) << b.arch;
  }
}

TEST(AmdgpuCompile, AccumulatorsAndLoopCountersLiveInRegistersNotScratch) {
  // The renderer's allocas (accumulators) must be promoted by the O2 pipeline: no scratch, no dynamic stack.
  for (const Built& b : sample()) {
    const KernelDescriptor kd = read_amd_code_object(b.compiled.object).kernel(b.name).kd;  // a copy: the object is a temporary
    EXPECT_EQ(kd.private_segment_fixed_size, 0u) << b.arch << " " << b.name;
    EXPECT_FALSE(kd.enable_private_segment()) << b.arch;
    EXPECT_FALSE(kd.uses_dynamic_stack()) << b.arch;
    EXPECT_EQ(kd.group_segment_fixed_size, 0u) << "the samples are not grouped: no LDS";
  }
}

TEST(AmdgpuCompile, GroupedReduceUsesLdsOfItsLanesAndAWorkGroupOfThem) {
  // Two reduces (max, then sum of exponentials) over 500 columns of 4 rows: 256 lanes, one float32 LDS array each.
  for (const UOp& sink : amdgpu_test::kernels_of({E({4, 500}).softmax(-1)})) {
    for (const char* arch : {"gfx1100", "gfx942"}) {
      GpuKernel k = optimize_for_gpu(sink, gpu_target(arch));
      int64_t lds = 0;
      for (const UOp& u : k.sink.toposort())
        if (u.op() == Ops::PARAM && u.arg_as<ParamArg>().addrspace == AddrSpace::LOCAL) lds += (u.arg_as<ParamArg>().vmax + 1) * 4;
      std::string name = c_kernel_name(sink);
      std::string ir = render_llvm_ir(name, k, gpu_target(arch));
      AmdgpuCompiled c = compile_amdgpu(ir, arch, {});
      AmdCodeObject co = read_amd_code_object(c.object);
      EXPECT_EQ(co.kernel(name).kd.group_segment_fixed_size, static_cast<uint32_t>(lds)) << arch << "\n" << ir;
      const MsgPack* md = co.kernel_metadata(name);
      ASSERT_NE(md, nullptr);
      EXPECT_EQ(md->find(".group_segment_fixed_size")->as_int(), lds) << arch;
      if (lds) {
        EXPECT_EQ(md->find(".max_flat_workgroup_size")->as_int(), k.local_size[0]) << arch;
      }
    }
  }
}

TEST(AmdgpuCompile, DescriptorKeepsFloatSubnormalsAsTheCpuDoes) {
  // RSRC1 FLOAT_DENORM_MODE_32 [17:16] and FLOAT_DENORM_MODE_16_64 [19:18]: 3 = neither flushed, so float32,
  // float16 and float64 subnormals survive as in the C renderer's results.
  for (const Built& b : sample()) {
    const KernelDescriptor kd = read_amd_code_object(b.compiled.object).kernel(b.name).kd;  // a copy: the object is a temporary
    EXPECT_EQ((kd.compute_pgm_rsrc1 >> 16) & 3, 3u) << b.arch;
    EXPECT_EQ((kd.compute_pgm_rsrc1 >> 18) & 3, 3u) << b.arch;
  }
}

TEST(AmdgpuCompile, KernargSizeIsEightBytesPerBufferSlotWithoutHiddenArgs) {
  for (const Built& b : sample()) {
    AmdCodeObject co = read_amd_code_object(b.compiled.object);
    const AmdKernel& k = co.kernel(b.name);
    EXPECT_EQ(k.kd.kernarg_size, 8 * b.slots) << b.arch << " " << b.name;
    const MsgPack* md = co.kernel_metadata(b.name);
    ASSERT_NE(md, nullptr);
    EXPECT_EQ(md->find(".kernarg_segment_size")->as_int(), 8 * b.slots);
    const auto& args = md->find(".args")->array();
    ASSERT_EQ(static_cast<int64_t>(args.size()), b.slots) << "hidden arguments were emitted";
    for (size_t i = 0; i < args.size(); i++) {
      EXPECT_EQ(args[i].find(".offset")->as_int(), static_cast<int64_t>(8 * i));
      EXPECT_EQ(args[i].find(".size")->as_int(), 8);
      EXPECT_EQ(args[i].find(".value_kind")->as_string(), "global_buffer");
    }
    EXPECT_EQ(md->find(".max_flat_workgroup_size")->as_int(), b.kernel.local_size[0] * b.kernel.local_size[1] * b.kernel.local_size[2])
        << "amdgpu-flat-work-group-size is the launch's block size";
    EXPECT_TRUE(k.kd.enable_sgpr_kernarg_segment_ptr());
    // USER_SGPR_COUNT covers the user SGPRs the properties enable. gfx11 pads it so that user plus system SGPRs
    // reach 16 (LLVM GCNSubtarget::hasUserSGPRInit16Bug, a hardware workaround).
    uint32_t system = 0;
    for (int d = 0; d < 3; d++) system += k.kd.enable_sgpr_workgroup_id(d);
    system += (k.kd.compute_pgm_rsrc2 >> 10) & 1;  // workgroup info
    uint32_t want = k.kd.user_sgprs_from_properties();
    if (b.arch == "gfx1100") want = std::max(want, 16 - system);
    EXPECT_EQ(k.kd.user_sgpr_count(), want) << b.arch << ": properties ask for " << k.kd.user_sgprs_from_properties();
    EXPECT_TRUE(k.kd.enable_sgpr_workgroup_id(0)) << "every sample kernel uses gidx0";
  }
}

TEST(AmdgpuCompile, HiddenKernargsAppearOnlyWithoutTheAttributeAndWithoutOptimization) {
  // LLVM's default (COV5) is 256 bytes of hidden arguments after the explicit ones. The renderer's
  // "amdgpu-no-implicitarg-ptr" removes them; so does the O2 pipeline by itself (AMDGPUAttributor infers it).
  std::vector<UOp> ks = amdgpu_test::kernels_of({E({64}) + 1});
  GpuKernel k = lower_for_gpu(ks.at(0), gpu_target("gfx1100"));
  LlvmIrTarget t = amdgpu_llvm_target(gpu_target("gfx1100"));
  t.extra_function_attributes = "";
  for (int opt : {0, 2}) {
    AmdgpuCompileOptions o;
    o.opt_level = opt;
    AmdCodeObject co = read_amd_code_object(compile_amdgpu(render_llvm_ir("k", k, t), "gfx1100", o).object);
    uint32_t size = co.kernel("k").kd.kernarg_size;
    std::printf("[ kernarg ] 2 slots, no amdgpu-no-implicitarg-ptr, O%d: kernarg_size %u, %zu metadata args\n", opt, size,
                co.kernel_metadata("k")->find(".args")->array().size());
    EXPECT_EQ(size, opt == 0 ? 16u + 256u : 16u);
  }
  AmdgpuCompileOptions o0;
  o0.opt_level = 0;
  AmdCodeObject co = read_amd_code_object(compile_amdgpu(render_llvm_ir("k", k, gpu_target("gfx1100")), "gfx1100", o0).object);
  EXPECT_EQ(co.kernel("k").kd.kernarg_size, 16u) << "with the attribute, even at O0";
}

TEST(AmdgpuCompile, RelocatableObjectHasTheDescriptorAndTheKernelSymbolInText) {
  std::vector<UOp> ks = amdgpu_test::kernels_of({E({64}) * 3});
  for (const char* arch : {"gfx1100", "gfx942"}) {
    Built b = build(ks.at(0), arch, /*link=*/false);
    EXPECT_FALSE(b.compiled.linked);
    AmdCodeObject co = read_amd_code_object(b.compiled.object);
    EXPECT_EQ(co.elf_type, 1) << "ET_REL";
    const AmdKernel& k = co.kernel(b.name);
    EXPECT_TRUE(k.entry_in_text);
    EXPECT_EQ(k.kd.kernarg_size, 16u);
  }
}

TEST(AmdgpuCompile, UnknownArchAndBadIrAreRejectedWithTheReason) {
  try {
    compile_amdgpu("this is not IR", "gfx1100");
    FAIL();
  } catch (const AmdgpuCompileError& e) {
    EXPECT_NE(std::string(e.what()).find("does not parse"), std::string::npos) << e.what();
  }
  std::vector<UOp> ks = amdgpu_test::kernels_of({E({64}) * 3});
  std::string ir = render_llvm_ir("k", lower_for_gpu(ks.at(0), gpu_target("gfx1100")), gpu_target("gfx1100"));
  try {
    compile_amdgpu(ir, "gfx9999");
    FAIL();
  } catch (const AmdgpuCompileError& e) {
    EXPECT_NE(std::string(e.what()).find("gfx9999"), std::string::npos) << e.what();
  }
}

// ---- llvm-readelf comparison ----

std::string readelf_path() {
  for (const char* p : {"/usr/bin/llvm-readelf-19", "/usr/lib/llvm-19/bin/llvm-readelf"})
    if (std::filesystem::exists(p)) return p;
  return "";
}

std::string run_readelf(const std::string& tool, const std::string& object) {
  std::filesystem::path file = std::filesystem::temp_directory_path() / ("doorbell-readelf-" + std::to_string(::getpid()) + ".hsaco");
  std::ofstream(file, std::ios::binary) << object;
  std::string out;
  FILE* f = ::popen((tool + " -S -s --notes " + file.string() + " 2>&1").c_str(), "r");
  if (f) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    ::pclose(f);
  }
  std::filesystem::remove(file);
  return out;
}

struct ReadelfView {
  struct Sec { std::string name; uint64_t addr, off, size; };
  struct Sym { std::string name; uint64_t value, size; };
  std::vector<Sec> sections;
  std::map<std::string, std::vector<Sym>> symbols;       // by table name
  std::map<std::string, std::map<std::string, std::string>> kernel_md;  // kernel name -> .key -> value
};

// Whitespace-separated tokens of a line. (No std::regex: GCC 12 warns inside it under ASan, and tests build with
// -Werror.)
std::vector<std::string> tokens(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

bool is_hex(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789abcdef") == std::string::npos; }

// Parses llvm-readelf -S -s --notes (GNU style output).
ReadelfView parse_readelf(const std::string& text) {
  ReadelfView v;
  std::istringstream in(text);
  std::string line, table;
  std::map<std::string, std::string> cur;
  bool in_kernels = false;
  auto flush = [&] {
    if (cur.count("name")) v.kernel_md[cur["name"]] = cur;
    cur.clear();
  };
  while (std::getline(in, line)) {
    size_t lead = line.find_first_not_of(' ');
    if (lead != std::string::npos && line[lead] == '[' && line.find(']') != std::string::npos) {
      // "  [ 1] .text  PROGBITS  0000000000001000 001000 000104 ..."
      size_t close = line.find(']');
      std::vector<std::string> inside = tokens(line.substr(lead + 1, close - lead - 1));
      if (inside.size() != 1 || inside[0].find_first_not_of("0123456789") != std::string::npos) continue;  // "[Nr]"
      std::vector<std::string> t = tokens(line.substr(close + 1));
      if (inside[0] != "0" && t.size() >= 5 && t[2].size() == 16 && is_hex(t[2]) && is_hex(t[3]) && is_hex(t[4]))
        v.sections.push_back({t[0], std::stoull(t[2], nullptr, 16), std::stoull(t[3], nullptr, 16), std::stoull(t[4], nullptr, 16)});
    } else if (line.rfind("Symbol table '", 0) == 0) {
      size_t a = line.find('\''), b = line.find('\'', a + 1);
      table = line.substr(a + 1, b - a - 1);
    } else if (std::vector<std::string> t = tokens(line);
               !table.empty() && t.size() == 8 && t[0].back() == ':' && is_hex(t[1]) &&
               t[2].find_first_not_of("0123456789") == std::string::npos) {
      // "     1: 0000000000001000   256 FUNC    GLOBAL PROTECTED    7 name"
      v.symbols[table].push_back({t[7], std::stoull(t[1], nullptr, 16), std::stoull(t[2])});
    } else if (line.rfind("amdhsa.kernels:", 0) == 0) {
      in_kernels = true;
    } else if (in_kernels && line.rfind("  - ", 0) == 0) {
      flush();
    } else if (in_kernels && line.rfind("    .", 0) == 0 && line.size() > 5 && line[5] != ' ') {
      // "    .key:     value" with exactly one value token
      size_t colon = line.find(':', 5);
      std::vector<std::string> value = colon == std::string::npos ? std::vector<std::string>{} : tokens(line.substr(colon + 1));
      std::string key = colon == std::string::npos ? "" : line.substr(5, colon - 5);
      bool word = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
      if (word && value.size() == 1) cur[key] = value[0];
    } else if (in_kernels && !line.empty() && line[0] != ' ') {
      flush();
      in_kernels = false;
    }
  }
  flush();
  return v;
}

TEST(AmdgpuCompile, ReaderAgreesWithLlvmReadelfOnSectionsSymbolsAndDescriptors) {
  const std::string tool = readelf_path();
  if (tool.empty()) GTEST_SKIP() << "llvm-readelf-19 is not installed: the comparison did not run";
  int compared = 0;
  for (const Built& b : sample()) {
    SCOPED_TRACE(b.arch + " " + b.name);
    AmdCodeObject co = read_amd_code_object(b.compiled.object);
    ReadelfView r = parse_readelf(run_readelf(tool, b.compiled.object));
    // Sections: names, addresses, offsets and sizes, in order.
    ASSERT_EQ(r.sections.size() + 1, co.sections.size());
    for (size_t i = 0; i < r.sections.size(); i++) {
      const ElfSection& s = co.sections[i + 1];
      EXPECT_EQ(s.name, r.sections[i].name);
      EXPECT_EQ(s.addr, r.sections[i].addr) << s.name;
      EXPECT_EQ(s.offset, r.sections[i].off) << s.name;
      EXPECT_EQ(s.size, r.sections[i].size) << s.name;
    }
    // Symbols of the table the reader uses (.symtab).
    ASSERT_TRUE(r.symbols.count(".symtab"));
    const auto& syms = r.symbols[".symtab"];
    ASSERT_EQ(syms.size(), co.symbols.size());
    for (size_t i = 0; i < syms.size(); i++) {
      EXPECT_EQ(co.symbols[i].name, syms[i].name);
      EXPECT_EQ(co.symbols[i].value, syms[i].value) << syms[i].name;
      EXPECT_EQ(co.symbols[i].size, syms[i].size) << syms[i].name;
    }
    // The descriptor against the metadata llvm-readelf prints, and the entry against the kernel symbol.
    const AmdKernel& k = co.kernel(b.name);
    ASSERT_TRUE(r.kernel_md.count(b.name)) << "llvm-readelf shows no metadata for the kernel";
    auto& md = r.kernel_md[b.name];
    EXPECT_EQ(std::to_string(k.kd.group_segment_fixed_size), md["group_segment_fixed_size"]);
    EXPECT_EQ(std::to_string(k.kd.private_segment_fixed_size), md["private_segment_fixed_size"]);
    EXPECT_EQ(std::to_string(k.kd.kernarg_size), md["kernarg_segment_size"]);
    EXPECT_EQ(k.kd.enable_wavefront_size32() ? "32" : "64", md["wavefront_size"]);
    EXPECT_EQ(md["symbol"], b.name + ".kd");
    const ElfSymbol* entry = co.symbol(b.name);
    ASSERT_NE(entry, nullptr);
    EXPECT_EQ(k.entry_address, entry->value) << "kernel_code_entry_byte_offset does not lead to the kernel symbol";
    // VGPRs: the granule field is ceil(max(1, vgprs) / G) - 1 with G = 8 (wave32 gfx11, gfx942).
    int64_t vgprs = std::stoll(md["vgpr_count"]);
    if (b.arch == "gfx942" && md.count("agpr_count")) vgprs = ((vgprs + 3) / 4) * 4 + std::stoll(md["agpr_count"]);
    EXPECT_EQ(k.kd.granulated_workitem_vgpr_count(), static_cast<uint32_t>((std::max<int64_t>(1, vgprs) + 7) / 8 - 1)) << "vgpr_count " << vgprs;
    EXPECT_GE(k.kd.max_vgprs(b.arch), static_cast<uint32_t>(vgprs));
    // SGPRs (measured here; firmware-notes/amd-kfd.md §4): LLVM 19 writes
    // ceil(sgprs / 8) - 1 on both targets (encoding granule 8, LLVM AMDGPUBaseInfo getSGPREncodingGranule), with
    // .sgpr_count already counting VCC, FLAT_SCRATCH and XNACK; gfx10+ hardware ignores the field.
    int64_t sgprs = std::max<int64_t>(1, std::stoll(md["sgpr_count"]));
    EXPECT_EQ(k.kd.granulated_wavefront_sgpr_count(), static_cast<uint32_t>((sgprs + 7) / 8 - 1)) << ".sgpr_count " << sgprs;
    // The decoded note equals what llvm-readelf decodes.
    const MsgPack* mine = co.kernel_metadata(b.name);
    ASSERT_NE(mine, nullptr);
    for (const char* key : {"kernarg_segment_size", "group_segment_fixed_size", "private_segment_fixed_size", "sgpr_count",
                            "vgpr_count", "wavefront_size", "max_flat_workgroup_size"})
      EXPECT_EQ(std::to_string(mine->find(std::string(".") + key)->as_int()), md[key]) << key;
    compared++;
  }
  std::printf("[ readelf ] compared %d code objects with %s\n", compared, tool.c_str());
}

#else

TEST(AmdgpuCompile, SkippedWithoutLlvm) {
  GTEST_SKIP() << "built without DOORBELL_WITH_LLVM: the AMDGPU compile tests did not run";
}

#endif

}  // namespace
}  // namespace doorbell
