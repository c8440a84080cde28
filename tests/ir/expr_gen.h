// Random integer expressions for the symbolic fuzzer, a reference evaluator, and a minimizer for failures.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/uop.h"

namespace doorbell::fuzz {

struct Assignment {
  std::vector<UOp> vars;
  std::vector<int64_t> values;
};

// The values of every node of `root` under `a`, computed with exec_alu (the target's wraparound).
// A node is nullopt where it is undefined (division by zero, a shift out of range) or depends on such a node.
std::unordered_map<const UOpNode*, std::optional<__int128>> evaluate(const UOp& root, const Assignment& a);

// The variables (PARAM ALU) reachable from root, in a stable order.
std::vector<UOp> variables_of(const UOp& root);

class ExprGen {
 public:
  explicit ExprGen(uint64_t seed) : rng_(seed) {}
  UOp next();  // an expression over 1-3 fresh bounded variables of one integer dtype

 private:
  UOp gen(int depth);
  UOp leaf();
  UOp constant();
  UOp condition(int depth);
  int64_t pick(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

  std::mt19937_64 rng_;
  DType dt_;
  std::vector<UOp> vars_;
};

// Assignments to check: all of them when there are at most `limit`, else the corners plus random ones.
std::vector<Assignment> assignments(const std::vector<UOp>& vars, size_t limit, std::mt19937_64& rng);

// What is wrong with simplify(expr) under `a`, or "" when nothing is. Checks: the simplified value equals the
// original wherever the original is defined; every node of both graphs lies within its [vmin, vmax].
std::string check(const UOp& expr, const UOp& simplified, const Assignment& a);

// Shrinks a failing expression while `fails` still holds: replaces nodes by their sources or small constants.
UOp minimize(const UOp& expr, const std::function<bool(const UOp&)>& fails);

std::string describe(const Assignment& a);

}  // namespace doorbell::fuzz
