// Decomposition of transcendental ops into plain float32 arithmetic, for targets without exp2/log2/sin
// instructions (approach as tinygrad codegen/late/transcendental.py: range reduction, a short polynomial and
// exponent bits built with integer ops; the code and the constants' provenance are documented in the .cpp).
#pragma once
#include "ir/uop.h"

namespace doorbell {

// Rewrites every scalar EXP2, LOG2 and SIN node under `root` (normally a kernel SINK) of dtype float32 into
// float32 UOps that use only ADD, SUB, MUL, FDIV, NEG, comparisons, WHERE, CAST, BITCAST, bitwise ops and shifts
// on int32/int64/uint64. float16 and bfloat16 nodes are computed in float32 (CAST in, decompose, CAST back).
// float64 nodes are left alone: the C target computes them with libm in double. Accuracy: at most 2 ULP of
// float32 over the whole domain, with exact special values (tests/compiler/transcendental_test.cpp measures it).
UOp decompose_transcendentals(const UOp& root);

// Rewrites every scalar POW node of float32, float16 or bfloat16 under `root` into float32 arithmetic with C pow's
// sign and special-value rules (float16/bfloat16 through float32), for targets without a pow instruction (PTX,
// AMDGPU). The relative error grows with the result's exponent: about |y * log2 x| float32 ULPs of the exponent,
// a few ULPs for moderate results (the C target computes pow in double). float64 nodes are left alone.
UOp decompose_pow(const UOp& root);

// The decomposition of one value: exp2, log2 or sin of a scalar float32 UOp `x`; pow of float32 `x` and `y`.
UOp exp2_f32(const UOp& x);
UOp log2_f32(const UOp& x);
UOp sin_f32(const UOp& x);
UOp pow_f32(const UOp& x, const UOp& y);

}  // namespace doorbell
