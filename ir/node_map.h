// NodeMap: a map keyed by UOp node, with open addressing in one flat array. Passes look up every node they visit;
// this avoids a heap node per entry and keeps lookups in cache. Entries are never erased.
#pragma once
#include <cstdint>
#include <vector>

#include "ir/uop.h"

namespace doorbell {

template <class V>
class NodeMap {
 public:
  explicit NodeMap(size_t expected = 8) {
    size_t n = 16;  // small passes (an index expression) stay small
    while (n < 2 * expected) n *= 2;
    slots_.resize(n);
  }
  V* find(const UOpNode* k) {
    for (size_t i = slot(k);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i].key == k) return &slots_[i].value;
      if (!slots_[i].key) return nullptr;
    }
  }
  // The value for k, default-constructed when new; `inserted` says which.
  V& get(const UOpNode* k, bool* inserted = nullptr) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    size_t i = slot(k);
    for (; slots_[i].key; i = (i + 1) & (slots_.size() - 1))
      if (slots_[i].key == k) {
        if (inserted) *inserted = false;
        return slots_[i].value;
      }
    slots_[i].key = k;
    size_++;
    if (inserted) *inserted = true;
    return slots_[i].value;
  }
  size_t size() const { return size_; }

 private:
  struct Slot {
    const UOpNode* key = nullptr;
    V value{};
  };
  size_t slot(const UOpNode* k) const {
    uint64_t h = reinterpret_cast<uintptr_t>(k) * 0x9e3779b97f4a7c15ULL;
    return (h >> 20) & (slots_.size() - 1);
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_ = std::vector<Slot>(old.size() * 2);
    size_ = 0;
    for (Slot& s : old)
      if (s.key) get(s.key) = std::move(s.value);
  }
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace doorbell
