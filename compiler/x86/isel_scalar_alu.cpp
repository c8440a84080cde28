// Scalar values for x86 instruction selection (compiler/x86/isel_scalar.h): every op the C renderer's alu() handles,
// for every dtype it handles, giving the same bits as its C code compiled by clang (compiler/c_renderer.cpp,
// ir/exec_alu.h). Integers live in GPRs, valid in the low bits of their width (arithmetic runs at 32 or 64 bits, which
// wraps the low bits the same); floats in the low lane of an xmm, float16 / bfloat16 as their float32 value.
// Semantics choices (ucomiss flags, cvtt*, F16C rounding, idiv, libm calls): firmware-notes/x86-isel.md.
#include <bit>
#include <cmath>
#include <cstring>

#include "compiler/x86/isel_scalar.h"
#include "ir/exec_alu.h"

namespace doorbell::x86 {
namespace {

Operand R(Reg r, uint16_t bits) { return op_reg(with_bits(r, bits)); }
Operand X(Reg r) { return op_reg(with_bits(r, 128)); }

bool is_cmp(Ops op) { return op == Ops::CMPLT || op == Ops::CMPNE || op == Ops::CMPEQ; }
bool fits_i32(__int128 v) { return v >= INT32_MIN && v <= INT32_MAX; }

std::string le_bytes(uint64_t v, int n) {
  std::string s(static_cast<size_t>(n), '\0');
  for (int i = 0; i < n; i++) s[static_cast<size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

// The float in a register of dtype d (float16/bfloat16 are float32 values) as pool bytes.
std::string float_bytes(DType d, double v) {
  if (is_double_dtype(d)) return le_bytes(std::bit_cast<uint64_t>(v), 8);
  return le_bytes(std::bit_cast<uint32_t>(static_cast<float>(v)), 4);
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// operands

std::optional<Operand> ScalarSelector::imm(const UOp& u, uint16_t width) const {
  if (u.dtype().is_float() || u.dtype().lanes != 1) return std::nullopt;
  std::optional<ConstValue> f = const_cast<ScalarSelector*>(this)->folded(u);
  if (!f || std::holds_alternative<double>(*f)) return std::nullopt;
  ConstValue v = *f;
  int64_t s = std::holds_alternative<bool>(v) ? int64_t{std::get<bool>(v)} : std::get<int64_t>(v);
  if (width == 64) {
    if (!fits_i32(int_value(u.dtype(), s))) return std::nullopt;
    return op_imm(s);
  }
  return op_imm(static_cast<int32_t>(static_cast<uint32_t>(s)));  // the low 32 bits
}

std::optional<ConstValue> ScalarSelector::folded(const UOp& u) {
  if (u.op() == Ops::CONST) {
    if (u.dtype().lanes != 1 || std::holds_alternative<Invalid>(u.arg())) return std::nullopt;
    return u.const_value();
  }
  if (u.dtype().lanes != 1 || u.src().empty()) return std::nullopt;
  if (!(group::ALU.contains(u.op()) || u.op() == Ops::CAST || u.op() == Ops::BITCAST)) return std::nullopt;
  auto it = folded_.find(u.get());
  if (it != folded_.end()) return it->second;
  std::optional<ConstValue> out;
  std::vector<ConstValue> vals;
  std::vector<DType> ins;
  bool all = true;
  for (const UOp& x : u.src()) {
    std::optional<ConstValue> v = x.dtype().lanes == 1 ? folded(x) : std::nullopt;
    if (!v) { all = false; break; }
    vals.push_back(*v);
    ins.push_back(x.dtype());
  }
  // transcendentals stay calls: exec_alu's std:: functions are not the ones the kernel would link
  bool libm = u.op() == Ops::EXP2 || u.op() == Ops::LOG2 || u.op() == Ops::SIN || u.op() == Ops::POW;
  if (all && !libm) out = exec_alu(u.op(), u.dtype(), vals, ins);
  folded_.emplace(u.get(), out);
  return out;
}

Reg ScalarSelector::constant_reg(DType d, const ConstValue& v, bool remat) {
  if (d.is_float()) {
    double x = std::holds_alternative<double>(v) ? std::get<double>(v)
               : std::holds_alternative<bool>(v) ? (std::get<bool>(v) ? 1.0 : 0.0) : static_cast<double>(std::get<int64_t>(v));
    bool dbl = is_double_dtype(d);
    Reg r = cx.new_vec(128);
    cx.emit(dbl ? Mn::vmovsd : Mn::vmovss, {X(r), op_mem(cx.constant(float_bytes(d, x), dbl ? 8 : 4, dbl ? 64 : 32))}).remat = remat;
    return r;
  }
  int64_t s = std::holds_alternative<bool>(v) ? int64_t{std::get<bool>(v)}
              : std::holds_alternative<double>(v) ? static_cast<int64_t>(std::get<double>(v)) : std::get<int64_t>(v);
  Reg r = cx.new_gpr();
  uint16_t w = op_bits(d);
  if (w == 64 && !fits_i32(int_value(d, s))) cx.emit(Mn::movabs, {R(r, 64), op_imm(s)}).remat = remat;
  else if (w == 64) cx.emit(Mn::mov, {R(r, 64), op_imm(s)}).remat = remat;
  else cx.emit(Mn::mov, {R(r, 32), op_imm(static_cast<int32_t>(static_cast<uint32_t>(s)))}).remat = remat;
  return with_bits(r, natural_bits(d));
}

Reg ScalarSelector::scalar(const UOp& u) {
  if (cx.defined(u)) return cx.reg_of(u);
  if (u.dtype().lanes != 1) isel_fail("a vector where a scalar is expected", u);
  if (std::optional<ConstValue> f = folded(u)) return constant_reg(u.dtype(), *f, true);
  if (is_cmp(u.op()) && remat_compare(u)) return materialize_compare(u);
  if (u.op() == Ops::ADD && address_only_.count(u.get())) return value(u);  // read as a value after all: made here
  if (u.op() == Ops::MUL && scaled_offsets_.count(u.get())) return value(u);
  if (unmade_.count(u.get())) return value(u);  // c * stride and sums only hoisted addresses were to read
  return cx.reg_of(u);  // throws naming u
}

Reg ScalarSelector::scalar_gpr32(const UOp& u) {
  DType d = u.dtype();
  if (d.is_float()) isel_fail("a float where a 32-bit integer is expected", u);
  if (d.is_bool()) return ext(u, 32);
  return with_bits(scalar(u), 32);
}

Reg ScalarSelector::copy(Reg r) {
  if (r.cls == RegClass::GPR) {
    Reg d = cx.new_gpr();
    cx.emit(Mn::mov, {R(d, 64), R(r, 64)});
    return with_bits(d, r.bits);
  }
  Reg d = cx.new_vec(r.bits);
  cx.emit(Mn::vmovaps, {op_reg(d), op_reg(r)});
  return d;
}

// u's integer value extended to `bits` (32 or 64) by its dtype's signedness (bool: 0 or 1).
Reg ScalarSelector::ext(const UOp& u, uint16_t bits) {
  DType d = u.dtype();
  if (d.is_float()) isel_fail("a float where an integer is expected", u);
  if (std::optional<ConstValue> f = folded(u)) {
    ConstValue v = *f;
    int64_t s = std::holds_alternative<bool>(v) ? int64_t{std::get<bool>(v)} : std::get<int64_t>(v);
    Reg r = cx.new_gpr();
    if (bits == 64 && !fits_i32(int_value(d, s))) cx.emit(Mn::movabs, {R(r, 64), op_imm(s)}).remat = true;
    else if (bits == 64) cx.emit(Mn::mov, {R(r, 64), op_imm(s)}).remat = true;
    else cx.emit(Mn::mov, {R(r, 32), op_imm(static_cast<int32_t>(static_cast<uint32_t>(s)))}).remat = true;
    return with_bits(r, bits);
  }
  Reg r = scalar(u);
  uint16_t n = natural_bits(d);
  if (u.op() == Ops::RANGE) return with_bits(r, bits);  // the counter is exact in 64 bits
  if (n >= bits) return with_bits(r, bits);
  bool sign = !d.is_unsigned() && !d.is_bool();
  Reg e = cx.new_gpr();
  if (n == 32) {  // bits == 64
    if (sign) cx.emit(Mn::movsxd, {R(e, 64), R(r, 32)});
    else cx.emit(Mn::mov, {R(e, 32), R(r, 32)});  // a 32-bit write clears the upper half
  } else {
    cx.emit(sign ? Mn::movsx : Mn::movzx, {R(e, sign ? bits : 32), R(r, n)});
  }
  return with_bits(e, bits);
}

Operand ScalarSelector::float_src(const UOp& u) {
  if (std::optional<ConstValue> f = folded(u); f && std::holds_alternative<double>(*f)) {
    bool dbl = is_double_dtype(u.dtype());
    return op_mem(cx.constant(float_bytes(u.dtype(), std::get<double>(*f)), dbl ? 8 : 4, dbl ? 64 : 32));
  }
  return X(scalar(u));
}

// ---------------------------------------------------------------------------------------------------------------
// compares and conditions

// cmp / ucomiss of the operands: ints by their dtype's signedness at 32 or 64 bits; floats with the ordered answer
// the C operators give (NaN: < and == false, != true). SDM vol. 2 "UCOMISS": unordered sets ZF, PF, CF.
Flags ScalarSelector::compare(const UOp& c) {
  const UOp &a = c.src(0), &b = c.src(1);
  DType t = a.dtype();
  if (t.lanes != 1) isel_fail("a vector compare where a scalar is expected", c);
  if (t.is_float()) {
    bool dbl = is_double_dtype(t);
    Mn ucomi = dbl ? Mn::vucomisd : Mn::vucomiss;
    if (c.op() == Ops::CMPLT) {  // a < b  <=>  b > a: "above" is false when unordered
      Reg rb = scalar(b);
      cx.emit(ucomi, {X(rb), float_src(a)});
      return Flags{Cc::A};
    }
    Reg ra = scalar(a);
    cx.emit(ucomi, {X(ra), float_src(b)});
    if (c.op() == Ops::CMPEQ) return Flags{Cc::E, Flags::Extra::AND_NP};
    return Flags{Cc::NE, Flags::Extra::OR_P};
  }
  uint16_t w = op_bits(t);
  bool sign = !t.is_unsigned() && !t.is_bool();
  Cc lt = sign ? Cc::L : Cc::B, gt = sign ? Cc::G : Cc::A;
  Cc cc = c.op() == Ops::CMPLT ? lt : c.op() == Ops::CMPEQ ? Cc::E : Cc::NE;
  if (is_const(a) && !is_const(b)) {  // c < x  <=>  x > c: the constant as the immediate
    Reg rb = ext(b, w);
    std::optional<Operand> ia = imm(a, w);
    cx.emit(Mn::cmp, {R(rb, w), ia ? *ia : R(ext(a, w), w)});
    return Flags{c.op() == Ops::CMPLT ? gt : cc};
  }
  Reg ra = ext(a, w);
  std::optional<Operand> ib = imm(b, w);
  cx.emit(Mn::cmp, {R(ra, w), ib ? *ib : R(ext(b, w), w)});
  return Flags{cc};
}

// Flags true when the bool c is: a compare re-emitted, a constant as an always / never jump, else test.
Flags ScalarSelector::condition(const UOp& c) {
  if (c.dtype().lanes != 1) isel_fail("a vector condition where a scalar is expected", c);
  if (is_cmp(c.op()) && !cx.defined(c)) return compare(c);
  Reg r = scalar(c);
  uint16_t n = natural_bits(c.dtype());
  if (n < 32) cx.emit(Mn::test, {R(r, n), R(r, n)});
  else cx.emit(Mn::test, {R(r, op_bits(c.dtype())), R(r, op_bits(c.dtype()))});
  return Flags{Cc::NE};
}

void ScalarSelector::branch_unless(const Flags& f, int32_t label) {
  switch (f.extra) {
    case Flags::Extra::NONE: cx.emit(jcc(negate(f.cc)), {op_label(label)}); return;
    case Flags::Extra::AND_NP:  // false when !cc or unordered
      cx.emit(jcc(negate(f.cc)), {op_label(label)});
      cx.emit(Mn::jp, {op_label(label)});
      return;
    case Flags::Extra::OR_P: {  // false when !cc and ordered
      int32_t keep = cx.new_label();
      cx.emit(Mn::jp, {op_label(keep)});
      cx.emit(jcc(negate(f.cc)), {op_label(label)});
      cx.place_label(keep);
      return;
    }
  }
}

// setcc into a fresh register cleared first: setcc writes 8 bits and keeps the rest, so without the clearing mov
// (flags untouched) the allocator would see a read of the register before any definition (regalloc.h).
Reg ScalarSelector::set_flag(Cc cc) {
  Reg d = cx.new_gpr();
  cx.emit(Mn::mov, {R(d, 32), op_imm(0)});
  cx.emit(setcc(cc), {R(d, 8)});
  return with_bits(d, 8);
}

Reg ScalarSelector::materialize_compare(const UOp& c) {
  Flags f = compare(c);
  Reg d = set_flag(f.cc);
  if (f.extra != Flags::Extra::NONE) {
    bool and_np = f.extra == Flags::Extra::AND_NP;
    Reg t = set_flag(and_np ? Cc::NP : Cc::P);
    cx.emit(and_np ? Mn::and_ : Mn::or_, {R(d, 32), R(t, 32)});
  }
  return with_bits(d, 8);
}

// ---------------------------------------------------------------------------------------------------------------
// memory

Reg ScalarSelector::load_value(const UOp& load) {
  const UOp& index = load.src(0);
  DType m = indexed_buffer(index).dtype().scalar();
  DType d = load.dtype();
  uint16_t bits = static_cast<uint16_t>(m.itemsize() * 8);
  Mem at = element(index, bits);
  bool gated = index.src().size() >= 3;
  Reg r;
  if (d.is_float()) {
    r = cx.new_vec(128);
    if (gated) cx.emit(Mn::vmovss, {X(r), op_mem(cx.constant(le_bytes(0, 4), 4, 32))});  // a false gate reads 0
    int32_t skip = branch_unless_gate(index);
    if (m.scalar_type == ScalarType::Float16 || m.scalar_type == ScalarType::BFloat16) {
      Reg g = cx.new_gpr();
      cx.emit(Mn::movzx, {R(g, 32), op_mem(at)});
      if (m.scalar_type == ScalarType::BFloat16) cx.emit(Mn::shl, {R(g, 32), op_imm(16)});  // db_bf2f
      cx.emit(Mn::vmovd, {X(r), R(g, 32)});
      if (m.scalar_type == ScalarType::Float16) cx.emit(Mn::vcvtph2ps, {X(r), X(r)});  // db_h2f, exact
    } else if (is_double_dtype(m)) {
      cx.emit(Mn::vmovsd, {X(r), op_mem(at)});
    } else if (m.scalar_type == ScalarType::Float32) {
      cx.emit(Mn::vmovss, {X(r), op_mem(at)});
    } else {
      isel_fail("a float load from a " + m.name() + " buffer", load);
    }
    if (is_double_dtype(d) != is_double_dtype(m)) isel_fail("a load whose dtype differs from its buffer's", load);
    if (skip >= 0) cx.place_label(skip);
    return r;
  }
  if (m.is_float()) isel_fail("an integer load from a float buffer", load);
  r = cx.new_gpr();
  if (gated) cx.emit(Mn::mov, {R(r, 32), op_imm(0)});
  int32_t skip = branch_unless_gate(index);
  bool sign = !m.is_unsigned() && !m.is_bool();
  if (bits == 64) cx.emit(Mn::mov, {R(r, 64), op_mem(at)});
  else if (bits == 32) cx.emit(Mn::mov, {R(r, 32), op_mem(at)});
  else cx.emit(sign ? Mn::movsx : Mn::movzx, {R(r, 32), op_mem(at)});
  if (skip >= 0) cx.place_label(skip);
  return with_bits(r, natural_bits(d));
}

// `data[i] = (storage type)value`: integers truncated to the element, float16 through vcvtps2ph (round to nearest
// even), bfloat16 with db_f2bf's integer rounding.
void ScalarSelector::store_value(const UOp& st, const Mem& at) {
  const UOp& v = st.src(1);
  DType m = indexed_buffer(st.src(0)).dtype().scalar();
  uint16_t bits = static_cast<uint16_t>(m.itemsize() * 8);
  if (m.is_float()) {
    if (!v.dtype().is_float()) isel_fail("an integer stored to a float buffer", st);
    if (std::optional<ConstValue> f = folded(v); f && std::holds_alternative<double>(*f) && !is_half_dtype(m)) {
      double x = std::get<double>(*f);  // the constant's bits as an immediate
      uint64_t b = is_double_dtype(m) ? std::bit_cast<uint64_t>(x) : std::bit_cast<uint32_t>(static_cast<float>(x));
      if (bits == 32 || fits_i32(static_cast<int64_t>(b))) {
        cx.emit(Mn::mov, {op_mem(at), op_imm(bits == 32 ? static_cast<int32_t>(static_cast<uint32_t>(b)) : static_cast<int64_t>(b))});
        return;
      }
    }
    Reg x = scalar(v);
    if (is_double_dtype(m)) {
      if (!is_double_dtype(v.dtype())) isel_fail("a float32 stored to a float64 buffer", st);
      cx.emit(Mn::vmovsd, {op_mem(at), X(x)});
    } else if (is_double_dtype(v.dtype())) {
      isel_fail("a float64 stored to a " + m.name() + " buffer", st);
    } else if (m.scalar_type == ScalarType::Float32) {
      cx.emit(Mn::vmovss, {op_mem(at), X(x)});
    } else {
      Reg b = m.scalar_type == ScalarType::Float16 ? f16_bits(x) : bf16_bits(x);
      cx.emit(Mn::mov, {op_mem(at), R(b, 16)});
    }
    return;
  }
  if (v.dtype().is_float()) isel_fail("a float stored to an integer buffer", st);
  if (auto i = imm(v, bits == 64 ? 64 : 32)) {
    int64_t x = i->imm;
    if (bits == 8) x = static_cast<int8_t>(x);
    if (bits == 16) x = static_cast<int16_t>(x);
    cx.emit(Mn::mov, {op_mem(at), op_imm(x)});
    return;
  }
  Reg r = scalar(v);
  if (natural_bits(v.dtype()) < bits) r = ext(v, bits == 64 ? 64 : 32);  // a narrower value widened as C converts
  cx.emit(Mn::mov, {op_mem(at), R(r, bits)});
}

// ---------------------------------------------------------------------------------------------------------------
// 16-bit floats

Reg ScalarSelector::f16_bits(Reg x) {
  Reg t = cx.new_vec(128);
  cx.emit(Mn::vcvtps2ph, {X(t), X(x), op_imm(0)});  // imm 0: round to nearest even (SDM "VCVTPS2PH" table)
  Reg g = cx.new_gpr();
  cx.emit(Mn::vmovd, {R(g, 32), X(t)});
  return with_bits(g, 16);
}

// db_f2bf: NaN -> (u >> 16) | 0x40; else (u + 0x7fff + ((u >> 16) & 1)) >> 16.
Reg ScalarSelector::bf16_bits(Reg x) {
  Reg u = cx.new_gpr(), t = cx.new_gpr(), r = cx.new_gpr(), n = cx.new_gpr();
  cx.emit(Mn::vmovd, {R(u, 32), X(x)});
  cx.emit(Mn::mov, {R(n, 32), R(u, 32)});
  cx.emit(Mn::shr, {R(n, 32), op_imm(16)});
  cx.emit(Mn::mov, {R(t, 32), R(n, 32)});
  cx.emit(Mn::and_, {R(t, 32), op_imm(1)});
  cx.emit(Mn::or_, {R(n, 32), op_imm(0x40)});
  cx.emit(Mn::lea, {R(r, 32), op_mem([&] {
                      Mem m;
                      m.bits = 0;
                      m.base = with_bits(u, 64);
                      m.has_index = true;
                      m.index = with_bits(t, 64);
                      m.disp = 0x7fff;
                      return m;
                    }())});
  cx.emit(Mn::shr, {R(r, 32), op_imm(16)});
  cx.emit(Mn::vucomiss, {X(x), X(x)});  // unordered: NaN
  cx.emit(Mn::cmovp, {R(r, 32), R(n, 32)});
  return with_bits(r, 16);
}

Reg ScalarSelector::half_round(Reg x, DType to) {
  Reg d = cx.new_vec(128);
  if (to.scalar_type == ScalarType::Float16) {  // db_rh: vcvtps2ph rounds as db_f2h, vcvtph2ps is exact
    Reg t = cx.new_vec(128);
    cx.emit(Mn::vcvtps2ph, {X(t), X(x), op_imm(0)});
    cx.emit(Mn::vcvtph2ps, {X(d), X(t)});
    return d;
  }
  Reg b = bf16_bits(x);
  cx.emit(Mn::shl, {R(b, 32), op_imm(16)});
  cx.emit(Mn::vmovd, {X(d), R(b, 32)});
  return d;
}

// ---------------------------------------------------------------------------------------------------------------
// conversions

// (float) / (double) of an integer, one rounding: signed sources of up to 32 bits through cvtsi2ss r32, uint32 as an
// int64, uint64 halved with its low bit kept (round to odd) and doubled when its top bit is set, or vcvtusi2ss.
Reg ScalarSelector::int_to_float(const UOp& src, bool dbl) {
  DType t = src.dtype();
  Mn cvt = dbl ? Mn::vcvtsi2sd : Mn::vcvtsi2ss;
  Reg d = cx.new_vec(128);
  // the conversions keep their first source's upper lanes: a zero register there, not d itself (which would read d
  // before any definition and make it look loop-carried)
  Reg z = cx.new_vec(128);
  cx.emit(Mn::vmovss, {X(z), op_mem(cx.constant(le_bytes(0, 4), 4, 32))}).remat = true;
  uint16_t n = natural_bits(t);
  if (t.scalar_type == ScalarType::UInt64) {
    Reg x = scalar(src);
    if (cx.options.features.avx512f) {
      cx.emit(dbl ? Mn::vcvtusi2sd : Mn::vcvtusi2ss, {X(d), X(z), R(x, 64)});
      return d;
    }
    int32_t done = cx.new_label();
    cx.emit(cvt, {X(d), X(z), R(x, 64)});
    cx.emit(Mn::test, {R(x, 64), R(x, 64)});
    cx.emit(Mn::jns, {op_label(done)});
    Reg h = cx.new_gpr(), lo = cx.new_gpr();
    cx.emit(Mn::mov, {R(h, 64), R(x, 64)});
    cx.emit(Mn::shr, {R(h, 64), op_imm(1)});
    cx.emit(Mn::mov, {R(lo, 32), R(x, 32)});
    cx.emit(Mn::and_, {R(lo, 32), op_imm(1)});
    cx.emit(Mn::or_, {R(h, 64), R(lo, 64)});
    cx.emit(cvt, {X(d), X(z), R(h, 64)});
    cx.emit(dbl ? Mn::vaddsd : Mn::vaddss, {X(d), X(d), X(d)});
    cx.place_label(done);
    return d;
  }
  if (n == 64) {
    cx.emit(cvt, {X(d), X(z), R(scalar(src), 64)});
  } else if (t.scalar_type == ScalarType::UInt32) {
    cx.emit(cvt, {X(d), X(z), R(ext(src, 64), 64)});
  } else {
    cx.emit(cvt, {X(d), X(z), R(ext(src, 32), 32)});
  }
  return d;
}

// Truncation toward zero; lower_late has clamped the value into the destination's range (firmware-notes/x86-isel.md):
// up to 32-bit signed and 16-bit unsigned results through cvttss2si r32, uint32 through r64, uint64 >= 2^63 as
// cvtt(x - 2^63) with the top bit set, selected by the first conversion's "integer indefinite" sign.
Reg ScalarSelector::float_to_int(Reg a, bool dbl, DType to) {
  Mn cvtt = dbl ? Mn::vcvttsd2si : Mn::vcvttss2si;
  Reg r = cx.new_gpr();
  uint16_t n = natural_bits(to);
  if (to.scalar_type == ScalarType::UInt64) {
    if (cx.options.features.avx512f) {
      cx.emit(dbl ? Mn::vcvttsd2usi : Mn::vcvttss2usi, {R(r, 64), X(a)});
      return r;
    }
    Reg y = cx.new_vec(128), hi = cx.new_gpr(), s = cx.new_gpr();
    double two63 = 9223372036854775808.0;
    cx.emit(cvtt, {R(r, 64), X(a)});
    Operand c = op_mem(cx.constant(dbl ? le_bytes(std::bit_cast<uint64_t>(two63), 8) : le_bytes(std::bit_cast<uint32_t>(static_cast<float>(two63)), 4),
                                   dbl ? 8 : 4, dbl ? 64 : 32));
    cx.emit(dbl ? Mn::vsubsd : Mn::vsubss, {X(y), X(a), c});
    cx.emit(cvtt, {R(hi, 64), X(y)});
    cx.emit(Mn::mov, {R(s, 64), R(r, 64)});
    cx.emit(Mn::sar, {R(s, 64), op_imm(63)});
    cx.emit(Mn::and_, {R(hi, 64), R(s, 64)});
    cx.emit(Mn::or_, {R(r, 64), R(hi, 64)});
    return r;
  }
  bool wide = n == 64 || to.scalar_type == ScalarType::UInt32;
  cx.emit(cvtt, {R(r, wide ? 64 : 32), X(a)});
  return with_bits(r, n);
}

Reg ScalarSelector::select_cast(const UOp& u) {
  DType o = u.dtype();
  const UOp& s = u.src(0);
  DType i = s.dtype();
  if (o.is_bool()) {  // (uint8_t)(a != 0)
    Flags f;
    if (i.is_float()) {
      bool dbl = is_double_dtype(i);
      cx.emit(dbl ? Mn::vucomisd : Mn::vucomiss, {X(scalar(s)), op_mem(cx.constant(le_bytes(0, dbl ? 8 : 4), dbl ? 8 : 4, dbl ? 64 : 32))});
      f = Flags{Cc::NE, Flags::Extra::OR_P};
    } else {
      f = condition(s);
    }
    Reg d = set_flag(f.cc);
    if (f.extra == Flags::Extra::OR_P) {
      Reg t = set_flag(Cc::P);
      cx.emit(Mn::or_, {R(d, 32), R(t, 32)});
    }
    return with_bits(d, 8);
  }
  if (o.is_float()) {
    bool od = is_double_dtype(o);
    Reg r;
    if (i.is_float()) {
      bool id = is_double_dtype(i);
      Reg a = scalar(s);
      if (od == id) {
        if (!is_half_dtype(o) || o == i) return s.op() == Ops::REDUCE ? copy(a) : a;  // already the value
        return half_round(a, o);
      }
      r = cx.new_vec(128);
      cx.emit(od ? Mn::vcvtss2sd : Mn::vcvtsd2ss, {X(r), X(a), X(a)});
    } else {
      r = int_to_float(s, od);
    }
    return is_half_dtype(o) ? half_round(r, o) : r;
  }
  if (!o.is_int()) isel_fail("a CAST to " + o.name(), u);
  if (i.is_float()) return float_to_int(scalar(s), is_double_dtype(i), o);
  uint16_t no = natural_bits(o), ni = natural_bits(i);
  if (no <= ni && !i.is_bool()) {  // the low bits
    Reg a = scalar(s);
    return with_bits(s.op() == Ops::REDUCE ? copy(a) : a, no);
  }
  return with_bits(ext(s, no == 64 ? 64 : 32), no);
}

// memcpy of the bits: float16 / bfloat16 through their storage bits (db_f2h / db_f2bf, db_h2f / db_bf2f).
Reg ScalarSelector::select_bitcast(const UOp& u) {
  DType o = u.dtype();
  const UOp& s = u.src(0);
  DType i = s.dtype();
  Reg a = scalar(s);
  Reg bits;  // GPR with the source's bits in its low bits
  if (i.scalar_type == ScalarType::Float16) bits = f16_bits(a);
  else if (i.scalar_type == ScalarType::BFloat16) bits = bf16_bits(a);
  else if (is_double_dtype(i)) { bits = cx.new_gpr(); cx.emit(Mn::vmovq, {R(bits, 64), X(a)}); }
  else if (i.is_float()) { bits = cx.new_gpr(); cx.emit(Mn::vmovd, {R(bits, 32), X(a)}); }
  else bits = s.op() == Ops::REDUCE ? copy(a) : a;
  if (o.scalar_type == ScalarType::Float16 || o.scalar_type == ScalarType::BFloat16) {
    Reg g = cx.new_gpr(), d = cx.new_vec(128);
    if (o.scalar_type == ScalarType::Float16) cx.emit(Mn::movzx, {R(g, 32), R(bits, 16)});
    else { cx.emit(Mn::mov, {R(g, 32), R(bits, 32)}); cx.emit(Mn::shl, {R(g, 32), op_imm(16)}); }
    cx.emit(Mn::vmovd, {X(d), R(g, 32)});
    if (o.scalar_type == ScalarType::Float16) cx.emit(Mn::vcvtph2ps, {X(d), X(d)});
    return d;
  }
  if (is_double_dtype(o)) { Reg d = cx.new_vec(128); cx.emit(Mn::vmovq, {X(d), R(bits, 64)}); return d; }
  if (o.is_float()) { Reg d = cx.new_vec(128); cx.emit(Mn::vmovd, {X(d), R(bits, 32)}); return d; }
  if (o.is_bool()) {  // (uint8_t)(bits != 0)
    uint16_t n = static_cast<uint16_t>(i.itemsize() * 8);
    cx.emit(Mn::test, {R(bits, n), R(bits, n)});
    return set_flag(Cc::NE);
  }
  return with_bits(bits, natural_bits(o));
}

// Float selects. VEX: a VEC mask (all ones in the value's low element) and vblendvps. With AVX-512 the allocator may
// give any value xmm16-31, which VEX cannot encode (vcmpss into an xmm, vblendvps and vroundss have no EVEX form):
// there the mask is a k register (bit 0) and the select a merge-masked vmovss / vmovsd (firmware-notes/x86-isel.md §3).
ScalarSelector::Sel ScalarSelector::compare_mask(int pred, bool dbl, Reg a, const Operand& b) {
  Mn cmp = dbl ? Mn::vcmpsd : Mn::vcmpss;
  if (cx.evex) {
    Reg k = cx.new_mask();
    cx.emit(cmp, {op_reg(k), X(a), b, op_imm(pred)});
    return Sel{k, dbl};
  }
  Reg m = cx.new_vec(128);
  cx.emit(cmp, {X(m), X(a), b, op_imm(pred)});
  return Sel{m, dbl};
}

ScalarSelector::Sel ScalarSelector::bool_mask(const UOp& c) {
  Reg b = ext(c, 32);  // 0 or 1
  if (cx.evex) {
    Reg k = cx.new_mask();
    cx.emit(Mn::kmovw, {op_reg(k), R(b, 32)});
    return Sel{k, true};
  }
  Reg g = cx.new_gpr(), m = cx.new_vec(128);
  cx.emit(Mn::mov, {R(g, 32), R(b, 32)});
  cx.emit(Mn::neg, {R(g, 64)});  // 0 or all ones: a mask for a float and for a double
  cx.emit(Mn::vmovq, {X(m), R(g, 64)});
  return Sel{m, true};
}

void ScalarSelector::blend_into(Reg d, Reg y, Reg x, Sel m, bool dbl) {
  if (m.r.cls == RegClass::MASK) {
    if (!(d == y)) cx.emit(Mn::vmovaps, {X(d), X(y)});
    Inst& i = cx.emit(dbl ? Mn::vmovsd : Mn::vmovss, {X(d), X(d), X(x)});
    i.masked = true;
    i.mask = m.r;
    return;
  }
  Reg mask = m.r;
  if (dbl && !m.covers_double) {  // a float32 mask widened to 64 bits: vblendvps reads both dwords of a double
    Reg g = cx.new_gpr();
    mask = cx.new_vec(128);
    cx.emit(Mn::vmovd, {R(g, 32), X(m.r)});
    cx.emit(Mn::movsxd, {R(g, 64), R(g, 32)});
    cx.emit(Mn::vmovq, {X(mask), R(g, 64)});
  }
  cx.emit(Mn::vblendvps, {X(d), X(y), X(x), X(mask)});
}

// c ? x : y. Integers: cmov on the flags of the (re-emitted) condition. Floats: a mask of the float compare (redone
// from its operands even when it is also kept as a bool) or of the bool, and a blend.
Reg ScalarSelector::select_where(const UOp& u) {
  const UOp &c = u.src(0), &x = u.src(1), &y = u.src(2);
  DType d = u.dtype();
  if (std::optional<ConstValue> f = folded(c); f && std::holds_alternative<bool>(*f)) {
    const UOp& pick = std::get<bool>(*f) ? x : y;
    Reg r = scalar(pick);
    return pick.op() == Ops::REDUCE ? copy(r) : r;
  }
  if (d.is_float()) {
    bool dbl = is_double_dtype(d);
    // (p < q) ? q : p is MAXSS(q, p) and (p < q) ? p : q is MINSS(p, q): each gives its first operand when that is
    // greater (less) and else its second, NaNs and equal zeros included, as the ternary (SDM vol. 2 ch. 4, MAXSS,
    // MINSS): one instruction instead of a compare and a blend (relu is (0 < x) ? x : 0)
    if (c.op() == Ops::CMPLT && c.src().size() == 2 && !is_half_dtype(d) && c.src(0).dtype() == d) {
      const UOp &p = c.src(0), &q = c.src(1);
      const bool max = x == q && y == p, min = x == p && y == q;
      if (max || min) {
        Reg r = cx.new_vec(128);
        Mn mn = max ? (dbl ? Mn::vmaxsd : Mn::vmaxss) : (dbl ? Mn::vminsd : Mn::vminss);
        cx.emit(mn, {X(r), X(scalar(max ? q : p)), float_src(max ? p : q)});
        return r;
      }
    }
    Reg rx = scalar(x), ry = scalar(y);
    Sel m;
    if (is_cmp(c.op()) && c.src(0).dtype().is_float() && c.src(0).dtype().lanes == 1) {
      int pred = c.op() == Ops::CMPLT ? 1 : c.op() == Ops::CMPEQ ? 0 : 4;  // LT_OS, EQ_OQ, NEQ_UQ (SDM table 3-1)
      m = compare_mask(pred, is_double_dtype(c.src(0).dtype()), scalar(c.src(0)), float_src(c.src(1)));
    } else {
      m = bool_mask(c);
    }
    Reg r = cx.new_vec(128);
    blend_into(r, ry, rx, m, dbl);
    return r;
  }
  uint16_t w = op_bits(d);
  Reg rx = d.is_bool() ? scalar(x) : ext(x, w), ry = d.is_bool() ? scalar(y) : ext(y, w);
  if (d.is_bool()) w = 32;
  Flags f = condition(c);
  Reg r = cx.new_gpr();
  switch (f.extra) {
    case Flags::Extra::NONE: {
      Inst& i = cx.emit(cmovcc(f.cc), {R(r, w), R(ry, w), R(rx, w)});
      i.tied = true;
      break;
    }
    case Flags::Extra::AND_NP: {  // x, unless not-equal or unordered
      Inst& i = cx.emit(Mn::cmovne, {R(r, w), R(rx, w), R(ry, w)});
      i.tied = true;
      cx.emit(Mn::cmovp, {R(r, w), R(ry, w)});
      break;
    }
    case Flags::Extra::OR_P: {  // y, unless not-equal or unordered
      Inst& i = cx.emit(Mn::cmovne, {R(r, w), R(ry, w), R(rx, w)});
      i.tied = true;
      cx.emit(Mn::cmovp, {R(r, w), R(rx, w)});
      break;
    }
  }
  return with_bits(r, natural_bits(d));
}

// ---------------------------------------------------------------------------------------------------------------
// arithmetic

// db_maxf(a, b): NaN (the default 0x7fc00000 / 0x7ff8...) when either is NaN, else a < b ? b : a. vmaxss d, b, a
// gives b > a ? b : a (its second source when neither is greater, zeros of either sign included: SDM "MAXSS"),
// which is a < b ? b : a for ordered values; an unordered vcmpss mask then blends in the NaN.
Reg ScalarSelector::float_max(Reg a, Reg b, bool dbl, std::optional<Reg> into) {
  Reg t = cx.new_vec(128), nan = cx.new_vec(128);
  cx.emit(dbl ? Mn::vmaxsd : Mn::vmaxss, {X(t), X(b), X(a)});
  Sel k = compare_mask(3, dbl, a, X(b));  // UNORD_Q
  std::string bytes = dbl ? le_bytes(0x7ff8000000000000ull, 8) : le_bytes(0x7fc00000u, 4);
  cx.emit(dbl ? Mn::vmovsd : Mn::vmovss, {X(nan), op_mem(cx.constant(bytes, dbl ? 8 : 4, dbl ? 64 : 32))}).remat = true;
  Reg d = into ? *into : t;  // a fresh result blends into t itself
  blend_into(d, t, nan, k, dbl);
  return d;
}

Reg ScalarSelector::libm_call(const char* fn, DType d, const std::vector<Reg>& args) {
  bool dbl = is_double_dtype(d);
  std::vector<Reg> in;
  for (Reg a : args) {
    if (dbl) { in.push_back(a); continue; }
    Reg w = cx.new_vec(128);  // (double)a
    cx.emit(Mn::vcvtss2sd, {X(w), X(a), X(a)});
    in.push_back(w);
  }
  Reg r = cx.new_vec(128);
  Operand sym = op_symbol(cx.extern_symbol(fn));
  if (in.size() == 1) cx.emit(Mn::CALL_EXTERN, {sym, X(r), X(in[0])});
  else cx.emit(Mn::CALL_EXTERN, {sym, X(r), X(in[0]), X(in[1])});
  if (dbl) return r;
  Reg f = cx.new_vec(128);  // (float)result: one rounding, as exec_alu's via-double ops
  cx.emit(Mn::vcvtsd2ss, {X(f), X(r), X(r)});
  return f;
}

Reg ScalarSelector::select_float_alu(const UOp& u) {
  DType d = u.dtype();
  bool dbl = is_double_dtype(d);
  auto pick = [&](Mn s, Mn sd) { return dbl ? sd : s; };
  auto bin = [&](Mn s, Mn sd) {
    Reg r = cx.new_vec(128);
    cx.emit(pick(s, sd), {X(r), X(scalar(u.src(0))), float_src(u.src(1))});
    return r;
  };
  switch (u.op()) {
    case Ops::ADD:
      if (is_const(u.src(0)) && !is_const(u.src(1))) {  // commutes exactly
        Reg r = cx.new_vec(128);
        cx.emit(pick(Mn::vaddss, Mn::vaddsd), {X(r), X(scalar(u.src(1))), float_src(u.src(0))});
        return r;
      }
      return bin(Mn::vaddss, Mn::vaddsd);
    case Ops::SUB: return bin(Mn::vsubss, Mn::vsubsd);
    case Ops::MUL:
      if (is_const(u.src(0)) && !is_const(u.src(1))) {
        Reg r = cx.new_vec(128);
        cx.emit(pick(Mn::vmulss, Mn::vmulsd), {X(r), X(scalar(u.src(1))), float_src(u.src(0))});
        return r;
      }
      return bin(Mn::vmulss, Mn::vmulsd);
    case Ops::FDIV: return bin(Mn::vdivss, Mn::vdivsd);
    case Ops::MAX: return float_max(scalar(u.src(0)), scalar(u.src(1)), dbl, std::nullopt);
    case Ops::NEG: {  // flip the sign bit (NaN payloads kept, as C's unary minus)
      Reg r = cx.new_vec(128);
      std::string bytes;
      for (int i = 0; i < (dbl ? 2 : 4); i++) bytes += dbl ? le_bytes(0x8000000000000000ull, 8) : le_bytes(0x80000000u, 4);
      cx.emit(Mn::vxorps, {X(r), X(scalar(u.src(0))), op_mem(cx.constant(bytes, 16, 128))});
      return r;
    }
    case Ops::TRUNC: {
      Reg a = scalar(u.src(0)), r = cx.new_vec(128);
      if (!cx.evex) {
        cx.emit(pick(Mn::vroundss, Mn::vroundsd), {X(r), X(a), X(a), op_imm(11)});  // toward zero, inexact suppressed
        return r;
      }
      // vroundss has no EVEX form: below 2^23 (2^52) in magnitude through the integer conversions with x's sign put
      // back (trunc(-0.5) is -0.0); at or above it (integers already), infinities and NaN: x itself
      Reg i = cx.new_gpr(), z = cx.new_vec(128), t = cx.new_vec(128), sgn = cx.new_vec(128), ab = cx.new_vec(128);
      cx.emit(pick(Mn::vcvttss2si, Mn::vcvttsd2si), {R(i, dbl ? 64 : 32), X(a)});
      cx.emit(Mn::vmovss, {X(z), op_mem(cx.constant(le_bytes(0, 4), 4, 32))}).remat = true;
      cx.emit(pick(Mn::vcvtsi2ss, Mn::vcvtsi2sd), {X(t), X(z), R(i, dbl ? 64 : 32)});
      std::string sign, abs;
      for (int k = 0; k < (dbl ? 2 : 4); k++) {
        sign += dbl ? le_bytes(0x8000000000000000ull, 8) : le_bytes(0x80000000u, 4);
        abs += dbl ? le_bytes(0x7fffffffffffffffull, 8) : le_bytes(0x7fffffffu, 4);
      }
      cx.emit(Mn::vandps, {X(sgn), X(a), op_mem(cx.constant(sign, 16, 128))});
      cx.emit(Mn::vorps, {X(t), X(t), X(sgn)});
      cx.emit(Mn::vandps, {X(ab), X(a), op_mem(cx.constant(abs, 16, 128))});
      std::string limit = dbl ? le_bytes(std::bit_cast<uint64_t>(4503599627370496.0), 8) : le_bytes(std::bit_cast<uint32_t>(8388608.0f), 4);
      Sel big = compare_mask(5, dbl, ab, op_mem(cx.constant(limit, dbl ? 8 : 4, dbl ? 64 : 32)));  // NLT_US: NaN too
      blend_into(r, t, a, big, dbl);
      return r;
    }
    case Ops::SQRT: {  // correctly rounded: (float)sqrt((double)a) is the same value
      Reg a = scalar(u.src(0)), r = cx.new_vec(128);
      cx.emit(pick(Mn::vsqrtss, Mn::vsqrtsd), {X(r), X(a), X(a)});
      return r;
    }
    case Ops::RECIPROCAL: {
      Reg one = constant_reg(d, 1.0, true), r = cx.new_vec(128);
      cx.emit(pick(Mn::vdivss, Mn::vdivsd), {X(r), X(one), float_src(u.src(0))});
      return r;
    }
    case Ops::MULACC: {  // (double)a * (double)b + (double)c, rounded once to float32 at the end
      if (dbl) {
        Reg p = bin(Mn::vmulss, Mn::vmulsd), r = cx.new_vec(128);
        cx.emit(Mn::vaddsd, {X(r), X(p), float_src(u.src(2))});
        return r;
      }
      Reg w[3];
      for (int i = 0; i < 3; i++) {
        Reg a = scalar(u.src(static_cast<size_t>(i)));
        w[i] = cx.new_vec(128);
        cx.emit(Mn::vcvtss2sd, {X(w[i]), X(a), X(a)});
      }
      Reg p = cx.new_vec(128), s = cx.new_vec(128), r = cx.new_vec(128);
      cx.emit(Mn::vmulsd, {X(p), X(w[0]), X(w[1])});
      cx.emit(Mn::vaddsd, {X(s), X(p), X(w[2])});
      cx.emit(Mn::vcvtsd2ss, {X(r), X(s), X(s)});
      return r;
    }
    case Ops::EXP2: return libm_call("exp2", d, {scalar(u.src(0))});
    case Ops::LOG2: return libm_call("log2", d, {scalar(u.src(0))});
    case Ops::SIN: return libm_call("sin", d, {scalar(u.src(0))});
    case Ops::POW: return libm_call("pow", d, {scalar(u.src(0)), scalar(u.src(1))});
    default: isel_fail("no x86 selection for this float op", u);
  }
}

Reg ScalarSelector::select_int_alu(const UOp& u) {
  DType d = u.dtype();
  bool b = d.is_bool();
  uint16_t w = op_bits(d), n = natural_bits(d);
  bool sign = !d.is_unsigned() && !b;
  auto src = [&](size_t i) { return b ? scalar(u.src(i)) : ext(u.src(i), w); };
  // ring and bitwise ops need only the operands' low bits: a register as it is, a constant materialized
  // (an operand narrower than the result is converted to it first, as the C renderer's casts do)
  auto low = [&](const UOp& x) {
    if (b) return scalar(x);
    return is_const(x) || x.dtype().is_bool() || natural_bits(x.dtype()) < n ? ext(x, w) : scalar(x);
  };
  // a two-address op in three-address form; a constant second source as an immediate, commuting where allowed
  auto two = [&](Mn op, bool commutes) {
    const UOp *a = &u.src(0), *c = &u.src(1);
    if (commutes && is_const(*a) && !is_const(*c)) std::swap(a, c);
    Reg r = cx.new_gpr();
    Reg ra = low(*a);
    std::optional<Operand> ib = imm(*c, w);
    Inst& i = cx.emit(op, {R(r, w), R(ra, w), ib ? *ib : R(low(*c), w)});
    i.tied = true;
    return with_bits(r, n);
  };
  // a + b as lea: three-address without a tie or a flags write (index arithmetic is mostly sums)
  auto lea_add = [&]() {
    const UOp *a = &u.src(0), *c = &u.src(1);
    if (is_const(*a) && !is_const(*c)) std::swap(a, c);
    Reg r = cx.new_gpr();
    Mem m;
    m.bits = 0;
    m.base = with_bits(low(*a), 64);
    std::optional<Operand> ic = imm(*c, 64);
    if (ic) {
      m.disp = static_cast<int32_t>(ic->imm);
    } else {
      m.has_index = true;
      m.index = with_bits(low(*c), 64);
    }
    cx.emit(Mn::lea, {R(r, w), op_mem(m)});
    return with_bits(r, n);
  };
  switch (u.op()) {
    case Ops::ADD: return b ? two(Mn::or_, true) : lea_add();
    case Ops::SUB: return two(b ? Mn::xor_ : Mn::sub, false);
    case Ops::AND: return two(Mn::and_, true);
    case Ops::OR: return two(Mn::or_, true);
    case Ops::XOR: return two(Mn::xor_, true);
    case Ops::MUL: {
      if (b) return two(Mn::and_, true);
      const UOp *a = &u.src(0), *c = &u.src(1);
      if (is_const(*a) && !is_const(*c)) std::swap(a, c);
      Reg r = cx.new_gpr();
      if (auto ic = imm(*c, w)) {
        cx.emit(Mn::imul, {R(r, w), R(low(*a), w), *ic});
      } else {
        Inst& i = cx.emit(Mn::imul, {R(r, w), R(low(*a), w), R(low(*c), w)});
        i.tied = true;
      }
      return with_bits(r, n);
    }
    case Ops::NEG: {
      if (b) return scalar(u.src(0));
      Reg r = cx.new_gpr();
      Inst& i = cx.emit(Mn::neg, {R(r, w), R(low(u.src(0)), w)});
      i.tied = true;
      return with_bits(r, n);
    }
    case Ops::TRUNC: return scalar(u.src(0));
    case Ops::MAX: {
      if (b) return two(Mn::or_, true);
      Reg ra = src(0), rb = src(1), r = cx.new_gpr();
      cx.emit(Mn::cmp, {R(ra, w), R(rb, w)});
      Inst& i = cx.emit(sign ? Mn::cmovl : Mn::cmovb, {R(r, w), R(ra, w), R(rb, w)});  // a < b ? b : a
      i.tied = true;
      return with_bits(r, n);
    }
    case Ops::MULACC: {
      if (b) {
        Reg r = cx.new_gpr();
        cx.emit(Mn::mov, {R(r, 32), R(scalar(u.src(0)), 32)});
        cx.emit(Mn::and_, {R(r, 32), R(scalar(u.src(1)), 32)});
        cx.emit(Mn::or_, {R(r, 32), R(scalar(u.src(2)), 32)});
        return with_bits(r, 8);
      }
      Reg p = cx.new_gpr(), r = cx.new_gpr();
      Inst& i = cx.emit(Mn::imul, {R(p, w), R(low(u.src(0)), w), R(low(u.src(1)), w)});
      i.tied = true;
      std::optional<Operand> ic = imm(u.src(2), w);
      Inst& j = cx.emit(Mn::add, {R(r, w), R(p, w), ic ? *ic : R(low(u.src(2)), w)});
      j.tied = true;
      return with_bits(r, n);
    }
    case Ops::SHL: case Ops::SHR: {
      if (b) isel_fail("a shift of bools", u);
      Mn op = u.op() == Ops::SHL ? Mn::shl : sign ? Mn::sar : Mn::shr;
      Reg a = u.op() == Ops::SHL ? low(u.src(0)) : ext(u.src(0), w), r = cx.new_gpr();
      if (std::optional<ConstValue> f = folded(u.src(1)); f && std::holds_alternative<int64_t>(*f)) {
        int64_t s = std::get<int64_t>(*f) & (w - 1);  // lower_late made it < the width
        Inst& i = cx.emit(op, {R(r, w), R(a, w), op_imm(s)});
        i.tied = true;
      } else {
        cx.emit(Mn::mov, {op_reg(gpr(RCX, 32)), R(scalar(u.src(1)), 32)});
        Inst& i = cx.emit(op, {R(r, w), R(a, w), op_reg(gpr(RCX, 8))});
        i.tied = true;
      }
      return with_bits(r, n);
    }
    case Ops::CDIV: case Ops::CMOD: {  // lower_late made the divisor nonzero and not -1 for INT_MIN
      if (b) isel_fail("integer division needs an integer dtype", u);
      Reg ra = src(0), rb = src(1), r = cx.new_gpr();
      cx.emit(Mn::mov, {op_reg(gpr(RAX, w)), R(ra, w)});
      if (sign) cx.emit(w == 64 ? Mn::cqo : Mn::cdq, {});
      else cx.emit(Mn::mov, {op_reg(gpr(RDX, 32)), op_imm(0)});
      cx.emit(sign ? Mn::idiv : Mn::div, {R(rb, w)});
      cx.emit(Mn::mov, {R(r, w), op_reg(gpr(u.op() == Ops::CDIV ? RAX : RDX, w))});
      return with_bits(r, n);
    }
    default: isel_fail("no x86 selection for this integer op", u);
  }
}

Reg ScalarSelector::value(const UOp& u) {
  size_t want = u.op() == Ops::LOAD || u.op() == Ops::CAST || u.op() == Ops::BITCAST || group::Unary.contains(u.op()) ? 1
                : group::Ternary.contains(u.op()) ? 3 : 2;
  if (u.src().size() != want) isel_fail(std::to_string(u.src().size()) + " sources; expected " + std::to_string(want), u);
  if (u.op() == Ops::LOAD && (u.src(0).op() != Ops::INDEX || u.src(0).src().size() < 2)) isel_fail("a LOAD must read an INDEX(buffer, offset[, gate])", u);
  if (std::optional<ConstValue> f = folded(u)) return constant_reg(u.dtype(), *f, true);
  switch (u.op()) {
    case Ops::LOAD: return load_value(u);
    case Ops::CAST:
      if (u.dtype() == dtypes::float32 && is_half_dtype(u.src(0).dtype())) {  // already its float32 value
        Reg a = scalar(u.src(0));
        return u.src(0).op() == Ops::REDUCE ? copy(a) : a;
      }
      return select_cast(u);
    case Ops::BITCAST: return select_bitcast(u);
    case Ops::WHERE: return select_where(u);
    case Ops::CMPLT: case Ops::CMPNE: case Ops::CMPEQ: return materialize_compare(u);
    default: break;
  }
  if (u.dtype().is_float()) return select_float_alu(u);
  if (u.dtype().is_int() || u.dtype().is_bool()) return select_int_alu(u);
  isel_fail("no x86 selection for a value of dtype " + u.dtype().name(), u);
}

// acc = acc (op) b, in place: what an accumulator update and exec_alu's combine compute. A 16-bit float accumulator
// rounds to its type after a sum or product (the C renderer's round_to).
void ScalarSelector::combine_into(Ops op, DType d, Reg acc, Reg b, bool round_half) {
  if (d.is_float()) {
    bool dbl = is_double_dtype(d);
    switch (op) {
      case Ops::ADD: cx.emit(dbl ? Mn::vaddsd : Mn::vaddss, {X(acc), X(acc), X(b)}); break;
      case Ops::MUL: cx.emit(dbl ? Mn::vmulsd : Mn::vmulss, {X(acc), X(acc), X(b)}); break;
      case Ops::MAX: float_max(acc, b, dbl, acc); break;
      default: throw std::invalid_argument("x86 isel: no accumulator combine for " + std::string(op_name(op)) + " of " + d.name());
    }
    if (round_half) {
      Reg r = half_round(acc, d);
      cx.emit(Mn::vmovaps, {X(acc), X(r)});
    }
    return;
  }
  uint16_t w = d.is_bool() ? 32 : op_bits(d);
  bool sign = !d.is_unsigned() && !d.is_bool();
  switch (op) {
    case Ops::ADD: cx.emit(d.is_bool() ? Mn::or_ : Mn::add, {R(acc, w), R(b, w)}); return;
    case Ops::MUL:
      if (d.is_bool()) cx.emit(Mn::and_, {R(acc, w), R(b, w)});
      else cx.emit(Mn::imul, {R(acc, w), R(b, w)});
      return;
    case Ops::MAX:
      if (d.is_bool()) { cx.emit(Mn::or_, {R(acc, w), R(b, w)}); return; }
      // sub-word accumulators hold extended values (their start and every term are extended), so 32 bits compare
      cx.emit(Mn::cmp, {R(acc, w), R(b, w)});
      cx.emit(sign ? Mn::cmovl : Mn::cmovb, {R(acc, w), R(b, w)});
      return;
    default: throw std::invalid_argument("x86 isel: no accumulator combine for " + std::string(op_name(op)) + " of " + d.name());
  }
}

Reg ScalarSelector::combine(Ops op, DType d, Reg a, Reg b) {
  if (d.lanes != 1) throw std::invalid_argument("x86 isel: scalar_combine of the vector dtype " + d.name());
  if (d.is_float()) {  // three-address: no copy of a
    bool dbl = is_double_dtype(d);
    if (op == Ops::MAX) return float_max(a, b, dbl, std::nullopt);
    if (op != Ops::ADD && op != Ops::MUL) throw std::invalid_argument("x86 isel: no scalar_combine for " + std::string(op_name(op)) + " of " + d.name());
    Reg r = cx.new_vec(128);
    cx.emit(op == Ops::ADD ? (dbl ? Mn::vaddsd : Mn::vaddss) : (dbl ? Mn::vmulsd : Mn::vmulss), {X(r), X(a), X(b)});
    return r;
  }
  uint16_t w = d.is_bool() ? 32 : op_bits(d);
  bool sign = !d.is_unsigned() && !d.is_bool();
  Mn mn;
  switch (op) {
    case Ops::ADD: mn = d.is_bool() ? Mn::or_ : Mn::add; break;
    case Ops::MUL: mn = d.is_bool() ? Mn::and_ : Mn::imul; break;
    case Ops::MAX: mn = d.is_bool() ? Mn::or_ : sign ? Mn::cmovl : Mn::cmovb; break;
    default: throw std::invalid_argument("x86 isel: no scalar_combine for " + std::string(op_name(op)) + " of " + d.name());
  }
  if (mn == Mn::cmovl || mn == Mn::cmovb) cx.emit(Mn::cmp, {R(a, w), R(b, w)});  // a < b ? b : a
  Reg r = cx.new_gpr();
  Inst& i = cx.emit(mn, {R(r, w), R(a, w), R(b, w)});  // tied: the allocator's fixup moves a only when it must
  i.tied = true;
  return with_bits(r, a.bits);
}

}  // namespace doorbell::x86
