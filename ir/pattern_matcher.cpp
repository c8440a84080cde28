#include "ir/pattern_matcher.h"

namespace doorbell {

Rule::Rule(UPat p, RuleFn f, std::string n, std::source_location loc) : pat(std::move(p)), fn(std::move(f)), name(std::move(n)) {
  if (name.empty()) {
    std::string file = loc.file_name();
    size_t slash = file.find_last_of('/');
    name = (slash == std::string::npos ? file : file.substr(slash + 1)) + ":" + std::to_string(loc.line());
  }
}

PatternMatcher::PatternMatcher(std::vector<Rule> rules) : rules_(std::move(rules)) { index(); }

PatternMatcher PatternMatcher::operator+(const PatternMatcher& other) const {
  std::vector<Rule> all = rules_;
  all.insert(all.end(), other.rules_.begin(), other.rules_.end());
  return PatternMatcher(std::move(all));
}

void PatternMatcher::index() {
  for (auto& v : by_op_) v.clear();
  for (size_t i = 0; i < rules_.size(); i++) {
    const UPat& p = rules_[i].pat;
    // An OR pattern at the top is indexed under each alternative's ops.
    std::vector<const UPat*> tops;
    if (!p.alternatives().empty()) for (const UPat& a : p.alternatives()) tops.push_back(&a);
    else tops.push_back(&p);
    OpSet ops;
    bool any_op = false;
    OpSet required = tops.size() == 1 ? tops[0]->required_src_ops() : OpSet{};
    for (const UPat* t : tops) {
      if (t->op_set().empty()) any_op = true;
      ops = ops | t->op_set();
    }
    for (int op = 0; op < kOpCount; op++)
      if (any_op || ops.contains(static_cast<Ops>(op))) by_op_[op].push_back({i, required});
  }
}

UOp PatternMatcher::rewrite(const UOp& u, void* ctx, size_t* fired) const {
  const auto& entries = by_op_[static_cast<int>(u.op())];
  if (entries.empty()) return UOp();
  OpSet src_ops;
  for (const UOp& s : u.src()) src_ops.add(s.op());
  Bindings b;
  UOp result;
  for (const Entry& e : entries) {
    if (!e.required.subset_of(src_ops)) continue;
    const Rule& r = rules_[e.rule];
    auto on_match = [&](Bindings& bound) {
      UOp out = r.fn(Match(bound, u, ctx));
      if (!out || out == u) return false;
      result = std::move(out);
      return true;
    };
    if (r.pat.match(u, b, MatchCont(on_match))) {
      if (fired) *fired = e.rule;
      return result;
    }
  }
  return UOp();
}

}  // namespace doorbell
