// Layout choices a device's target asks for (ScheduleOptions, chosen by compiler/target.h LoweringOptions), and the
// tensor-graph passes that run before rangeify. tinygrad's Tensor knows nothing of caches; neither does doorbell's
// frontend: it builds what the user wrote, and these passes reshape it for the device the schedule is for.
//  - pack_matmul_panels: a float32 (M, K) @ (K, N) as Tensor::dot builds it (x as (M, 1, K) and w as (1, N, K),
//    both expanded to (M, N, K), multiplied, REDUCE ADD over the last axis), with N % 32 == 0, rows of w a multiple
//    of 4 KiB apart, K >= 64 and M >= 16, first packs w into panels of 32 columns, (N / 32, K, 32), each contiguous
//    (a copy kernel): a CPU matmul kernel walks one panel per column tile (compiler/cpu/cpu_optimizer.h), and with a
//    4 KiB stride every row of a panel maps to the same L1 and L2 sets, so the panel cannot stay in cache
//    (1024^3 in 31 ms unpacked, 1040^3 in 10.5 ms on the 2-core CI machine).
//  - split_leading_reduce: a reduction over axis 0 of at least 2^20 elements whose rows are at most 4096 elements,
//    a multiple of 16, runs as parts of rows, each reduced into a row of partial results, then the parts: each core
//    streams whole rows with the row's accumulators in L1, where one pass over all rows in column tiles jumps a
//    row's stride every tile (4096 x 4096: 2.9 ms against a 1.8 ms floor). It applies where split_reduceop
//    (scheduler/split_reduce.h) does not.
#pragma once
#include "ir/pattern_matcher.h"
#include "scheduler/schedule_options.h"

namespace doorbell {

const PatternMatcher& pack_matmul_panels_rules();
const PatternMatcher& split_leading_reduce_rules();

// The tensor graph under `sink` as the device's schedule computes it, through the named passes (DEBUG=5 prints
// each with its rule hits, or that it was skipped: a pass runs only when one of its rules fires on a REDUCE of the
// graph): "pack_matmul_panels" when chosen, then "split_reduceop" for every device, with split_leading_reduce's rule
// after split_reduceop's when chosen. Both in RewriteMode::Walk: each reduction of the graph is considered once, a
// split's own reductions never.
UOp layout_passes(const UOp& sink, const ScheduleOptions& options);

}  // namespace doorbell
