#include "ir/graph_map.h"

#include <cstdio>

#include "ir/debug.h"
#include "ir/graph_rewrite.h"

namespace doorbell {

GraphMap::GraphMap(std::string name, Fn fn, Descend descend) : name_(std::move(name)), fn_(std::move(fn)), descend_(std::move(descend)) {}

GraphMap::~GraphMap() {
  if (debug_level() >= 5 && visited_ != 0 && !name_.empty())
    std::fprintf(stderr, "%s: %zu nodes, %zu changed\n", name_.c_str(), visited_, changed_);
}

void GraphMap::set(const UOpNode* from, UOp to) { done_.get(from) = std::move(to); }

const UOp* GraphMap::find(const UOp& node) { return done_.find(node.get()); }

UOp GraphMap::operator()(const UOp& root) {
  if (const UOp* d = done_.find(root.get())) return *d;
  // An explicit stack: a node is finished once every source it descends into is.
  std::vector<std::pair<const UOp*, size_t>> stack{{&root, 0}};
  std::vector<UOp> src;
  while (!stack.empty()) {
    auto& [u, i] = stack.back();
    const std::vector<UOp>& s = u->src();
    while (i < s.size() && ((descend_ && !descend_(*u, i)) || done_.find(s[i].get()))) i++;
    if (i < s.size()) {
      const UOp* next = &s[i++];
      stack.push_back({next, 0});
      continue;
    }
    src.clear();
    src.reserve(s.size());
    for (size_t k = 0; k < s.size(); k++) src.push_back(descend_ && !descend_(*u, k) ? s[k] : *done_.find(s[k].get()));
    UOp out = fn_(*u, src);
    if (!out) return UOp();
    visited_++;
    changed_ += !(out == *u);
    done_.get(u->get()) = std::move(out);
    stack.pop_back();
  }
  return *done_.find(root.get());
}

UOp rebuilt(const UOp& node, std::vector<UOp> src) {
  if (src.size() != node.src().size()) return rebuild_with_src(node, std::move(src));
  for (size_t i = 0; i < src.size(); i++)
    if (!(src[i] == node.src(i))) return rebuild_with_src(node, std::move(src));
  return node;
}

UOp map_graph(const UOp& root, std::string name, GraphMap::Fn fn) { return GraphMap(std::move(name), std::move(fn))(root); }

}  // namespace doorbell
