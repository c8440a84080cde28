// SHA-256 (FIPS 180-4), in-tree so the object cache (compiler/object_cache.h) needs no crypto library: it names
// cache entries and detects a damaged object on disk before the loader maps it.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace doorbell {

class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;
  Sha256();
  void add(std::string_view bytes);
  void add_u64(uint64_t v);  // 8 bytes, little-endian: a length prefix that keeps concatenated fields apart
  Digest finish();           // the object is spent afterwards

  static Digest of(std::string_view bytes);
  static std::string hex(const Digest& d);

 private:
  void block(const uint8_t* p);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buf_{};
  size_t used_ = 0;
  uint64_t total_ = 0;
};

}  // namespace doorbell
