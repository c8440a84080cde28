// linearize: a scheduled kernel SINK (scheduler/schedule.h) as an ordered list of statements with explicit loop
// nesting, ready for a C-style renderer (tinygrad codegen/late/linearizer.py).
//  - END ranges (LOOP) and REDUCE ranges become nested loops; a REDUCE becomes an accumulator initialised to the
//    identity of its op before its loops and combined in the innermost one;
//  - every value is placed in the innermost open loop it depends on, so loop-invariant work is hoisted out;
//  - top-level LOOP ranges are marked split: the renderer divides them across CPU cores (compiler/cpu_kernel_abi.h);
//  - an output may be END(GROUP(STORE...), ranges...) (compiler/expander.h): its stores share one loop nest, and
//    REDUCEs over the same ranges at the same depth share one loop, each with its own accumulator;
//  - a load may read a local buffer through AFTER(PARAM(LOCAL), BARRIER(STOREs)) (compiler/gpu/group_reduce.h): the
//    STOREs and then the BARRIER are placed before the load, at the depth their values need.
#pragma once
#include <vector>

#include "ir/uop.h"

namespace doorbell {

enum class StatementKind : uint8_t {
  BEGIN_LOOP,  // u: the RANGE; `split` says whether its iterations are divided across cores
  END_LOOP,    // u: the RANGE being closed
  VALUE,       // u: an ALU, CAST, BITCAST or LOAD node whose value is defined here
  ACC_INIT,    // u: a REDUCE; its accumulator starts at the identity of its op
  ACC_UPDATE,  // u: a REDUCE; its accumulator is combined with the value of u.src(0)
  STORE,       // u: a STORE, in the innermost open loop
  BARRIER,     // u: a BARRIER; every thread of the block has done the STOREs before it (its sources) when it passes
};

struct Statement {
  StatementKind kind;
  UOp u;
  bool split = false;
};

// Throws std::invalid_argument naming the node when the kernel is not in the scheduler's form.
std::vector<Statement> linearize(const UOp& sink);

// The PARAM an INDEX addresses: its source 0, or the PARAM inside AFTER(PARAM(LOCAL), BARRIER).
inline const UOp& indexed_buffer(const UOp& index) {
  const UOp& b = index.src(0);
  return b.op() == Ops::AFTER ? b.src(0) : b;
}

}  // namespace doorbell
