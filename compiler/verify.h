// verify_kernel: the invariants of a kernel at each stage of the pipeline (compiler/pipeline.h), checked between
// passes when DOORBELL_VERIFY=1 (tinygrad's type_verify with its spec per stage). What holds at every stage:
//  - the root is a SINK whose sources are outputs: STORE, END(STORE or GROUP(STORE...), RANGE...) or GROUP of those;
//  - a STORE and a LOAD address memory through INDEX(buffer, index[, valid]); the buffer is a PARAM of GLOBAL or
//    LOCAL memory, or AFTER(PARAM(LOCAL), BARRIER) (compiler/gpu/group_reduce.h);
//  - a REDUCE and an END list RANGEs; every RANGE a value uses is open there: listed by an END around it or by a
//    REDUCE it feeds (scheduler/schedule.h's form, the one linearize needs);
// and per stage:
//  - SCHEDULED: ranges are LOOP or REDUCE, there is no SPECIAL thread index;
//  - EXPANDED and later: no UPCAST or UNROLL range is left;
//  - LAUNCHED: no LOOP range is left (output loops became SPECIAL thread indices);
//  - LOWERED: only what the renderer has natively (compiler/late_lowering.h, the target's LateLoweringOptions): no
//    FLOORDIV/FLOORMOD, 16-bit float arithmetic, bool buffers, EXP2/LOG2/SIN or POW of a dtype it lacks. Without
//    options (a unit test), no float32/float16/bfloat16 EXP2, LOG2 or SIN (no renderer has them).
#pragma once
#include <stdexcept>

#include "compiler/late_lowering.h"
#include "compiler/pipeline.h"
#include "ir/uop.h"

namespace doorbell {

class VerifyError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Throws VerifyError naming `after` (the pass that produced the kernel), the invariant and the node. `late`: what the
// target renders natively, for the LOWERED stage (null: the check every target shares).
void verify_kernel(const UOp& sink, KernelStage stage, const char* after, const LateLoweringOptions* late = nullptr);

}  // namespace doorbell
