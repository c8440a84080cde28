#include "ir/debug.h"

#include <atomic>
#include <cstdlib>

namespace doorbell {
namespace {
std::atomic<int>& level() {
  static std::atomic<int> l{[] {
    const char* e = std::getenv("DEBUG");
    return e ? std::atoi(e) : 0;
  }()};
  return l;
}
}  // namespace

int debug_level() { return level().load(std::memory_order_relaxed); }
void set_debug_level(int l) { level().store(l, std::memory_order_relaxed); }

}  // namespace doorbell
