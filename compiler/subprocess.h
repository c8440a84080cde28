// Running the external tools the compilers use (clang, ptxas, ld.lld): a scratch directory removed whatever
// happens, a search of PATH (and extra directories) for an executable, and a child process whose output goes to a
// file, waited for. Callers wrap failures into their own error types, which name the tool and the input.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace doorbell {

class ScratchDir {
 public:
  // A fresh directory "<tmp>/<prefix>-XXXXXX"; throws std::runtime_error when it cannot be made.
  explicit ScratchDir(std::string_view prefix);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The bytes of a file; empty when it cannot be read.
std::string read_whole_file(const std::filesystem::path& path);

// The first of `names` found as an executable in PATH, then in `extra_dirs` (colon-separated), as a full path.
std::optional<std::string> find_executable(const std::vector<std::string_view>& names, std::string_view extra_dirs = "");

struct ProcessResult {
  bool exited = false;  // exited normally (else killed by a signal)
  int code = 0;         // exit status, or the signal number
  double ms = 0;        // wall time from start to exit
  bool ok() const { return exited && code == 0; }
  std::string how() const;  // "exit status 1" or "signal 9"
};

// Runs argv[0] (a full path) with argv, stdout and stderr both appended to `log` (in the order written), stdin from
// /dev/null, and waits for it. Throws std::runtime_error when the process cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv, const std::filesystem::path& log);

// How many times this process started `executable` (argv[0] as given to run_process, a full path): tests count
// compiler runs with it (a realize on NV runs no C compiler; a disk cache hit runs no ptxas).
uint64_t process_runs(std::string_view executable);

// argv joined with spaces, for error messages.
std::string command_line(const std::vector<std::string>& argv);

}  // namespace doorbell
