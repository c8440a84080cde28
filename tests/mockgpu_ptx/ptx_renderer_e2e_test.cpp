// The PTX renderer's kernels on the interpreter against the CPU reference (ptx_reference_check.h), program by
// program: every dtype's arithmetic, casts, half/bfloat16 rounding, reductions, movement, matmul, transcendentals,
// odd sizes over several blocks.
#include <gtest/gtest.h>

#include <limits>
#include <type_traits>

#include "tests/common/random_tensors.h"
#include "ptx_reference_check.h"

namespace doorbell {
namespace {

using ptx_e2e::expect_same_as_reference;

using testing::kIntDtypes;
using testing::random_ints;
using testing::random_nonzero;

TEST(PtxRendererOnInterpreter, IntegerArithmeticWrapsAndDividesLikeTheReference) {
  Tensor::manual_seed(1);
  for (DType d : kIntDtypes) {
    SCOPED_TRACE(d.name());
    Tensor a = random_ints(d, 301, -120, 120), b = random_nonzero(d, 301);
    expect_same_as_reference({a * b + a, a - b, a.maximum(b), a.lt(b).where(a, b), a.floordiv(b), a.mod(b),
                              a.bitwise_xor(b), a.bitwise_and(b), a.bitwise_or(b), a.rshift(1), a.lshift(2), a.eq(b), a.ne(b), -a});
    expect_same_as_reference({a.sum(), a.max()});
  }
}

TEST(PtxRendererOnInterpreter, IntegerDivisionByConstantsAndWideValues) {
  Tensor::manual_seed(7);
  Tensor a = random_ints(dtypes::int32, 500, -100000, 100000), c = random_ints(dtypes::int64, 500, -1000000, 1000000);
  expect_same_as_reference({a.floordiv(-7), a.mod(7), c.floordiv(13), c.mod(-5), a * 65537, c * c});
}

TEST(PtxRendererOnInterpreter, FloatArithmeticIsExact) {
  Tensor::manual_seed(2);
  for (DType d : {dtypes::float32, dtypes::float64}) {
    SCOPED_TRACE(d.name());
    Tensor a = (Tensor::randn({257}) * 40).cast(d).realize(), b = (Tensor::randn({257}) * 3).cast(d).realize();
    expect_same_as_reference({a * b + a, a - b, a / b, a.maximum(b), a.abs().sqrt(), -a, a.reciprocal(), a.trunc(),
                              a.lt(b), a.eq(b), a.ne(b), a.lt(b).where(a, b)});
  }
}

TEST(PtxRendererOnInterpreter, FloatSpecialValuesLikeTheReference) {
  // NaN, infinities, signed zeros, subnormals and the largest floats through arithmetic, max (NaN propagates),
  // comparisons (!= is true for NaN), selects and conversions between float types
  const float inf = INFINITY, nan = NAN, sub = std::ldexp(1.0f, -140), big = 3.4028235e38f;
  std::vector<float> va{nan, 1.0f, nan, inf, -inf, inf, 0.0f, -0.0f, sub, -sub, big, -big, 2.0f, 65504.0f, 1e-30f, -3.0f};
  std::vector<float> vb{1.0f, nan, nan, inf, inf, -inf, -0.0f, 0.0f, sub, 4.0f, big, 2.0f, inf, 65504.0f, 1e-30f, -0.0f};
  for (DType d : {dtypes::float32, dtypes::float64, dtypes::float16, dtypes::bfloat16}) {
    SCOPED_TRACE(d.name());
    Tensor a = Tensor::from_data(va, {16}).cast(d).realize(), b = Tensor::from_data(vb, {16}).cast(d).realize();
    expect_same_as_reference({a + b, a - b, a * b, a / b, a.maximum(b), a.lt(b), a.eq(b), a.ne(b), a.lt(b).where(a, b),
                              a.sqrt(), a.reciprocal(), -a, a.trunc(), a.cast(dtypes::float32), a.cast(dtypes::float64),
                              a.cast(dtypes::float16), a.cast(dtypes::bfloat16), a.cast(dtypes::bool_)});
  }
}

// The IR's definition (ir/exec_alu.h): x // 0 = 0, x % 0 = x, MIN // -1 wraps and MIN % -1 = 0; the float64
// reference has no such values, so the interpreter's results are checked against the definition itself.
template <typename T>
void expect_division_contract(DType d) {
  SCOPED_TRACE(d.name());
  const T lo = std::numeric_limits<T>::min();
  const int64_t l = static_cast<int64_t>(lo);
  std::vector<int64_t> sa{7, -7, 7, -7, 0, l, l, 5, l, 9}, sb{0, 0, -1, -1, 0, -1, 0, 3, 2, -2};
  if constexpr (std::is_unsigned_v<T>) sa = {7, 9, 0, 200, 5, 6, 7, 8, 9, 10}, sb = {0, 0, 0, 3, 1, 4, 0, 2, 9, 3};
  std::vector<T> va(sa.begin(), sa.end()), vb(sb.begin(), sb.end());
  Tensor a = Tensor::from_data(sa, {10}).cast(d).realize(), b = Tensor::from_data(sb, {10}).cast(d).realize();
  std::vector<std::vector<std::byte>> q = ptx_e2e::run_on_interpreter_only({a.floordiv(b)});
  std::vector<std::vector<std::byte>> m = ptx_e2e::run_on_interpreter_only({a.mod(b)});
  ASSERT_EQ(q.size(), 1u);
  ASSERT_EQ(m.size(), 1u);
  for (size_t i = 0; i < va.size(); i++) {
    T x = va[i], y = vb[i], wq = 0, wm = 0;
    if (y != 0 && !(std::is_signed_v<T> && x == lo && y == T(-1))) {
      wq = static_cast<T>(x / y);
      wm = static_cast<T>(x % y);
      if (wm != 0 && ((wm < 0) != (y < 0))) wq = static_cast<T>(wq - 1), wm = static_cast<T>(wm + y);
    } else if (y != 0) {
      wq = lo;  // MIN / -1 wraps
    } else {
      wm = x;  // x % 0 = x, so that x == y * (x // y) + x % y
    }
    T gq, gm;
    std::memcpy(&gq, q[0].data() + i * sizeof(T), sizeof(T));
    std::memcpy(&gm, m[0].data() + i * sizeof(T), sizeof(T));
    EXPECT_EQ(gq, wq) << x << " // " << y;
    EXPECT_EQ(gm, wm) << x << " % " << y;
  }
}

TEST(PtxRendererOnInterpreter, IntegerDivisionByZeroGivesZeroModuloByZeroTheDividendAndMinByMinusOneWraps) {
  expect_division_contract<int32_t>(dtypes::int32);
  expect_division_contract<int64_t>(dtypes::int64);
  expect_division_contract<int8_t>(dtypes::int8);
  expect_division_contract<int16_t>(dtypes::int16);
  expect_division_contract<uint32_t>(dtypes::uint32);
  expect_division_contract<uint64_t>(dtypes::uint64);
}

TEST(PtxRendererOnInterpreter, HalfAndBfloat16RoundAfterEveryOp) {
  Tensor::manual_seed(3);
  for (DType d : {dtypes::float16, dtypes::bfloat16}) {
    SCOPED_TRACE(d.name());
    Tensor a = (Tensor::randn({257}) * 40).cast(d).realize(), b = (Tensor::randn({257}) * 3).cast(d).realize();
    expect_same_as_reference({a * b + a, a / b, a.maximum(b), a.abs().sqrt(), -a, a.reciprocal(), a.lt(b)});
    expect_same_as_reference({a.reshape({257, 1}).expand({257, 3}).sum(0)});
  }
}

TEST(PtxRendererOnInterpreter, Float32ToHalfRoundingEdgeCasesBitForBit) {
  const float t = std::ldexp(1.0f, -25);
  std::vector<float> v{0.0f, -0.0f, 1.0f, 65504.0f, 65520.0f, 65519.99f, 1e-8f, t, t * 1.0001f, 2 * t, 3 * t, 5 * t,
                       std::ldexp(1.0f, -14), std::ldexp(1.0f, -14) - std::ldexp(1.0f, -25), 1 + std::ldexp(1.0f, -11),
                       1 + 3 * std::ldexp(1.0f, -11), INFINITY, -INFINITY, NAN, -NAN, 1e10f, -1e-30f, -3 * t,
                       1 + std::ldexp(1.0f, -8), 1 + 3 * std::ldexp(1.0f, -8), 3.3895314e38f, 1e-40f};
  Tensor x = Tensor::from_data(v, {static_cast<int64_t>(v.size())}).realize();
  expect_same_as_reference({x.cast(dtypes::float16)});
  expect_same_as_reference({x.cast(dtypes::bfloat16)});
  expect_same_as_reference({x.cast(dtypes::float16).cast(dtypes::float32), x.cast(dtypes::bfloat16).cast(dtypes::float32)});
}

TEST(PtxRendererOnInterpreter, Float64To16BitFloatsRoundThroughFloat32LikeTheReference) {
  // just above a float16 / bfloat16 tie by less than a float32 ulp: the renderer (cvt.rn.f32.f64, then
  // cvt.rn.f16.f32) and the reference both round through float32, land on the tie and round it to even (1.0, where
  // one correctly rounded conversion gives 1 + 2^-10 / 1 + 2^-7)
  std::vector<double> v{1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40), 1 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30),
                        -(1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)), 1 + std::ldexp(1.0, -11), 65519.999999, 1e-300};
  Tensor x = Tensor::from_data(v, {static_cast<int64_t>(v.size())}).realize();
  expect_same_as_reference({x.cast(dtypes::float16), x.cast(dtypes::bfloat16)});
}

TEST(PtxRendererOnInterpreter, BitcastsOf16BitFloats) {
  // Exact, NaN payloads included for int16 -> float16 -> int16 (the renderer moves a NaN's bits as the C helpers
  // do, where cvt.f32.f16 / cvt.rn.f16.f32 would give the canonical NaN 0x7FFF). A float16 NaN stored directly is
  // compared as a float: the store rounds through cvt.rn.f16.f32.
  std::vector<int16_t> num{0x3C00, -0x4000, 0x0001, static_cast<int16_t>(0x8000), 0x7BFF, 0x7C00, 0x0400, 0x1234};
  std::vector<int16_t> nan{0x7E00, 0x7C01, static_cast<int16_t>(0xFE00), 0x7FFF, 0x7F81, static_cast<int16_t>(0xFFC1)};
  Tensor x = Tensor::from_data(num, {static_cast<int64_t>(num.size())}).realize();
  expect_same_as_reference({x.bitcast(dtypes::float16).bitcast(dtypes::int16), x.bitcast(dtypes::bfloat16).bitcast(dtypes::int16),
                            x.bitcast(dtypes::float16), x.bitcast(dtypes::bfloat16), x.bitcast(dtypes::uint16).bitcast(dtypes::float16)});
  Tensor n = Tensor::from_data(nan, {static_cast<int64_t>(nan.size())}).realize();
  expect_same_as_reference({n.bitcast(dtypes::float16), n.bitcast(dtypes::bfloat16), n.bitcast(dtypes::float16).cast(dtypes::float32)});
  // (bfloat16 is not: the CPU reference's db_f2bf quiets a signalling NaN, 0x7F81 -> 0x7FC1, the renderer keeps it)
  expect_same_as_reference({n.bitcast(dtypes::float16).bitcast(dtypes::int16)});
}

TEST(PtxRendererOnInterpreter, CastsBetweenEveryPair) {
  Tensor::manual_seed(4);
  std::vector<DType> all{dtypes::bool_, dtypes::float16, dtypes::bfloat16, dtypes::float32, dtypes::float64};
  for (DType d : kIntDtypes) all.push_back(d);
  for (DType from : all) {
    Tensor x = (Tensor::rand({67}) * 100).cast(from).realize();  // in [0, 100): every cast is defined
    std::vector<Tensor> outs;
    for (DType to : all)
      if (!(to == from)) outs.push_back(x.cast(to));
    SCOPED_TRACE(from.name());
    expect_same_as_reference(outs);
  }
}

TEST(PtxRendererOnInterpreter, FloatToIntegerCastsTruncateNegativeAndFractionalValues) {
  // within every destination's range (out of range is undefined for the reference)
  Tensor::manual_seed(5);
  for (DType from : {dtypes::float16, dtypes::bfloat16, dtypes::float32, dtypes::float64}) {
    SCOPED_TRACE(from.name());
    Tensor s = ((Tensor::rand({301}) - 0.5) * 250).cast(from).realize(), u = (Tensor::rand({301}) * 250).cast(from).realize();
    expect_same_as_reference({s.cast(dtypes::int8), s.cast(dtypes::int16), s.cast(dtypes::int32), s.cast(dtypes::int64),
                              u.cast(dtypes::uint8), u.cast(dtypes::uint16), u.cast(dtypes::uint32), u.cast(dtypes::uint64)});
  }
  Tensor big = ((Tensor::rand({301}) - 0.5) * 4e9).cast(dtypes::float64).realize();
  expect_same_as_reference({big.cast(dtypes::int64), big.abs().cast(dtypes::uint32), big.cast(dtypes::float32).cast(dtypes::int64),
                            big.abs().cast(dtypes::float32).cast(dtypes::uint32)});
  // uint64 above 2^63 (the renderer's second cvt.rzi path)
  Tensor huge = (Tensor::rand({301}) * 1.8e19).cast(dtypes::float64).realize();
  expect_same_as_reference({huge.cast(dtypes::uint64), huge.cast(dtypes::float32).cast(dtypes::uint64)});
}

TEST(PtxRendererOnInterpreter, WideIntegersToFloatsRoundToNearestEven) {
  std::vector<int64_t> v{0, 1, -1, 16777217, -16777219, (int64_t{1} << 53) + 1, INT64_MAX, INT64_MIN, 65519, 65520, -65536,
                         123456789012345678, -987654321098765432, 2049, 4097, 8193, (int64_t{1} << 30) + (1 << 22) + 1,
                         -((int64_t{1} << 40) + (int64_t{1} << 32) + 1)};
  Tensor x = Tensor::from_data(v, {static_cast<int64_t>(v.size())}).realize();
  expect_same_as_reference({x.cast(dtypes::float32), x.cast(dtypes::float64), x.cast(dtypes::float16), x.cast(dtypes::bfloat16)});
  Tensor u = x.cast(dtypes::uint64).realize();
  expect_same_as_reference({u.cast(dtypes::float32), u.cast(dtypes::float64), u.cast(dtypes::float16), u.cast(dtypes::bfloat16)});
  Tensor i = x.cast(dtypes::int32).realize();
  expect_same_as_reference({i.cast(dtypes::float32), i.cast(dtypes::float16), i.cast(dtypes::bfloat16), i.cast(dtypes::uint32).cast(dtypes::float32)});
}

TEST(PtxRendererOnInterpreter, BoolLogicAndReductions) {
  Tensor::manual_seed(6);
  Tensor a = Tensor::randint({37, 5}, 0, 2).cast(dtypes::bool_).realize(), b = Tensor::randint({37, 5}, 0, 2).cast(dtypes::bool_).realize();
  expect_same_as_reference({a.bitwise_and(b).bitwise_or(a.bitwise_xor(b)), a.where(b, a.logical_not()), a.any(1), a.all(0)});
  Tensor c = Tensor::randint({300}, -5, 5).realize();
  expect_same_as_reference({c.gt(0).any(), c.lt(3).all(), c.sum(), c.cast(dtypes::int64).prod()});
}

TEST(PtxRendererOnInterpreter, ReductionsOverEachAxisAndMovement) {
  Tensor::manual_seed(8);
  Tensor x = Tensor::randn({6, 7, 8}).realize();
  for (int64_t axis = 0; axis < 3; axis++) expect_same_as_reference({x.sum(axis), x.max(axis)});
  expect_same_as_reference({x.pad({{1, 1}, {0, 2}, {3, 0}}).flip({0, 2}) + 1});
  expect_same_as_reference({x.shrink({{1, 5}, {2, 7}, {0, 8}}) * 2});
  expect_same_as_reference({x.permute({2, 0, 1}) + 0, x.mean(1), x.reshape({42, 8}).argmax(1)});
  Tensor p = Tensor::randn({6}).realize();
  expect_same_as_reference({p.pad({{2, 3}}) + 1, p.pad({{2, 2}}, -1.5), Tensor::cat({p, p * 2})});
  Tensor s = Tensor::randn({33}).realize();
  expect_same_as_reference({s.cumsum()});
}

TEST(PtxRendererOnInterpreter, GroupedReductionsShareThroughSharedMemoryAndBarriers) {
  Tensor::manual_seed(13);
  Tensor x = Tensor::randn({8, 100}).realize(), y = Tensor::randn({5, 3000}).realize();
  Tensor i = Tensor::randint({8, 100}, -1000, 1000).cast(dtypes::int32).realize();
  // the optimizer groups these reductions unless NOOPT=1: then the kernels have a shared array and bar.sync
  if (!noopt_enabled()) {
    const GpuTarget& t = gpu_target("sm_90");
    UOp linear = Tensor::schedule_linear({x.sum(1)});
    std::string ptx = render_ptx("grouped", prepare_gpu_kernel(linear.src(0).src(0), t), t);
    EXPECT_NE(ptx.find("bar.sync 0"), std::string::npos) << ptx;
    EXPECT_NE(ptx.find(".shared"), std::string::npos) << ptx;
  }
  expect_same_as_reference({x.sum(1), x.max(1), y.sum(1), i.sum(1), i.max(1)});
}

TEST(PtxRendererOnInterpreter, Matmuls) {
  Tensor::manual_seed(9);
  Tensor a = Tensor::randn({17, 33}).realize(), b = Tensor::randn({33, 9}).realize();
  expect_same_as_reference({a.matmul(b)});
  Tensor c = Tensor::randn({64, 64}).realize(), d = Tensor::randn({64, 64}).realize();
  expect_same_as_reference({c.matmul(d)});
  Tensor h = Tensor::randn({16, 32}).cast(dtypes::float16).realize(), g = Tensor::randn({32, 8}).cast(dtypes::float16).realize();
  expect_same_as_reference({h.matmul(g)});
}

TEST(PtxRendererOnInterpreter, TranscendentalsSoftmaxAndPowWithinTolerance) {
  Tensor::manual_seed(10);
  Tensor x = Tensor::randn({7, 33}).realize();
  expect_same_as_reference({x.softmax(-1)});
  expect_same_as_reference({x.exp(), x.sin(), x.abs().log(), x.exp2(), x.sigmoid(), x.gelu()});
  Tensor base = (Tensor::rand({64}) * 4 + 0.1).realize(), e = (Tensor::rand({64}) * 4 - 2).realize();
  expect_same_as_reference({base.pow(e)});
  Tensor neg = (Tensor::rand({64}) * -3 - 0.5).realize();
  expect_same_as_reference({neg.pow(3.0), neg.pow(2.0)});
  Tensor h = Tensor::randn({5, 12}).cast(dtypes::float16).realize();
  expect_same_as_reference({h.log_softmax(-1)});
}

TEST(PtxRendererOnInterpreter, OddSizesSpanSeveralBlocksWithGatedTails) {
  Tensor::manual_seed(11);
  for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{70001}}) {
    SCOPED_TRACE(n);
    Tensor a = Tensor::randn({n}).realize(), b = Tensor::randn({n}).realize();
    expect_same_as_reference({a + b * 2, (a - b).relu()});
    Tensor i8 = random_ints(dtypes::int8, n, -128, 128), u8 = random_ints(dtypes::uint8, n, 0, 256);
    expect_same_as_reference({i8 + i8, u8 * u8, i8.cast(dtypes::float16) + 1});
  }
}

TEST(PtxRendererOnInterpreter, OneMillionElementAdd) {
  Tensor::manual_seed(12);
  Tensor a = Tensor::randn({1 << 20}).realize(), b = Tensor::randn({1 << 20}).realize();
  expect_same_as_reference({a + b});
}

}  // namespace
}  // namespace doorbell
