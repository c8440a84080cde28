// lower_late: what every renderer would otherwise write once in its own language, as one pass of pattern rules run
// on a kernel just before it is linearized. LateLoweringOptions says what a renderer computes natively; every op it
// lacks is rewritten into ops it has, with the IR's semantics kept bit for bit (ir/exec_alu.h defines what C leaves
// undefined: division by zero, INT_MIN / -1, shifts out of range, float -> int out of range):
//  - FLOORDIV / FLOORMOD: by a power-of-two constant, a shift / mask (an arithmetic shift floors); of operands both
//    proved >= 0 by their bounds, CDIV / CMOD; otherwise CDIV / CMOD and the sign correction (a nonzero remainder
//    whose sign differs from the divisor's moves the quotient down by one and the remainder by the divisor);
//  - CDIV / CMOD by a divisor that may be 0 (or -1, signed): the divisor replaced by 1 there and the result selected
//    (a / 0 = 0, a % 0 = a, -a for a / -1), so the renderer's division never traps or hits undefined behaviour;
//  - SHL / SHR by an amount that may be outside [0, width) (its bounds say): the amount made valid and the defined
//    result selected (0, or the sign fill of a signed SHR), so the renderer's shift is always defined;
//  - CAST float -> integer: the value clamped to [min, max + 1) before the CAST, NaN to 0, and max selected above:
//    truncation saturated to the destination range (targets without a saturating conversion: C, LLVM IR);
//  - float16 / bfloat16: ops whose float32 result may not be a value of the type (ADD SUB MUL FDIV SQRT RECIPROCAL
//    MULACC EXP2 LOG2 SIN POW) become CAST to float32, the op, CAST back: every op rounds to its type; comparisons
//    compare the float32 values; a CAST between a 16-bit float and anything but float32 goes through float32 (what
//    it has always meant). NEG, TRUNC, MAX and WHERE stay: their result is one of their 16-bit operands (or NaN),
//    computed exactly on float32 registers, and a cast back would change a NaN payload on PTX (cvt.rn.f16.f32 gives
//    the canonical NaN). A REDUCE of a 16-bit float stays too: its accumulator rounds after every combine, which no
//    node expresses, so a renderer combines in float32 and rounds as its CAST to the type does. What is left of
//    16-bit floats for a renderer: loads, stores, CAST to and from float32, BITCAST, WHERE, NEG, TRUNC, MAX;
//  - bool in memory: a LOAD of a bool buffer reads a byte and compares it != 0, a STORE writes CAST(v, uint8),
//    through the same buffer retyped uint8;
//  - EXP2 / LOG2 / SIN and POW of float32 without an instruction: compiler/transcendental.h's float32 arithmetic;
//    float16 / bfloat16 ones through float32. float64 has no decomposition: it is left for the renderer, which
//    computes it (C, with libm) or rejects it naming the node (PTX, AMDGPU).
// Vector dtypes (compiler/cpu/vectorize.h) are made after this pass and left alone. DEBUG=5 prints the pass as
// "lower_late" with the hit count of each rule.
#pragma once
#include "ir/uop.h"

namespace doorbell {

// A set of float dtypes; weakfloat counts as float64 (renderers compute it in double).
struct FloatDTypes {
  bool float16 = false, bfloat16 = false, float32 = false, float64 = false;
  bool contains(DType d) const;
};

// What a renderer computes natively (true) and what lower_late rewrites for it (false).
struct LateLoweringOptions {
  bool floor_division = false;       // FLOORDIV, FLOORMOD
  bool division_edge_cases = false;  // CDIV, CMOD by 0 give 0 and a, and INT_MIN / -1 wraps, without a trap
  bool shift_edge_cases = false;     // SHL, SHR by any amount (negative: as unsigned) give exec_alu's result
  bool float_to_int_saturates = false;  // CAST float -> int truncates, saturates, NaN -> 0 (PTX cvt.rzi)
  bool half_arithmetic = false;      // float16 / bfloat16 ops, rounded to the type after each
  bool bool_memory = false;          // LOAD and STORE of bool buffers
  FloatDTypes transcendentals;       // EXP2, LOG2, SIN
  FloatDTypes pow;                   // POW
};

// The targets' presets, in one place to compare them.
// C (compiled by clang): float64 EXP2/LOG2/SIN and POW of float32/float64 through libm in double; float32
// EXP2/LOG2/SIN decomposed, so that compiler/cpu/vectorize.h can make vectors of them.
LateLoweringOptions c_lowering_options();
// PTX for sm_80 / sm_90: no transcendental or pow instruction for exact results; float64 ones are rejected. Shifts
// and float -> int conversions are native (the renderer keeps 64-bit shift amounts and sub-word types exact).
LateLoweringOptions ptx_lowering_options();
// LLVM IR for AMDGPU (and its x86 semantics harness): as PTX, float64 would need AMD's device libraries.
LateLoweringOptions amdgpu_lowering_options();
// SPIR-V for Vulkan (compiler/spirv/spirv_renderer.h): nothing of the above natively. OpSDiv/OpUDiv by 0 and
// OpSDiv(INT_MIN, -1) are undefined, a shift by >= the width is undefined, OpConvertFToS/U out of range is undefined
// (SPIR-V 1.5 specification, 3.32.13/3.32.11), bool has no memory layout, 16-bit floats are float32 in registers, and
// GLSL.std.450's Exp2/Log2/Sin/Pow have only the Vulkan precision bounds (ULPs, not correctly rounded): float32 ones
// are decomposed, float64 ones rejected by the renderer. firmware-notes/spirv-kernels.md.
LateLoweringOptions spirv_lowering_options();

// The kernel with every op the options do not have natively rewritten. Throws std::invalid_argument for a null
// root.
UOp lower_late(const UOp& sink, const LateLoweringOptions& options);

}  // namespace doorbell
