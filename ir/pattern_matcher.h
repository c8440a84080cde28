// PatternMatcher: rules (pattern, function) indexed by op. For a node, the rules of its op are tried in order;
// the first whose function returns a UOp other than the node itself wins (tinygrad uop/ops.py PatternMatcher).
#pragma once
#include <array>
#include <functional>
#include <source_location>
#include <string>
#include <vector>

#include "ir/upat.h"

namespace doorbell {

// What a rule function sees: the bindings, the matched node and the caller's context.
class Match {
 public:
  Match(const Bindings& b, const UOp& root, void* ctx) : b_(b), root_(root), ctx_(ctx) {}
  const UOp& operator[](std::string_view name) const { return b_[name]; }
  const UOp* find(std::string_view name) const { return b_.find(name); }
  const UOp& root() const { return root_; }
  template <class T> T& ctx() const { return *static_cast<T*>(ctx_); }
  void* raw_ctx() const { return ctx_; }

 private:
  const Bindings& b_;
  const UOp& root_;
  void* ctx_;
};

// A rule returns the replacement, or a null UOp (or the node itself) for "no rewrite".
using RuleFn = std::function<UOp(const Match&)>;

struct Rule {
  UPat pat;
  RuleFn fn;
  std::string name;  // defaults to file:line of the rule

  Rule(UPat p, RuleFn f, std::string n = "", std::source_location loc = std::source_location::current());
};

class PatternMatcher {
 public:
  PatternMatcher() = default;
  PatternMatcher(std::vector<Rule> rules);  // NOLINT: a list of rules is a matcher
  PatternMatcher operator+(const PatternMatcher& other) const;

  // The first rewrite of u by a rule of u's op, or a null UOp. `fired` receives the winning rule's index.
  UOp rewrite(const UOp& u, void* ctx = nullptr, size_t* fired = nullptr) const;

  const std::vector<Rule>& rules() const { return rules_; }

 private:
  void index();
  struct Entry {
    size_t rule;
    OpSet required;  // ops the node's sources must include
  };
  std::vector<Rule> rules_;
  std::array<std::vector<Entry>, kOpCount> by_op_;
};

}  // namespace doorbell
