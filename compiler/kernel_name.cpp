#include "compiler/kernel_name.h"

#include <vector>

namespace doorbell {
namespace {

std::string size_of(const UOp& range) {
  const UOp& end = range.src(0);
  if (end.op() == Ops::CONST) return std::to_string(std::get<int64_t>(end.const_value()));
  if (end.op() == Ops::PARAM) return end.arg_as<ParamArg>().name;
  return "n";  // an expression: the name stays a C identifier
}

void add_range(std::vector<UOp>& out, const UOp& r) {
  for (const UOp& x : out)
    if (x == r) return;
  out.push_back(r);
}

}  // namespace

std::string kernel_name(const UOp& sink, const LoweredKernel& lowered, bool gpu) {
  std::vector<UOp> loops, reduces;
  for (const UOp& u : sink.toposort()) {
    if (u.op() == Ops::END)
      for (size_t i = 1; i < u.src().size(); i++) add_range(loops, u.src(i));
    if (u.op() == Ops::REDUCE)
      for (size_t i = 1; i < u.src().size(); i++) add_range(reduces, u.src(i));
  }
  std::string name = reduces.empty() ? "E" : "r";
  if (gpu) {
    for (int64_t g : lowered.global_size)
      if (g > 1) name += "_" + std::to_string(g);
    for (int64_t l : lowered.local_size)
      if (l > 1) name += "_" + std::to_string(l);
  } else {
    for (const UOp& r : loops) name += "_" + size_of(r);
  }
  for (const UOp& r : reduces) name += "_" + size_of(r);
  return name;
}

}  // namespace doorbell
