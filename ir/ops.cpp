#include "ir/ops.h"

#include <stdexcept>
#include <string>

namespace doorbell {
namespace {
constexpr std::string_view kOpNames[] = {
#define DOORBELL_OP_NAME(name) #name,
    DOORBELL_OPS(DOORBELL_OP_NAME)
#undef DOORBELL_OP_NAME
};
static_assert(kOpCount <= 128, "OpSet holds at most 128 ops");
}  // namespace

std::string_view op_name(Ops op) { return kOpNames[static_cast<int>(op)]; }

Ops op_from_name(std::string_view name) {
  for (int i = 0; i < kOpCount; i++)
    if (kOpNames[i] == name) return static_cast<Ops>(i);
  throw std::invalid_argument("op_from_name: '" + std::string(name) + "' is not an op name");
}

std::string_view axis_type_name(AxisType t) {
  static constexpr std::string_view kNames[] = {"DEVICE", "GLOBAL", "WARP", "LOCAL", "WEAK", "GROUP_REDUCE",
                                                "REDUCE", "UPCAST", "UNROLL", "THREAD", "PLACEHOLDER", "LOOP", "VECTOR"};
  return kNames[static_cast<int>(t)];
}

std::string_view addr_space_name(AddrSpace a) {
  static constexpr std::string_view kNames[] = {"GLOBAL", "LOCAL", "REG", "ALU"};
  return kNames[static_cast<int>(a)];
}

}  // namespace doorbell
