// split_reduceop (tinygrad schedule/rangeify.py split_reduceop), for every device: a reduction of many elements into
// few outputs (at least 32768 per output) runs as two kernels, so that the first has outputs enough for every core
// or SM. An axis of size n is split into (d, n / d), d from 256 down to 8; the d parts are reduced into a contiguous
// buffer of d partial results per output and those reduced next. A float sum then adds in another order than one
// loop would. Runs on the tensor graph before rangeify (scheduler/layout.h layout_passes).
#pragma once
#include "ir/pattern_matcher.h"

namespace doorbell {

// `reduce` (a REDUCE) computed in two kernels: `parts`, a view of reduce's source, reduced over the axes `first`
// into a CONTIGUOUS buffer of partial results, then those reduced over the axis `second`, reshaped to reduce's
// shape. The split reductions (here and scheduler/layout.h) share it.
UOp reduce_in_two(const UOp& reduce, const UOp& parts, IntTuple first, int64_t second);

// A rewrite of a REDUCE here leaves RESHAPE(REDUCE) in its place; under a RESHAPE (keepdim=False, Tensor::dot) the
// two are one, as the frontend's reshape_uop would have built them.
const PatternMatcher& fold_reshape_of_rewritten_reduce();

// The split_reduceop rule on REDUCE, then fold_reshape_of_rewritten_reduce. Run in RewriteMode::Walk: a split's
// own reductions are never split again.
const PatternMatcher& split_reduceop_rules();

}  // namespace doorbell
