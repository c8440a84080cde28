#include "compiler/cpu/clang_compiler.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
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

#include "compiler/cpu/object_cache.h"

extern char** environ;

namespace doorbell {
namespace {

constexpr const char* kFlags =
    "-O2 -march=native -std=gnu11 -fwrapv -ffp-contract=off -fno-math-errno -fPIC -fno-asynchronous-unwind-tables "
    "-fno-unwind-tables -fno-stack-protector";

std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// A scratch directory removed when the compile is done, whatever happens.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "doorbell-cc-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw CCompileError("compile_c: cannot create a temporary directory: " + std::string(std::strerror(errno)));
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

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

}  // namespace

std::optional<std::string> find_c_compiler() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (const char* name : {"clang-19", "clang", "cc"}) {
    std::istringstream in(dirs);
    std::string dir;
    while (std::getline(in, dir, ':')) {
      if (dir.empty()) continue;
      std::filesystem::path candidate = std::filesystem::path(dir) / name;
      if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
  }
  return std::nullopt;
}

const char* c_compile_flags() { return kFlags; }

CompiledObject compile_c(const std::string& source) {
  std::optional<std::string> cc = find_c_compiler();
  if (!cc) throw CCompileError("compile_c: no C compiler found on PATH; expected clang-19, clang or cc");
  auto lookup_start = std::chrono::steady_clock::now();
  std::string cache_key = object_cache_key(source, *cc, kFlags);
  if (std::optional<std::string> cached = object_cache_load(cache_key))
    return CompiledObject{std::move(*cached), *cc,
                          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - lookup_start).count(), true};
  TempDir dir;
  std::filesystem::path src = dir.path / "kernel.c", obj = dir.path / "kernel.o", err = dir.path / "stderr.txt";
  {
    std::ofstream f(src, std::ios::binary);
    f << source;
    if (!f) throw CCompileError("compile_c: cannot write the source to " + src.string());
  }
  std::vector<std::string> args{*cc};
  std::istringstream flags(kFlags);
  for (std::string flag; flags >> flag;) args.push_back(flag);
  args.insert(args.end(), {std::string("-c"), src.string(), std::string("-o"), obj.string()});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  int rc = posix_spawn(&pid, cc->c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw CCompileError("compile_c: cannot start " + *cc + ": " + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw CCompileError("compile_c: waiting for " + *cc + " failed: " + std::strerror(errno));
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  std::string diagnostics = read_file(err);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string how = WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status)) : "signal " + std::to_string(WTERMSIG(status));
    std::string cmd;
    for (const std::string& a : args) cmd += (cmd.empty() ? "" : " ") + a;
    throw CCompileError("compile_c: " + cmd + " failed with " + how + ":\n" + diagnostics + quoted_error_line(diagnostics, source));
  }
  CompiledObject out{read_file(obj), *cc, ms, false};
  if (out.object.empty()) throw CCompileError("compile_c: " + *cc + " succeeded but wrote no object to " + obj.string());
  object_cache_store(cache_key, out.object);
  return out;
}

}  // namespace doorbell
