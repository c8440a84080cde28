// Evaluation of one ALU op on constants: the IR's semantics, defined for every operand (README "Defined
// semantics"): integers wrap at their width, floats round to their dtype (float16 and bfloat16 through float32, as
// the generated code computes them), and what C leaves undefined has one answer that every backend computes
// (compiler/late_lowering.h lowers it where a target's native op differs):
//  - SHL / SHR by an amount outside [0, width) (negative amounts too: read as unsigned, as PTX does): SHL gives 0,
//    SHR gives 0, or -1 for a negative signed value (the sign shifted all the way in);
//  - CDIV / FLOORDIV by 0 give 0, CMOD / FLOORMOD by 0 give the dividend (so a == b * (a / b) + a % b still holds),
//    as tinygrad's cdiv / cmod (tinygrad helpers.py: `cdiv(x, y) = ... if y != 0 else 0`, `cmod = x - cdiv(x,y)*y`);
//    INT_MIN / -1 wraps to INT_MIN and INT_MIN % -1 is 0;
//  - float -> integer CAST truncates toward zero and saturates to the destination range; NaN gives 0 (PTX ISA,
//    "cvt": "for float-to-integer conversions, the result is clamped to the destination range by default", NaN to 0);
//  - float -> narrower float rounds to nearest even, overflowing to +-inf; integer -> narrower integer wraps.
// Used by constant folding, the REF interpreter and the symbolic fuzzer as the reference evaluator.
#pragma once
#include <optional>
#include <span>

#include "ir/uop.h"

namespace doorbell {

// The value `v` converted to `dt`: integers wrap, floats round, bool is v != 0. Float to integer truncates and
// gives nullopt when the value is NaN or out of range: a value that must be exact (a constant, host data) has none;
// a CAST computes float_to_int instead.
std::optional<ConstValue> convert_value(DType dt, ConstValue v);
// A float value as the integer dtype `dt` as a CAST computes it: truncated toward zero, saturated to dt's range,
// NaN to 0 (the stored form: uint64 keeps its bit pattern in the int64_t).
int64_t float_to_int(DType dt, double v);
// Rounds a double to a float dtype's precision (float16 and bfloat16 via float32).
double round_to_float_dtype(DType dt, double v);
uint16_t float_to_half_bits(float f);  // round to nearest even, with subnormals and overflow to inf
float half_bits_to_float(uint16_t h);
uint16_t float_to_bfloat16_bits(float f);  // round to nearest even; NaN stays NaN
float bfloat16_bits_to_float(uint16_t b);

// Integer stored values <-> their mathematical value (uint64 keeps its bit pattern in an int64_t).
__int128 int_value(DType dt, int64_t stored);
int64_t wrap_int(DType dt, __int128 v);

// op applied to operands of dtypes `in` giving dtype `out`, defined for every operand value as above. nullopt only
// for what is not folded: THREEFRY, and a BITCAST between sizes that differ.
std::optional<ConstValue> exec_alu(Ops op, DType out, std::span<const ConstValue> vals, std::span<const DType> in);

}  // namespace doorbell
