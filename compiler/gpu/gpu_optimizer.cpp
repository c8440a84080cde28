#include "compiler/gpu/gpu_optimizer.h"

#include <algorithm>

#include "compiler/expander.h"
#include "compiler/gpu/group_reduce.h"
#include "compiler/optimizer.h"
#include "compiler/pipeline.h"

namespace doorbell {
namespace {

// The product of the constant sizes of `ranges`, or -1 when one is symbolic.
int64_t product_of_sizes(const std::vector<UOp>& ranges) {
  int64_t n = 1;
  for (const UOp& r : ranges) {
    const UOp& end = r.src(0);
    if (end.op() != Ops::CONST || !std::holds_alternative<int64_t>(end.const_value())) return -1;
    n *= std::get<int64_t>(end.const_value());
  }
  return n;
}

// The LOOP ranges the first output's END closes: every output of a scheduler kernel has the same.
std::vector<UOp> output_loops(const UOp& sink) {
  std::vector<UOp> loops;
  if (sink.src().empty() || sink.src(0).op() != Ops::END) return loops;
  const UOp& end = sink.src(0);
  for (size_t i = 1; i < end.src().size(); i++)
    if (end.src(i).op() == Ops::RANGE && end.src(i).arg_as<RangeArg>().type == AxisType::LOOP) loops.push_back(end.src(i));
  return loops;
}

}  // namespace

int64_t group_lanes_for(const UOp& sink, const GpuTarget& target) {
  int64_t outputs = product_of_sizes(output_loops(sink));
  if (outputs < 0 || outputs > kMaxGroupedOutputs) return 0;
  int64_t longest = 0;
  for (const UOp& r : top_level_reduces(sink)) {
    std::vector<UOp> ranges(r.src().begin() + 1, r.src().end());
    longest = std::max(longest, product_of_sizes(ranges));
  }
  if (longest < kMinGroupedReduce) return 0;
  int64_t lanes = std::min<int64_t>({outputs <= 64 ? 256 : 64, target.max_threads_per_block, target.max_local[0]});
  while (lanes > longest) lanes /= 2;
  return lanes;
}

GpuKernel optimize_for_gpu(const UOp& sink, const GpuTarget& target, const GpuOptimizeOptions& options) {
  return gpu_pipeline(sink, target, {.optimize = options.optimize, .dims = options.dims, .late_lowering = false});
}

}  // namespace doorbell
