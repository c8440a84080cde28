#pragma once
// A directory tree made in a fresh temporary directory and removed with everything in it when the TempTree dies.
// Tests use it to build fake /proc, /sys and /dev trees.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace doorbell::testing {

class TempTree {
 public:
  TempTree() {
    std::string pattern = (std::filesystem::temp_directory_path() / "doorbell-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error(pattern + ": mkdtemp failed; expected a writable temporary directory");
    }
    root_ = pattern;
  }
  ~TempTree() {
    std::error_code ignored;  // a failed cleanup must not turn a passing test into a crash
    std::filesystem::remove_all(root_, ignored);
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  const std::filesystem::path& root() const { return root_; }

  // Writes `text` to root/relative_path, creating the folders above it.
  void write(std::string_view relative_path, std::string_view text) const {
    const std::filesystem::path path = root_ / relative_path;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out) throw std::runtime_error(path.string() + ": cannot write; expected a writable temporary file");
  }

 private:
  std::filesystem::path root_;
};

}  // namespace doorbell::testing
