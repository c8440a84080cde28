// GPU launch dimensions (tinygrad codegen/gpudims.py): a kernel's outermost LOOP ranges become
// thread indices. Each range r of size S is mapped to one hardware dimension d (the innermost range to x, so
// consecutive threads touch consecutive elements) as r = gidx_d * L_d + lidx_d, where gidx_d (block index) and
// lidx_d (thread index in the block) are SPECIAL nodes, L_d the local size and ceil(S / L_d) the global size.
// More than 3 ranges are merged into the outermost dimension (z) first. Where L_d does not divide S, the extra
// threads compute with r clamped to S - 1 (every load stays in bounds) and their stores are gated off.
// REDUCE ranges stay loops inside a thread. A grouped kernel (compiler/gpu/group_reduce.h) has a GROUP_REDUCE lane
// range instead: its lanes are the block's x threads (lidx0), every output loop goes to the blocks (gidx, one output
// per block), and every global store is gated to lane 0.
//
// The result is the kernel form the GPU renderers (PTX, LLVM IR) take:
//  - SPECIAL(CONST bound), dtype weakint, arg "gidx0".."gidx2" / "lidx0".."lidx2", value in [0, bound);
//  - outputs are STOREs (or GROUPs of STOREs) with no loop around them, gated by INDEX validity where needed.
#pragma once
#include <array>
#include <cstdint>

#include "compiler/gpu/gpu_target.h"
#include "compiler/target.h"
#include "ir/uop.h"

namespace doorbell {

// The kernel with thread indices instead of output loops; global_size: blocks (NV) or work-groups (AMD) per dimension,
// local_size: threads per block per dimension.
using GpuKernel = LoweredKernel;

struct GpuDimsOptions {
  int64_t max_threads = 256;  // threads per block the lowering aims for (the target's limit caps it)
};

// Throws std::invalid_argument naming the kernel part when the kernel cannot be launched within the target's limits
// or is not in the scheduler's form (outputs over different loops, loops of symbolic size).
GpuKernel lower_for_gpu(const UOp& sink, const GpuTarget& target, const GpuDimsOptions& options = {});

}  // namespace doorbell
