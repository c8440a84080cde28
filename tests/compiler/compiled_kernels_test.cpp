// Kernels produced by the real scheduler, compiled to machine code and run on host buffers, against the reference
// interpreter (hcq/run_linear.h) run on copies of the same inputs. Each schedule runs compiled three times: on one
// core, split over 4 cores and split over 3, and every byte of every buffer the kernels touch must match.
#include <gtest/gtest.h>

#include <cmath>

#include "compiler/linearize.h"
#include "tests/compiler/compiled_kernel_util.h"

namespace doorbell {
namespace {

using test::expect_compiled_matches_reference;
using test::NooptScope;
using test::random_floats;

TEST(CompiledKernels, SeedAddThenMultiply) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor x = Tensor({1.f, 2.f, 3.f});
  Tensor y = (x + 1) * 2;
  expect_compiled_matches_reference({y});
  EXPECT_EQ(y.tolist<float>(), (std::vector<float>{4, 6, 8}));
}

TEST(CompiledKernels, ElementwiseMathOverAThousandElements) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor a(random_floats(1000, 1), {10, 100}), b(random_floats(1000, 2, 0.5f, 3), {10, 100});
  Tensor y = (a * b - a / b).maximum(a.sin()) + b.sqrt() + b.log2() + a.exp2() + (a < b).where(a, b);
  expect_compiled_matches_reference({y});
}

TEST(CompiledKernels, BroadcastOfAColumnAndARow) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor a(std::vector<float>{1, 2, 3}, {3, 1}), b(std::vector<float>{10, 20, 30, 40}, {1, 4});
  Tensor y = a + b;
  expect_compiled_matches_reference({y});
  EXPECT_EQ(y.tolist<float>(), (std::vector<float>{11, 21, 31, 41, 12, 22, 32, 42, 13, 23, 33, 43}));
}

TEST(CompiledKernels, SumAndMaxReductions) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor a(random_floats(7 * 13, 3), {7, 13});
  expect_compiled_matches_reference({a.sum(1), a.max(0), a.sum(), a.max()});
  Tensor i(std::vector<int32_t>{-5, 3, 9, -2, 7, 0}, {2, 3});
  Tensor s = i.sum(1), m = i.max(0);
  expect_compiled_matches_reference({s, m});
  EXPECT_EQ(s.tolist<int32_t>(), (std::vector<int32_t>{7, 5}));
  EXPECT_EQ(m.tolist<int32_t>(), (std::vector<int32_t>{-2, 7, 9}));
}

TEST(CompiledKernels, Matmul) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor a(random_floats(5 * 7, 4), {5, 7}), b(random_floats(7 * 3, 5), {7, 3});
  expect_compiled_matches_reference({a.matmul(b)});
}

TEST(CompiledKernels, Softmax) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor a(random_floats(4 * 9, 6), {4, 9});
  Tensor y = a.softmax(1);
  expect_compiled_matches_reference({y});
  std::vector<float> v = y.tolist<float>();
  for (int r = 0; r < 4; r++) {
    double sum = 0;
    for (int c = 0; c < 9; c++) sum += v[r * 9 + c];
    EXPECT_NEAR(sum, 1.0, 1e-5) << "row " << r;
  }
}

TEST(CompiledKernels, PadShrinkFlipAndAGatedLoad) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor x(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor padded = x.pad({{1, 1}, {2, 0}}) * 10;  // the padding is a gated load: reads 0 outside the input
  Tensor y = x.flip(1).shrink({{0, 2}, {1, 3}});
  expect_compiled_matches_reference({padded, y});
  EXPECT_EQ(padded.tolist<float>(), (std::vector<float>{0, 0, 0, 0, 0, 0, 0, 10, 20, 30, 0, 0, 40, 50, 60, 0, 0, 0, 0, 0}));
  EXPECT_EQ(y.tolist<float>(), (std::vector<float>{2, 1, 5, 4}));
}

TEST(CompiledKernels, Int32FloorDivisionAndModuloOfNegatives) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor a(std::vector<int32_t>{-7, 7, -7, 7, -1, 0}), b(std::vector<int32_t>{2, -2, -2, 2, 3, -5});
  Tensor q = a.floordiv(b), r = a.mod(b);
  expect_compiled_matches_reference({q, r});
  EXPECT_EQ(q.tolist<int32_t>(), (std::vector<int32_t>{-4, -4, 3, 3, -1, 0}));
  EXPECT_EQ(r.tolist<int32_t>(), (std::vector<int32_t>{1, -1, -1, 1, 2, 0}));
}

TEST(CompiledKernels, Uint8Wraparound) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor a(std::vector<uint8_t>{250, 3, 16, 200}), b(std::vector<uint8_t>{10, 5, 20, 100});
  Tensor s = a + b, d = a - b, m = a * b;
  expect_compiled_matches_reference({s, d, m});
  EXPECT_EQ(s.tolist<uint8_t>(), (std::vector<uint8_t>{4, 8, 36, 44}));
  EXPECT_EQ(d.tolist<uint8_t>(), (std::vector<uint8_t>{240, 254, 252, 100}));
  EXPECT_EQ(m.tolist<uint8_t>(), (std::vector<uint8_t>{196, 15, 64, 32}));
}

TEST(CompiledKernels, Float16AndBFloat16RoundTripAndArithmetic) {
  SKIP_WITHOUT_C_COMPILER();
  std::vector<float> v = random_floats(257, 7, -70000, 70000);
  v.insert(v.end(), {0.1f, 1e-6f, -2.5f, 65504.f, 65520.f, 3.0e38f});
  Tensor x(v);
  Tensor h = x.cast(dtypes::float16), bf = x.cast(dtypes::bfloat16);
  Tensor h_back = (h * h.cast(dtypes::float16) + h).cast(dtypes::float32), bf_back = (bf / 3 + bf).cast(dtypes::float32);
  Tensor h_round = h.cast(dtypes::float32), bf_round = bf.cast(dtypes::float32);
  expect_compiled_matches_reference({h_back, bf_back, h.sum(), bf.max(), h_round, bf_round});
  std::vector<float> hr = h_round.tolist<float>(), br = bf_round.tolist<float>();
  EXPECT_EQ(hr[257], half_bits_to_float(float_to_half_bits(0.1f)));
  EXPECT_EQ(br[257], bfloat16_bits_to_float(float_to_bfloat16_bits(0.1f)));
  EXPECT_TRUE(std::isinf(hr[261])) << "65520 rounds to infinity in float16";
  EXPECT_EQ(hr[260], 65504.f);
}

TEST(CompiledKernels, Cumsum) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor x(random_floats(37, 8), {37});
  Tensor c = x.cumsum(0);
  Tensor i = Tensor(std::vector<int32_t>{1, -2, 3, -4, 5}).cumsum(0);
  expect_compiled_matches_reference({c, i});
  EXPECT_EQ(i.tolist<int32_t>(), (std::vector<int32_t>{1, -1, 2, -2, 3}));
}

TEST(CompiledKernels, Int64BoolShiftsAndCasts) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor a(std::vector<int64_t>{-9, 1LL << 40, 5, INT64_MAX}), b(std::vector<int64_t>{4, 3, -2, 1});
  Tensor sh = a.lshift(3) ^ a.rshift(1), fl = a.floordiv(b), cmp = (a < b).logical_not() & (a != b);
  Tensor f = a.cast(dtypes::float32) + b.cast(dtypes::float64).cast(dtypes::float32);
  expect_compiled_matches_reference({sh, fl, cmp, f});
  EXPECT_EQ(fl.tolist<int64_t>(), (std::vector<int64_t>{-3, (1LL << 40) / 3, -3, INT64_MAX}));
}

TEST(CompiledKernels, ReductionsOverEachAxisOfA3dTensor) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor a(random_floats(3 * 5 * 7, 10), {3, 5, 7});
  expect_compiled_matches_reference({a.sum(0), a.max(1), a.sum(2), a.sum({0, 2}), a.max({1, 2}, true) + a});
}

TEST(CompiledKernels, MoreThan65536ElementsSplitOverCores) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor a(random_floats(70001, 11));
  expect_compiled_matches_reference({a * a + 1, a.sum()});
}

TEST(CompiledKernels, Int8AndBool) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor a(std::vector<int8_t>{127, -128, 5, -7, 100}), b(std::vector<int8_t>{1, -1, -3, 2, 100});
  Tensor s = a + b, q = a.floordiv(b), both = (a > b).logical_not() | (a == b);
  expect_compiled_matches_reference({s, q, both, (a < 0).sum(), (a > 0).any()});
  EXPECT_EQ(s.tolist<int8_t>(), (std::vector<int8_t>{-128, 127, 2, -5, -56}));
  EXPECT_EQ(q.tolist<int8_t>(), (std::vector<int8_t>{127, -128, -2, -4, 1}));
  EXPECT_EQ(both.tolist<bool>(), (std::vector<bool>{false, true, false, true, true}));
}

TEST(CompiledKernels, IndexMathIsInt32WhereItsBoundsFitAndInt64Elsewhere) {
  SKIP_WITHOUT_C_COMPILER();
  NooptScope noopt(true);  // the optimizer would upcast the loop over 3 away; this checks the renderer's types
  UOp out = UOp::make(Ops::PARAM, dtypes::int64, {}, ParamArg{0, AddrSpace::GLOBAL, "", 0, 2});
  UOp r = UOp::range(3, 0);
  UOp big = r * UOp::const_(dtypes::weakint, int64_t{1} << 40);  // up to 2^41: needs 64 bits
  UOp value = (big + r).cast(dtypes::int64);
  UOp store = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, dtypes::int64, {out, r}), value});
  UOp sink = UOp::sink({UOp::make(Ops::END, dtypes::void_, {store, r})});
  CompiledKernel k = compile_kernel(sink);
  std::string source = k.program.src(2).arg_as<std::string>();
  EXPECT_NE(source.find("int32_t ridx"), std::string::npos) << "a loop over 3 counts in int32\n" << source;
  EXPECT_NE(source.find("int64_t alu"), std::string::npos) << "r * 2^40 is computed in int64\n" << source;
  int64_t data[3] = {-1, -1, -1};
  void* bufs[1] = {data};
  for (int c = 0; c < 2; c++) k.fn(bufs, nullptr, c, 2);
  EXPECT_EQ(data[0], 0);
  EXPECT_EQ(data[1], (int64_t{1} << 40) + 1);
  EXPECT_EQ(data[2], (int64_t{1} << 41) + 2);
}

TEST(Linearize, ASumOverRowsAccumulatesInsideASplitRowLoop) {
  Tensor a(random_floats(6, 9), {2, 3});
  UOp linear = a.sum(1).schedule_linear();
  ASSERT_EQ(linear.src().size(), 1u);
  std::vector<Statement> st = linearize(linear.src(0).src(0));
  std::vector<StatementKind> kinds;
  for (const Statement& s : st)
    if (s.kind != StatementKind::VALUE) kinds.push_back(s.kind);
  using K = StatementKind;
  EXPECT_EQ(kinds, (std::vector<K>{K::BEGIN_LOOP, K::ACC_INIT, K::BEGIN_LOOP, K::ACC_UPDATE, K::END_LOOP, K::STORE, K::END_LOOP}));
  EXPECT_TRUE(st.front().split) << "the row loop is divided across cores";
  for (const Statement& s : st)
    if (s.kind == K::BEGIN_LOOP && !(s.u == st.front().u)) {
      EXPECT_FALSE(s.split) << "a reduce loop is never divided";
    }
}

}  // namespace
}  // namespace doorbell
