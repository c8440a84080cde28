// expand_kernel: removes the UPCAST and UNROLL ranges that compiler/optimizer.h made, by replicating the work for
// each of their values (tinygrad's expander in codegen/__init__.py, with scalar lanes instead of vectors):
//  - REDUCE(v, ranges...) with UNROLL ranges: the copies of v (one per combination of unrolled values) are combined
//    with the reduce op, left to right; the REDUCE keeps its other ranges, or disappears when none is left;
//  - END(STORE, ranges...) with UPCAST ranges: END(GROUP(STORE copies...), other ranges...), one loop nest for all
//    the copies; with no range left, the copies become outputs of the SINK themselves.
// A kernel without such ranges comes back unchanged.
#pragma once
#include "ir/uop.h"

namespace doorbell {

// Throws std::invalid_argument naming the range when an UPCAST or UNROLL range does not have a constant size.
UOp expand_kernel(const UOp& sink);

}  // namespace doorbell
