// graph_rewrite: apply a PatternMatcher over a whole graph (tinygrad uop/ops.py RewriteContext).
//  - Default: sources first, then the node, each node rewritten to a fixed point (a result is itself rewritten).
//  - BottomUp: the node first, to a fixed point, then its sources; a rule throws BottomUpGate to stop descent.
//  - Walk: one pass, sources first, each node rewritten once; results are not revisited.
// An endless rewrite (a rule re-creating the node it rewrites, or rewrites without end) throws RewriteError
// naming the rule. Iterative: graphs of millions of nodes in a chain are fine.
#pragma once
#include <unordered_map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ir/pattern_matcher.h"

namespace doorbell {

enum class RewriteMode { Default, BottomUp, Walk };

// Thrown by a rule in BottomUp mode: keep this node as it is and do not rewrite its sources.
struct BottomUpGate {};

class RewriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RewriteStats {
  size_t nodes_visited = 0;
  size_t rewrites = 0;
  std::vector<std::pair<std::string, size_t>> rule_hits;  // rules that fired, most hits first
};

struct RewriteOptions {
  RewriteMode mode = RewriteMode::Default;
  void* ctx = nullptr;          // passed to rules as Match::ctx
  std::string name;             // shown in DEBUG output and errors
  bool enter_calls = false;     // descend into the bodies (src[0]) of CALL and FUNCTION
  RewriteStats* stats = nullptr;
};

UOp graph_rewrite(const UOp& root, const PatternMatcher& pm, const RewriteOptions& opts = {});

// Rebuilds u with new sources; ops whose dtype follows their sources re-derive it.
UOp rebuild_with_src(const UOp& u, std::vector<UOp> src);

// `root` with every node that is a key of `replace` swapped for its value, everywhere below it (the values are
// not visited). Untouched parts stay the same nodes, so copies share what does not depend on the replaced nodes.
UOp substitute(const UOp& root, const std::unordered_map<const UOpNode*, UOp>& replace);

}  // namespace doorbell
