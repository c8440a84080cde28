#include "compiler/transcendental.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace doorbell {
namespace {

// Every step below is exact or rounds once in float32: no fused multiply-add is assumed (the C target compiles with
// -ffp-contract=off), and no value is ever a NaN or out of range where it is converted to an integer, so the
// graph has no undefined behaviour on any input. Special inputs are patched in with WHERE at the end.

UOp f32(double v) { return UOp::const_(dtypes::float32, v); }
UOp i32(int64_t v) { return UOp::const_(dtypes::int32, v); }
UOp u64(uint64_t v) { return UOp::const_(dtypes::uint64, static_cast<int64_t>(v)); }

// 2^k for an int32 k in [-126, 127], built from the exponent bits.
UOp pow2_of_int(const UOp& k) { return ((k + 127) << 23).bitcast(dtypes::float32); }

// c[0] + x*(c[1] + x*(c[2] + ...)) by Horner's rule.
UOp horner(const UOp& x, std::initializer_list<double> c) {
  std::vector<double> cs(c);
  UOp acc = f32(cs.back());
  for (size_t i = cs.size() - 1; i-- > 0;) acc = acc * x + cs[i];
  return acc;
}

UOp is_nan(const UOp& x) { return x.ne(x); }

}  // namespace

// exp2: x = n + f with n an integer and |f| <= 1/2 (a hair more after rounding), 2^f by a polynomial, then 2^n
// multiplied in as two halves so that results in the subnormal range round once and results above the float32
// range overflow to inf. Polynomial: Cephes exp2f (S. L. Moshier), 2^f = 1 + f*P(f) on [-1/2, 1/2].
UOp exp2_f32(const UOp& x) {
  // exp2(x) is 0 below -151 (2^-150 already rounds to 0) and inf above 128: clamping keeps n in [-152, 129].
  UOp xc = x.lt(f32(-152)).where(f32(-152), x);
  xc = f32(129).lt(xc).where(f32(129), xc);
  xc = is_nan(x).where(f32(0), xc);  // NaN must not reach the float-to-int CAST (undefined in C)
  // Round half away from zero by truncation; any integer within 1/2 (+ rounding) of xc works.
  UOp n = (xc + xc.lt(f32(0)).where(f32(-0.5), f32(0.5))).cast(dtypes::int32);
  UOp f = xc - n.cast(dtypes::float32);  // exact: n is an integer next to xc
  UOp p = f32(1) + f * horner(f, {6.931472028550421e-1, 2.402264791363012e-1, 5.550332471162809e-2,
                                  9.618437357674640e-3, 1.339887440266574e-3, 1.535336188319500e-4});
  // n in [-152, 129]: n1 = floor(n/2) and n2 = n - n1 are in [-76, 65], so 2^n1 and 2^n2 are normal floats.
  // p * 2^n1 is exact; the second product rounds once, to a subnormal, 0 or inf where the result is one.
  UOp n1 = n >> 1, n2 = n - n1;
  UOp r = (p * pow2_of_int(n1)) * pow2_of_int(n2);
  return is_nan(x).where(x, r);
}

// log2: x = 2^k * m with m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact), log(1+f) = f - f^2/2 + s*(f^2/2 + R(s^2))
// with s = f/(2+f), then multiplied by 1/ln2 with f - f^2/2 split into a 12-bit head and a tail so that the large
// product is exact. Approach and the R coefficients (Lg1..Lg4, a minimax fit for float): FreeBSD msun e_log2f.c /
// k_logf.h (fdlibm, Sun Microsystems; Bruce D. Evans).
UOp log2_f32(const UOp& x) {
  // Subnormals: scale by 2^64 first so that the exponent bits give the exponent.
  UOp tiny = x.lt(f32(0x1p-126));
  UOp xs = tiny.where(x * f32(0x1p64), x);
  UOp ix = xs.bitcast(dtypes::int32);
  // Subtracting the bits of sqrt(1/2) before taking the exponent puts m in [sqrt(1/2), sqrt(2)).
  UOp k = (ix - i32(0x3f3504f3)) >> 23;
  UOp m = (ix - (k << 23)).bitcast(dtypes::float32);
  UOp e = (k + tiny.where(i32(-64), i32(0))).cast(dtypes::float32);
  UOp f = m - 1;
  UOp s = f / (f + 2);
  UOp z = s * s, w = z * z;
  UOp big_r = z * (f32(0xaaaaaa.0p-24) + w * f32(0x91e9ee.0p-25)) + w * (f32(0xccce13.0p-25) + w * f32(0xf89e26.0p-26));
  UOp hfsq = f32(0.5) * f * f;
  UOp r = s * (hfsq + big_r);
  UOp hi = ((f - hfsq).bitcast(dtypes::int32) & i32(-4096)).bitcast(dtypes::float32);  // clear the low 12 bits
  UOp lo = ((f - hi) - hfsq) + r;
  constexpr double kInvLn2Hi = 0x1.716p+0;          // 1/ln2 to 12 bits: hi * kInvLn2Hi is exact
  constexpr double kInvLn2Lo = -0x1.7135a8p-13;     // 1/ln2 - kInvLn2Hi, rounded to float
  UOp y = ((((lo + hi) * f32(kInvLn2Lo)) + lo * f32(kInvLn2Hi)) + hi * f32(kInvLn2Hi)) + e;
  y = x.lt(f32(0)).where(f32(NAN), y);                   // -0 is not below 0
  y = x.eq(f32(0)).where(f32(-INFINITY), y);             // +0 and -0
  y = x.eq(f32(INFINITY)).where(f32(INFINITY), y);
  return is_nan(x).where(x, y);
}

namespace {

// Bits of 2/pi after a 32-bit run of zeros, in 32-bit windows stepping by 8 bits: kTwoOverPi[i] holds bits
// 8i+1 .. 8i+32 of 0.000...0 (32 zeros) followed by the binary digits of 2/pi = 0.a2f9836e4e441529fc27...
// (computed by us with integer arithmetic from Machin's formula; it matches the fdlibm two_over_pi table).
constexpr uint32_t kTwoOverPi[25] = {
    0x00000000, 0x000000a2, 0x0000a2f9, 0x00a2f983, 0xa2f9836e, 0xf9836e4e, 0x836e4e44, 0x6e4e4415, 0x4e441529,
    0x441529fc, 0x1529fc27, 0x29fc2757, 0xfc2757d1, 0x2757d1f5, 0x57d1f534, 0xd1f534dd, 0xf534ddc0, 0x34ddc0db,
    0xddc0db62, 0xc0db6295, 0xdb629599, 0x6295993c, 0x95993c43, 0x993c4390, 0x3c439041};
constexpr int kTableIndexCount = 17;  // index values 0..16; each lookup reads entries index, index+4 or index+8

// kTwoOverPi[index + offset] as a uint64, by a chain of WHEREs: a kernel has no constant tables.
UOp two_over_pi_word(const UOp& index, int offset) {
  UOp v = u64(kTwoOverPi[offset]);
  for (int i = 1; i < kTableIndexCount; i++) v = index.eq(i32(i)).where(u64(kTwoOverPi[i + offset]), v);
  return v;
}

struct Reduced {
  UOp hi, lo;  // |x| - q*pi/2 = hi + lo, in [-pi/4, pi/4] (a hair more after rounding); hi has 20 bits
  UOp q;       // the quadrant, int32 in [0, 3]
};

// Payne-Hanek reduction of |x| >= 2^-7 by pi/2, exact for every finite float32: with |x| = M * 2^(E-150) (M the
// 24-bit significand, E the biased exponent), |x| * 2/pi mod 4 only needs 96 bits of 2/pi starting near bit
// E - 152, and (M * those 96 bits) mod 2^96 is the quadrant (2 bits) and a 94-bit fraction. The window is read at an
// 8-bit boundary and M shifted left by the remaining 0..7 bits (<= 31 bits), so each 32x32 product fits in 64 bits.
// (Same idea as ARM optimized-routines' sinf reduce_large; written here for uint64 UOps.)
Reduced payne_hanek(const UOp& abs_bits) {
  UOp exp = abs_bits >> 23;
  exp = exp.lt(i32(120)).where(i32(120), exp);  // smaller inputs take the |x| < pi/4 path; keep the index >= 0
  exp = i32(254).lt(exp).where(i32(254), exp);  // inf and NaN are patched in later; keep the index <= 16
  UOp pos = exp - 120;                          // bit position in kTwoOverPi's padded sequence, 0..134
  UOp index = pos >> 3, shift = (pos & 7).cast(dtypes::uint64);
  UOp mant = ((abs_bits & 0x7fffff) | 0x800000).cast(dtypes::uint64) << shift;
  UOp w0 = two_over_pi_word(index, 0), w1 = two_over_pi_word(index, 4), w2 = two_over_pi_word(index, 8);
  // Bits 95..32 of mant * (w0:w1:w2) mod 2^96: the quadrant in the top 2 bits, then 62 fraction bits.
  UOp frac = ((mant * w0) << u64(32)) + mant * w1 + ((mant * w2) >> u64(32));
  UOp q = (frac + u64(uint64_t{1} << 61)) >> u64(62);  // round to the nearest quadrant (wraps mod 4)
  UOp t = (frac - (q << u64(62))).bitcast(dtypes::int64);  // signed, |t| <= 2^61: the remainder in units 2^-62 quadrants
  // t * pi/2 * 2^-62 as an unevaluated float32 sum hi + lo: t = head (12 bits) + tail, pi/2 = kPio2Hi (8 bits) +
  // kPio2Lo, so hi = head * kPio2Hi is exact and lo, the rest, is a correction below 2^-11 of it.
  UOp tf = t.cast(dtypes::float32);
  UOp head = (tf.bitcast(dtypes::int32) & i32(-4096)).bitcast(dtypes::float32);
  UOp tail = (t - head.cast(dtypes::int64)).cast(dtypes::float32);  // exact integer difference, then rounded
  constexpr double kPio2Hi = 0x1.92p+0;                  // pi/2 to 8 bits
  constexpr double kPio2Lo = 0x1.fb5444p-12;             // pi/2 - kPio2Hi, rounded to float
  constexpr double kPio2 = 0x1.921fb6p+0;                // pi/2 rounded to float
  // Kept as a pair: rounding hi + lo would cost sin(r) up to an ulp where sin(r) has a smaller exponent than r.
  UOp hi = (head * f32(kPio2Hi)) * f32(0x1p-62), lo = (head * f32(kPio2Lo) + tail * f32(kPio2)) * f32(0x1p-62);
  return {hi, lo, q.cast(dtypes::int32)};
}

}  // namespace

// sin: |x| reduced by pi/2 to r in [-pi/4, pi/4] and a quadrant q (no reduction below pi/4), then sin(r) or cos(r)
// by polynomials, negated by q and the sign of x. The Payne-Hanek reduction is used for every |x| >= pi/4: a
// Cody-Waite arm for moderate |x| would be cheaper alone, but WHERE evaluates both arms in an elementwise kernel, so
// it would only add work. Polynomials: Cephes sinf/cosf (S. L. Moshier) for |r| <= pi/4; cos written as
// w + ((1 - w) - z/2 + z^2 C(z)) with w = 1 - z/2, compensating the rounding of w (as fdlibm k_cos).
UOp sin_f32(const UOp& x) {
  UOp bits = x.bitcast(dtypes::int32);
  UOp abs_bits = bits & 0x7fffffff;
  UOp ax = abs_bits.bitcast(dtypes::float32);
  Reduced red = payne_hanek(abs_bits);
  UOp small = ax.lt(f32(0x1.921fb4p-1));  // just below pi/4
  UOp r_hi = small.where(ax, red.hi), r_lo = small.where(f32(0), red.lo), q = small.where(i32(0), red.q);
  UOp r = r_hi + r_lo;
  UOp z = r * r;
  // sin(r) = r_hi + (r_lo + r^3 S(z)): one rounding of a sum whose large term is exact.
  UOp sin_r = r_hi + (r_lo + (r * z) * horner(z, {-1.6666654611e-1, 8.3321608736e-3, -1.9515295891e-4}));
  UOp hz = f32(0.5) * z, w = f32(1) - hz;
  UOp cos_r = w + (((f32(1) - w) - hz) + (z * z) * horner(z, {4.166664568298827e-2, -1.388731625493765e-3, 2.443315711809948e-5}));
  UOp y = (q & 1).eq(i32(1)).where(cos_r, sin_r);
  UOp negate = (q & 2).eq(i32(2)).ne(bits.lt(i32(0)));  // quadrants 2 and 3 flip the sign, and so does x < 0
  y = negate.where(-y, y);
  return abs_bits.lt(i32(0x7f800000)).where(y, f32(NAN));  // sin(+-inf) and sin(NaN) are NaN
}

// C's pow in float32: exp2(y * log2|x|), with x's sign for an odd integer y, NaN for a negative x and a non-integer
// y, 1 for y == 0 or x == 1, and log2(0) = -inf giving 0 or inf by y's sign. Parity needs no integer cast: every
// float32 of magnitude >= 2^24 is even, and there y * 0.5 is exact.
UOp pow_f32(const UOp& x, const UOp& y) {
  UOp zero = x.const_like(0.0), one = x.const_like(1.0);
  UOp ax = x.lt(zero).where(x.neg(), x);
  UOp mag = exp2_f32(y * log2_f32(ax));
  UOp ty = y.alu(Ops::TRUNC), half = y * 0.5;
  UOp is_int = ty.eq(y), is_odd = is_int & half.alu(Ops::TRUNC).ne(half);
  UOp neg_result = is_int.where(is_odd.where(mag.neg(), mag), x.const_like(NAN));
  UOp r = x.lt(zero).where(neg_result, mag);
  return (y.eq(zero) | x.eq(one)).where(one, r);
}

}  // namespace doorbell
