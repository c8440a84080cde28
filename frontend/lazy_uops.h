// UOp builders for the tensor graph that skip no-ops (a reshape to the same shape, an expand that changes
// nothing), so equal Tensor programs build equal graphs. Arguments are already checked by the Tensor ops.
#pragma once
#include <optional>

#include "ir/uop.h"
#include "scheduler/movement_uops.h"

namespace doorbell::frontend {

// The scheduler's graph passes rewrite with the same builders (scheduler/movement_uops.h).
using doorbell::expand_uop;
using doorbell::permute_uop;
using doorbell::reshape_uop;
UOp pad_uop(const UOp& x, const IntTuple& before_after);     // flattened (before, after) per axis, >= 0
UOp shrink_uop(const UOp& x, const IntTuple& begin_end);     // flattened (begin, end) per axis
UOp flip_uop(const UOp& x, const IntTuple& axes);
// numpy broadcasting of x to `shape`: left-pad with 1s by RESHAPE, then EXPAND.
UOp broadcast_uop(const UOp& x, const IntTuple& shape);
// A constant of `shape`: CONST (shape ()) reshaped to all 1s and expanded. No buffer, no kernel.
UOp const_uop(DType dtype, const ConstValue& value, const IntTuple& shape);
// The value of a virtual constant (a CONST under shape-only movement ops), or nullopt.
std::optional<ConstValue> virtual_const_value(const UOp& x);
// The BUFFER when x is that BUFFER or a chain of RESHAPEs of it (a plain view of all its elements), else null.
UOp plain_buffer(const UOp& x);

}  // namespace doorbell::frontend
