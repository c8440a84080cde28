// Grouped reductions (tinygrad's GROUP/GROUPTOP with fix_group_for_reduce, codegen/__init__.py): the lanes of a
// thread block share one reduction instead of each thread reducing alone, so a kernel with few outputs and a long
// reduce (a full sum, a row softmax) uses a whole block per output.
//
// With G lanes, a lane range `lane` (AxisType::GROUP_REDUCE, size G) is added to the kernel, and every REDUCE that
// is not nested in another reduce's loop becomes, for its flattened reduce index f in [0, S):
//   partial = REDUCE(where(f < S, x[f], identity), r)        f = r * G + lane, r in [0, ceil(S / G))
//   STORE(INDEX(local, lane), partial)                        local: PARAM(AddrSpace::LOCAL), G elements
//   BARRIER(that store)
//   result  = REDUCE(LOAD(INDEX(AFTER(local, BARRIER), r2)), r2)   r2 in [0, G), every lane the same value
// Consecutive lanes read consecutive elements of the reduce axis (coalesced when it is the contiguous one). Past
// the end (G does not divide S), x reads element S - 1 and the identity is combined instead. Each reduce gets its
// own local buffer (slots 0, 1, ... of the LOCAL address space), so no barrier is needed between two of them.
// Every global STORE of the kernel is then gated to lane 0 by lower_for_gpu (compiler/gpu/gpu_dims.h), which maps
// the lane range to the block's x thread index.
//
// Float sums are reassociated (G partial sums, then their sum), so they differ from the CPU's sequential order in
// the last bits, as on every GPU; integer, bool and max reductions are exact.
#pragma once
#include <cstdint>

#include "ir/uop.h"

namespace doorbell {

// The kernel with its top-level reduces grouped over `lanes` threads; `sink` itself when it has none to group.
// Throws std::invalid_argument when lanes < 2 or a reduce range has no constant size.
UOp group_reduces(const UOp& sink, int64_t lanes);

// Reduces a grouping would change: REDUCEs not nested inside another reduce's loop.
std::vector<UOp> top_level_reduces(const UOp& sink);

// The range GROUP_REDUCE range of a grouped kernel, or a null UOp.
UOp group_lane_range(const UOp& sink);

}  // namespace doorbell
