#include "compiler/late_lowering.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "compiler/transcendental.h"
#include "ir/exec_alu.h"
#include "ir/graph_rewrite.h"

namespace doorbell {
namespace {

using I = __int128;

const LateLoweringOptions& options_of(const Match& m) { return m.ctx<const LateLoweringOptions>(); }

bool is_half(DType d) { return d.lanes == 1 && (d.scalar_type == ScalarType::Float16 || d.scalar_type == ScalarType::BFloat16); }
bool scalar_int(const UOp& u) { return u.dtype().lanes == 1 && u.dtype().is_int(); }
bool is_signed(DType d) { return d.is_int() && !d.is_unsigned(); }
bool may_be(const UOp& u, I v) { return u.vmin() <= v && v <= u.vmax(); }

// k when u is the integer constant 2^k (k >= 0).
std::optional<int> power_of_two(const UOp& u) {
  if (u.op() != Ops::CONST || !std::holds_alternative<int64_t>(u.const_value())) return std::nullopt;
  I v = int_value(u.dtype(), std::get<int64_t>(u.const_value()));
  if (v <= 0 || (v & (v - 1)) != 0) return std::nullopt;
  int k = 0;
  while ((I{1} << k) != v) k++;
  return k;
}

// ---- division ------------------------------------------------------------------------------------------------

// b, with 1 where it is 0 (or -1, signed): a divisor no target traps on. Built from b's bounds alone, so a divisor
// this made is recognized by building it again (nodes are hash-consed).
UOp guarded_divisor(const UOp& b) {
  UOp bad;
  if (may_be(b, 0)) bad = b.eq(b.const_like(int64_t{0}));
  if (is_signed(b.dtype()) && may_be(b, -1)) {
    UOp m1 = b.eq(b.const_like(int64_t{-1}));
    bad = bad ? bad | m1 : m1;
  }
  return bad ? bad.where(b.const_like(int64_t{1}), b) : b;
}

bool safe_divisor(const UOp& b) {
  if (guarded_divisor(b) == b) return true;  // its bounds exclude 0 and -1
  return b.op() == Ops::WHERE && guarded_divisor(b.src(2)) == b;
}

// a cdiv b or a cmod b as the target divides: where the target does not define them, through a guarded divisor,
// a cdiv 0 = 0, a cmod 0 = a, a cdiv -1 = -a (wrapping) and a cmod -1 = 0 (a cmod 1 already is).
UOp truncating(Ops op, const UOp& a, const UOp& b, const LateLoweringOptions& o) {
  if (o.division_edge_cases || safe_divisor(b)) return UOp::make(op, a.dtype(), {a, b});
  UOp r = UOp::make(op, a.dtype(), {a, guarded_divisor(b)});
  if (op == Ops::CMOD) return may_be(b, 0) ? b.eq(b.const_like(int64_t{0})).where(a, r) : r;  // a cmod 0 = a
  if (is_signed(b.dtype()) && may_be(b, -1)) r = b.eq(b.const_like(int64_t{-1})).where(a.neg(), r);
  if (may_be(b, 0)) r = b.eq(b.const_like(int64_t{0})).where(a.const_like(int64_t{0}), r);
  return r;
}

UOp guard_division(const Match& m) {
  const UOp &a = m["a"], &b = m["b"];
  if (options_of(m).division_edge_cases || !scalar_int(a) || safe_divisor(b)) return UOp();
  return truncating(m.root().op(), a, b, options_of(m));
}

Ops truncating_op(Ops floor_op) { return floor_op == Ops::FLOORDIV ? Ops::CDIV : Ops::CMOD; }

// a // 2^k is a >> k (arithmetic for signed types: it rounds toward -inf) and a % 2^k the low k bits, for any a.
UOp floor_by_power_of_two(const Match& m) {
  const UOp &a = m["a"], &b = m["b"];
  std::optional<int> k = power_of_two(b);
  if (options_of(m).floor_division || !scalar_int(a) || !k) return UOp();
  if (m.root().op() == Ops::FLOORDIV) return *k == 0 ? a : a >> a.const_like(int64_t{*k});
  return *k == 0 ? a.const_like(int64_t{0}) : a & a.const_like(static_cast<int64_t>((I{1} << *k) - 1));
}

// Floor and truncation agree when neither operand is negative.
UOp floor_of_non_negatives(const Match& m) {
  const UOp &a = m["a"], &b = m["b"];
  if (options_of(m).floor_division || !scalar_int(a) || a.vmin() < 0 || b.vmin() < 0) return UOp();
  return truncating(truncating_op(m.root().op()), a, b, options_of(m));
}

// Truncation, then the quotient one lower and the remainder plus the divisor where the remainder is nonzero and its
// sign differs from the divisor's. b == -1 leaves remainder 0: no correction. b == 0 leaves remainder a, so
// a floormod 0 = a + 0 = a; the quotient is selected to 0 there.
UOp floor_with_sign_correction(const Match& m) {
  const UOp &a = m["a"], &b = m["b"];
  const LateLoweringOptions& o = options_of(m);
  if (o.floor_division || !scalar_int(a)) return UOp();
  UOp zero = a.const_like(int64_t{0}), r = truncating(Ops::CMOD, a, b, o);
  UOp fix = b.vmin() > 0 ? r.lt(zero) : b.vmax() < 0 ? zero.lt(r) : r.ne(zero) & r.lt(zero).ne(b.lt(zero));
  if (m.root().op() == Ops::FLOORMOD) return fix.where(r + b, r);
  UOp q = truncating(Ops::CDIV, a, b, o);
  UOp floor_q = fix.where(q - q.const_like(int64_t{1}), q);
  return may_be(b, 0) ? b.eq(b.const_like(int64_t{0})).where(zero, floor_q) : floor_q;
}

// ---- shifts -------------------------------------------------------------------------------------------------

int int_width(DType d) { return d.scalar_type == ScalarType::WeakInt ? 64 : d.bitsize(); }

// SHL / SHR by an amount that may be outside [0, width): the op by an amount made valid, and the defined result
// selected where it was not (ir/exec_alu.h: SHL gives 0, SHR 0 or the sign; negative amounts count as too large).
UOp guard_shift(const Match& m) {
  const UOp &u = m.root(), &a = m["a"], &s = m["s"];
  if (options_of(m).shift_edge_cases || !scalar_int(u) || !s.dtype().is_int()) return UOp();
  const int bits = int_width(u.dtype());
  if (s.vmin() >= 0 && s.vmax() < bits) return UOp();  // the common case: a constant or a bounded amount
  const bool sign_fill = u.op() == Ops::SHR && is_signed(u.dtype());
  UOp zero = a.const_like(int64_t{0});
  if (s.vmax() < 0 || s.vmin() >= bits) return sign_fill ? a >> a.const_like(int64_t{bits - 1}) : zero;
  // 0 <= s < bits as one unsigned comparison where s may be negative
  UOp us = s;
  if (s.vmin() < 0) us = s.cast(DType(int_width(s.dtype()) == 8 ? ScalarType::UInt8 : int_width(s.dtype()) == 16 ? ScalarType::UInt16
                                          : int_width(s.dtype()) == 32 ? ScalarType::UInt32 : ScalarType::UInt64));
  UOp ok = us.lt(us.const_like(int64_t{bits}));
  // a signed right shift by bits - 1 is the sign fill itself; otherwise shift by 0 and select 0
  UOp amount = ok.where(s, s.const_like(int64_t{sign_fill ? bits - 1 : 0}));
  UOp r = UOp::make(u.op(), u.dtype(), {a, amount});
  return sign_fill ? r : ok.where(r, zero);
}

// ---- float to integer -----------------------------------------------------------------------------------

// CAST(x, to) of a float32 / float64 x as ir/exec_alu.h defines it: truncated, saturated to to's range, NaN to 0.
// The CAST itself only sees values in [min, max + 1), where every target's conversion is defined; min and max + 1
// are powers of two (or 0), exact in both float types.
UOp saturating_float_to_int(const UOp& x, DType to) {
  UOp lo = x.const_like(static_cast<double>(int_min(to))), hi = x.const_like(static_cast<double>(int_max(to) + 1));
  UOp below_hi = x.lt(hi);                              // false for NaN and for x >= max + 1
  UOp s = below_hi.where(x, x.const_like(0.0));         // NaN and too large: 0 for now
  s = s.lt(lo).where(lo, s);                            // too small: min
  UOp max = UOp::const_(to, wrap_int(to, int_max(to)));  // uint64's max in its stored form
  return (below_hi | x.ne(x)).where(s.cast(to), max);  // too large: max; NaN: the cast of 0
}

UOp lower_float_to_int(const Match& m) {
  const UOp &u = m.root(), &x = m["x"];
  const LateLoweringOptions& o = options_of(m);
  if (o.float_to_int_saturates || u.dtype().lanes != 1 || !u.dtype().is_int() || !x.dtype().is_float()) return UOp();
  if (is_half(x.dtype()) && !o.half_arithmetic) return UOp();  // half_cast_through_float32 lowers it
  return saturating_float_to_int(x, u.dtype());
}

// ---- float16 and bfloat16 ----------------------------------------------------------------------------------

constexpr OpSet kTranscendental{Ops::EXP2, Ops::LOG2, Ops::SIN};
// The ops whose float32 result must be rounded to the 16-bit type.
constexpr OpSet kRounding = kTranscendental | OpSet{Ops::ADD, Ops::SUB, Ops::MUL, Ops::FDIV, Ops::SQRT, Ops::RECIPROCAL,
                                                    Ops::MULACC, Ops::POW};

std::vector<UOp> in_float32(const std::vector<UOp>& src) {
  std::vector<UOp> out;
  for (const UOp& s : src) out.push_back(s.cast(dtypes::float32));
  return out;
}

bool native_for(const LateLoweringOptions& o, Ops op, DType d) {
  if (kTranscendental.contains(op)) return o.transcendentals.contains(d);
  if (op == Ops::POW) return o.pow.contains(d);
  return true;
}

// op on float32 sources, decomposed into float32 arithmetic where the target lacks it.
UOp float32_op(Ops op, const std::vector<UOp>& src, const LateLoweringOptions& o) {
  if (!native_for(o, op, dtypes::float32)) {
    if (op == Ops::POW) return pow_f32(src[0], src[1]);
    return op == Ops::EXP2 ? exp2_f32(src[0]) : op == Ops::LOG2 ? log2_f32(src[0]) : sin_f32(src[0]);
  }
  return UOp::make(op, dtypes::float32, src);
}

UOp half_op_in_float32(const Match& m) {
  const UOp& u = m.root();
  const LateLoweringOptions& o = options_of(m);
  if (!is_half(u.dtype()) || (o.half_arithmetic && native_for(o, u.op(), u.dtype()))) return UOp();
  return float32_op(u.op(), in_float32(u.src()), o).cast(u.dtype());
}

UOp half_comparison_in_float32(const Match& m) {
  const UOp& u = m.root();
  if (options_of(m).half_arithmetic || !is_half(u.src(0).dtype())) return UOp();
  return UOp::make(u.op(), u.dtype(), in_float32(u.src()));
}

UOp half_cast_through_float32(const Match& m) {
  const UOp &u = m.root(), &x = m["x"];
  DType from = x.dtype(), to = u.dtype();
  const LateLoweringOptions& o = options_of(m);
  if (o.half_arithmetic || from == to || from == dtypes::float32 || to == dtypes::float32) return UOp();
  if (!is_half(from) && !is_half(to)) return UOp();
  if (to.is_int() && !o.float_to_int_saturates) return saturating_float_to_int(x.cast(dtypes::float32), to);
  return x.cast(dtypes::float32).cast(to);
}

// ---- bool in memory ----------------------------------------------------------------------------------------

// A bool buffer (PARAM, or AFTER(PARAM, ...) for a local one) as the same buffer of uint8.
UOp as_bytes(const UOp& buf) {
  std::vector<UOp> src = buf.src();
  if (buf.op() == Ops::AFTER) src[0] = as_bytes(src[0]);
  return UOp::make(buf.op(), dtypes::uint8, std::move(src), buf.arg(), buf.tag());
}

// INDEX(bool buffer, ...) as INDEX(uint8 buffer, ...); a null UOp when `index` is not one.
UOp byte_index(const UOp& index) {
  if (index.op() != Ops::INDEX || index.src().empty() || index.src(0).dtype() != dtypes::bool_) return UOp();
  std::vector<UOp> src = index.src();
  src[0] = as_bytes(src[0]);
  return UOp::make(Ops::INDEX, dtypes::uint8, std::move(src), index.arg(), index.tag());
}

UOp bool_load_as_byte(const Match& m) {
  const UOp& u = m.root();
  UOp index = options_of(m).bool_memory ? UOp() : byte_index(u.src(0));
  if (!index) return UOp();
  std::vector<UOp> src = u.src();
  src[0] = index;
  UOp byte = UOp::make(Ops::LOAD, dtypes::uint8, std::move(src), u.arg(), u.tag());
  return byte.ne(byte.const_like(int64_t{0}));
}

UOp bool_store_as_byte(const Match& m) {
  const UOp& u = m.root();
  UOp index = options_of(m).bool_memory || u.src().size() < 2 ? UOp() : byte_index(u.src(0));
  if (!index) return UOp();
  std::vector<UOp> src = u.src();
  src[0] = index;
  src[1] = src[1].cast(dtypes::uint8);
  return UOp::make(Ops::STORE, u.dtype(), std::move(src), u.arg(), u.tag());
}

// ---- transcendentals ---------------------------------------------------------------------------------------

UOp decompose_float32(const Match& m) {
  const UOp& u = m.root();
  if (u.dtype() != dtypes::float32 || native_for(options_of(m), u.op(), u.dtype())) return UOp();
  return float32_op(u.op(), u.src(), options_of(m));
}

// One pass in Walk mode: every node is rewritten once, after its sources, and each rule builds the final form of
// its node (helpers such as truncating() and float32_op() lower what they make), so the large graphs of the
// decompositions are not walked again.
const PatternMatcher& late_lowering_rules() {
  const std::vector<DType> half{dtypes::float16, dtypes::bfloat16};
  static const PatternMatcher* pm = new PatternMatcher({
      // floor division and modulo: tried in this order
      {UPat(OpSet{Ops::FLOORDIV, Ops::FLOORMOD}, {UPat::var("a"), UPat::cvar("b")}), floor_by_power_of_two, "floordiv/floormod by 2^k: shift/mask"},
      {UPat(OpSet{Ops::FLOORDIV, Ops::FLOORMOD}, {UPat::var("a"), UPat::var("b")}), floor_of_non_negatives, "floordiv/floormod of non-negatives: cdiv/cmod"},
      {UPat(OpSet{Ops::FLOORDIV, Ops::FLOORMOD}, {UPat::var("a"), UPat::var("b")}), floor_with_sign_correction, "floordiv/floormod: cdiv/cmod and sign correction"},
      {UPat(OpSet{Ops::CDIV, Ops::CMOD}, {UPat::var("a"), UPat::var("b")}), guard_division, "cdiv/cmod by 0 or -1: guarded divisor"},
      {UPat(OpSet{Ops::SHL, Ops::SHR}, {UPat::var("a"), UPat::var("s")}), guard_shift, "shl/shr by an amount outside [0, width)"},
      // float16 and bfloat16
      {UPat::ops(kRounding).dtype(half), half_op_in_float32, "16-bit float op in float32"},
      {UPat(group::Comparison, {UPat::var("x").dtype(half), UPat::var("y")}), half_comparison_in_float32, "16-bit float comparison in float32"},
      {UPat(Ops::CAST, {UPat::var("x")}).dtype(half), half_cast_through_float32, "cast to a 16-bit float through float32"},
      {UPat(Ops::CAST, {UPat::var("x").dtype(half)}), half_cast_through_float32, "cast from a 16-bit float through float32"},
      {UPat(Ops::CAST, {UPat::var("x")}), lower_float_to_int, "float to int cast: saturated, NaN to 0"},
      // bool in memory
      {UPat(Ops::LOAD).dtype(dtypes::bool_), bool_load_as_byte, "bool load as a byte"},
      {UPat(Ops::STORE, {UPat(Ops::INDEX), UPat::var("v", dtypes::bool_)}).allow_any_len(), bool_store_as_byte, "bool store as a byte"},
      // transcendentals
      {UPat::ops(kTranscendental | OpSet{Ops::POW}).dtype(dtypes::float32), decompose_float32, "exp2/log2/sin/pow of float32 decomposed"},
  });
  return *pm;
}

// Whether some rule may rewrite u: a cheap test by op and dtype, true for every node a rule rewrites.
bool may_lower(const UOp& u) {
  switch (u.op()) {
    case Ops::FLOORDIV: case Ops::FLOORMOD: case Ops::CDIV: case Ops::CMOD:
    case Ops::EXP2: case Ops::LOG2: case Ops::SIN: case Ops::POW: case Ops::SHL: case Ops::SHR: return true;
    case Ops::CAST: return u.dtype().is_int() && u.src(0).dtype().is_float() ? true : is_half(u.dtype()) || is_half(u.src(0).dtype());
    case Ops::LOAD: return u.dtype().is_bool();
    case Ops::STORE: return u.src().size() > 1 && u.src(1).dtype().is_bool();
    default: return is_half(u.dtype()) || (!u.src().empty() && is_half(u.src(0).dtype()));
  }
}

}  // namespace

bool FloatDTypes::contains(DType d) const {
  switch (d.scalar_type) {
    case ScalarType::Float16: return float16;
    case ScalarType::BFloat16: return bfloat16;
    case ScalarType::Float32: return float32;
    case ScalarType::Float64: case ScalarType::WeakFloat: return float64;
    default: return false;
  }
}

LateLoweringOptions c_lowering_options() {
  return {.transcendentals = {.float64 = true}, .pow = {.float32 = true, .float64 = true}};
}

// PTX ISA "shl", "shr": amounts (read as .u32) larger than the width act as the width; "cvt": float-to-integer
// conversions clamp to the destination range and take NaN to 0: both already are the IR's definitions.
LateLoweringOptions ptx_lowering_options() {
  LateLoweringOptions o;
  o.shift_edge_cases = o.float_to_int_saturates = true;
  return o;
}

LateLoweringOptions amdgpu_lowering_options() { return {}; }

LateLoweringOptions spirv_lowering_options() {
  LateLoweringOptions o;  // every flag false: what SPIR-V leaves undefined or lacks goes through the rules above
  return o;
}

UOp lower_late(const UOp& sink, const LateLoweringOptions& options) {
  if (!sink) throw std::invalid_argument("lower_late: expected a kernel SINK, got a null UOp");
  // many kernels have nothing to lower (float32 math, index math without division): a scan is cheaper than a pass
  std::vector<UOp> nodes = sink.toposort();
  if (std::none_of(nodes.begin(), nodes.end(), may_lower)) return sink;
  return graph_rewrite(sink, late_lowering_rules(),
                       {.mode = RewriteMode::Walk, .ctx = const_cast<LateLoweringOptions*>(&options), .name = "lower_late"});
}

}  // namespace doorbell
