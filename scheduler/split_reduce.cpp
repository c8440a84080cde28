#include "scheduler/split_reduce.h"

#include <algorithm>

#include "scheduler/movement_uops.h"

namespace doorbell {
namespace {

constexpr int64_t kSplitReduceRatio = 32768;            // tinygrad REDUCEOP_SPLIT_THRESHOLD
constexpr int64_t kSplitMaxOutputs = int64_t{1} << 22;  // tinygrad 2**REDUCEOP_SPLIT_SIZE

UOp reduce_uop(const UOp& x, Ops op, IntTuple axes) { return UOp::make(Ops::REDUCE, x.dtype(), {x}, ReduceArg{op, std::move(axes)}); }

// d for an axis of size n: from 256 (fewer when the outputs are many) down to 8, preferring parts of a multiple of
// 64 elements, then of 16: a CPU kernel then walks each part in whole vectors, unrolled (1e8 = 256 x 390625 would
// leave odd parts in scalar lanes; 250 x 400000 does not). 0: none divides n.
int64_t pick_divisor(int64_t n, int64_t outputs) {
  for (int64_t multiple : {64, 16, 1})
    for (int64_t d = std::min<int64_t>(256, kSplitMaxOutputs / outputs); d >= 8; d--)
      if (n % d == 0 && (n / d) % multiple == 0) return d;
  return 0;
}

UOp split_reduceop(const Match& m) {
  const UOp& r = m.root();
  const UOp& x = r.src(0);
  const IntTuple& axes = r.arg_as<ReduceArg>().axes;
  const IntTuple& shape = *x.shape();
  int64_t in = 1, reduced = 1;
  for (int64_t s : shape) in *= s;
  for (int64_t a : axes) reduced *= shape[a];
  int64_t outputs = reduced == 0 ? 0 : in / reduced;
  if (reduced < kSplitReduceRatio || outputs == 0 || outputs > kSplitMaxOutputs / 8) return UOp();
  for (int64_t a : axes) {
    int64_t n = shape[a], d = pick_divisor(n, outputs);
    if (d == 0) continue;
    IntTuple split = shape;
    split[a] = n / d;
    split.insert(split.begin() + a, d);
    IntTuple order;
    for (int64_t i = 0; i < static_cast<int64_t>(split.size()); i++)
      if (i != a) order.push_back(i);
    order.push_back(a);  // the d parts last: the partial results of one output lie side by side
    // after the permute, axis a holds the n / d part, so the reduced axes keep their numbers
    return reduce_in_two(r, permute_uop(reshape_uop(x, split), order), axes, static_cast<int64_t>(split.size()) - 1);
  }
  return UOp();
}

}  // namespace

UOp reduce_in_two(const UOp& reduce, const UOp& parts, IntTuple first, int64_t second) {
  Ops op = reduce.arg_as<ReduceArg>().op;
  UOp partial = reduce_uop(parts, op, std::move(first));
  partial = UOp::make(Ops::CONTIGUOUS, partial.dtype(), {partial});
  return reshape_uop(reduce_uop(partial, op, IntTuple{second}), *reduce.shape());
}

const PatternMatcher& fold_reshape_of_rewritten_reduce() {
  static const PatternMatcher pm({
      {UPat(Ops::RESHAPE, {UPat(Ops::RESHAPE, {UPat(Ops::REDUCE)})}),
       [](const Match& m) { return reshape_uop(m.root().src(0), *m.root().shape()); }, "RESHAPE(RESHAPE(REDUCE)) -> RESHAPE(REDUCE)"},
  });
  return pm;
}

const PatternMatcher& split_reduceop_rules() {
  static const PatternMatcher pm =
      PatternMatcher({{UPat(Ops::REDUCE), split_reduceop, "split_reduceop (tinygrad)"}}) + fold_reshape_of_rewritten_reduce();
  return pm;
}

}  // namespace doorbell
