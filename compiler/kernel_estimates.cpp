#include "compiler/kernel_estimates.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace doorbell {
namespace {

int64_t range_size(const UOp& range) {
  const UOp& end = range.src(0);
  if (!end.has_bounds()) return 1;
  return static_cast<int64_t>(std::max<__int128>(0, std::min<__int128>(end.vmax(), INT64_MAX)));
}

int64_t saturating_mul(int64_t a, int64_t b) {
  __int128 p = static_cast<__int128>(a) * b;
  return p > INT64_MAX ? INT64_MAX : static_cast<int64_t>(p);
}

class Estimator {
 public:
  explicit Estimator(const UOp& sink) {
    std::vector<UOp> nodes = sink.toposort();
    for (const UOp& u : nodes)
      if (u.op() == Ops::RANGE) ranges_.push_back(u);
    if (ranges_.size() > 64) throw std::invalid_argument("estimate_kernel: more than 64 ranges");
    for (const UOp& u : nodes) visit(u);
    for (const UOp& out : sink.src()) {  // the outermost loops of the first output nest are what cores split
      if (out.op() != Ops::END) continue;
      for (size_t i = 1; i < out.src().size(); i++)
        if (out.src(i).op() == Ops::RANGE && out.src(i).arg_as<RangeArg>().type == AxisType::LOOP)
          est_.global_size = saturating_mul(est_.global_size, range_size(out.src(i)));
      break;
    }
    for (auto& [node, acc] : accesses_) {
      const UOp& param = acc.param;
      int64_t elements = param.arg_as<ParamArg>().vmax + 1;
      int64_t size = param.dtype().itemsize();
      est_.bytes_read += saturating_mul(std::min(acc.loaded, elements), size);
      est_.bytes_written += saturating_mul(std::min(acc.stored, elements), size);
    }
  }
  KernelEstimates result() const { return est_; }

 private:
  struct Access {
    UOp param;
    int64_t loaded = 0, stored = 0;
  };

  uint64_t bit(const UOp& range) const {
    auto it = std::find(ranges_.begin(), ranges_.end(), range);
    return uint64_t{1} << (it - ranges_.begin());
  }

  // How often a value with these ranges is computed: the product of their sizes.
  int64_t count(uint64_t mask) const {
    int64_t n = 1;
    for (size_t i = 0; i < ranges_.size(); i++)
      if (mask >> i & 1) n = saturating_mul(n, range_size(ranges_[i]));
    return n;
  }

  void visit(const UOp& u) {
    uint64_t m = 0;
    for (const UOp& s : u.src()) m |= mask_[s.get()];
    if (u.op() == Ops::RANGE) m |= bit(u);
    if (u.op() == Ops::REDUCE) {
      uint64_t over = m;  // the combine runs once per iteration of the reduced ranges
      for (size_t i = 1; i < u.src().size(); i++) over |= bit(u.src(i));
      est_.ops += count(over);
      for (size_t i = 1; i < u.src().size(); i++) m &= ~bit(u.src(i));
    } else if (u.op() == Ops::LOAD || u.op() == Ops::STORE) {
      const UOp& index = u.src(0);
      Access& a = accesses_[index.src(0).get()];
      a.param = index.src(0);
      (u.op() == Ops::LOAD ? a.loaded : a.stored) += count(mask_[index.get()]);
    } else if (group::Elementwise.contains(u.op()) && u.op() != Ops::CAST && u.op() != Ops::BITCAST &&
               u.dtype().scalar_type != ScalarType::WeakInt && !all_index(u)) {
      est_.ops += saturating_mul(count(m), u.op() == Ops::MULACC ? 2 : 1);
    }
    mask_[u.get()] = m;
  }

  // Comparisons and selections of index values are address and validity math, not work on data.
  static bool all_index(const UOp& u) {
    for (const UOp& s : u.src())
      if (s.dtype().scalar_type != ScalarType::WeakInt && s.dtype().scalar_type != ScalarType::Bool) return false;
    return !u.src().empty();
  }

  std::vector<UOp> ranges_;
  std::unordered_map<const UOpNode*, uint64_t> mask_;
  std::unordered_map<const UOpNode*, Access> accesses_;
  KernelEstimates est_;
};

}  // namespace

KernelEstimates estimate_kernel(const UOp& kernel) {
  if (!kernel) throw std::invalid_argument("estimate_kernel: expected a kernel SINK or CALL, got a null UOp");
  UOp sink = kernel.op() == Ops::CALL && !kernel.src().empty() ? kernel.src(0) : kernel;
  if (sink.op() == Ops::PROGRAM) sink = sink.src(0);
  if (sink.op() != Ops::SINK) throw std::invalid_argument("estimate_kernel: expected a kernel SINK or CALL");
  return Estimator(sink).result();
}

}  // namespace doorbell
