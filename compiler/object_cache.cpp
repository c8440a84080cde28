#include "compiler/object_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "ir/content_hash.h"

namespace doorbell {
namespace {

std::optional<std::string> dir_from_environment() {
  const char* off = std::getenv("DISABLE_COMPILER_CACHE");
  if (off && *off && std::string(off) != "0") return std::nullopt;
  if (const char* d = std::getenv("DOORBELL_CACHE_DIR"); d && *d) return std::string(d) + "/kernels";
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/doorbell/kernels";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/doorbell/kernels";
  return std::nullopt;
}

struct Setting {
  std::mutex mu;
  std::optional<std::string> dir = dir_from_environment();
};
Setting& setting() {
  static Setting* s = new Setting();
  return *s;
}

// What -march=native compiles for: the CPU's model and feature flags, read once.
const std::string& cpu_identity() {
  static const std::string id = [] {
    std::ifstream f("/proc/cpuinfo");
    std::string line, out;
    while (std::getline(f, line)) {
      if (line.rfind("model name", 0) == 0 || line.rfind("flags", 0) == 0) out += line + "\n";
      if (line.empty() && !out.empty()) break;  // the first processor's block is enough
    }
    return out;
  }();
  return id;
}

}  // namespace

std::optional<std::string> object_cache_dir() {
  std::lock_guard lock(setting().mu);
  return setting().dir;
}

void set_object_cache_dir(std::optional<std::string> dir) {
  std::lock_guard lock(setting().mu);
  setting().dir = std::move(dir);
}

std::string object_cache_key(const std::string& source, const std::string& compiler, const std::string& flags) {
  Hasher128 h;
  h.add_bytes(source);
  h.add_bytes(flags);
  h.add_bytes(compiler);
  struct stat st{};
  if (stat(compiler.c_str(), &st) == 0) {  // a reinstalled compiler is another compiler
    h.add_i64(static_cast<int64_t>(st.st_size));
    h.add_i64(static_cast<int64_t>(st.st_mtim.tv_sec));
    h.add_i64(static_cast<int64_t>(st.st_mtim.tv_nsec));
  }
  h.add_bytes(cpu_identity());
  return h.finish().hex();
}

std::optional<std::string> object_cache_load(const std::string& key) {
  std::optional<std::string> dir = object_cache_dir();
  if (!dir) return std::nullopt;
  std::ifstream f(*dir + "/" + key + ".o", std::ios::binary);
  if (!f) return std::nullopt;
  std::ostringstream s;
  s << f.rdbuf();
  std::string bytes = s.str();
  if (bytes.size() < 64 || bytes.compare(0, 4, "\x7f" "ELF") != 0) return std::nullopt;  // not an object: recompile
  return bytes;
}

void object_cache_store(const std::string& key, const std::string& object) {
  std::optional<std::string> dir = object_cache_dir();
  if (!dir) return;
  std::error_code ec;
  std::filesystem::create_directories(*dir, ec);
  if (ec) return;
  // A name no other writer uses, then an atomic rename: concurrent writers of one key each install a whole file.
  static std::atomic<uint64_t> counter{0};
  std::string tmp = *dir + "/." + key + "." + std::to_string(getpid()) + "." + std::to_string(counter++) + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary);
    f.write(object.data(), static_cast<std::streamsize>(object.size()));
    if (!f) {
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, *dir + "/" + key + ".o", ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

}  // namespace doorbell
