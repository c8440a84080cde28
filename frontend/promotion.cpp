#include "frontend/promotion.h"

#include "frontend/lazy_uops.h"
#include "frontend/shape.h"

namespace doorbell::frontend {

DType promoted_dtype(const std::vector<Operand>& xs) {
  DType d = xs.at(0).dtype();
  for (size_t i = 1; i < xs.size(); i++) d = least_upper_dtype(d, xs[i].dtype());
  return strong_dtype(d);
}

IntTuple broadcast_shapes(std::string_view op, const std::vector<Operand>& xs) {
  const IntTuple* first = nullptr;
  IntTuple out;
  for (const Operand& x : xs) {
    if (!x.tensor) continue;
    if (!first) {
      first = &x.tensor->shape();
      out = *first;
    } else {
      out = broadcast_shape(op, out, x.tensor->shape());
    }
  }
  return out;
}

std::vector<UOp> prepare(const std::vector<Operand>& xs, DType dtype, const IntTuple& shape) {
  std::vector<UOp> out;
  out.reserve(xs.size());
  for (const Operand& x : xs) {
    if (x.tensor) out.push_back(broadcast_uop(x.tensor->cast(dtype).uop(), shape));
    else out.push_back(const_uop(dtype, x.scalar.value(), shape));  // wraps or rounds to the dtype: uint8 300 -> 44
  }
  return out;
}

DType exact_dtype(const std::vector<Operand>& xs, DType dtype) {
  if (!dtype.is_int() || dtype.bitsize() >= 64) return dtype;
  for (const Operand& x : xs) {
    if (x.tensor || x.scalar.dtype() != dtypes::weakint) continue;
    int64_t v = std::get<int64_t>(x.scalar.value());
    if (v < int_min(dtype) || v > int_max(dtype)) return dtypes::int64;
  }
  return dtype;
}

DType float_dtype(DType d) { return d.is_float() ? d : dtypes::default_float; }

}  // namespace doorbell::frontend
