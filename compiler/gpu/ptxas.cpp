#include "compiler/gpu/ptxas.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "compiler/subprocess.h"

namespace doorbell {
namespace {

// The number right before `unit` in `line` ("372 bytes cmem[0]" with unit " bytes cmem[0]"), or -1.
int64_t number_before(const std::string& line, const std::string& unit) {
  size_t at = line.find(unit);
  if (at == std::string::npos) return -1;
  size_t p = at;
  while (p > 0 && std::isdigit(static_cast<unsigned char>(line[p - 1]))) p--;
  if (p == at) return -1;
  return std::stoll(line.substr(p, at - p));
}

}  // namespace

std::optional<std::string> find_ptxas() { return find_executable({"ptxas"}, "/usr/local/cuda/bin"); }

PtxasReport parse_ptxas_report(const std::string& text) {
  PtxasReport r;
  r.text = text;
  std::istringstream in(text);
  std::string current;
  for (std::string line; std::getline(in, line);) {
    // "Compiling entry function 'NAME' for 'sm_90'" and "Function properties for NAME" name the function that the
    // following lines describe
    if (size_t at = line.find("Compiling entry function '"); at != std::string::npos) {
      size_t s = at + 26, e = line.find('\'', s);
      current = line.substr(s, e - s);
      r.functions[current];
      continue;
    }
    if (size_t at = line.find("Function properties for "); at != std::string::npos) {
      current = line.substr(at + 24);
      while (!current.empty() && std::isspace(static_cast<unsigned char>(current.back()))) current.pop_back();
      r.functions[current];
      continue;
    }
    if (current.empty()) continue;
    PtxasFunctionReport& f = r.functions[current];
    if (line.find("bytes stack frame") != std::string::npos) {
      f.stack_frame_bytes = number_before(line, " bytes stack frame");
      f.spill_store_bytes = number_before(line, " bytes spill stores");
      f.spill_load_bytes = number_before(line, " bytes spill loads");
    }
    if (line.find("Used ") != std::string::npos && line.find(" registers") != std::string::npos) {
      f.registers = static_cast<int>(number_before(line, " registers"));
      if (int64_t b = number_before(line, " barriers"); b >= 0) f.barriers = static_cast<int>(b);
      if (int64_t s = number_before(line, " bytes smem"); s >= 0) f.shared_bytes = s;
      f.cmem0_bytes = number_before(line, " bytes cmem[0]");
    }
  }
  return r;
}

PtxasResult assemble_ptx(const std::string& ptx, const std::string& arch) {
  std::optional<std::string> ptxas = find_ptxas();
  if (!ptxas) throw PtxasError("assemble_ptx: no ptxas found on PATH or in /usr/local/cuda/bin; install the CUDA toolkit");
  try {
    ScratchDir dir("doorbell-ptxas");
    std::filesystem::path src = dir.path() / "kernel.ptx", out = dir.path() / "kernel.cubin", log = dir.path() / "log.txt";
    {
      std::ofstream f(src, std::ios::binary);
      f << ptx;
      if (!f) throw PtxasError("assemble_ptx: cannot write the PTX to " + src.string());
    }
    // -v goes to stdout and errors to stderr: both into one log, in order
    std::vector<std::string> argv{*ptxas, "-arch=" + arch, "-v", "-o", out.string(), src.string()};
    ProcessResult r = run_process(argv, log);
    std::string text = read_whole_file(log);
    if (!r.ok()) throw PtxasError("assemble_ptx: " + command_line(argv) + " failed with " + r.how() + ":\n" + text);
    PtxasResult result{read_whole_file(out), parse_ptxas_report(text), r.ms};
    if (result.cubin.empty()) throw PtxasError("assemble_ptx: " + *ptxas + " succeeded but wrote no cubin to " + out.string());
    return result;
  } catch (const PtxasError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw PtxasError(std::string("assemble_ptx: ") + e.what());
  }
}

}  // namespace doorbell
