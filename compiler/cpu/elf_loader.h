// Loads a relocatable x86-64 ELF object (.o) into executable memory ourselves, without the system's dynamic
// loader: the allocated sections are copied into one mapping, relocations applied, and the mapping made
// read+execute (writable sections stay read+write). External functions (libm's expf, sinf...) resolve with
// dlsym in this process and are called through jump stubs placed in the mapping, so a 32-bit call offset
// always reaches them.
#pragma once
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

namespace doorbell {

// What was wrong with the object: names the section, relocation type or symbol and what was expected.
class ElfLoadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class LoadedObject {
 public:
  // Throws ElfLoadError for a truncated or malformed object, an unsupported relocation, or an unresolved symbol.
  static std::shared_ptr<LoadedObject> load(std::string_view elf);
  ~LoadedObject();
  LoadedObject(const LoadedObject&) = delete;
  LoadedObject& operator=(const LoadedObject&) = delete;

  // The address of a defined global symbol; throws ElfLoadError naming it when the object has none.
  void* symbol(const std::string& name) const;
  size_t mapped_bytes() const { return size_; }

 private:
  LoadedObject() = default;
  std::byte* base_ = nullptr;
  size_t size_ = 0;
  std::unordered_map<std::string, void*> symbols_;
};

}  // namespace doorbell
