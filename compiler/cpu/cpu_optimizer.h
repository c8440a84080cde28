// optimize_for_cpu: the CPU kernel optimizer's hand-coded actions (tinygrad's hand_coded_optimizations in
// codegen/opt/heuristic.py, for x86 with AVX-512 or AVX2). It splits ranges; the expander replicates UPCAST and
// UNROLL ranges and compiler/cpu/vectorize.h turns the VECTOR range into vector values:
//  - VECTOR the output's stride-1 loop (every load that varies with it must be stride 1 too): elementwise kernels,
//    a reduce over the outer axis (sum over axis 0), a matmul's columns;
//  - else VECTOR a reduce's stride-1 range (sum over the last axis, softmax's max and sum): one vector accumulator
//    per output, its lanes folded in order at the end, with the reduce loop unrolled 4 ways for independent loads;
//  - register tiles: with a reduce inside a vectorized output, the output's other loop (the one some load does not
//    vary with, a matmul's rows) is UPCAST too, so one loaded vector or scalar feeds several accumulators: a 4 x 2
//    tile of 16-lane vectors for a matmul (8 of the 32 AVX-512 registers accumulate, one FMA per loaded element);
//  - anything else gets compiler/optimizer.h's scalar upcasts and unrolls.
// Threads: the renderer divides each output's outermost loop across cores (compiler/c_renderer.h).
#pragma once
#include "ir/uop.h"

namespace doorbell {

// Lanes of a float32 vector register: 16 with AVX-512, 8 with AVX2 (the C compiler targets this machine).
// DOORBELL_CPU_VECTOR_LANES=8 (or 4, 16) overrides it, read once: CI runs the compiler and conformance tests with
// 8 lanes too, the AVX2 code on an AVX-512 machine.
int cpu_vector_lanes();

// The kernel SINK with its ranges split for the CPU; the kernel itself when nothing applies.
UOp optimize_for_cpu(const UOp& sink);

}  // namespace doorbell
