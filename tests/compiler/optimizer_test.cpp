// The first optimizer (compiler/optimizer.h) and the expander (compiler/expander.h): the shapes of the graphs they
// make, NOOPT, and, for a corpus of Tensor programs, compiled results with the optimizer equal to the reference
// interpreter and to the compiled results without it (exact for integers and max, close for float sums, which
// the unrolling reassociates).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <iostream>

#include "compiler/expander.h"
#include "compiler/linearize.h"
#include "compiler/optimizer.h"
#include "tests/compiler/compiled_kernel_util.h"

namespace doorbell {
namespace {

using namespace test;  // NOLINT: the helpers shared by the compiler tests

// Runs `outputs`' schedule with the reference interpreter, compiled without the optimizer and compiled with it
// (over 4, 3 and 1 cores), and compares. Returns how many kernels the optimizer changed.
int expect_optimized_matches_reference_and_noopt(const std::vector<Tensor>& outputs, double rtol = 1e-4) {
  ReferenceRun r = run_reference(outputs);
  const UOp& linear = r.linear;
  const std::vector<UOp>& buffers = r.buffers;
  const Snapshot &initial = r.initial, &want = r.want;
  Snapshot noopt;
  {
    NooptScope off(true);
    restore(buffers, initial);
    run_compiled(linear, 3);
    noopt = snapshot(buffers);
    expect_same_contents(buffers, noopt, want, "NOOPT, 3 cores", rtol);
  }
  NooptScope on(false);
  for (int cores : {4, 3, 1}) {
    restore(buffers, initial);
    run_compiled(linear, cores);
    Snapshot got = snapshot(buffers);
    expect_same_contents(buffers, got, want, "optimized, " + std::to_string(cores) + " core(s) vs reference", rtol);
    expect_same_contents(buffers, got, noopt, "optimized, " + std::to_string(cores) + " core(s) vs NOOPT", rtol);
  }
  int changed = 0;
  for (const UOp& call : linear.src()) changed += !(optimize_kernel(call.src(0)) == call.src(0));
  return changed;
}

TEST(Optimizer, AnElementwiseKernelGetsFourStoresInOneLoopOfAQuarterTheSize) {
  NooptScope on(false);
  Tensor a(random_floats(64, 1));
  std::vector<UOp> sinks = kernel_sinks({a * 2 + 1});
  ASSERT_EQ(sinks.size(), 1u);
  UOp opt = optimize_kernel(sinks[0]);
  std::vector<UOp> upcast = ranges_of(opt, AxisType::UPCAST);
  ASSERT_EQ(upcast.size(), 1u);
  EXPECT_EQ(range_size(upcast[0]), 4);
  UOp expanded = expand_kernel(opt);
  EXPECT_TRUE(ranges_of(expanded, AxisType::UPCAST).empty());
  EXPECT_EQ(nodes(expanded, Ops::STORE).size(), 4u);
  ASSERT_EQ(expanded.src().size(), 1u);
  const UOp& end = expanded.src(0);
  ASSERT_EQ(end.op(), Ops::END);
  EXPECT_EQ(end.src(0).op(), Ops::GROUP);
  ASSERT_EQ(end.src().size(), 2u) << "one loop nest for the four stores";
  EXPECT_EQ(end.src(1).arg_as<RangeArg>().type, AxisType::LOOP);
  EXPECT_EQ(range_size(end.src(1)), 16);
}

TEST(Optimizer, NewRangesGetAxesDistinctFromEveryExistingRange) {
  NooptScope on(false);
  Tensor a(random_floats(8 * 64, 2), {8, 64});
  std::vector<UOp> sinks = kernel_sinks({a.sum(1)});
  ASSERT_EQ(sinks.size(), 1u);
  std::vector<int64_t> axes;
  for (const UOp& r : nodes(optimize_kernel(sinks[0]), Ops::RANGE)) axes.push_back(r.arg_as<RangeArg>().axis);
  std::sort(axes.begin(), axes.end());
  EXPECT_EQ(std::adjacent_find(axes.begin(), axes.end()), axes.end());
}

TEST(Optimizer, ALargeReduceIsUnrolledByFourAndASmallOneDisappears) {
  NooptScope on(false);
  Tensor big(random_floats(5 * 64, 3), {5, 64}), small(random_floats(5 * 8, 4), {5, 8});
  std::vector<UOp> sinks = kernel_sinks({big.sum(1)});
  ASSERT_EQ(sinks.size(), 1u);
  UOp opt = optimize_kernel(sinks[0]);
  std::vector<UOp> unroll = ranges_of(opt, AxisType::UNROLL);
  ASSERT_EQ(unroll.size(), 1u);
  EXPECT_EQ(range_size(unroll[0]), 4);
  UOp expanded = expand_kernel(opt);
  std::vector<UOp> reduces = nodes(expanded, Ops::REDUCE);
  ASSERT_EQ(reduces.size(), 1u) << "5 rows are not upcast: one reduce";
  ASSERT_EQ(reduces[0].src().size(), 2u);
  EXPECT_EQ(range_size(reduces[0].src(1)), 16);
  EXPECT_EQ(nodes(reduces[0].src(0), Ops::LOAD).size(), 4u) << "four loads combined per iteration";

  std::vector<UOp> small_sinks = kernel_sinks({small.max(1)});
  ASSERT_EQ(small_sinks.size(), 1u);
  UOp small_expanded = expand_kernel(optimize_kernel(small_sinks[0]));
  EXPECT_TRUE(nodes(small_expanded, Ops::REDUCE).empty()) << "a reduce over 8 is unrolled fully";
  EXPECT_EQ(nodes(small_expanded, Ops::LOAD).size(), 8u);
}

TEST(Optimizer, ReplicationStaysWithinTheCap) {
  NooptScope on(false);
  Tensor a(random_floats(16 * 16 * 16, 5), {16, 16, 16});
  std::vector<UOp> sinks = kernel_sinks({a.sum({1, 2})});
  ASSERT_EQ(sinks.size(), 1u);
  UOp opt = optimize_kernel(sinks[0]);
  int64_t replication = 1;
  for (AxisType t : {AxisType::UPCAST, AxisType::UNROLL})
    for (const UOp& r : ranges_of(opt, t)) replication *= range_size(r);
  EXPECT_GT(replication, 1);
  EXPECT_LE(replication, kMaxReplication);
}

TEST(Optimizer, UpcastReducesShareOneLoopWithAnAccumulatorEach) {
  NooptScope on(false);
  Tensor a(random_floats(64 * 64, 34), {64, 64}), b(random_floats(64 * 64, 35), {64, 64});
  std::vector<UOp> sinks = kernel_sinks({a.matmul(b)});
  ASSERT_EQ(sinks.size(), 1u);
  std::vector<Statement> st = linearize(expand_kernel(optimize_kernel(sinks[0])));
  int loops = 0, inits = 0, updates = 0, stores = 0, splits = 0;
  for (const Statement& s : st) {
    loops += s.kind == StatementKind::BEGIN_LOOP;
    splits += s.kind == StatementKind::BEGIN_LOOP && s.split;
    inits += s.kind == StatementKind::ACC_INIT;
    updates += s.kind == StatementKind::ACC_UPDATE;
    stores += s.kind == StatementKind::STORE;
  }
  EXPECT_EQ(loops, 3) << "rows, columns / 4 and the reduce / 4";
  EXPECT_EQ(splits, 1) << "only the outermost loop is divided across cores";
  EXPECT_EQ(inits, 4);
  EXPECT_EQ(updates, 4);
  EXPECT_EQ(stores, 4);
}

TEST(Optimizer, NooptLeavesTheKernelUnchangedAndCompilesSeparately) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor a(random_floats(64, 6));
  std::vector<UOp> sinks = kernel_sinks({a + 1});
  ASSERT_EQ(sinks.size(), 1u);
  std::string plain, optimized;
  {
    NooptScope off(true);
    EXPECT_TRUE(noopt_enabled());
    EXPECT_EQ(optimize_kernel(sinks[0]), sinks[0]);
    plain = compile_kernel(sinks[0]).program.src(2).arg_as<std::string>();
  }
  NooptScope on(false);
  EXPECT_FALSE(optimize_kernel(sinks[0]) == sinks[0]);
  CompiledKernel k = compile_kernel(sinks[0]);
  optimized = k.program.src(2).arg_as<std::string>();
  EXPECT_NE(plain, optimized) << "the program cache keeps the NOOPT and the optimized programs apart";
  EXPECT_EQ(k.program.src(0), sinks[0]) << "the PROGRAM names the original kernel";
}

TEST(OptimizedKernels, ElementwiseOnOddAndPowerOfTwoSizesMatch) {
  SKIP_WITHOUT_C_COMPILER();
  std::vector<Tensor> outs;
  for (int64_t n : {1, 3, 6, 7, 13, 64, 1000, 1024}) {
    Tensor a(random_floats(n, 10 + n)), b(random_floats(n, 20 + n, 0.5f, 3));
    outs.push_back((a * b - a / b).maximum(a.sin()) + b.sqrt() + (a < b).where(a, b));
  }
  Tensor m(random_floats(6 * 10, 7), {6, 10});
  outs.push_back(m * 3 - 1);
  EXPECT_GT(expect_optimized_matches_reference_and_noopt(outs), 0);
}

TEST(OptimizedKernels, BroadcastMatches) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor a(std::vector<float>{1, 2, 3}, {3, 1}), b(std::vector<float>{10, 20, 30, 40}, {1, 4});
  Tensor c(random_floats(8, 8), {8, 1}), d(random_floats(12, 9), {1, 12});
  Tensor y = a + b;
  EXPECT_GT(expect_optimized_matches_reference_and_noopt({y, c * d, (c + d).sum(0)}), 0);
  EXPECT_EQ(y.tolist<float>(), (std::vector<float>{11, 21, 31, 41, 12, 22, 32, 42, 13, 23, 33, 43}));
}

TEST(OptimizedKernels, PadShrinkFlipAndGatedLoadsMatch) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor x(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor padded = x.pad({{1, 1}, {2, 0}}) * 10;
  Tensor z(random_floats(4 * 6, 11), {4, 6});
  Tensor wide = z.pad({{1, 3}, {2, 4}}) + 1;  // 8 x 12: the gate is replicated with the upcast
  Tensor flipped = z.flip(1).shrink({{0, 4}, {1, 5}}), both = z.flip({0, 1}).pad({{0, 0}, {3, 3}});
  EXPECT_GT(expect_optimized_matches_reference_and_noopt({padded, wide, flipped, both}), 0);
  EXPECT_EQ(padded.tolist<float>(), (std::vector<float>{0, 0, 0, 0, 0, 0, 0, 10, 20, 30, 0, 0, 40, 50, 60, 0, 0, 0, 0, 0}));
}

TEST(OptimizedKernels, SumOverEachAxisMatches) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor a(random_floats(3 * 5 * 7, 12), {3, 5, 7}), b(random_floats(4 * 8 * 16, 13), {4, 8, 16});
  Tensor c(random_floats(6 * 96, 14), {6, 96});
  EXPECT_GT(expect_optimized_matches_reference_and_noopt({a.sum(0), a.sum(1), a.sum(2), a.sum({0, 2}), b.sum(0), b.sum(1),
                                                          b.sum(2), b.sum({1, 2}), c.sum(1), c.sum(0), c.sum()}),
            0);
}

TEST(OptimizedKernels, MaxOverEachAxisMatchesExactly) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor a(random_floats(3 * 5 * 7, 15), {3, 5, 7}), b(random_floats(4 * 8 * 16, 16), {4, 8, 16});
  Tensor c(random_floats(6 * 96, 17), {6, 96});
  EXPECT_GT(expect_optimized_matches_reference_and_noopt({a.max(0), a.max(1), a.max(2), b.max(0), b.max(1), b.max(2),
                                                          b.max({0, 2}), c.max(1), c.max(), b.max({1, 2}, true) + b},
                                                         0.0),
            0);
}

TEST(OptimizedKernels, SmallAndSquareMatmulsMatch) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor a(random_floats(3 * 5, 18), {3, 5}), b(random_floats(5 * 7, 19), {5, 7});
  Tensor c(random_floats(64 * 64, 20), {64, 64}), d(random_floats(64 * 64, 21), {64, 64});
  EXPECT_GT(expect_optimized_matches_reference_and_noopt({a.matmul(b), c.matmul(d)}), 0);
}

TEST(OptimizedKernels, SoftmaxMatches) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor a(random_floats(4 * 9, 22), {4, 9}), b(random_floats(8 * 64, 23), {8, 64});
  EXPECT_GT(expect_optimized_matches_reference_and_noopt({a.softmax(1), b.softmax(1), b.softmax(0)}), 0);
}

TEST(OptimizedKernels, Int32FloorDivisionModuloAndSumsMatchExactly) {
  SKIP_WITHOUT_C_COMPILER();
  std::vector<int32_t> av, bv;
  for (int i = 0; i < 48; i++) {
    av.push_back((i * 37) % 29 - 14);
    bv.push_back(i % 7 == 3 ? -5 : (i * 11) % 9 - 4 == 0 ? 3 : (i * 11) % 9 - 4);
  }
  Tensor a(av, {4, 12}), b(bv, {4, 12});
  Tensor q = a.floordiv(b), r = a.mod(b);
  Tensor big(std::vector<int32_t>(64, INT32_MAX / 3), {4, 16});
  EXPECT_GT(expect_optimized_matches_reference_and_noopt({q, r, a.sum(1), a.max(0), big.sum(1), big.sum()}, 0.0), 0);
  Tensor x(std::vector<int32_t>{-7, 7, -7, 7, -1, 0}), y(std::vector<int32_t>{2, -2, -2, 2, 3, -5});
  Tensor qq = x.floordiv(y), rr = x.mod(y);
  expect_optimized_matches_reference_and_noopt({qq, rr}, 0.0);
  EXPECT_EQ(qq.tolist<int32_t>(), (std::vector<int32_t>{-4, -4, 3, 3, -1, 0}));
  EXPECT_EQ(rr.tolist<int32_t>(), (std::vector<int32_t>{1, -1, -1, 1, 2, 0}));
}

TEST(OptimizedKernels, Uint8WraparoundMatchesExactly) {
  SKIP_WITHOUT_C_COMPILER();
  std::vector<uint8_t> av, bv;
  for (int i = 0; i < 32; i++) av.push_back(static_cast<uint8_t>(200 + i * 7)), bv.push_back(static_cast<uint8_t>(i * 29));
  Tensor a(av, {4, 8}), b(bv, {4, 8});
  Tensor s = a + b, d = a - b, m = a * b;
  EXPECT_GT(expect_optimized_matches_reference_and_noopt({s, d, m, a.sum(1), m.max(0)}, 0.0), 0);
  Tensor x(std::vector<uint8_t>{250, 3, 16, 200}), y(std::vector<uint8_t>{10, 5, 20, 100});
  Tensor xs = x + y;
  expect_optimized_matches_reference_and_noopt({xs}, 0.0);
  EXPECT_EQ(xs.tolist<uint8_t>(), (std::vector<uint8_t>{4, 8, 36, 44}));
}

TEST(OptimizedKernels, CumsumMatches) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor x(random_floats(37, 24)), y(random_floats(64, 25));
  Tensor i = Tensor(std::vector<int32_t>{1, -2, 3, -4, 5, 6, -7, 8, 9, -10, 11, 12, 13, -14, 15, 16}).cumsum(0);
  EXPECT_GT(expect_optimized_matches_reference_and_noopt({x.cumsum(0), y.cumsum(0), i}), 0);
  EXPECT_EQ(i.tolist<int32_t>()[15], 62);
}

TEST(OptimizedKernels, NestedAndReusedReducesMatch) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor a(random_floats(8 * 8, 29), {8, 8}), b(random_floats(8 * 8, 30), {8, 8}), c(random_floats(4 * 4, 31), {4, 4});
  Tensor s = c.sum(1);
  EXPECT_GT(expect_optimized_matches_reference_and_noopt({(a.matmul(b).relu() + 1).sum(0), s * s + s,
                                                          (a.sum(1, true) * a).sum(1), a.log_softmax(1), b.argmax(1)}),
            0);
}

TEST(OptimizedKernels, SeventyThousandAndOneElementsSplitOverCoresMatch) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor a(random_floats(70001, 26)), b(random_floats(70001, 27)), c(random_floats(70000, 28));
  expect_optimized_matches_reference_and_noopt({a + b, a.sum(), c * c + 1, c.sum()});
}

// Not a check: prints how long a 1M-element add and a 256x256 matmul take compiled with and without the optimizer
// (one core, best of several runs). Run with --gtest_also_run_disabled_tests.
}  // namespace
}  // namespace doorbell
