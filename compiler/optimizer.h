// optimize_kernel: a first kernel optimizer in the spirit of tinygrad's hand_coded_optimizations
// (codegen/opt/heuristic.py). It only splits ranges; compiler/expander.h then replicates the work, so the C compiler
// sees independent scalar lanes it can vectorize and interleave:
//  - UPCAST: one LOOP range of each output (the innermost with a constant size divisible by 4, 3 or 2, preferring
//    one the STORE index walks with stride 1) becomes r_o * k + r_i, r_i an UPCAST range of size k;
//  - UNROLL: a REDUCE range of constant size <= 16 becomes one UNROLL range (fully unrolled), a larger one
//    divisible by 4 (or 2) becomes r_o * k + r_i with r_i an UNROLL range;
//  - the total replication (upcast times unrolls) of a kernel stays <= kMaxReplication.
// New ranges get axis numbers above every axis of the kernel, so they never hash-cons to an existing range.
#pragma once
#include "ir/uop.h"

namespace doorbell {

inline constexpr int64_t kMaxReplication = 32;

// The kernel SINK with its ranges split, or `sink` itself when NOOPT is set or nothing applies.
UOp optimize_kernel(const UOp& sink);
// The same, whatever NOOPT says: for a caller that read the setting once (the program cache keys on it).
UOp apply_optimizations(const UOp& sink);

// NOOPT=1 in the environment (read once) switches the optimizer off; set_noopt overrides it (tests, benchmarks).
bool noopt_enabled();
void set_noopt(bool noopt);

}  // namespace doorbell
