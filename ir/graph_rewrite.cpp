#include "ir/graph_rewrite.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

#include "ir/debug.h"
#include "ir/graph_map.h"
#include "ir/node_map.h"
#include "ir/printer.h"

namespace doorbell {

UOp rebuild_with_src(const UOp& u, std::vector<UOp> src) {
  bool dtypes_changed = false;
  for (size_t i = 0; i < src.size() && i < u.src().size(); i++) dtypes_changed |= src[i].dtype() != u.src(i).dtype();
  Ops op = u.op();
  DType dt = u.dtype();
  if (dtypes_changed && op != Ops::CAST && op != Ops::BITCAST) {
    try {
      dt = UOp::derive_dtype(op, src, u.arg());  // ops whose dtype follows their sources
    } catch (const std::invalid_argument&) {
      // ops with a dtype of their own (CONST, BUFFER, PARAM, ...) keep it
    }
  }
  return UOp::make(op, dt, std::move(src), u.arg(), u.tag());
}

UOp substitute(const UOp& root, const std::unordered_map<const UOpNode*, UOp>& replace) {
  if (replace.empty()) return root;
  GraphMap map("", [](const UOp& u, std::vector<UOp>& src) { return rebuilt(u, std::move(src)); });
  for (const auto& [from, to] : replace) map.set(from, to);
  return map(root);
}

namespace {

// Many more rewrites than nodes means a rule keeps building new nodes: report it instead of running forever.
constexpr size_t kMinRewriteLimit = 1'000'000;
constexpr size_t kRewritesPerNode = 64;
// A rule that keeps building new nodes (k -> k+1) never meets a node twice, and it adds a node per rewrite, so the
// count above never catches it. Its rewrites nest: each result, or a new node inside it, is rewritten in turn on
// one path of the traversal. Real passes nest a handful; this many is taken as endless.
constexpr size_t kMaxRewriteDepth = 100'000;

class Rewriter {
 public:
  Rewriter(const PatternMatcher& pm, const RewriteOptions& opts) : pm_(pm), opts_(opts), hits_(pm.rules().size(), 0) {}

  UOp run(const UOp& root) {
    UOp out = opts_.mode == RewriteMode::Walk ? walk(root) : unified(root);
    report();
    return out;
  }

 private:
  struct Frame {
    UOp n;
    int stage;
    UOp next;
    size_t depth = 0;  // rewrites nested on the path from the root to this frame
  };

  bool skip_src(const UOp& n, size_t i) const {
    return i == 0 && !opts_.enter_calls && (n.op() == Ops::CALL || n.op() == Ops::FUNCTION);
  }

  // n's final rewrite; nullptr while n is unvisited or in progress.
  const UOp* done(const UOp& n) const {
    auto* e = const_cast<NodeMap<std::pair<UOp, UOp>>&>(replace_).find(n.get());
    return !e || !e->second ? nullptr : &e->second;
  }
  // Marks n in progress with an entry that has no result yet (one table, not two, for speed); false when n
  // already has an entry.
  bool start(const UOp& n) {
    bool inserted;
    auto& e = replace_.get(n.get(), &inserted);
    if (inserted) e.first = n;
    return inserted;
  }
  void finish(const UOp& n, UOp result) {
    auto& entry = replace_.get(n.get());
    entry.first = n;
    entry.second = std::move(result);
  }

  std::string label() const { return opts_.name.empty() ? "graph_rewrite" : "graph_rewrite '" + opts_.name + "'"; }

  UOp apply(const UOp& n) {
    size_t fired = 0;
    UOp r = pm_.rewrite(n, opts_.ctx, &fired);
    if (!r) return r;
    hits_[fired]++;
    last_rule_ = fired;
    if (++rewrites_ > std::max(kMinRewriteLimit, kRewritesPerNode * visited_)) {
      size_t top = std::max_element(hits_.begin(), hits_.end()) - hits_.begin();
      throw RewriteError(label() + ": endless rewrite: " + std::to_string(rewrites_) + " rewrites for " +
                         std::to_string(visited_) + " nodes; rule '" + pm_.rules()[top].name + "' fired " +
                         std::to_string(hits_[top]) + " times");
    }
    return r;
  }

  void check_depth(size_t depth) const {
    if (depth <= kMaxRewriteDepth) return;
    std::string rule = last_rule_ < pm_.rules().size() ? pm_.rules()[last_rule_].name : "?";
    throw RewriteError(label() + ": endless rewrite: more than " + std::to_string(kMaxRewriteDepth) +
                       " rewrites nested in one another, the last by rule '" + rule + "'");
  }

  static bool is_src_of(const UOp& s, const UOp& n) {
    for (const UOp& x : n.src())
      if (x == s) return true;
    return false;
  }

  [[noreturn]] void cycle(const UOp& n) const {
    std::string rule = last_rule_ < pm_.rules().size() ? pm_.rules()[last_rule_].name : "?";
    throw RewriteError(label() + ": endless rewrite: rule '" + rule + "' produced a graph that contains the node being rewritten, " +
                       print_node(n) + "; it would be rewritten again forever");
  }

  // Default (sources first) and BottomUp (node first) share one explicit-stack traversal.
  UOp unified(const UOp& root) {
    bool bottom_up = opts_.mode == RewriteMode::BottomUp;
    std::vector<Frame> stack;
    stack.push_back({root, 0, UOp()});
    while (!stack.empty()) {
      Frame f = std::move(stack.back());
      stack.pop_back();
      const UOp& n = f.n;
      if (f.stage == 0) {
        if (done(n)) continue;
        if (!start(n)) cycle(n);
        visited_++;
        UOp cur = n;
        size_t rewrites = 0;  // of n, in its bottom-up fixed-point loop
        if (bottom_up) {
          bool gated = false;
          std::unordered_set<const UOpNode*> chain;  // filled on the first rewrite: most nodes have none
          try {
            while (UOp r = apply(cur)) {
              if (chain.empty()) chain.insert(n.get());
              if (!chain.insert(r.get()).second) cycle(r);
              check_depth(f.depth + ++rewrites);
              cur = std::move(r);
            }
          } catch (const BottomUpGate&) {
            gated = true;
          }
          if (gated) { finish(n, cur); continue; }
        }
        const UOp base = cur;
        stack.push_back({n, 1, base, f.depth});
        for (size_t i = base.src().size(); i-- > 0;) {
          if (skip_src(base, i) || done(base.src(i))) continue;
          // n's own sources keep n's depth: a rule that rewrites every node of a deep graph is not nesting
          size_t depth = rewrites == 0 || is_src_of(base.src(i), n) ? f.depth : f.depth + rewrites;
          stack.push_back({base.src(i), 0, UOp(), depth});
        }
      } else if (f.stage == 1) {
        const UOp& base = f.next;
        std::vector<UOp> new_src;
        new_src.reserve(base.src().size());
        bool changed = false;
        for (size_t i = 0; i < base.src().size(); i++) {
          const UOp* r = skip_src(base, i) ? &base.src(i) : done(base.src(i));
          if (!r) cycle(base.src(i));
          changed |= !(*r == base.src(i));
          new_src.push_back(*r);
        }
        UOp next;
        size_t depth = f.depth;
        if (changed) {
          next = rebuild_with_src(base, std::move(new_src));
        } else if (bottom_up) {
          finish(n, base);
          continue;
        } else {
          next = apply(base);
          if (!next) { finish(n, base); continue; }
          check_depth(++depth);
        }
        stack.push_back({n, 2, next});
        stack.push_back({next, 0, UOp(), depth});
      } else {
        const UOp* r = done(f.next);
        if (!r) cycle(f.next);
        finish(n, *r);
      }
    }
    return *done(root);
  }

  UOp walk(const UOp& root) {
    std::vector<UOp> order;
    {  // post-order over the original graph, honoring enter_calls
      std::unordered_set<const UOpNode*> seen{root.get()};
      std::vector<std::pair<UOp, size_t>> stack{{root, 0}};
      while (!stack.empty()) {
        auto& [u, i] = stack.back();
        if (i < u.src().size()) {
          size_t k = i++;
          if (!skip_src(u, k) && seen.insert(u.src(k).get()).second) stack.push_back({u.src(k), 0});
        } else {
          order.push_back(u);
          stack.pop_back();
        }
      }
    }
    for (const UOp& n : order) {
      visited_++;
      std::vector<UOp> new_src;
      bool changed = false;
      for (size_t i = 0; i < n.src().size(); i++) {
        const UOp* r = skip_src(n, i) ? &n.src(i) : done(n.src(i));
        changed |= !(*r == n.src(i));
        new_src.push_back(*r);
      }
      UOp cur = changed ? rebuild_with_src(n, std::move(new_src)) : n;
      UOp r = apply(cur);
      finish(n, r ? r : cur);
    }
    return *done(root);
  }

  void report() {
    bool print = debug_level() >= 5;
    if (!print && !opts_.stats) return;
    RewriteStats s;
    s.nodes_visited = visited_;
    s.rewrites = rewrites_;
    for (size_t i = 0; i < hits_.size(); i++)
      if (hits_[i]) s.rule_hits.emplace_back(pm_.rules()[i].name, hits_[i]);
    std::stable_sort(s.rule_hits.begin(), s.rule_hits.end(), [](auto& a, auto& b) { return a.second > b.second; });
    if (print) {
      std::fprintf(stderr, "%s: %zu nodes, %zu rewrites\n", label().c_str(), s.nodes_visited, s.rewrites);
      for (auto& [name, count] : s.rule_hits) std::fprintf(stderr, "  %8zu  %s\n", count, name.c_str());
    }
    if (opts_.stats) *opts_.stats = std::move(s);
  }

  const PatternMatcher& pm_;
  const RewriteOptions& opts_;
  std::vector<size_t> hits_;
  size_t rewrites_ = 0, visited_ = 0, last_rule_ = SIZE_MAX;
  // original node -> (a handle keeping the original alive, its final rewrite, null while in progress)
  NodeMap<std::pair<UOp, UOp>> replace_;
};

}  // namespace

UOp graph_rewrite(const UOp& root, const PatternMatcher& pm, const RewriteOptions& opts) {
  if (!root) throw std::invalid_argument("graph_rewrite: the root is a null UOp");
  return Rewriter(pm, opts).run(root);
}

}  // namespace doorbell
