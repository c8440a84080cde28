// Integer interval bounds [vmin, vmax] of a node from its sources' bounds (tinygrad's _min_max).
// The bounds are exact enough to decide comparisons and divisions; where an op could wrap at its dtype's width,
// they widen to the whole dtype range, so a rule that trusts them stays correct under wraparound.
#pragma once
#include <vector>

#include "ir/uop.h"

namespace doorbell {

// Returns false for nodes without integer bounds (floats, void); else sets lo and hi.
bool compute_bounds(Ops op, DType dtype, const std::vector<UOp>& src, const Arg& arg, __int128& lo, __int128& hi);

}  // namespace doorbell
