// The optimizer's GPU heuristics (tinygrad hand_coded_optimizations in codegen/opt/heuristic.py, GPU parts), then
// the launch dims: a scheduler kernel becomes the GpuKernel the renderers take.
//  - A kernel with few outputs (<= kMaxGroupedOutputs) and a long reduce (>= kMinGroupedReduce elements) groups its
//    reduces (compiler/gpu/group_reduce.h): 256 lanes per output when there are at most 64 outputs, else 64, never
//    more than the reduce is long (rounded down to a power of two) nor than the target's threads per block.
//    Otherwise a full reduction would run on one thread of the whole GPU.
//  - Any other kernel gets the upcasts and unrolls the CPU optimizer makes (compiler/optimizer.h): each thread
//    computes up to 4 adjacent outputs and unrolls its reduce loop, so loads are reused from registers (matmul) and
//    the loop overhead shrinks.
//  - lower_for_gpu (compiler/gpu/gpu_dims.h) then picks local and global sizes: up to 256 threads per block from the
//    innermost output axis out; a grouped kernel's block is its lanes.
// With optimize off (NOOPT=1) only the launch dims are chosen.
#pragma once
#include "compiler/gpu/gpu_dims.h"

namespace doorbell {

inline constexpr int64_t kMaxGroupedOutputs = 2048;  // tinygrad's GROUPTOP threshold
inline constexpr int64_t kMinGroupedReduce = 32;

struct GpuOptimizeOptions {
  bool optimize = true;
  GpuDimsOptions dims;
};

// The lanes optimize_for_gpu would group `sink`'s reduces over, or 0 when it would not group them.
int64_t group_lanes_for(const UOp& sink, const GpuTarget& target);

// Throws std::invalid_argument (from lower_for_gpu) when the kernel cannot be launched within the target's limits.
GpuKernel optimize_for_gpu(const UOp& sink, const GpuTarget& target, const GpuOptimizeOptions& options = {});

}  // namespace doorbell
