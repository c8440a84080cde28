// A cache of compiled kernel objects on disk, shared by every process of the user (tinygrad's compiler cache):
// the first process that compiles a kernel pays for clang (~57 ms here), later ones read the object (~0.1 ms).
// Entries are named by a content hash of everything that decides the bytes: the C source, the flags, the
// compiler executable (path, size, modification time) and this machine's CPU (the flags say -march=native).
// Writes go to a temporary file renamed into place, so a reader never sees half an object; an entry that is not
// an ELF object is ignored and recompiled. The cache is best effort: an unwritable directory only costs speed.
//
// Where: $DOORBELL_CACHE_DIR, else $XDG_CACHE_HOME/doorbell, else $HOME/.cache/doorbell (objects in kernels/).
// DISABLE_COMPILER_CACHE=1 switches it off.
#pragma once
#include <optional>
#include <string>

namespace doorbell {

// The directory objects are kept in, or nullopt when the cache is off.
std::optional<std::string> object_cache_dir();
// Overrides the environment (tests, tools): a directory, or nullopt to switch the cache off.
void set_object_cache_dir(std::optional<std::string> dir);

// The entry name for an object compiled from `source` by `compiler` with `flags`.
std::string object_cache_key(const std::string& source, const std::string& compiler, const std::string& flags);
std::optional<std::string> object_cache_load(const std::string& key);
void object_cache_store(const std::string& key, const std::string& object);

}  // namespace doorbell
