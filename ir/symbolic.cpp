#include "ir/symbolic.h"

#include <algorithm>
#include <numeric>

#include "ir/exec_alu.h"

namespace doorbell {
namespace {

using I = __int128;

bool is_scalar_int(const UOp& u) { return u.dtype().lanes == 1 && u.dtype().is_int(); }

// The node's value equals the exact mathematical result of its op on its sources' values: its bounds did not
// widen to the whole dtype, which is what they do when the op could wrap.
bool exact(const UOp& u) {
  return u.has_bounds() && !(u.vmin() == int_min(u.dtype()) && u.vmax() == int_max(u.dtype()));
}

std::optional<I> int_const(const UOp& u) {
  if (u.op() != Ops::CONST) return std::nullopt;
  if (const int64_t* v = std::get_if<int64_t>(&u.arg())) return int_value(u.dtype(), *v);
  return std::nullopt;
}

bool fits(DType dt, I v) { return v >= int_min(dt) && v <= int_max(dt); }
I ring(DType dt, I v) { return int_value(dt, wrap_int(dt, v)); }  // v modulo 2^bits, in the dtype's range
UOp iconst(DType dt, I v) { return UOp::const_(dt, wrap_int(dt, v)); }

I floor_div(I a, I b) {
  I q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}
I abs128(I v) { return v < 0 ? -v : v; }
// Products of uint64-sized values overflow 128 bits: modulo 2^128 (enough for ring()), or saturated for checks.
I mul_wrap(I a, I b) { return static_cast<I>(static_cast<unsigned __int128>(a) * static_cast<unsigned __int128>(b)); }
I mul_sat(I a, I b) {
  I r;
  if (!__builtin_mul_overflow(a, b, &r)) return r;
  return ((a < 0) != (b < 0)) ? -(static_cast<I>(1) << 126) : (static_cast<I>(1) << 126);
}
I gcd128(I a, I b) {
  a = abs128(a); b = abs128(b);
  while (b) { I t = a % b; a = b; b = t; }
  return a;
}

// ---- linear forms: sum of coef * factor plus a constant --------------------------------------------------

struct Term {
  UOp factor;
  I coef;
};
struct Linear {
  std::vector<Term> terms;
  I k = 0;
};

// Flattens ADD, SUB, NEG and MUL by a constant into `out`. In ring mode coefficients are taken modulo 2^bits
// (always valid); in exact mode it fails when a flattened node may have wrapped.
bool linearize(const UOp& root, bool exact_mode, Linear& out) {
  DType dt = root.dtype();
  std::vector<std::pair<const UOp*, I>> stack{{&root, 1}};
  while (!stack.empty()) {
    auto [u, scale] = stack.back();
    stack.pop_back();
    if (!exact_mode) scale = ring(dt, scale);
    Ops op = u->op();
    bool flat = op == Ops::ADD || op == Ops::SUB || op == Ops::NEG ||
                (op == Ops::MUL && (int_const(u->src(0)) || int_const(u->src(1))));
    if (auto c = int_const(*u)) {
      out.k += exact_mode ? mul_sat(scale, *c) : ring(dt, mul_wrap(scale, *c));
      continue;
    }
    if (!flat) { out.terms.push_back({*u, scale}); continue; }
    if (exact_mode && !exact(*u)) return false;
    switch (op) {
      case Ops::ADD: stack.push_back({&u->src(1), scale}); stack.push_back({&u->src(0), scale}); break;
      case Ops::SUB: stack.push_back({&u->src(1), -scale}); stack.push_back({&u->src(0), scale}); break;
      case Ops::NEG: stack.push_back({&u->src(0), -scale}); break;
      default: {
        bool c1 = int_const(u->src(1)).has_value();
        I c = *int_const(u->src(c1 ? 1 : 0));
        I next = exact_mode ? mul_sat(scale, c) : ring(dt, mul_wrap(scale, c));
        if (exact_mode && abs128(next) > (static_cast<I>(1) << 100)) return false;
        stack.push_back({&u->src(c1 ? 0 : 1), next});
      }
    }
    if (!exact_mode) out.k = ring(dt, out.k);
    else if (abs128(out.k) > (static_cast<I>(1) << 100)) return false;
  }
  if (!exact_mode) out.k = ring(dt, out.k);
  return true;
}

// Like factors merged (coefficients modulo 2^bits), zero terms dropped, ordered by content key.
std::vector<Term> merge_terms(DType dt, std::vector<Term> terms) {
  std::stable_sort(terms.begin(), terms.end(), [](const Term& a, const Term& b) { return a.factor.key() < b.factor.key(); });
  std::vector<Term> merged;
  for (size_t i = 0; i < terms.size();) {
    I coef = 0;
    size_t j = i;
    for (; j < terms.size() && terms[j].factor == terms[i].factor; j++) coef += terms[j].coef;
    coef = ring(dt, coef);
    if (coef != 0) merged.push_back({terms[i].factor, coef});
    i = j;
  }
  return merged;
}

// The canonical sum of merged terms and a constant (already modulo 2^bits): ((t0 + t1) + ...) + k.
UOp build_merged(DType dt, const std::vector<Term>& merged, I k) {
  UOp acc;
  for (const Term& t : merged) {
    UOp u = t.coef == 1 ? t.factor : UOp::make(Ops::MUL, dt, {t.factor, iconst(dt, t.coef)});
    acc = acc ? UOp::make(Ops::ADD, dt, {acc, u}) : u;
  }
  if (k != 0 || !acc) acc = acc ? UOp::make(Ops::ADD, dt, {acc, iconst(dt, k)}) : iconst(dt, k);
  return acc;
}

// Whether u is already build_merged(dt, merged, k), checked without building anything: most sums a pass meets
// are canonical, and rebuilding them only to find the same node is most of the simplifier's cost.
bool is_merged(const UOp& u, DType dt, const std::vector<Term>& merged, I k) {
  const UOp* cur = &u;
  if (merged.empty()) return int_const(*cur) == k && cur->dtype() == dt;
  if (k != 0) {
    if (cur->op() != Ops::ADD || cur->dtype() != dt || int_const(cur->src(1)) != k) return false;
    cur = &cur->src(0);
  }
  for (size_t i = merged.size(); i-- > 0;) {
    const UOp* term = cur;
    if (i > 0) {
      if (cur->op() != Ops::ADD || cur->dtype() != dt) return false;
      term = &cur->src(1);
      cur = &cur->src(0);
    }
    const Term& t = merged[i];
    if (t.coef == 1) {
      if (!(*term == t.factor)) return false;
    } else if (term->op() != Ops::MUL || term->dtype() != dt || !(term->src(0) == t.factor) || int_const(term->src(1)) != t.coef) {
      return false;
    }
  }
  return true;
}

// The canonical sum: like factors combined, factors ordered by content key, the constant last.
UOp build_sum(DType dt, std::vector<Term> terms, I k) { return build_merged(dt, merge_terms(dt, std::move(terms)), ring(dt, k)); }

// k*(x%c) + k*c*(x//c) is k*x: floor division and modulo recombine (exact, so valid under wraparound too).
void recombine_div_mod(DType dt, std::vector<Term>& terms) {
  for (size_t i = 0; i < terms.size(); i++) {
    const UOp& mod = terms[i].factor;
    if (mod.op() != Ops::FLOORMOD || !int_const(mod.src(1))) continue;
    I c = *int_const(mod.src(1));
    for (size_t j = 0; j < terms.size(); j++) {
      const UOp& div = terms[j].factor;
      if (div.op() == Ops::FLOORDIV && div.src(0) == mod.src(0) && div.src(1) == mod.src(1) &&
          ring(dt, terms[j].coef) == ring(dt, mul_wrap(terms[i].coef, c))) {
        Term whole{mod.src(0), terms[i].coef};
        terms.erase(terms.begin() + std::max(i, j));
        terms.erase(terms.begin() + std::min(i, j));
        terms.push_back(std::move(whole));
        i = static_cast<size_t>(-1);
        break;
      }
    }
  }
}

UOp canonical_sum(const Match& m) {
  const UOp& u = m.root();
  if (!is_scalar_int(u)) return UOp();
  Linear l;
  linearize(u, false, l);
  recombine_div_mod(u.dtype(), l.terms);
  std::vector<Term> merged = merge_terms(u.dtype(), std::move(l.terms));
  I k = ring(u.dtype(), l.k);
  if (is_merged(u, u.dtype(), merged, k)) return UOp();
  return build_merged(u.dtype(), merged, k);
}

// ---- division and modulo by a constant -----------------------------------------------------------------

UOp fold_div_mod(const Match& m) {
  const UOp& node = m.root();
  const UOp& num = m["x"];
  DType dt = node.dtype();
  if (!is_scalar_int(node)) return UOp();
  I c = *int_const(m["c"]);
  bool div = node.op() == Ops::FLOORDIV;
  if (c == 1) return div ? num : iconst(dt, 0);
  if (c == -1) return div ? UOp::make(Ops::NEG, dt, {num}) : iconst(dt, 0);
  if (c < 0) {
    if (!div || !fits(dt, -c)) return UOp();
    UOp neg = UOp::make(Ops::NEG, dt, {num});  // x // c == (-x) // (-c)
    return exact(neg) ? UOp::make(Ops::FLOORDIV, dt, {neg, iconst(dt, -c)}) : UOp();
  }
  if (c == 0) return div ? iconst(dt, 0) : num;  // x // 0 = 0, x % 0 = x (ir/exec_alu.h)
  if (!div && num.vmin() >= 0 && num.vmax() < c) return num;
  Linear l;
  if (!linearize(num, true, l)) return UOp();
  // A common factor of the divisor, every coefficient and the constant divides out.
  I g = c;
  for (const Term& t : l.terms) g = gcd128(g, t.coef);
  g = gcd128(g, l.k);
  if (g > 1) {
    for (Term& t : l.terms) t.coef /= g;
    UOp reduced = build_sum(dt, std::move(l.terms), l.k / g);
    UOp cg = iconst(dt, c / g);
    if (div) return UOp::make(Ops::FLOORDIV, dt, {reduced, cg});
    return UOp::make(Ops::MUL, dt, {UOp::make(Ops::FLOORMOD, dt, {reduced, cg}), iconst(dt, g)});
  }
  // Split out multiples of the divisor: num = q * c + r with every remaining coefficient below c.
  std::vector<Term> q, r;
  bool split = false;
  for (const Term& t : l.terms) {
    if (abs128(t.coef) < c) { r.push_back(t); continue; }
    I rem = t.coef - floor_div(t.coef, c) * c;
    q.push_back({t.factor, (t.coef - rem) / c});
    if (rem) r.push_back({t.factor, rem});
    split = true;
  }
  I qk = 0, rk = l.k;
  if (l.k >= c || l.k < 0) { qk = floor_div(l.k, c); rk = l.k - qk * c; split = true; }
  if (!split) return UOp();
  UOp rest = build_sum(dt, std::move(r), rk);
  if (!exact(rest)) return UOp();
  UOp quot = build_sum(dt, std::move(q), qk);
  bool rest_below_c = rest.vmin() >= 0 && rest.vmax() < c;
  if (!div) return rest_below_c ? rest : UOp::make(Ops::FLOORMOD, dt, {rest, iconst(dt, c)});
  if (rest_below_c) return quot;
  return UOp::make(Ops::ADD, dt, {quot, UOp::make(Ops::FLOORDIV, dt, {rest, iconst(dt, c)})});
}

// ---- comparisons ---------------------------------------------------------------------------------------------

// sum(g*t) + k < d  <=>  sum(t) < ceil((d - k) / g), for g > 0 and no wrap on either side.
UOp fold_lt_linear(const Match& m) {
  const UOp& lhs = m["x"];
  if (!is_scalar_int(lhs) || !exact(lhs)) return UOp();
  I d = *int_const(m["c"]);
  Linear l;
  if (!linearize(lhs, true, l) || l.terms.empty()) return UOp();
  I g = 0;
  for (const Term& t : l.terms) g = gcd128(g, t.coef);
  if (g <= 1 && l.k == 0) return UOp();
  for (Term& t : l.terms) t.coef /= g;
  DType dt = lhs.dtype();
  UOp s = build_sum(dt, std::move(l.terms), 0);
  if (!exact(s)) return UOp();
  I bound = -floor_div(-(d - l.k), g);  // ceil
  if (!fits(dt, bound)) return UOp();
  return UOp::make(Ops::CMPLT, m.root().dtype(), {s, iconst(dt, bound)});
}

// x + k != d  <=>  x != d - k, in ring arithmetic (addition is a bijection modulo 2^bits).
UOp fold_ne_eq_linear(const Match& m) {
  const UOp& lhs = m["x"];
  if (!is_scalar_int(lhs)) return UOp();
  Linear l;
  linearize(lhs, false, l);
  if (l.k == 0 || l.terms.empty()) return UOp();
  DType dt = lhs.dtype();
  UOp s = build_sum(dt, std::move(l.terms), 0);
  return UOp::make(m.root().op(), m.root().dtype(), {s, iconst(dt, *int_const(m["c"]) - l.k)});
}

// ---- helpers for rules ---------------------------------------------------------------------------------

bool all_values(const UOp& u) {  // every source a CONST with a value (not Invalid)
  for (const UOp& s : u.src())
    if (s.op() != Ops::CONST || std::holds_alternative<Invalid>(s.arg())) return false;
  return true;
}

UOp fold_constants(const Match& m) {
  const UOp& u = m.root();
  if (!all_values(u) || u.dtype().lanes != 1) return UOp();
  std::vector<ConstValue> vals;
  std::vector<DType> dts;
  for (const UOp& s : u.src()) { vals.push_back(s.const_value()); dts.push_back(s.dtype()); }
  std::optional<ConstValue> r = exec_alu(u.op(), u.dtype(), vals, dts);
  return r ? UOp::const_(u.dtype(), *r) : UOp();
}

UOp fold_bounds(const Match& m) {
  const UOp& u = m.root();
  if (u.dtype().lanes != 1 || !u.has_bounds() || u.vmin() != u.vmax()) return UOp();
  if (u.dtype().is_bool()) return UOp::const_(u.dtype(), u.vmin() != 0);
  return iconst(u.dtype(), u.vmin());
}

bool int_pos(const UOp& u) { auto c = int_const(u); return c && *c > 0; }

UPat x() { return UPat::var("x"); }
UPat icst(const char* name) { return UPat::cvar(name).where_pred([](const UOp& u) { return int_const(u).has_value(); }); }
UPat ipos(const char* name) { return UPat::cvar(name).where_pred(int_pos); }
UPat int_var(const char* name) { return UPat::var(name).where_pred(is_scalar_int); }

std::vector<Rule> simple_rules() {
  OpSet foldable = group::ALU | OpSet{Ops::CAST, Ops::BITCAST};
  return {
      // constant folding at the target's width and rounding
      {UPat::ops(foldable).src_each(UPat(Ops::CONST)), fold_constants, "fold_constants"},
      // identities
      {x() + UPat::const_(0), [](const Match& m) { return m["x"]; }, "x+0"},
      {UPat(Ops::SUB, {x(), UPat::const_(0)}), [](const Match& m) { return m["x"]; }, "x-0"},
      {x() * UPat::const_(1), [](const Match& m) { return m["x"]; }, "x*1"},
      {UPat(Ops::FDIV, {x(), UPat::const_(1)}), [](const Match& m) { return m["x"]; }, "x/1"},
      {int_var("x") * UPat::const_(0), [](const Match& m) { return m["x"].const_like(int64_t{0}); }, "x*0"},
      {UPat(Ops::FLOORDIV, {x(), UPat::const_(1)}), [](const Match& m) { return m["x"]; }, "x//1"},
      {UPat(Ops::FLOORMOD, {x(), UPat::const_(1)}), [](const Match& m) { return m["x"].const_like(int64_t{0}); }, "x%1"},
      {UPat(Ops::CDIV, {x(), UPat::const_(1)}), [](const Match& m) { return m["x"]; }, "x cdiv 1"},
      {UPat(Ops::CMOD, {x(), UPat::const_(1)}), [](const Match& m) { return m["x"].const_like(int64_t{0}); }, "x cmod 1"},
      {UPat(Ops::SUB, {int_var("x"), UPat::var("x")}), [](const Match& m) { return m["x"].const_like(int64_t{0}); }, "x-x"},
      // x // x is 1 only where x cannot be 0 (0 // 0 = 0); x % x is 0 for every x (0 % 0 = 0)
      {UPat(Ops::FLOORDIV, {int_var("x"), UPat::var("x")}),
       [](const Match& m) { return m["x"].vmin() > 0 || m["x"].vmax() < 0 ? m["x"].const_like(int64_t{1}) : UOp(); }, "x//x"},
      {UPat(Ops::FLOORMOD, {int_var("x"), UPat::var("x")}), [](const Match& m) { return m["x"].const_like(int64_t{0}); }, "x%x"},
      {x() | UPat::const_(0), [](const Match& m) { return m["x"]; }, "x|0"},
      {x() ^ UPat::const_(0), [](const Match& m) { return m["x"]; }, "x^0"},
      {x() & UPat::const_(-1), [](const Match& m) { return m["x"].dtype().is_unsigned() ? UOp() : m["x"]; }, "x&-1"},
      {UPat::var("x", dtypes::bool_) & UPat::const_(1), [](const Match& m) { return m["x"]; }, "x&True"},
      {UPat(Ops::XOR, {x(), UPat::var("x")}), [](const Match& m) { return m["x"].const_like(int64_t{0}); }, "x^x"},
      {UPat(OpSet{Ops::AND, Ops::OR, Ops::MAX}, {x(), UPat::var("x")}), [](const Match& m) { return m["x"]; }, "x&x, x|x, max(x,x)"},
      // where folding
      {UPat(Ops::WHERE, {UPat(Ops::CONST).named("c"), UPat::var("t"), UPat::var("f")}),
       [](const Match& m) {
         const bool* c = std::get_if<bool>(&m["c"].arg());
         return c ? (*c ? m["t"] : m["f"]) : UOp();
       }, "where(const, t, f)"},
      {UPat(Ops::WHERE, {UPat::var(), x(), UPat::var("x")}), [](const Match& m) { return m["x"]; }, "where(c, x, x)"},
      {UPat(Ops::WHERE, {UPat::var("c"), UPat::const_(1).dtype(dtypes::bool_), UPat::const_(0).dtype(dtypes::bool_)}),
       [](const Match& m) { return m["c"]; }, "where(c, True, False)"},
      {UPat(Ops::WHERE, {UPat::var("c"), UPat::const_(0).dtype(dtypes::bool_), UPat::const_(1).dtype(dtypes::bool_)}),
       [](const Match& m) { return m["c"].logical_not(); }, "where(c, False, True)"},
      // casts
      {UPat(Ops::CAST, {x()}).named("c"),
       [](const Match& m) { return m["c"].dtype() == m["x"].dtype() ? m["x"] : UOp(); }, "cast to own dtype"},
      {UPat(Ops::CAST, {UPat(Ops::CAST, {x()}).named("inner")}).named("outer"),
       [](const Match& m) {
         if (!can_lossless_cast(m["x"].dtype(), m["inner"].dtype())) return UOp();
         return m["x"].cast(m["outer"].dtype());
       }, "lossless double cast"},
  };
}

std::vector<Rule> full_rules() {
  std::vector<Rule> rules = {
      // a node whose bounds pin one value is that value (decides comparisons, folds size-1 ranges)
      {UPat::ops(group::ALU | OpSet{Ops::PARAM, Ops::RANGE, Ops::SPECIAL, Ops::CAST}), fold_bounds, "fold_bounds"},
      // term combining: sums in canonical order with like terms merged
      {UPat::ops(OpSet{Ops::ADD, Ops::SUB, Ops::NEG}), canonical_sum, "canonical_sum"},
      {UPat(Ops::MUL).src_any_order({UPat::var(), icst("c")}), canonical_sum, "canonical_sum (x*c)"},
      // max decided by bounds
      {UPat(Ops::MAX, {int_var("x"), int_var("y")}),
       [](const Match& m) {
         const UOp &a = m["x"], &b = m["y"];
         return a.vmin() >= b.vmax() ? a : b.vmin() >= a.vmax() ? b : UOp();
       }, "max by bounds"},
      // x & (2^k - 1) is x when 0 <= x <= 2^k - 1
      {UPat(Ops::AND, {int_var("x"), icst("c")}),
       [](const Match& m) {
         I c = *int_const(m["c"]);
         return c >= 0 && (c & (c + 1)) == 0 && m["x"].vmin() >= 0 && m["x"].vmax() <= c ? m["x"] : UOp();
       }, "x & mask"},
      // truncating division of a non-negative value is floor division
      {UPat(OpSet{Ops::CDIV, Ops::CMOD}, {int_var("x"), ipos("c")}).named("n"),
       [](const Match& m) {
         if (m["x"].vmin() < 0) return UOp();
         Ops op = m.root().op() == Ops::CDIV ? Ops::FLOORDIV : Ops::FLOORMOD;
         return UOp::make(op, m.root().dtype(), {m["x"], m["c"]});
       }, "cdiv/cmod of non-negative"},
      // nested division and modulo
      {UPat(Ops::FLOORDIV, {UPat(Ops::FLOORDIV, {int_var("x"), ipos("a")}), ipos("c")}),
       [](const Match& m) {
         I a = *int_const(m["a"]), c = *int_const(m["c"]);
         DType dt = m["x"].dtype();
         return fits(dt, mul_sat(a, c)) ? UOp::make(Ops::FLOORDIV, dt, {m["x"], iconst(dt, a * c)}) : UOp();
       }, "(x//a)//c"},
      {UPat(Ops::FLOORMOD, {UPat(Ops::FLOORMOD, {int_var("x"), ipos("a")}), ipos("c")}),
       [](const Match& m) {
         I a = *int_const(m["a"]), c = *int_const(m["c"]);
         return a % c == 0 ? UOp::make(Ops::FLOORMOD, m["x"].dtype(), {m["x"], m["c"]}) : UOp();
       }, "(x%a)%c"},
      {UPat(Ops::FLOORDIV, {UPat(Ops::FLOORMOD, {int_var("x"), ipos("a")}), ipos("c")}),
       [](const Match& m) {
         I a = *int_const(m["a"]), c = *int_const(m["c"]);
         DType dt = m["x"].dtype();
         if (a % c != 0) return UOp();
         return UOp::make(Ops::FLOORMOD, dt, {UOp::make(Ops::FLOORDIV, dt, {m["x"], m["c"]}), iconst(dt, a / c)});
       }, "(x%a)//c"},
      {UPat(OpSet{Ops::FLOORDIV, Ops::FLOORMOD}, {int_var("x"), icst("c")}), fold_div_mod, "div/mod by constant"},
      // comparisons
      {UPat(Ops::CMPLT, {x(), UPat::var("x")}), [](const Match& m) { return UOp::const_(m.root().dtype(), false); }, "x<x"},
      {UPat(Ops::CMPNE, {int_var("x"), UPat::var("x")}), [](const Match& m) { return UOp::const_(m.root().dtype(), false); }, "x!=x"},
      {UPat(Ops::CMPEQ, {int_var("x"), UPat::var("x")}), [](const Match& m) { return UOp::const_(m.root().dtype(), true); }, "x==x"},
      {UPat(Ops::CMPLT, {UPat(Ops::FLOORDIV, {int_var("x"), ipos("d")}), icst("c")}),
       [](const Match& m) {
         I c = *int_const(m["c"]), d = *int_const(m["d"]);
         DType dt = m["x"].dtype();
         return fits(dt, mul_sat(c, d)) ? UOp::make(Ops::CMPLT, m.root().dtype(), {m["x"], iconst(dt, c * d)}) : UOp();
       }, "x//d < c"},
      {UPat(Ops::CMPLT, {int_var("x"), icst("c")}), fold_lt_linear, "linear < c"},
      {UPat(OpSet{Ops::CMPNE, Ops::CMPEQ}, {int_var("x"), icst("c")}), fold_ne_eq_linear, "linear != c"},
      // bool logic
      {UPat(Ops::CMPNE, {UPat(Ops::CMPNE, {UPat::var("x", dtypes::bool_), UPat::const_(1)}), UPat::const_(1)}),
       [](const Match& m) { return m["x"]; }, "not not x"},
      {UPat(Ops::CMPNE, {UPat::var("x", dtypes::bool_), UPat::const_(0).dtype(dtypes::bool_)}), [](const Match& m) { return m["x"]; }, "x != False"},
      {UPat(Ops::CMPEQ, {UPat::var("x", dtypes::bool_), UPat::const_(1).dtype(dtypes::bool_)}), [](const Match& m) { return m["x"]; }, "x == True"},
      // where: a negated condition swaps the branches; a repeated condition picks its branch
      {UPat(Ops::WHERE, {UPat(Ops::CMPNE, {UPat::var("c", dtypes::bool_), UPat::const_(1).dtype(dtypes::bool_)}), UPat::var("t"), UPat::var("f")}),
       [](const Match& m) { return m["c"].where(m["f"], m["t"]); }, "where(!c, t, f)"},
      {UPat(Ops::WHERE, {UPat::var("c"), UPat(Ops::WHERE, {UPat::var("c"), UPat::var("t"), UPat::var()}), UPat::var("f")}),
       [](const Match& m) { return m["c"].where(m["t"], m["f"]); }, "where(c, where(c, t, _), f)"},
      {UPat(Ops::WHERE, {UPat::var("c"), UPat::var("t"), UPat(Ops::WHERE, {UPat::var("c"), UPat::var(), UPat::var("f")})}),
       [](const Match& m) { return m["c"].where(m["t"], m["f"]); }, "where(c, t, where(c, _, f))"},
  };
  return rules;
}

}  // namespace

const PatternMatcher& symbolic_simple() {
  static const PatternMatcher* pm = new PatternMatcher(simple_rules());
  return *pm;
}

const PatternMatcher& symbolic() {
  static const PatternMatcher* pm = new PatternMatcher(symbolic_simple() + PatternMatcher(full_rules()));
  return *pm;
}

UOp simplify(const UOp& u) {
  if (u.op() == Ops::CONST) return u;  // no symbolic rule rewrites a constant: skip the pass
  return graph_rewrite(u, symbolic(), {.name = "simplify"});
}

}  // namespace doorbell
