// The symbolic fuzzer: random integer expressions over 1-3 bounded variables; simplify(e) must equal e on every
// assignment where e is defined (all of them when few, else corners plus a random sample), every node must lie
// within its bounds, and simplify must be idempotent. A failure prints a minimized expression.
// CI runs SYMBOLIC_FUZZ_COUNT=20000 (the default); a long run by hand: SYMBOLIC_FUZZ_COUNT=1000000
// SYMBOLIC_FUZZ_ASSIGNMENTS=4096 build/release/tests/ir/test_ir_fuzz (SYMBOLIC_FUZZ_SEED picks another stream).
#include <gtest/gtest.h>

#include <cstdlib>

#include "expr_gen.h"
#include "ir/printer.h"
#include "ir/symbolic.h"

namespace doorbell::fuzz {
namespace {

uint64_t env_or(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v ? std::strtoull(v, nullptr, 10) : fallback;
}

// Everything wrong with simplify(e): a wrong value, a bound that does not hold, or a second simplify that changes it.
std::string failure(const UOp& e, size_t max_assignments, std::mt19937_64& rng) {
  UOp s;
  try {
    s = simplify(e);
  } catch (const std::exception& ex) {
    return std::string("simplify threw: ") + ex.what();
  }
  if (!(simplify(s) == s)) return "not idempotent: simplify gives " + render_expr(s) + ", then " + render_expr(simplify(s));
  for (const Assignment& a : assignments(variables_of(e), max_assignments, rng))
    if (std::string err = check(e, s, a); !err.empty()) return err + " at " + describe(a) + "; simplified: " + render_expr(s);
  return "";
}

TEST(SymbolicFuzz, SimplifiedExpressionsEqualOriginalsOnEveryAssignment) {
  const uint64_t count = env_or("SYMBOLIC_FUZZ_COUNT", 20000);
  const uint64_t seed = env_or("SYMBOLIC_FUZZ_SEED", 1);
  const size_t max_assignments = env_or("SYMBOLIC_FUZZ_ASSIGNMENTS", 96);
  ExprGen gen(seed);
  std::mt19937_64 rng(seed * 7919 + 1);
  size_t failures = 0, simplified_smaller = 0;
  for (uint64_t i = 0; i < count && failures < 5; i++) {
    UOp e = gen.next();
    std::string err = failure(e, max_assignments, rng);
    if (err.empty()) {
      simplified_smaller += simplify(e).toposort().size() < e.toposort().size();
      continue;
    }
    failures++;
    UOp small = minimize(e, [&](const UOp& c) { return !failure(c, max_assignments, rng).empty(); });
    ADD_FAILURE() << "expression " << i << " (seed " << seed << "): " << render_expr(e) << "\n  minimized: " << render_expr(small)
                  << "\n  dtype " << small.dtype().name() << ": " << failure(small, max_assignments, rng);
  }
  // The simplifier must do real work on this corpus, not return its input.
  EXPECT_GT(simplified_smaller, count / 4) << "simplify shrank only " << simplified_smaller << " of " << count << " expressions";
  std::printf("symbolic fuzz: %llu expressions, %zu simplified to fewer nodes\n", static_cast<unsigned long long>(count), simplified_smaller);
}

}  // namespace
}  // namespace doorbell::fuzz
