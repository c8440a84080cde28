#include "expr_gen.h"

#include <algorithm>
#include <functional>
#include <unordered_set>

#include "ir/exec_alu.h"
#include "ir/printer.h"
#include "ir/symbolic.h"

namespace doorbell::fuzz {

std::unordered_map<const UOpNode*, std::optional<__int128>> evaluate(const UOp& root, const Assignment& a) {
  std::unordered_map<const UOpNode*, std::optional<__int128>> val;
  std::vector<ConstValue> args;
  std::vector<DType> dts;
  for (const UOp& u : root.toposort()) {
    std::optional<__int128> out;
    if (u.op() == Ops::PARAM) {
      for (size_t i = 0; i < a.vars.size(); i++)
        if (a.vars[i] == u) out = a.values[i];
    } else if (u.op() == Ops::CONST) {
      ConstValue c = u.const_value();
      out = std::holds_alternative<bool>(c) ? __int128{std::get<bool>(c)} : int_value(u.dtype(), std::get<int64_t>(c));
    } else {
      args.clear();
      dts.clear();
      bool defined = true;
      for (const UOp& s : u.src()) {
        const std::optional<__int128>& v = val.at(s.get());
        if (!v) { defined = false; break; }
        args.push_back(s.dtype().is_bool() ? ConstValue(*v != 0) : ConstValue(wrap_int(s.dtype(), *v)));
        dts.push_back(s.dtype());
      }
      if (defined) {
        std::optional<ConstValue> r = exec_alu(u.op(), u.dtype(), args, dts);
        if (r) out = std::holds_alternative<bool>(*r) ? __int128{std::get<bool>(*r)} : int_value(u.dtype(), std::get<int64_t>(*r));
      }
    }
    val[u.get()] = out;
  }
  return val;
}

std::vector<UOp> variables_of(const UOp& root) {
  std::vector<UOp> vars;
  for (const UOp& u : root.toposort())
    if (u.op() == Ops::PARAM) vars.push_back(u);
  std::sort(vars.begin(), vars.end(), [](const UOp& a, const UOp& b) {
    return std::get<ParamArg>(a.arg()).name < std::get<ParamArg>(b.arg()).name;
  });
  return vars;
}

UOp ExprGen::next() {
  static constexpr DType kTypes[] = {dtypes::int32, dtypes::int32, dtypes::int32, dtypes::int64, dtypes::weakint,
                                     dtypes::int8, dtypes::uint32, dtypes::int16, dtypes::uint64, dtypes::uint8};
  dt_ = kTypes[pick(0, std::size(kTypes) - 1)];
  vars_.clear();
  int nvars = static_cast<int>(pick(1, 3));
  for (int i = 0; i < nvars; i++) {
    int64_t lo = dt_.is_unsigned() ? pick(0, 6) : pick(-8, 4), hi = lo + (chance(0.1) ? 0 : pick(1, 16));
    if (chance(0.05) && dt_ == dtypes::int32) { lo = pick(-3000, 0); hi = lo + pick(0, 5000); }
    vars_.push_back(UOp::variable(std::string(1, static_cast<char>('a' + i)), lo, hi, dt_));
  }
  for (;;) {
    try {
      return gen(static_cast<int>(pick(1, 4)));
    } catch (const std::invalid_argument&) {
      // an invalid combination (for example a constant out of range for int8): draw again
    }
  }
}

UOp ExprGen::constant() {
  int64_t v = pick(-12, 12);
  if (chance(0.03)) {
    static constexpr int64_t kEdges[] = {INT32_MAX, INT32_MIN, 1 << 30, 127, -128, 255, 1000003};
    v = kEdges[pick(0, std::size(kEdges) - 1)];
  }
  if (dt_.is_unsigned()) v = std::abs(v);
  if (v < int_min(dt_) || v > int_max(dt_)) v = pick(0, 5);
  return UOp::const_(dt_, v);
}

UOp ExprGen::leaf() { return chance(0.75) ? vars_[pick(0, vars_.size() - 1)] : constant(); }

UOp ExprGen::condition(int depth) {
  UOp a = gen(depth - 1);
  UOp b = chance(0.5) ? constant() : gen(depth - 1);
  switch (pick(0, 4)) {
    case 0: case 1: return a.lt(b);
    case 2: return a.ne(b);
    case 3: return a.eq(b);
    default: return a.lt(b).logical_not();
  }
}

UOp ExprGen::gen(int depth) {
  if (depth <= 0 || chance(0.2)) return leaf();
  auto sub = [&] { return gen(depth - 1); };
  auto divisor = [&] {
    int64_t c = pick(1, 9);
    if (!dt_.is_unsigned() && chance(0.15)) c = -c;
    return UOp::const_(dt_, c);
  };
  switch (pick(0, 15)) {
    case 0: case 1: return sub() + sub();
    case 2: return sub() - sub();
    case 3: case 4: return sub() * constant();
    case 5: return sub() * sub();
    case 6: return -sub();
    case 7: case 8: return sub().floordiv(divisor());
    case 9: case 10: return sub().floormod(divisor());
    case 11: return UOp::infer(chance(0.5) ? Ops::CDIV : Ops::CMOD, {sub(), divisor()});
    case 12: return sub().maximum(sub());
    case 13: return condition(depth).where(sub(), sub());
    case 14: {
      UOp s = sub();
      switch (pick(0, 3)) {
        case 0: return s & UOp::const_(dt_, pick(0, 15));
        case 1: return s << UOp::const_(dt_, pick(0, 3));
        case 2: return s >> UOp::const_(dt_, pick(0, 3));
        default: return s ^ UOp::const_(dt_, pick(0, 7));
      }
    }
    default: return sub().floordiv(sub());  // a divisor that may be zero: undefined where it is
  }
}

std::vector<Assignment> assignments(const std::vector<UOp>& vars, size_t limit, std::mt19937_64& rng) {
  std::vector<Assignment> out;
  __int128 total = 1;  // variables may span all of int64
  for (const UOp& v : vars) {
    const ParamArg& p = std::get<ParamArg>(v.arg());
    total *= static_cast<__int128>(p.vmax) - p.vmin + 1;
    if (total > static_cast<__int128>(limit)) break;
  }
  if (total <= static_cast<__int128>(limit)) {
    std::vector<int64_t> cur;
    for (const UOp& v : vars) cur.push_back(std::get<ParamArg>(v.arg()).vmin);
    for (__int128 n = 0; n < total; n++) {
      out.push_back({vars, cur});
      for (size_t i = 0; i < vars.size(); i++) {
        if (++cur[i] <= std::get<ParamArg>(vars[i].arg()).vmax) break;
        cur[i] = std::get<ParamArg>(vars[i].arg()).vmin;
      }
    }
    return out;
  }
  for (size_t corner = 0; corner < (size_t{1} << vars.size()); corner++) {  // every combination of bounds
    std::vector<int64_t> vals;
    for (size_t i = 0; i < vars.size(); i++) {
      const ParamArg& p = std::get<ParamArg>(vars[i].arg());
      vals.push_back((corner >> i) & 1 ? p.vmax : p.vmin);
    }
    out.push_back({vars, vals});
  }
  while (out.size() < limit) {
    std::vector<int64_t> vals;
    for (const UOp& v : vars) {
      const ParamArg& p = std::get<ParamArg>(v.arg());
      vals.push_back(std::uniform_int_distribution<int64_t>(p.vmin, p.vmax)(rng));
    }
    out.push_back({vars, vals});
  }
  return out;
}

namespace {
std::string i128(__int128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  unsigned __int128 u = neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string s;
  while (u) { s += static_cast<char>('0' + static_cast<int>(u % 10)); u /= 10; }
  if (neg) s += '-';
  std::reverse(s.begin(), s.end());
  return s;
}

std::string check_bounds(const UOp& root, const std::unordered_map<const UOpNode*, std::optional<__int128>>& val) {
  for (const UOp& u : root.toposort()) {
    const std::optional<__int128>& v = val.at(u.get());
    if (v && u.has_bounds() && (*v < u.vmin() || *v > u.vmax()))
      return "bounds of " + render_expr(u) + " are [" + i128(u.vmin()) + ", " + i128(u.vmax()) + "] but it evaluates to " + i128(*v);
  }
  return "";
}
}  // namespace

std::string describe(const Assignment& a) {
  std::string s;
  for (size_t i = 0; i < a.vars.size(); i++) {
    const ParamArg& p = std::get<ParamArg>(a.vars[i].arg());
    s += (i ? ", " : "") + p.name + "=" + std::to_string(a.values[i]) + " in [" + std::to_string(p.vmin) + ", " + std::to_string(p.vmax) + "]";
  }
  return s;
}

std::string check(const UOp& expr, const UOp& simplified, const Assignment& a) {
  auto orig = evaluate(expr, a);
  std::optional<__int128> want = orig.at(expr.get());
  if (std::string err = check_bounds(expr, orig); !err.empty()) return err;
  if (!want) return "";  // undefined in the original: any result is allowed
  auto simp = evaluate(simplified, a);
  std::optional<__int128> got = simp.at(simplified.get());
  if (!got) return "the simplified expression is undefined where the original is " + i128(*want);
  if (*got != *want) return "the original gives " + i128(*want) + ", the simplified " + i128(*got);
  return check_bounds(simplified, simp);
}

namespace {
UOp substitute(const UOp& root, const UOp& from, const UOp& to) {
  std::unordered_map<const UOpNode*, UOp> m;
  for (const UOp& u : root.toposort()) {
    if (u == from) { m[u.get()] = to; continue; }
    std::vector<UOp> src;
    bool changed = false;
    for (const UOp& s : u.src()) { src.push_back(m.at(s.get())); changed |= !(src.back() == s); }
    m[u.get()] = changed ? u.replace_src(std::move(src)) : u;
  }
  return m.at(root.get());
}
}  // namespace

UOp minimize(const UOp& expr, const std::function<bool(const UOp&)>& fails) {
  UOp best = expr;
  for (bool progress = true; progress;) {
    progress = false;
    std::vector<UOp> nodes = best.toposort();
    std::reverse(nodes.begin(), nodes.end());  // try the largest cuts first
    for (const UOp& n : nodes) {
      if (n.op() == Ops::CONST || n.op() == Ops::PARAM) continue;
      std::vector<UOp> candidates;
      for (const UOp& s : n.src())
        if (s.dtype() == n.dtype()) candidates.push_back(s);
      if (n.dtype().is_int()) { candidates.push_back(n.const_like(int64_t{0})); candidates.push_back(n.const_like(int64_t{1})); }
      for (const UOp& c : candidates) {
        UOp smaller;
        try {
          smaller = substitute(best, n, c);
        } catch (const std::exception&) {
          continue;
        }
        if (smaller.toposort().size() < best.toposort().size() && fails(smaller)) {
          best = smaller;
          progress = true;
          break;
        }
      }
      if (progress) break;
    }
  }
  return best;
}

}  // namespace doorbell::fuzz
