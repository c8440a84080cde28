#include "scheduler/create_schedule.h"

#include <deque>
#include <set>
#include <stdexcept>

#include "ir/printer.h"

namespace doorbell {
namespace {

std::string describe(const Kernel& k, int i) {
  std::string s = "kernel " + std::to_string(i) + (k.is_assign ? " (assign to " : " (writes ");
  const UOp& out = k.args[0];
  s += out.dtype().name() + " buffer";
  if (out.op() == Ops::BUFFER && out.src(0).op() == Ops::UNIQUE) s += " #" + std::to_string(out.src(0).arg_as<int64_t>());
  return s + ")";
}

}  // namespace

std::vector<int> order_kernels(const std::vector<Kernel>& ks) {
  const int n = static_cast<int>(ks.size());
  std::vector<std::set<int>> out(n);
  std::vector<int> indegree(n, 0);
  auto edge = [&](int from, int to) {
    if (from == to || from < 0) return;
    if (out[from].insert(to).second) indegree[to]++;
  };
  for (int k = 0; k < n; k++) {
    for (const StateRead& r : ks[k].reads) {
      edge(r.producer, k);  // read after write
      for (int j = 0; j < n; j++)  // write after read: whoever replaces the state k reads waits for k
        if (j != k && ks[j].is_assign && ks[j].args[0] == r.storage && ks[j].prev_state == r.producer) edge(k, j);
    }
    if (ks[k].is_assign) edge(ks[k].prev_state, k);
  }
  std::deque<int> ready;
  for (int k = 0; k < n; k++)
    if (indegree[k] == 0) ready.push_back(k);
  std::vector<int> order;
  while (!ready.empty()) {
    int k = ready.front();
    ready.pop_front();
    order.push_back(k);
    for (int j : out[k])
      if (--indegree[j] == 0) ready.push_back(j);
  }
  if (static_cast<int>(order.size()) != n) {
    std::string stuck;
    for (int k = 0; k < n; k++)
      if (indegree[k] > 0) stuck += (stuck.empty() ? "" : ", ") + describe(ks[k], k);
    throw std::runtime_error("cycle detected in assign graph: " + stuck + " each wait for another; store one value with contiguous() first");
  }
  return order;
}

}  // namespace doorbell
