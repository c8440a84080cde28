#include "ir/bounds.h"

#include <algorithm>
#include <initializer_list>

#include "ir/exec_alu.h"

namespace doorbell {
namespace {

using I = __int128;

struct Range {
  I lo, hi;
};

I floor_div(I a, I b) {
  I q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

Range hull(std::initializer_list<I> v) { return {std::min(v), std::max(v)}; }

// Products of uint64 bounds can exceed 128 bits: saturate far beyond every dtype, so the dtype check widens them.
I mul(I a, I b) {
  I r;
  if (!__builtin_mul_overflow(a, b, &r)) return r;
  constexpr I kHuge = static_cast<I>(1) << 120;
  return ((a < 0) != (b < 0)) ? -kHuge : kHuge;
}

bool bounded(const UOp& u) { return u.has_bounds(); }
Range of(const UOp& u) { return {u.vmin(), u.vmax()}; }

std::optional<I> const_int(const UOp& u) {
  if (u.has_bounds() && u.vmin() == u.vmax()) return u.vmin();
  return std::nullopt;
}

// Bounds of an op on integers, before the check against the dtype's range. nullopt: unknown.
std::optional<Range> alu_bounds(Ops op, DType dtype, const std::vector<UOp>& src) {
  for (const UOp& s : src)
    if (!bounded(s) && op != Ops::WHERE) return std::nullopt;
  switch (op) {
    case Ops::ADD: {
      Range a = of(src[0]), b = of(src[1]);
      if (dtype.is_bool()) return Range{a.lo | b.lo, a.hi | b.hi};
      return Range{a.lo + b.lo, a.hi + b.hi};
    }
    case Ops::SUB: { Range a = of(src[0]), b = of(src[1]); return Range{a.lo - b.hi, a.hi - b.lo}; }
    case Ops::MUL: {
      Range a = of(src[0]), b = of(src[1]);
      if (dtype.is_bool()) return Range{a.lo & b.lo, a.hi & b.hi};
      return hull({mul(a.lo, b.lo), mul(a.lo, b.hi), mul(a.hi, b.lo), mul(a.hi, b.hi)});
    }
    case Ops::NEG: { Range a = of(src[0]); return Range{-a.hi, -a.lo}; }
    case Ops::MAX: { Range a = of(src[0]), b = of(src[1]); return Range{std::max(a.lo, b.lo), std::max(a.hi, b.hi)}; }
    case Ops::TRUNC: return of(src[0]);
    case Ops::MULACC: {
      Range a = of(src[0]), b = of(src[1]), c = of(src[2]);
      Range m = hull({mul(a.lo, b.lo), mul(a.lo, b.hi), mul(a.hi, b.lo), mul(a.hi, b.hi)});
      return Range{m.lo + c.lo, m.hi + c.hi};
    }
    case Ops::FLOORDIV: case Ops::CDIV: {
      Range a = of(src[0]), d = of(src[1]);
      if (d.lo <= 0 && d.hi >= 0) return std::nullopt;  // the divisor may be zero
      if (op == Ops::FLOORDIV)
        return hull({floor_div(a.lo, d.lo), floor_div(a.lo, d.hi), floor_div(a.hi, d.lo), floor_div(a.hi, d.hi)});
      return hull({a.lo / d.lo, a.lo / d.hi, a.hi / d.lo, a.hi / d.hi});
    }
    case Ops::FLOORMOD: {
      Range a = of(src[0]), d = of(src[1]);
      if (d.lo > 0) {
        if (d.lo == d.hi && floor_div(a.lo, d.lo) == floor_div(a.hi, d.lo))  // no wrap inside [lo, hi]
          return Range{a.lo - floor_div(a.lo, d.lo) * d.lo, a.hi - floor_div(a.lo, d.lo) * d.lo};
        if (a.lo >= 0 && a.hi < d.lo) return a;
        return Range{0, d.hi - 1};
      }
      if (d.hi < 0) return Range{d.lo + 1, 0};
      return std::nullopt;
    }
    case Ops::CMOD: {
      Range a = of(src[0]), d = of(src[1]);
      if (d.lo <= 0 && d.hi >= 0) return std::nullopt;
      I m = std::max(d.lo < 0 ? -d.lo : d.lo, d.hi < 0 ? -d.hi : d.hi) - 1;  // |x % d| <= |d| - 1
      if (a.lo >= 0 && a.hi <= m && d.lo > 0 && a.hi < d.lo) return a;
      return Range{a.lo < 0 ? std::max(a.lo, -m) : 0, a.hi > 0 ? std::min(a.hi, m) : 0};
    }
    case Ops::AND: {
      Range a = of(src[0]), b = of(src[1]);
      if (dtype.is_bool()) return Range{a.lo & b.lo, a.hi & b.hi};
      if (a.lo >= 0 && b.lo >= 0) return Range{0, std::min(a.hi, b.hi)};
      if (b.lo >= 0) return Range{0, b.hi};  // a non-negative mask bounds the result whatever x is
      if (a.lo >= 0) return Range{0, a.hi};
      return std::nullopt;
    }
    case Ops::OR: case Ops::XOR: {
      Range a = of(src[0]), b = of(src[1]);
      if (dtype.is_bool()) {
        if (a.lo == a.hi && b.lo == b.hi) return Range{op == Ops::OR ? (a.lo | b.lo) : (a.lo ^ b.lo), op == Ops::OR ? (a.lo | b.lo) : (a.lo ^ b.lo)};
        if (op == Ops::OR) return Range{a.lo | b.lo, 1};
        return Range{0, 1};
      }
      if (a.lo >= 0 && b.lo >= 0) {
        I m = std::max(a.hi, b.hi), p = 1;
        while (p <= m) p <<= 1;
        return Range{op == Ops::OR ? std::max(a.lo, b.lo) : 0, p - 1};
      }
      return std::nullopt;
    }
    case Ops::SHL: {
      std::optional<I> s = const_int(src[1]);
      int bits = dtype.scalar_type == ScalarType::WeakInt ? 64 : dtype.bitsize();
      if (!s || *s < 0 || *s >= bits) return std::nullopt;
      Range a = of(src[0]);
      I m = static_cast<I>(1) << static_cast<int>(*s);
      return Range{mul(a.lo, m), mul(a.hi, m)};
    }
    case Ops::SHR: {
      std::optional<I> s = const_int(src[1]);
      int bits = dtype.scalar_type == ScalarType::WeakInt ? 64 : dtype.bitsize();
      if (!s || *s < 0 || *s >= bits) return std::nullopt;
      Range a = of(src[0]);
      return Range{a.lo >> static_cast<int>(*s), a.hi >> static_cast<int>(*s)};
    }
    case Ops::CMPLT: {
      Range a = of(src[0]), b = of(src[1]);
      if (a.hi < b.lo) return Range{1, 1};
      if (a.lo >= b.hi) return Range{0, 0};
      return Range{0, 1};
    }
    case Ops::CMPNE: case Ops::CMPEQ: {
      Range a = of(src[0]), b = of(src[1]);
      bool ne;
      if (a.hi < b.lo || b.hi < a.lo) ne = true;
      else if (a.lo == a.hi && b.lo == b.hi) ne = false;
      else return Range{0, 1};
      I v = (op == Ops::CMPNE) == ne;
      return Range{v, v};
    }
    case Ops::WHERE: {
      if (!bounded(src[0]) || !bounded(src[1]) || !bounded(src[2])) return std::nullopt;
      Range c = of(src[0]), t = of(src[1]), f = of(src[2]);
      if (c.lo == 1) return t;
      if (c.hi == 0) return f;
      return Range{std::min(t.lo, f.lo), std::max(t.hi, f.hi)};
    }
    default: return std::nullopt;
  }
}

std::optional<Range> node_bounds(Ops op, DType dtype, const std::vector<UOp>& src, const Arg& arg) {
  if (group::ALU.contains(op)) {
    // float comparisons give bool nodes with unknown bounds
    if (group::Comparison.contains(op) && !src[0].has_bounds()) return std::nullopt;
    return alu_bounds(op, dtype, src);
  }
  switch (op) {
    case Ops::CONST:
      if (const int64_t* v = std::get_if<int64_t>(&arg)) return Range{int_value(dtype, *v), int_value(dtype, *v)};
      if (const bool* b = std::get_if<bool>(&arg)) return Range{*b, *b};
      return std::nullopt;
    case Ops::PARAM:
      if (const ParamArg* p = std::get_if<ParamArg>(&arg); p && p->addrspace == AddrSpace::ALU) return Range{p->vmin, p->vmax};
      return std::nullopt;
    case Ops::RANGE: case Ops::SPECIAL:
      if (!src.empty() && src[0].has_bounds()) return Range{0, std::max<I>(0, src[0].vmax() - 1)};
      return std::nullopt;
    case Ops::CAST:
      if (src[0].has_bounds()) return of(src[0]);  // clipped below if it does not fit
      return std::nullopt;
    case Ops::AFTER:
      if (!src.empty() && src[0].has_bounds()) return of(src[0]);
      return std::nullopt;
    default: return std::nullopt;
  }
}

}  // namespace

bool compute_bounds(Ops op, DType dtype, const std::vector<UOp>& src, const Arg& arg, __int128& lo, __int128& hi) {
  if (dtype.lanes != 1 || !(dtype.is_int() || dtype.is_bool())) return false;
  I dmin = int_min(dtype), dmax = int_max(dtype);
  std::optional<Range> r;
  if (!(std::holds_alternative<Invalid>(arg))) r = node_bounds(op, dtype, src, arg);
  if (r && r->lo >= dmin && r->hi <= dmax && r->lo <= r->hi) {
    lo = r->lo;
    hi = r->hi;
  } else {  // unknown, or the op may wrap: anything the dtype holds
    lo = dmin;
    hi = dmax;
  }
  return true;
}

}  // namespace doorbell
