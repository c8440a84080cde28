// The CPU optimizer (compiler/cpu/cpu_optimizer.h) and the vectorizer (compiler/cpu/vectorize.h): which ranges become
// vectors and register tiles, what the C renderer then emits, the fallback to scalar lanes when a kernel cannot be
// vectors, the split of big reductions across cores (scheduler/split_reduce.h), and results against the reference
// interpreter (exact for elementwise float and integer kernels; float sums reassociate into vector lanes and a
// matmul's products are fused into its sums, so those are compared with a tolerance).
#include <gtest/gtest.h>

#include <string>

#include "compiler/cpu/cpu_optimizer.h"
#include "compiler/cpu/cpu_target.h"
#include "compiler/cpu/vectorize.h"
#include "compiler/expander.h"
#include "compiler/linearize.h"
#include "tests/compiler/compiled_kernel_util.h"

namespace doorbell {
namespace {

using namespace test;  // NOLINT: the helpers shared by the compiler tests

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) n++;
  return n;
}

std::string source_of(const UOp& sink) { return compile_kernel(sink).program.src(2).arg_as<std::string>(); }

void expect_matches_reference(const std::vector<Tensor>& outputs, double rtol) {
  ReferenceRun r = run_reference(outputs);
  for (int cores : {4, 3, 1}) {
    restore(r.buffers, r.initial);
    run_compiled(r.linear, cores);
    expect_same_contents(r.buffers, snapshot(r.buffers), r.want, std::to_string(cores) + " core(s)", rtol);
  }
}

TEST(CpuOptimizer, AnElementwiseKernelWalksItsOutputInVectorsOfTheMachinesWidth) {
  NooptScope on(false);
  const int lanes = cpu_vector_lanes();
  EXPECT_TRUE(lanes == 8 || lanes == 16);
  Tensor a(random_floats(1024, 1));
  std::vector<UOp> sinks = kernel_sinks({(a + 1) * 2});
  ASSERT_EQ(sinks.size(), 1u);
  std::vector<UOp> v = ranges_of(optimize_for_cpu(sinks[0]), AxisType::VECTOR);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(range_size(v[0]), lanes);
  UOp low = cpu_c_target().lower(sinks[0], true).sink;
  EXPECT_TRUE(ranges_of(low, AxisType::VECTOR).empty()) << "the lanes are values now, not a range";
  std::vector<UOp> loads = nodes(low, Ops::LOAD), stores = nodes(low, Ops::STORE);
  ASSERT_EQ(loads.size(), 1u);
  ASSERT_EQ(stores.size(), 1u);
  EXPECT_EQ(loads[0].dtype(), dtypes::float32.vec(lanes));
  EXPECT_EQ(stores[0].src(1).dtype(), dtypes::float32.vec(lanes));
  SKIP_WITHOUT_C_COMPILER();
  std::string src = source_of(sinks[0]);
  std::string vt = "db_f32x" + std::to_string(lanes);
  EXPECT_GE(count(src, "*(const " + vt + "u*)&"), 1) << src;
  EXPECT_GE(count(src, "*(" + vt + "u*)&"), 1) << "a vector store\n" << src;
}

TEST(CpuOptimizer, ASumOverTheLastAxisKeepsVectorAccumulatorsAndFoldsTheirLanesInOrder) {
  NooptScope on(false);
  const int lanes = cpu_vector_lanes();
  Tensor a(random_floats(8 * 256, 2), {8, 256});
  std::vector<UOp> sinks = kernel_sinks({a.sum(1)});
  ASSERT_EQ(sinks.size(), 1u);
  UOp opt = optimize_for_cpu(sinks[0]);
  ASSERT_EQ(ranges_of(opt, AxisType::VECTOR).size(), 1u);
  ASSERT_EQ(ranges_of(opt, AxisType::UNROLL).size(), 1u);
  EXPECT_EQ(range_size(ranges_of(opt, AxisType::UNROLL)[0]), 4) << "four vector loads per iteration";
  UOp low = cpu_c_target().lower(sinks[0], true).sink;
  int vector_reduces = 0, folds = 0;
  for (const UOp& r : nodes(low, Ops::REDUCE)) {
    if (r.dtype().lanes == lanes && r.src().size() == 2) vector_reduces++;
    if (r.dtype().lanes == 1 && r.src().size() == 1 && r.src(0).dtype().lanes == lanes) folds++;
  }
  EXPECT_EQ(vector_reduces, 1);
  EXPECT_EQ(folds, 1) << "a REDUCE with no ranges folds the accumulator's lanes";
  std::vector<Statement> st = linearize(low);
  int loops = 0;
  for (const Statement& s : st) loops += s.kind == StatementKind::BEGIN_LOOP;
  EXPECT_EQ(loops, 2) << "rows and the reduce over 256 / (4 x lanes)";
}

TEST(CpuOptimizer, AMatmulGetsARegisterTileWithColumnTilesOutermostAndFusedMultiplyAdds) {
  NooptScope on(false);
  const int lanes = cpu_vector_lanes();
  Tensor a(random_floats(64 * 64, 3), {64, 64}), b(random_floats(64 * 128, 4), {64, 128});
  std::vector<UOp> sinks = kernel_sinks({a.matmul(b)});
  ASSERT_EQ(sinks.size(), 1u);
  UOp opt = optimize_for_cpu(sinks[0]);
  std::vector<UOp> up = ranges_of(opt, AxisType::UPCAST);
  int64_t tile = 1;
  for (const UOp& r : up) tile *= range_size(r);
  EXPECT_EQ(tile, 8) << "4 rows x 2 vectors of columns";
  const UOp& end = opt.src(0);
  ASSERT_EQ(end.op(), Ops::END);
  const UOp& outer = end.src(1);
  // the outermost loop walks column tiles: the B operand's index varies with it, A's does not
  bool in_b = false, in_a = false;
  for (const UOp& l : nodes(opt, Ops::LOAD)) {
    bool uses = false;
    for (const UOp& x : l.src(0).src(1).backward_slice()) uses |= x == outer;
    (l.src(0).src(0).arg_as<ParamArg>().slot == 2 ? in_b : in_a) |= uses;
  }
  EXPECT_TRUE(in_b);
  EXPECT_FALSE(in_a);
  UOp low = cpu_c_target().lower(sinks[0], true).sink;
  int acc = 0;
  for (const UOp& r : nodes(low, Ops::REDUCE)) acc += r.dtype().lanes == lanes;
  EXPECT_EQ(acc, 8);
  SKIP_WITHOUT_C_COMPILER();
  EXPECT_EQ(count(source_of(sinks[0]), "__builtin_elementwise_fma("), 8);
}

TEST(CpuOptimizer, AGatherIsNotVectorizedAndFallsBackToScalarLanes) {
  NooptScope on(false);
  Tensor a(random_floats(64 * 64, 5), {64, 64});
  std::vector<UOp> sinks = kernel_sinks({a.transpose() * 2});
  ASSERT_EQ(sinks.size(), 1u);
  UOp low = cpu_c_target().lower(sinks[0], true).sink;
  for (const UOp& u : low.toposort()) EXPECT_EQ(u.dtype().lanes, 1) << "no vector values";
  std::optional<UOp> refused = vectorize_kernel(expand_kernel(devectorize_ranges(optimize_for_cpu(sinks[0]))));
  ASSERT_TRUE(refused.has_value()) << "a kernel without a VECTOR range comes back as it is";
  SKIP_WITHOUT_C_COMPILER();
  EXPECT_EQ(count(source_of(sinks[0]), "db_f32x"), 0);
}

TEST(CpuOptimizer, AVectorIndexThatIsNotBasePlusLaneIsRefused) {
  // x[2 * i]: the lane index scaled by 2 is a gather; vectorize_kernel says so instead of loading the wrong elements
  UOp buf = UOp::make(Ops::PARAM, dtypes::float32, {}, ParamArg{0, AddrSpace::GLOBAL, "x", 0, 63});
  UOp out = UOp::make(Ops::PARAM, dtypes::float32, {}, ParamArg{1, AddrSpace::GLOBAL, "out", 0, 15});
  UOp v = UOp::range(16, 0, AxisType::VECTOR);
  UOp load = UOp::make(Ops::LOAD, dtypes::float32, {UOp::make(Ops::INDEX, dtypes::float32, {buf, v * 2})});
  UOp store = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, dtypes::float32, {out, v}), load});
  UOp sink = UOp::make(Ops::SINK, dtypes::void_, {UOp::make(Ops::END, dtypes::void_, {store, v})});
  EXPECT_FALSE(vectorize_kernel(sink).has_value());
  UOp ok_load = UOp::make(Ops::LOAD, dtypes::float32, {UOp::make(Ops::INDEX, dtypes::float32, {buf, v + 3})});
  UOp ok_store = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, dtypes::float32, {out, v}), ok_load});
  std::optional<UOp> ok = vectorize_kernel(UOp::make(Ops::SINK, dtypes::void_, {UOp::make(Ops::END, dtypes::void_, {ok_store, v})}));
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(nodes(*ok, Ops::LOAD)[0].dtype(), dtypes::float32.vec(16));
}

// The reference computes exp2 in double, the kernel a float32 polynomial within an ulp (compiler/transcendental.h),
// and a vector kernel fuses a * b + 1 into one rounding, which exp(x) magnifies |x| times: 1e-5 relative.
TEST(CpuVectorizedKernels, ElementwiseFloatAndIntegerChainsMatchTheReference) {
  SKIP_WITHOUT_C_COMPILER();
  NooptScope on(false);
  Tensor a(random_floats(4096, 6)), b(random_floats(4096, 7, 0.5f, 3));
  Tensor i = Tensor::randint({4096}, -1000, 1000);
  auto outs = [&] {
    return std::vector<Tensor>{((a * b + 1).relu() * 2 - 1).exp(), (a < b).where(a, b).maximum(a * 0.5f), a / b + b.sqrt(),
                               (i * 3 + (i >> 2)) ^ (i & 255), i.cast(dtypes::float32) * 0.25f, a.cast(dtypes::int32)};
  };
  for (const Tensor& t : outs()) EXPECT_EQ(nodes(cpu_c_target().lower(kernel_sinks({t}).back(), true).sink, Ops::STORE)[0].src(1).dtype().lanes, cpu_vector_lanes());
  expect_matches_reference(outs(), 1e-5);
}

// (Not sin: its range reduction multiplies in 64-bit integers, which 32-bit lanes do not hold; nor pow, which the C
// renderer leaves to the math library in double.)
TEST(CpuOptimizer, FloatMathDecomposedForTheCpuRunsInVectorLanes) {
  NooptScope on(false);
  Tensor a(random_floats(256, 14, 0.1f, 4));
  auto ops = [&] {
    return std::vector<std::pair<const char*, Tensor>>{{"exp", a.exp()}, {"log", a.log()}, {"sqrt", a.sqrt()},
                                                       {"sigmoid", a.sigmoid()}, {"tanh", a.tanh()}, {"floor", a.floor()},
                                                       {"reciprocal", a.reciprocal()}};
  };
  for (auto& [name, t] : ops()) {
    UOp low = cpu_c_target().lower(kernel_sinks({t}).back(), true).sink;
    std::vector<UOp> stores = nodes(low, Ops::STORE);
    ASSERT_EQ(stores.size(), 1u) << name;
    EXPECT_EQ(stores[0].src(1).dtype().lanes, cpu_vector_lanes()) << name << " is computed in vector lanes";
  }
  SKIP_WITHOUT_C_COMPILER();
  std::vector<Tensor> outs;
  for (auto& [name, t] : ops()) outs.push_back(t);
  expect_matches_reference(outs, 1e-6);
}

TEST(CpuVectorizedKernels, ARowGateLoadsWholeVectorsOrZerosAndMatchesTheReference) {
  SKIP_WITHOUT_C_COMPILER();
  NooptScope on(false);
  Tensor x(random_floats(4 * 32, 15), {4, 32});
  auto outs = [&] { return std::vector<Tensor>{x.pad({{1, 1}, {0, 0}}) * 2, x.pad({{2, 0}, {0, 0}}, 7) + 1}; };
  for (const Tensor& t : outs()) {
    std::string src = source_of(kernel_sinks({t}).back());
    EXPECT_NE(src.find(" ? *(const db_f32x"), std::string::npos) << "a vector load under a row's gate\n" << src;
  }
  expect_matches_reference(outs(), 0);
}

TEST(CpuVectorizedKernels, ReductionsAndMatmulsMatchTheReferenceWithinRounding) {
  SKIP_WITHOUT_C_COMPILER();
  NooptScope on(false);
  Tensor a(random_floats(64 * 96, 8), {64, 96}), b(random_floats(96 * 48, 9), {96, 48}), c(random_floats(40 * 40, 10), {40, 40});
  Tensor m(random_floats(32 * 512, 11), {32, 512});
  expect_matches_reference({a.matmul(b), c.matmul(c), m.sum(1), m.sum(0), m.max(1), m.softmax(-1), (a.matmul(b) + 1).relu()}, 1e-4);
}

TEST(SplitReduce, AHugeSumRunsAsTwoKernelsAndMatchesAFloat64Sum) {
  SKIP_WITHOUT_C_COMPILER();
  std::vector<float> v = random_floats(1 << 20, 12, 0, 1);
  Tensor x(v);
  EXPECT_EQ(x.sum().schedule_linear().src().size(), 2u) << "partial sums per core, then their sum";
  Tensor s = x.sum();  // scheduling assigns a tensor its buffer: a fresh one to run
  double want = 0;
  for (float f : v) want += f;
  EXPECT_NEAR(s.item<float>(), want, want * 1e-5);
  Tensor small(random_floats(1000, 13));
  EXPECT_EQ(small.sum().schedule_linear().src().size(), 1u);
}

TEST(SplitReduce, ABigSumOverAxis0RunsAsPartsOfWholeRowsThenThePartsAndMatchesFloat64) {
  SKIP_WITHOUT_C_COMPILER();
  NooptScope on(false);
  const int64_t rows = 2048, cols = 512;
  std::vector<float> v = random_floats(rows * cols, 16, 0, 1);
  Tensor x(v, {rows, cols});
  std::vector<UOp> sinks = kernel_sinks({x.sum(0)});
  ASSERT_EQ(sinks.size(), 2u) << "32 parts of 64 rows, then the 32 parts";
  // the parts' kernel keeps a whole row of accumulators: no column loop is left, only the parts' loop and the rows
  std::vector<Statement> st = linearize(cpu_c_target().lower(sinks[0], true).sink);
  int loops = 0;
  for (const Statement& s : st) loops += s.kind == StatementKind::BEGIN_LOOP;
  EXPECT_EQ(loops, 2);
  std::vector<float> got = x.sum(0).tolist<float>();
  for (int64_t j = 0; j < cols; j++) {
    double want = 0;
    for (int64_t i = 0; i < rows; i++) want += v[i * cols + j];
    ASSERT_NEAR(got[j], want, want * 1e-5) << "column " << j;
  }
}

}  // namespace
}  // namespace doorbell
