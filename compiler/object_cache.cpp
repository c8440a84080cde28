#include "compiler/object_cache.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "compiler/sha256.h"
#include "ir/debug.h"

namespace doorbell {
namespace {

// An entry: this line, the SHA-256 of (key, object) as 32 raw bytes, then the object.
constexpr char kMagic[] = "doorbell object v1\n";
constexpr size_t kMagicBytes = sizeof(kMagic) - 1;
constexpr size_t kHeaderBytes = kMagicBytes + 32;

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
  std::optional<uid_t> owner;
  std::optional<std::string> refusal;
  bool refusal_reported = false;
};
Setting& setting() {
  static Setting* s = new Setting();
  return *s;
}

uid_t expected_owner() {
  std::lock_guard lock(setting().mu);
  return setting().owner.value_or(geteuid());
}

// Says once per directory setting, at DEBUG=1, why the directory is not used.
void refuse(const std::string& dir, const std::string& why) {
  bool report = false;
  {
    std::lock_guard lock(setting().mu);
    if (setting().dir != dir) return;  // the setting changed meanwhile
    setting().refusal = why;
    report = !setting().refusal_reported;
    setting().refusal_reported = true;
  }
  if (report && debug_level() >= 1)
    std::fprintf(stderr, "object cache: not using %s: %s; compiling without the disk cache\n", dir.c_str(), why.c_str());
}

void clear_refusal(const std::string& dir) {
  std::lock_guard lock(setting().mu);
  if (setting().dir == dir) setting().refusal.reset();
}

std::string mode_string(mode_t mode) {
  char b[8];
  std::snprintf(b, sizeof b, "%04o", static_cast<unsigned>(mode & 07777));
  return b;
}

// Why a file this process would trust is not trustworthy: its owner and write permissions; "" when it is.
std::string untrusted_because(const struct stat& st, uid_t owner) {
  if (st.st_uid != owner)
    return "owned by uid " + std::to_string(st.st_uid) + ", expected uid " + std::to_string(owner) + " (this user)";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return "mode " + mode_string(st.st_mode) + " lets others write it; expected 0700 or stricter";
  return "";
}

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_;
};

// Creates the directory and the missing ones above it, each 0700 whatever the umask.
void create_directories(const std::string& dir) {
  for (size_t pos = 1; pos <= dir.size(); pos++) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    const std::string prefix = dir.substr(0, pos);
    if (mkdir(prefix.c_str(), 0700) == 0) chmod(prefix.c_str(), 0700);  // the umask may have taken owner bits
  }
}

// The directory, opened and checked; an invalid Fd when it is missing (and !create), unusable or refused.
Fd open_directory(const std::string& dir, bool create) {
  if (create) create_directories(dir);
  Fd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) {
    if (errno == ENOTDIR) refuse(dir, "it is not a directory");
    return Fd();
  }
  struct stat st{};
  if (fstat(fd.get(), &st) != 0) return Fd();
  if (std::string why = untrusted_because(st, expected_owner()); !why.empty()) {
    refuse(dir, "the directory is " + why);
    return Fd();
  }
  clear_refusal(dir);
  return fd;
}

void check_key(const std::string& key) {
  bool ok = !key.empty() && key.size() <= 128;
  for (char c : key) ok = ok && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  if (!ok) throw std::invalid_argument("object cache: key '" + key + "' is not a lowercase hex digest; expected object_cache_key's");
}

Sha256::Digest entry_digest(const std::string& key, std::string_view object) {
  Sha256 h;
  h.add_u64(key.size());
  h.add(key);
  h.add_u64(object.size());
  h.add(object);
  return h.finish();
}

// What made an entry unusable: reported at DEBUG=1, and the entry deleted so the recompile replaces it.
void discard(int dir_fd, const std::string& dir, const std::string& name, const std::string& why) {
  if (debug_level() >= 1)
    std::fprintf(stderr, "object cache: %s/%s %s; deleted, recompiling\n", dir.c_str(), name.c_str(), why.c_str());
  unlinkat(dir_fd, name.c_str(), 0);
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

std::string random_hex(size_t bytes) {
  std::string raw(bytes, '\0');
  size_t got = 0;
  while (got < bytes) {
    ssize_t n = getrandom(raw.data() + got, bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("object cache: getrandom failed: ") + std::strerror(errno));
    }
    got += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) out += kHex[c >> 4], out += kHex[c & 15];
  return out;
}

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

std::optional<std::string> object_cache_dir() {
  std::lock_guard lock(setting().mu);
  return setting().dir;
}

void set_object_cache_dir(std::optional<std::string> dir) {
  std::lock_guard lock(setting().mu);
  setting().dir = std::move(dir);
  setting().refusal.reset();
  setting().refusal_reported = false;
}

std::optional<std::string> object_cache_refusal() {
  std::lock_guard lock(setting().mu);
  return setting().refusal;
}

void set_object_cache_owner(std::optional<uid_t> uid) {
  std::lock_guard lock(setting().mu);
  setting().owner = uid;
  setting().refusal.reset();
  setting().refusal_reported = false;
}

std::string object_cache_key(const std::string& source, const std::string& compiler, const std::string& flags) {
  Sha256 h;
  for (const std::string* field : {&source, &flags, &compiler}) {
    h.add_u64(field->size());
    h.add(*field);
  }
  struct stat st{};
  if (stat(compiler.c_str(), &st) == 0) {  // a reinstalled compiler is another compiler
    h.add_u64(static_cast<uint64_t>(st.st_size));
    h.add_u64(static_cast<uint64_t>(st.st_mtim.tv_sec));
    h.add_u64(static_cast<uint64_t>(st.st_mtim.tv_nsec));
  }
  h.add(cpu_identity());
  return Sha256::hex(h.finish());
}

std::optional<std::string> object_cache_load(const std::string& key) {
  check_key(key);
  std::optional<std::string> dir = object_cache_dir();
  if (!dir) return std::nullopt;
  Fd dir_fd = open_directory(*dir, false);
  if (!dir_fd) return std::nullopt;
  const std::string name = key + ".o";
  // O_NOFOLLOW: a symlink is refused, not followed; O_NONBLOCK: opening a FIFO does not wait for a writer.
  Fd fd(openat(dir_fd.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) {
    if (errno == ELOOP) discard(dir_fd.get(), *dir, name, "is a symbolic link");
    return std::nullopt;
  }
  struct stat st{};
  if (fstat(fd.get(), &st) != 0) return std::nullopt;
  if (!S_ISREG(st.st_mode)) {
    discard(dir_fd.get(), *dir, name, "is not a regular file");
    return std::nullopt;
  }
  if (std::string why = untrusted_because(st, expected_owner()); !why.empty()) {
    discard(dir_fd.get(), *dir, name, "is " + why);
    return std::nullopt;
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size < kHeaderBytes || size > kObjectCacheMaxEntryBytes) {
    discard(dir_fd.get(), *dir, name,
            "has " + std::to_string(size) + " bytes; expected " + std::to_string(kHeaderBytes) + " to " +
                std::to_string(kObjectCacheMaxEntryBytes));
    return std::nullopt;
  }
  std::string bytes(size, '\0');
  size_t got = 0;
  while (got < size) {  // bounded by the size fstat gave: a file growing meanwhile is read no further
    ssize_t n = read(fd.get(), bytes.data() + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  if (got != size) {
    discard(dir_fd.get(), *dir, name, "ended after " + std::to_string(got) + " of " + std::to_string(size) + " bytes");
    return std::nullopt;
  }
  if (bytes.compare(0, kMagicBytes, kMagic) != 0) {
    discard(dir_fd.get(), *dir, name, "does not start with the entry header");
    return std::nullopt;
  }
  std::string_view object = std::string_view(bytes).substr(kHeaderBytes);
  const Sha256::Digest digest = entry_digest(key, object);
  if (std::memcmp(digest.data(), bytes.data() + kMagicBytes, digest.size()) != 0) {
    discard(dir_fd.get(), *dir, name, "does not match its SHA-256 (damaged or not written by this cache)");
    return std::nullopt;
  }
  return std::string(object);
}

void object_cache_store(const std::string& key, const std::string& object) {
  check_key(key);
  if (kHeaderBytes + object.size() > kObjectCacheMaxEntryBytes) return;  // would never be read back
  std::optional<std::string> dir = object_cache_dir();
  if (!dir) return;
  Fd dir_fd = open_directory(*dir, true);
  if (!dir_fd) return;
  // A name nobody can guess, created here (O_EXCL) and never through a symlink (O_NOFOLLOW), then an atomic rename:
  // concurrent writers of one key each install a whole file.
  const std::string tmp = "." + key + "." + random_hex(16) + ".tmp";
  Fd fd(openat(dir_fd.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return;
  const Sha256::Digest digest = entry_digest(key, object);
  bool ok = fchmod(fd.get(), 0600) == 0 && write_all(fd.get(), std::string_view(kMagic, kMagicBytes)) &&
            write_all(fd.get(), std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size())) &&
            write_all(fd.get(), object);
  ok = close(fd.release()) == 0 && ok;  // a failed close can mean a failed write
  if (!ok || renameat(dir_fd.get(), tmp.c_str(), dir_fd.get(), (key + ".o").c_str()) != 0) unlinkat(dir_fd.get(), tmp.c_str(), 0);
}

}  // namespace doorbell
