#include "compiler/cpu/clang_compiler.h"

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "compiler/object_cache.h"
#include "compiler/subprocess.h"

namespace doorbell {
namespace {

constexpr const char* kFlags =
    "-O2 -march=native -std=gnu11 -fwrapv -ffp-contract=off -fno-math-errno -fPIC -fno-asynchronous-unwind-tables "
    "-fno-unwind-tables -fno-stack-protector";

// The source line the first "file:line:col: error" diagnostic names, to put next to the message.
std::string quoted_error_line(const std::string& diagnostics, const std::string& source) {
  // Diagnostics look like ".../kernel.c:LINE:COL: error: ..."; std::regex is avoided (it warns under -O2 -Werror).
  for (size_t at = diagnostics.find("kernel.c:"); at != std::string::npos; at = diagnostics.find("kernel.c:", at + 1)) {
    size_t p = at + 9, digits = p;
    while (p < diagnostics.size() && std::isdigit(static_cast<unsigned char>(diagnostics[p]))) p++;
    if (p == digits) continue;
    size_t eol = diagnostics.find('\n', p);
    if (diagnostics.substr(p, eol == std::string::npos ? std::string::npos : eol - p).find("error") == std::string::npos) continue;
    int want = std::stoi(diagnostics.substr(digits, p - digits));
    std::istringstream in(source);
    std::string line;
    for (int i = 1; std::getline(in, line); i++)
      if (i == want) return "\nsource line " + std::to_string(want) + ": " + line;
    return "";
  }
  return "";
}

// What -march=native compiles for: this CPU's model and feature flags. Part of the disk cache key, so a cache shared
// between machines never hands an AVX-512 object to a CPU without AVX-512.
const std::string& host_cpu_id() {
  static const std::string id = [] {
    std::ifstream in("/proc/cpuinfo");
    std::string line, model, flags;
    while (std::getline(in, line) && (model.empty() || flags.empty())) {
      if (model.empty() && line.rfind("model name", 0) == 0) model = line;
      if (flags.empty() && line.rfind("flags", 0) == 0) flags = line;
    }
    return model + "|" + flags;
  }();
  return id;
}

}  // namespace

std::optional<std::string> find_c_compiler() { return find_executable({"clang-19", "clang", "cc"}); }

const char* c_compile_flags() { return kFlags; }

std::string c_object_cache_key(const std::string& source, const std::string& compiler) {
  return object_cache_key(source, compiler, std::string(kFlags) + "|" + host_cpu_id());
}

CompiledObject compile_c(const std::string& source) {
  std::optional<std::string> cc = find_c_compiler();
  if (!cc) throw CCompileError("compile_c: no C compiler found on PATH; expected clang-19, clang or cc");
  auto lookup_start = std::chrono::steady_clock::now();
  std::string cache_key = c_object_cache_key(source, *cc);
  if (std::optional<std::string> cached = object_cache_load(cache_key))
    return CompiledObject{std::move(*cached), *cc,
                          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - lookup_start).count(), true};
  try {
    ScratchDir dir("doorbell-cc");
    std::filesystem::path src = dir.path() / "kernel.c", obj = dir.path() / "kernel.o", log = dir.path() / "log.txt";
    {
      std::ofstream f(src, std::ios::binary);
      f << source;
      if (!f) throw CCompileError("compile_c: cannot write the source to " + src.string());
    }
    std::vector<std::string> argv{*cc};
    std::istringstream flags(kFlags);
    for (std::string flag; flags >> flag;) argv.push_back(flag);
    argv.insert(argv.end(), {std::string("-c"), src.string(), std::string("-o"), obj.string()});
    ProcessResult r = run_process(argv, log);
    if (!r.ok()) {
      std::string diagnostics = read_whole_file(log);
      throw CCompileError("compile_c: " + command_line(argv) + " failed with " + r.how() + ":\n" + diagnostics +
                          quoted_error_line(diagnostics, source));
    }
    CompiledObject out{read_whole_file(obj), *cc, r.ms, false};
    if (out.object.empty()) throw CCompileError("compile_c: " + *cc + " succeeded but wrote no object to " + obj.string());
    object_cache_store(cache_key, out.object);
    return out;
  } catch (const CCompileError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw CCompileError(std::string("compile_c: ") + e.what());
  }
}

}  // namespace doorbell
