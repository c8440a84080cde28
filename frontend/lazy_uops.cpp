#include "frontend/lazy_uops.h"

#include <optional>

namespace doorbell::frontend {

UOp pad_uop(const UOp& x, const IntTuple& before_after) {
  bool zero = true;
  for (int64_t p : before_after) zero &= p == 0;
  if (zero) return x;
  return UOp::make(Ops::PAD, x.dtype(), {x}, before_after);
}

UOp shrink_uop(const UOp& x, const IntTuple& begin_end) {
  const IntTuple& s = *x.shape();
  bool whole = true;
  for (size_t i = 0; i < s.size(); i++) whole &= begin_end[2 * i] == 0 && begin_end[2 * i + 1] == s[i];
  if (whole) return x;
  return UOp::make(Ops::SHRINK, x.dtype(), {x}, begin_end);
}

UOp flip_uop(const UOp& x, const IntTuple& axes) {
  IntTuple real;  // flipping an axis of size 1 changes nothing
  for (int64_t a : axes)
    if ((*x.shape())[a] != 1) real.push_back(a);
  if (real.empty()) return x;
  return UOp::make(Ops::FLIP, x.dtype(), {x}, real);
}

UOp broadcast_uop(const UOp& x, const IntTuple& shape) {
  const IntTuple& s = *x.shape();
  if (s == shape) return x;
  IntTuple padded(shape.size() - s.size(), 1);
  padded.insert(padded.end(), s.begin(), s.end());
  return expand_uop(reshape_uop(x, padded), shape);
}

UOp const_uop(DType dtype, const ConstValue& value, const IntTuple& shape) {
  UOp c = UOp::const_(dtype, value);
  return broadcast_uop(c, shape);
}

std::optional<ConstValue> virtual_const_value(const UOp& x) {
  UOp u = x;
  while (u.op() == Ops::RESHAPE || u.op() == Ops::EXPAND || u.op() == Ops::PERMUTE || u.op() == Ops::FLIP ||
         u.op() == Ops::SHRINK)
    u = u.src(0);
  if (u.op() != Ops::CONST || std::holds_alternative<Invalid>(u.arg())) return std::nullopt;
  return u.const_value();
}

UOp plain_buffer(const UOp& x) {
  UOp u = x;
  while (u.op() == Ops::RESHAPE) u = u.src(0);
  if (u.op() != Ops::BUFFER) return UOp();
  return u;
}

}  // namespace doorbell::frontend
