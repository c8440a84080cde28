#include "ir/content_hash.h"

namespace doorbell {
namespace {
constexpr uint64_t kMul1 = 0x9e3779b97f4a7c15ULL;
constexpr uint64_t fmix(uint64_t k) {  // murmur3's 64-bit finalizer
  k ^= k >> 33; k *= 0xff51afd7ed558ccdULL; k ^= k >> 33; k *= 0xc4ceb9fe1a85ec53ULL; k ^= k >> 33;
  return k;
}
}  // namespace

std::string ContentKey::hex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(32, '0');
  for (int i = 0; i < 16; i++) {
    s[15 - i] = kDigits[(hi >> (4 * i)) & 15];
    s[31 - i] = kDigits[(lo >> (4 * i)) & 15];
  }
  return s;
}

void Hasher128::add_bytes(std::string_view bytes) {
  add_u64(bytes.size());
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t w = 0;
    for (int j = 0; j < 8; j++) w |= uint64_t{static_cast<unsigned char>(bytes[i + j])} << (8 * j);
    add_u64(w);
  }
  if (i < bytes.size()) {
    uint64_t w = 0;
    for (int j = 0; i + j < bytes.size(); j++) w |= uint64_t{static_cast<unsigned char>(bytes[i + j])} << (8 * j);
    add_u64(w);
  }
}

ContentKey Hasher128::finish() const {
  uint64_t a = a_ ^ count_, b = b_ ^ (count_ * kMul1);
  a += b; b += a;
  a = fmix(a); b = fmix(b);
  a += b; b += a;
  return ContentKey{a, b};
}

}  // namespace doorbell
