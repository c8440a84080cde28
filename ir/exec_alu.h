// Evaluation of one ALU op on constants, with the target's semantics: integers wrap at their width, floats round
// to their dtype (float16 and bfloat16 through float32, as the generated code computes them). Used by constant
// folding and by the symbolic fuzzer as the reference evaluator.
#pragma once
#include <optional>
#include <span>

#include "ir/uop.h"

namespace doorbell {

// The value `v` converted to `dt`: integers wrap, floats round, bool is v != 0. Float to integer truncates and
// gives nullopt when the value is NaN or out of range (undefined in C).
std::optional<ConstValue> convert_value(DType dt, ConstValue v);
// Rounds a double to a float dtype's precision (float16 and bfloat16 via float32).
double round_to_float_dtype(DType dt, double v);
uint16_t float_to_half_bits(float f);  // round to nearest even, with subnormals and overflow to inf
float half_bits_to_float(uint16_t h);
uint16_t float_to_bfloat16_bits(float f);  // round to nearest even; NaN stays NaN
float bfloat16_bits_to_float(uint16_t b);

// Integer stored values <-> their mathematical value (uint64 keeps its bit pattern in an int64_t).
__int128 int_value(DType dt, int64_t stored);
int64_t wrap_int(DType dt, __int128 v);

// op applied to operands of dtypes `in` giving dtype `out`. nullopt where the result is undefined: division or
// modulo by zero, a shift by a negative amount or by at least the width, a float-to-int CAST out of range,
// and ops that are not folded (THREEFRY).
std::optional<ConstValue> exec_alu(Ops op, DType out, std::span<const ConstValue> vals, std::span<const DType> in);

}  // namespace doorbell
