// Decomposition of transcendental ops into plain float32 arithmetic, for targets without exp2/log2/sin or pow
// instructions (approach as tinygrad codegen/late/transcendental.py: range reduction, a short polynomial and
// exponent bits built with integer ops; the code and the constants' provenance are documented in the .cpp).
// compiler/late_lowering.h applies them where a target lacks the op (float16 and bfloat16 through float32).
//
// The graphs use only ADD, SUB, MUL, FDIV, NEG, comparisons, WHERE, CAST, BITCAST, bitwise ops and shifts on
// int32/int64/uint64, with no undefined behaviour on any input. Accuracy: exp2, log2 and sin within 2 ULP of float32
// over the whole domain, with exact special values (tests/compiler/transcendental_test.cpp measures it); pow follows
// C pow's sign and special-value rules, with a relative error that grows with the result's exponent: about
// |y * log2 x| float32 ULPs, a few ULPs for moderate results (the C target computes pow in double).
#pragma once
#include "ir/uop.h"

namespace doorbell {

// The decomposition of one value: exp2, log2 or sin of a scalar float32 UOp `x`; pow of float32 `x` and `y`.
UOp exp2_f32(const UOp& x);
UOp log2_f32(const UOp& x);
UOp sin_f32(const UOp& x);
UOp pow_f32(const UOp& x, const UOp& y);

}  // namespace doorbell
