#include "compiler/gpu/ptxas.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

extern char** environ;

namespace doorbell {
namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// A scratch directory removed when assembly is done, whatever happens.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "doorbell-ptxas-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw PtxasError("assemble_ptx: cannot create a temporary directory: " + std::string(std::strerror(errno)));
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

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

std::optional<std::string> find_ptxas() {
  const char* path = std::getenv("PATH");
  std::string dirs = std::string(path ? path : "") + ":/usr/local/cuda/bin";
  std::istringstream in(dirs);
  for (std::string dir; std::getline(in, dir, ':');) {
    if (dir.empty()) continue;
    std::filesystem::path candidate = std::filesystem::path(dir) / "ptxas";
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return std::nullopt;
}

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
  TempDir dir;
  std::filesystem::path src = dir.path / "kernel.ptx", out = dir.path / "kernel.cubin", log = dir.path / "log.txt";
  {
    std::ofstream f(src, std::ios::binary);
    f << ptx;
    if (!f) throw PtxasError("assemble_ptx: cannot write the PTX to " + src.string());
  }
  std::vector<std::string> args{*ptxas, "-arch=" + arch, "-v", "-o", out.string(), src.string()};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // -v goes to stdout and errors to stderr: both into one log, in order
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  int rc = posix_spawn(&pid, ptxas->c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw PtxasError("assemble_ptx: cannot start " + *ptxas + ": " + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw PtxasError("assemble_ptx: waiting for " + *ptxas + " failed: " + std::strerror(errno));
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::string text = read_file(log);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string how = WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status)) : "signal " + std::to_string(WTERMSIG(status));
    std::string cmd;
    for (const std::string& a : args) cmd += (cmd.empty() ? "" : " ") + a;
    throw PtxasError("assemble_ptx: " + cmd + " failed with " + how + ":\n" + text);
  }
  PtxasResult r{read_file(out), parse_ptxas_report(text), ms};
  if (r.cubin.empty()) throw PtxasError("assemble_ptx: " + *ptxas + " succeeded but wrote no cubin to " + out.string());
  return r;
}

}  // namespace doorbell
