// What a kernel does, counted from its SINK before any optimization (tinygrad's Estimates): the ALU operations
// on data, the bytes it moves to and from each buffer, and the iterations of its outermost (core-split) loops.
// DEBUG=2 divides them by the kernel-only time for GFLOP/s and GB/s.
#pragma once
#include <cstdint>

#include "ir/uop.h"

namespace doorbell {

struct KernelEstimates {
  int64_t ops = 0;          // ALU ops on data values (index arithmetic excluded), each counted per execution
  int64_t bytes_read = 0;   // per buffer: min(elements loaded, its size) * itemsize, summed
  int64_t bytes_written = 0;
  int64_t global_size = 1;  // iterations of the outermost LOOP ranges: the work split across cores
};

// `kernel`: a kernel SINK or a CALL of one. Ranges of symbolic size count with their largest value.
KernelEstimates estimate_kernel(const UOp& kernel);

}  // namespace doorbell
