// vectorize_kernel: lowers the VECTOR range of an expanded CPU kernel (compiler/cpu/cpu_optimizer.h) to vector values
// (DType lanes = the range's size) that the C renderer emits as clang vector types, so LLVM produces AVX2 / AVX-512
// code whatever its own vectorizers would have made of scalar lanes (its SLP vectorizer leaves a 4x32 register tile
// of a matmul scalar: 11 GFLOP/s against 190 with vectors, measured on this machine's 2 cores).
//  - INDEX(b, base + v) is a contiguous access at base: a LOAD of it is a vector load, a STORE to it a vector store
//    (a scalar value stored there is broadcast first);
//  - an ALU op with a lane-dependent operand is a vector op; its scalar operands are broadcast;
//  - a REDUCE of a lane-dependent value over other ranges keeps one vector accumulator; a REDUCE over v becomes a
//    REDUCE with no ranges of a vector: its lanes folded left to right into a scalar accumulator, so the order of a
//    float sum is the one the IR spells out (lane l holds the terms r_o * V + l);
//  - v leaves every END.
// Vectors hold 32-bit elements (float32, int32, uint32; bool as a 32-bit mask). nullopt when a lane-dependent value
// cannot be such a vector: a gather or scatter (an index not base + v), a gated access, another element type,
// integer division, a transcendental left in double, or the lane index used as a value; the caller then replicates
// the lanes as scalars instead (devectorize_ranges, then compiler/expander.h).
#pragma once
#include <optional>
#include <string>

#include "ir/uop.h"

namespace doorbell {

// `why`, when given, receives the node that could not be a vector (for DEBUG=3).
std::optional<UOp> vectorize_kernel(const UOp& sink, std::string* why = nullptr);

// Every VECTOR range becomes an UPCAST range of the same size: the expander then replicates its lanes.
UOp devectorize_ranges(const UOp& sink);

}  // namespace doorbell
