// C renderer: one linearized kernel as a C function with the CPU calling convention of compiler/cpu_kernel_abi.h
// (tinygrad tinygrad/renderer/cstyle.py). The generated code computes exactly what ir/exec_alu.h defines.
// It takes kernels lowered by lower_late with c_lowering_options() (compiler/late_lowering.h): floor division, the
// division edge cases, 16-bit float arithmetic, bool buffers and float32 EXP2/LOG2/SIN arrive as plain ops. Then:
//  - integers wrap at their width (compile with -fwrapv; shifts go through unsigned types); CDIV and CMOD are C's
//    / and % (the divisor is never 0, nor -1 for a signed type);
//  - float16 and bfloat16 live in memory as uint16 bits and in registers as float32; a CAST to them rounds (round
//    to nearest even, the same helpers as ir/exec_alu.cpp), and so does a 16-bit accumulator after each sum or
//    product;
//  - float64 EXP2/LOG2/SIN, POW and SQRT are computed in double by the C math library and rounded once, like
//    exec_alu;
//  - bool is 0/1 in registers (uint8);
//  - vector values (compiler/cpu/vectorize.h) are clang vectors of 32-bit lanes, loaded and stored unaligned, bools
//    as 0/-1 masks; a float product read only by a sum is fused into it (__builtin_elementwise_fma: one rounding
//    where exec_alu rounds twice), and a vector's lanes fold into a scalar left to right.
// The outermost LOOP ranges are split across cores: core c of n runs [c*len/n, (c+1)*len/n).
#pragma once
#include <string>
#include <vector>

#include "compiler/linearize.h"
#include "ir/uop.h"

namespace doorbell {

// kernel_<first 16 hex digits of the SINK's content key>: the same kernel gets the same name in every process.
std::string c_kernel_name(const UOp& sink);

// The C source of the kernel: a prelude of inline helpers and one function named `name`.
// Throws std::invalid_argument naming the node when an op or dtype has no C rendering.
std::string render_c(const std::string& name, const UOp& sink, const std::vector<Statement>& statements);

}  // namespace doorbell
