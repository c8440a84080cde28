// A stable 128-bit content hash: the same bytes give the same key in every process and on every run.
// It names UOps for caches (schedule cache, program cache), so it must never see a pointer.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace doorbell {

struct ContentKey {
  uint64_t hi = 0, lo = 0;
  constexpr bool operator==(const ContentKey&) const = default;
  constexpr auto operator<=>(const ContentKey&) const = default;
  std::string hex() const;  // 32 lowercase hex digits, hi first
};

class Hasher128 {
 public:
  void add_u64(uint64_t v) {  // inline: content keys hash every node built
    // Two lanes with different mixing, cross-coupled, so the 128 bits are not two copies of one 64-bit hash.
    a_ = rotl(a_ ^ (v * kMul1), 31) * kMul2 + b_;
    b_ = rotl(b_ + (v * kMul2), 27) * kMul1 ^ a_;
    count_++;
  }
  void add_i64(int64_t v) { add_u64(static_cast<uint64_t>(v)); }
  void add_bytes(std::string_view bytes);  // length-prefixed, so ("ab","c") != ("a","bc")
  void add_key(const ContentKey& k) { add_u64(k.hi); add_u64(k.lo); }
  ContentKey finish() const;

 private:
  static constexpr uint64_t kMul1 = 0x9e3779b97f4a7c15ULL, kMul2 = 0xc2b2ae3d27d4eb4fULL;
  static constexpr uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
  uint64_t a_ = 0x243f6a8885a308d3ULL, b_ = 0x13198a2e03707344ULL;  // digits of pi: arbitrary but fixed
  uint64_t count_ = 0;
};

}  // namespace doorbell
