// The identity of a reduce op (ADD, MUL, MAX): what a reduction over nothing gives and where an accumulator starts.
// One definition for the scheduler (empty reduces), the reference interpreter, the GPU group reduce and every
// renderer's accumulators.
#pragma once
#include "ir/uop.h"

namespace doorbell {

// 0 for ADD, 1 for MUL, the lowest value for MAX (-inf for floats, false for bool, the dtype's minimum for
// integers), as a value of dt's element type: bool for bool, int64_t for integers, double for floats. The value of a
// reduction over nothing. Throws std::invalid_argument for another op or a dtype without values.
ConstValue reduce_identity(Ops op, DType dt);

// Where an accumulator starts: reduce_identity, except that a float sum starts at -0.0, the identity of IEEE
// addition (x + -0.0 is x for every x, -0.0 included), so that a sum of -0.0 stays -0.0 as the reference
// interpreter's sum of its first element and the rest does. A sum over nothing is still +0 (reduce_identity).
ConstValue accumulator_start(Ops op, DType dt);

}  // namespace doorbell
