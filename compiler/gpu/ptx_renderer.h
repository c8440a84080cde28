// PTX renderer: a GPU kernel (compiler/gpu/gpu_dims.h) as PTX text for NVIDIA sm_80 / sm_90 (tinygrad
// renderer/ptx.py; instruction forms from NVIDIA's "PTX ISA" manual, version 8.0).
// The kernel computes exactly what the C renderer (compiler/c_renderer.h) computes. It takes kernels lowered by
// lower_late with ptx_lowering_options() (compiler/late_lowering.h, in prepare_gpu_kernel): floor division, the
// division edge cases, 16-bit float arithmetic, bool buffers, EXP2/LOG2/SIN and POW arrive as plain ops. Then:
//  - integers wrap at their width: int8/int16 (and uint8/uint16) live in 32-bit registers, re-normalized (sign or
//    zero extended) after every op; weakint index math is 64-bit, except divisions whose operands' bounds fit in
//    int32, which divide in 32 bits (a 64-bit division is a long subroutine on NVIDIA GPUs); CDIV/CMOD are div/rem
//    (the divisor is never 0, nor -1 for a signed type);
//  - float16/bfloat16 are 16-bit in memory and float32 in registers; a CAST to them rounds (round to nearest even,
//    cvt.rn.f16.f32 / cvt.rn.bf16.f32), and so does a 16-bit accumulator after each sum or product; float adds and
//    muls carry .rn so ptxas never fuses them;
//  - MAX of floats propagates NaN (db_maxf), comparisons follow C (!= is true for NaN);
//  - bool is a predicate in registers; a gated load reads 0, a gated store is skipped;
//  - the upcast copies of a load from a buffer the kernel does not store to become one ld.global.v4 / .v2 where the
//    element index is a provable multiple of the vector width (buffers are assumed 16-byte aligned: NV allocations
//    are 256-byte aligned);
//  - local buffers (compiler/gpu/group_reduce.h) are .shared arrays, and a BARRIER is bar.sync 0;
//  - float32 (and 16-bit) EXP2/LOG2/SIN and POW arrive decomposed (compiler/transcendental.h): POW's relative
//    error is about |y * log2 x| float32 ULPs of the exponent, a few ULPs for moderate results (C computes pow in
//    double). float64 EXP2/LOG2/SIN/POW have no PTX instruction: rendering them throws.
// Float-to-integer casts truncate toward zero. Out of range (undefined behaviour in C) they follow x86 where that is
// cheap (uint32 and uint64 through int64, so -1.5 gives all ones; sub-word types keep the low bits of an int32);
// int32/int64 saturate as cvt.rzi does where x86 gives INT_MIN, and NaN gives 0. bfloat16 NaNs are stored as the
// canonical NaN (the C renderer keeps the payload's top bits).
#pragma once
#include <string>

#include "compiler/gpu/gpu_dims.h"
#include "compiler/gpu/gpu_target.h"
#include "ir/uop.h"

namespace doorbell {

// The PTX ISA version every rendered module declares: 8.0 is CUDA 12.0's, so every ptxas from 12.0 on accepts it.
inline constexpr const char* kPtxVersion = "8.0";

// optimize_for_gpu (compiler/gpu/gpu_optimizer.h; optimizations off with NOOPT=1), then lower_late with
// ptx_lowering_options() (compiler/late_lowering.h): the form render_ptx takes.
GpuKernel prepare_gpu_kernel(const UOp& sink, const GpuTarget& target, const GpuDimsOptions& options = {});

// One `.visible .entry name(.param .u64 data0, ...)` with a pointer per buffer slot in slot order.
// Throws std::invalid_argument naming the node for an op or dtype PTX cannot express, and for a non-NV target.
std::string render_ptx(const std::string& name, const GpuKernel& k, const GpuTarget& t);

}  // namespace doorbell
