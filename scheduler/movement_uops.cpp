#include "scheduler/movement_uops.h"

namespace doorbell {

UOp reshape_uop(const UOp& x, const IntTuple& shape) {
  if (*x.shape() == shape) return x;
  // RESHAPE of a RESHAPE is one RESHAPE: keeps views of buffers plain.
  const UOp& base = x.op() == Ops::RESHAPE ? x.src(0) : x;
  if (*base.shape() == shape) return base;
  return UOp::make(Ops::RESHAPE, base.dtype(), {base}, shape);
}

UOp expand_uop(const UOp& x, const IntTuple& shape) {
  if (*x.shape() == shape) return x;
  return UOp::make(Ops::EXPAND, x.dtype(), {x}, shape);
}

UOp permute_uop(const UOp& x, const IntTuple& order) {
  bool identity = true;
  for (size_t i = 0; i < order.size(); i++) identity &= order[i] == static_cast<int64_t>(i);
  if (identity) return x;
  return UOp::make(Ops::PERMUTE, x.dtype(), {x}, order);
}

}  // namespace doorbell
