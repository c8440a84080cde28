// The symbolic simplifier: pattern rules that fold constants, apply identities, combine terms, decide
// comparisons from bounds, and simplify floor division and modulo by constants (tinygrad uop/symbolic.py and
// uop/divandmod.py, rewritten for C++). Integer rules are sound under wraparound: a rule that needs exact
// (unwrapped) arithmetic checks the bounds of the nodes it relies on.
#pragma once
#include "ir/graph_rewrite.h"

namespace doorbell {

// Constant folding and identities only (x+0, x*1, x//1, where with a constant condition, ...).
const PatternMatcher& symbolic_simple();
// Everything: symbolic_simple + term combining, bounds, comparisons, division and modulo.
const PatternMatcher& symbolic();

// graph_rewrite(u, symbolic()): idempotent, simplify(simplify(e)) == simplify(e).
UOp simplify(const UOp& u);

}  // namespace doorbell
