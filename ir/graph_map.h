// GraphMap: the one traversal every imperative pass shares (expand, range splits, vectorize, substitute, the
// scheduler's and the frontend's graph updates): nodes in toposort order, sources before users, and for each node a
// function that sees the node and its sources as already rebuilt and returns what the node becomes. Iterative, so a
// chain of millions of nodes is fine. Where a pass is a set of local rules, it is a PatternMatcher run by
// graph_rewrite instead (ir/graph_rewrite.h); GraphMap is for passes that need the whole rebuilt context.
//
// Named like graph_rewrite: at DEBUG=5 a map prints its name, the nodes it visited and how many it changed (a helper
// called many times inside a pass, such as substitute, has an empty name and stays quiet).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "ir/node_map.h"
#include "ir/uop.h"

namespace doorbell {

class GraphMap {
 public:
  // What a node becomes, given its sources as rebuilt; `rebuilt(node, src)` keeps the node when nothing changed. A
  // null UOp stops the map: operator() then returns a null UOp (a pass that finds it cannot apply, like vectorize).
  using Fn = std::function<UOp(const UOp& node, std::vector<UOp>& src)>;
  // Whether source `i` of `node` is visited (false: kept as it is, e.g. a CALL's body).
  using Descend = std::function<bool(const UOp& node, size_t i)>;

  GraphMap(std::string name, Fn fn, Descend descend = {});
  ~GraphMap();
  GraphMap(const GraphMap&) = delete;
  GraphMap& operator=(const GraphMap&) = delete;

  // `root` mapped. Several roots share one memo: a node reached from two of them is mapped once.
  UOp operator()(const UOp& root);
  // Makes `from` map to `to` without calling the function (and without visiting below `from`).
  void set(const UOp& from, UOp to) { set(from.get(), std::move(to)); }
  void set(const UOpNode* from, UOp to);
  // What `node` was mapped to, or nullptr when it was not visited.
  const UOp* find(const UOp& node);

 private:
  std::string name_;
  Fn fn_;
  Descend descend_;
  NodeMap<UOp> done_;
  size_t visited_ = 0, changed_ = 0;
};

// `node` with sources `src`: the node itself when they are the same nodes, else rebuilt (ir/graph_rewrite.h
// rebuild_with_src: ops whose dtype follows their sources re-derive it).
UOp rebuilt(const UOp& node, std::vector<UOp> src);

// One root through a GraphMap.
UOp map_graph(const UOp& root, std::string name, GraphMap::Fn fn);

}  // namespace doorbell
