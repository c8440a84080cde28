#include "compiler/subprocess.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace doorbell {

ScratchDir::ScratchDir(std::string_view prefix) {
  std::string tmpl = (std::filesystem::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
  if (!mkdtemp(tmpl.data()))
    throw std::runtime_error("cannot create a temporary directory " + tmpl + ": " + std::strerror(errno));
  path_ = tmpl;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;  // a failed cleanup must not turn a result into an exception
  std::filesystem::remove_all(path_, ec);
}

std::string read_whole_file(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::optional<std::string> find_executable(const std::vector<std::string_view>& names, std::string_view extra_dirs) {
  const char* path = std::getenv("PATH");
  std::string dirs = std::string(path ? path : "/usr/bin:/bin");
  if (!extra_dirs.empty()) dirs += ":" + std::string(extra_dirs);
  for (std::string_view name : names) {
    std::istringstream in(dirs);
    for (std::string dir; std::getline(in, dir, ':');) {
      if (dir.empty()) continue;
      std::filesystem::path candidate = std::filesystem::path(dir) / name;
      if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
  }
  return std::nullopt;
}

std::string ProcessResult::how() const {
  return exited ? "exit status " + std::to_string(code) : "signal " + std::to_string(code);
}

namespace {
struct RunCounts {
  std::mutex mu;
  std::map<std::string, uint64_t, std::less<>> by_executable;
};
RunCounts& run_counts() {
  static RunCounts* c = new RunCounts();  // never destroyed: a compile may run until the process exits
  return *c;
}
}  // namespace

uint64_t process_runs(std::string_view executable) {
  std::lock_guard lock(run_counts().mu);
  auto it = run_counts().by_executable.find(executable);
  return it == run_counts().by_executable.end() ? 0 : it->second;
}

ProcessResult run_process(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  if (argv.empty()) throw std::invalid_argument("run_process: an empty command line");
  {
    std::lock_guard lock(run_counts().mu);
    run_counts().by_executable[argv[0]]++;
  }
  std::vector<std::string> args = argv;
  std::vector<char*> cargs;
  for (std::string& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  int rc = posix_spawn(&pid, cargs[0], &actions, nullptr, cargs.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error("waiting for " + argv[0] + " failed: " + std::strerror(errno));
  ProcessResult r;
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  r.exited = WIFEXITED(status);
  r.code = r.exited ? WEXITSTATUS(status) : WTERMSIG(status);
  return r;
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string cmd;
  for (const std::string& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
  return cmd;
}

}  // namespace doorbell
