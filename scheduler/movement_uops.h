// Builders of tensor-graph movement ops that skip no-ops (a reshape to the same shape, an identity permute, an
// expand that changes nothing) and fold a RESHAPE of a RESHAPE into one. The frontend builds every view with them
// (frontend/lazy_uops.h) and the scheduler's graph passes rewrite with them, so a rewritten graph is node for node
// the one the frontend would have built for the same program. Arguments are not checked: callers pass valid ones.
#pragma once
#include "ir/uop.h"

namespace doorbell {

UOp reshape_uop(const UOp& x, const IntTuple& shape);
UOp expand_uop(const UOp& x, const IntTuple& shape);  // same rank, 1 -> n
UOp permute_uop(const UOp& x, const IntTuple& order);

}  // namespace doorbell
