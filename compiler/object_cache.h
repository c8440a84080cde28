// A cache of compiled kernel objects on disk, shared by every process of the user (tinygrad's compiler cache):
// the first process that compiles a kernel pays for clang (~57 ms here), later ones read the object (~0.1 ms).
// Entries are named by a SHA-256 (compiler/sha256.h) of everything that decides the bytes: the C source, the
// flags, the compiler executable (path, size, modification time) and this machine's CPU (-march=native).
//
// The cache runs code it reads, so it trusts nothing it did not make itself:
//  - the directory is created 0700 (and its files 0600) whatever the umask; a directory or entry owned by another
//    user, or writable by group or others, is refused (that is what keeps others from planting code). A refused
//    directory is never used: the process compiles without the disk cache and says why once at DEBUG=1;
//  - writes go to a temporary file with an unpredictable name, opened O_CREAT|O_EXCL|O_NOFOLLOW, renamed into place
//    atomically, so a reader never sees half an object and a planted symlink is never followed;
//  - reads open with O_NOFOLLOW|O_NONBLOCK and take only a regular file of at most kObjectCacheMaxEntryBytes;
//  - each entry stores a SHA-256 of its key and object, checked before the object is returned: a truncated,
//    bit-flipped or planted entry is reported (DEBUG=1), deleted and recompiled.
//
// Where: $DOORBELL_CACHE_DIR, else $XDG_CACHE_HOME/doorbell, else $HOME/.cache/doorbell (objects in kernels/).
// DISABLE_COMPILER_CACHE=1 switches it off.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace doorbell {

// An entry larger than this is not read (a kernel's object is kilobytes; a cubin at most a few MiB).
constexpr uint64_t kObjectCacheMaxEntryBytes = 64ull << 20;

// The directory objects are kept in, or nullopt when the cache is off.
std::optional<std::string> object_cache_dir();
// Overrides the environment (tests, tools): a directory, or nullopt to switch the cache off.
void set_object_cache_dir(std::optional<std::string> dir);
// Why the directory is not used (another user's, writable by others, not a directory), or nullopt while it is
// usable, missing or off. Set by the last load or store that looked at it.
std::optional<std::string> object_cache_refusal();
// The user the directory and its entries must belong to: geteuid() unless a test sets another (nullopt restores).
void set_object_cache_owner(std::optional<uid_t> uid);

// The entry name for an object compiled from `source` by `compiler` with `flags`.
std::string object_cache_key(const std::string& source, const std::string& compiler, const std::string& flags);
// The object stored under `key`, or nullopt when there is none or the entry is bad (then it is deleted).
std::optional<std::string> object_cache_load(const std::string& key);
// Best effort: an unusable directory only costs the cache.
void object_cache_store(const std::string& key, const std::string& object);

}  // namespace doorbell
