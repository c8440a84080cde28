#include "ir/reduce_identity.h"

#include <limits>
#include <stdexcept>
#include <string>

#include "ir/exec_alu.h"

namespace doorbell {

ConstValue reduce_identity(Ops op, DType dt) {
  if (!group::Reduce.contains(op))
    throw std::invalid_argument("reduce_identity: " + std::string(op_name(op)) + " is not a reduce op; expected ADD, MUL or MAX");
  DType s = dt.scalar();
  if (!s.is_float() && !s.is_int() && !s.is_bool())
    throw std::invalid_argument("reduce_identity: dtype " + dt.name() + " has no values; expected a bool, integer or float dtype");
  if (op == Ops::MAX) {
    if (s.is_float()) return -std::numeric_limits<double>::infinity();
    if (s.is_bool()) return false;
    return *convert_value(s, static_cast<int64_t>(int_min(s)));
  }
  return *convert_value(s, int64_t{op == Ops::MUL ? 1 : 0});
}

ConstValue accumulator_start(Ops op, DType dt) {
  if (op == Ops::ADD && dt.is_float()) return -0.0;
  return reduce_identity(op, dt);
}

}  // namespace doorbell
