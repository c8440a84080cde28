// The scheduler on tensor graphs built from raw UOps: the seeds' facts, dependency order (RAW, WAR), cycles,
// the schedule cache, and values computed by the reference (run_linear on the REF device).
#include <gtest/gtest.h>

#include <cstring>

#include "hcq/host_buffers.h"
#include "hcq/run_linear.h"
#include "ir/printer.h"
#include "scheduler/rangeify.h"
#include "scheduler/schedule.h"
#include "scheduler/schedule_cache.h"

namespace doorbell {
namespace {

UOp data(const std::vector<float>& v, IntTuple shape) {
  UOp b = new_buffer(dtypes::float32, static_cast<int64_t>(v.size()));
  std::memcpy(buffer_bytes(b).data(), v.data(), v.size() * sizeof(float));
  return shape == IntTuple{static_cast<int64_t>(v.size())} ? b : UOp::make(Ops::RESHAPE, dtypes::float32, {b}, shape);
}
UOp full(double v, IntTuple shape) {
  UOp c = UOp::const_(dtypes::float32, v);
  UOp r = UOp::make(Ops::RESHAPE, dtypes::float32, {c}, IntTuple(shape.size(), 1));
  return UOp::make(Ops::EXPAND, dtypes::float32, {r}, shape);
}
UOp mop(Ops op, const UOp& x, IntTuple arg) { return UOp::make(op, x.dtype(), {x}, arg); }
UOp reduce(Ops op, const UOp& x, IntTuple axes) { return UOp::make(Ops::REDUCE, x.dtype(), {x}, ReduceArg{op, axes}); }
UOp assign(const UOp& target, const UOp& value) {
  return UOp::make(Ops::AFTER, target.dtype(), {target, UOp::make(Ops::STORE, dtypes::void_, {target, value})});
}
std::vector<float> values(const UOp& view) {
  std::span<std::byte> b = buffer_bytes(base_buffer(view));
  std::vector<float> out(b.size() / sizeof(float));
  std::memcpy(out.data(), b.data(), b.size());
  return out;
}
// The buffer each kernel writes, in execution order.
std::vector<UOp> writes(const UOp& linear) {
  std::vector<UOp> w;
  for (const UOp& call : linear.src()) w.push_back(call.src(1));
  return w;
}

TEST(Schedule, SeedAddThenMultiplyIsALinearOfCallsWithTheRightValues) {
  UOp x = data({1, 2, 3}, {3});
  UOp y = (x + full(1, {3})) * full(2, {3});
  ScheduleResult r = schedule({y});
  ASSERT_EQ(r.linear.op(), Ops::LINEAR);
  ASSERT_GT(r.linear.src().size(), 0u);
  for (const UOp& call : r.linear.src()) {
    EXPECT_EQ(call.op(), Ops::CALL);
    EXPECT_EQ(call.src(0).op(), Ops::SINK);
  }
  EXPECT_EQ(r.linear.src().size(), 1u) << "an elementwise chain is one kernel";
  run_linear(r.linear, on_device("REF"));
  EXPECT_EQ(values(r.becomes[0].second), (std::vector<float>{4, 6, 8}));
}

TEST(Schedule, SeedMovementTracePadsSixFloatsToTwentyThenShrinksToFiveInOneKernel) {
  UOp x = data({1, 2, 3, 4, 5, 6}, {6});
  UOp padded = mop(Ops::PAD, x, {7, 7});  // a logical 20-element intermediate
  ASSERT_EQ(*padded.shape(), IntTuple{20});
  UOp out = mop(Ops::SHRINK, padded, {5, 10});
  ScheduleResult r = schedule({out});
  ASSERT_EQ(r.linear.src().size(), 1u);
  const UOp& call = r.linear.src(0);
  ASSERT_EQ(call.src().size(), 3u) << "the kernel's buffers: the output and the input";
  EXPECT_EQ(call.src(1).arg_as<int64_t>(), 5) << "a five-float output";
  EXPECT_EQ(call.src(2).arg_as<int64_t>(), 6) << "a six-float input";
  for (const UOp& u : call.src(0).toposort())
    if (u.op() == Ops::PARAM) {
      EXPECT_NE(u.shape()->at(0), 20) << "no 20-element buffer exists";
    }
  run_linear(r.linear, on_device("REF"));
  EXPECT_EQ(values(r.becomes[0].second), (std::vector<float>{0, 0, 1, 2, 3}));
}

TEST(Schedule, WriteAfterReadRunsTheReaderBeforeTheOverwrite) {
  UOp a = data({1, 2, 3}, {3});
  UOp b = a + full(1, {3});                // reads a's old value
  UOp a2 = assign(a, a * full(2, {3}));    // overwrites a
  ScheduleResult r = schedule({a2, b});    // the assign is listed first: order must come from dependencies
  ASSERT_EQ(r.linear.src().size(), 2u);
  std::vector<UOp> w = writes(r.linear);
  EXPECT_EQ(w[1], a) << "the kernel overwriting a runs second";
  run_linear(r.linear, on_device("REF"));
  EXPECT_EQ(values(r.becomes[1].second), (std::vector<float>{2, 3, 4})) << "b saw a's old value";
  EXPECT_EQ(values(a), (std::vector<float>{2, 4, 6}));
}

TEST(Schedule, ReadAfterWriteRunsTheWriterFirst) {
  UOp a = data({1, 2, 3}, {3});
  UOp a2 = assign(a, a + full(10, {3}));
  UOp c = a2 * full(2, {3});  // reads the new value
  ScheduleResult r = schedule({c, a2});
  ASSERT_EQ(r.linear.src().size(), 2u);
  EXPECT_EQ(writes(r.linear)[0], a);
  run_linear(r.linear, on_device("REF"));
  EXPECT_EQ(values(r.becomes[0].second), (std::vector<float>{22, 24, 26}));
}

TEST(Schedule, SwappingTwoBuffersInPlaceIsACycle) {
  UOp a = data({1, 2}, {2}), b = data({3, 4}, {2});
  UOp a2 = assign(a, b + full(0, {2}));
  UOp b2 = assign(b, a + full(0, {2}));  // reads a's old value, which a2 overwrites; a2 reads b's, which b2 overwrites
  try {
    schedule({a2, b2});
    FAIL() << "expected a cycle error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cycle detected in assign graph"), std::string::npos) << e.what();
  }
}

TEST(Schedule, AssignThroughAFlipReadsAStoredCopyFirst) {
  UOp t = data({1, 2, 3, 4}, {4});
  UOp t2 = assign(t, mop(Ops::FLIP, t, {0}) + full(0, {4}));
  ScheduleResult r = schedule({t2});
  EXPECT_EQ(r.linear.src().size(), 2u) << "the flipped value is stored before it overwrites its source";
  run_linear(r.linear, on_device("REF"));
  EXPECT_EQ(values(t), (std::vector<float>{4, 3, 2, 1}));
}

TEST(Schedule, AssignOfAnElementwiseFunctionOfItselfIsOneKernel) {
  UOp t = data({1, 2, 3}, {3});
  ScheduleResult r = schedule({assign(t, t * full(2, {3}))});
  EXPECT_EQ(r.linear.src().size(), 1u);
  run_linear(r.linear, on_device("REF"));
  EXPECT_EQ(values(t), (std::vector<float>{2, 4, 6}));
}

TEST(Schedule, ReduceBroadcastBackIsStoredSoftmaxStyle) {
  UOp m = data({1, 2, 3, 4, 5, 6}, {2, 3});
  UOp mx = reduce(Ops::MAX, m, {1});
  UOp e = m - mop(Ops::EXPAND, mx, {2, 3});
  ScheduleResult r = schedule({reduce(Ops::ADD, e, {1})});
  EXPECT_EQ(r.linear.src().size(), 2u);
  run_linear(r.linear, on_device("REF"));
  EXPECT_EQ(values(r.becomes[0].second), (std::vector<float>{-3, -3}));
}

TEST(Schedule, ReduceOfAReduceIsOneKernel) {
  UOp m = data({1, 2, 3, 4, 5, 6}, {2, 3});
  ScheduleResult r = schedule({reduce(Ops::ADD, reduce(Ops::ADD, m, {1}), {0})});
  EXPECT_EQ(r.linear.src().size(), 1u);
  run_linear(r.linear, on_device("REF"));
  EXPECT_EQ(values(r.becomes[0].second), (std::vector<float>{21}));
}

TEST(Schedule, TheSameGraphOnFreshBuffersIsACacheHitWithFreshIntermediates) {
  clear_schedule_cache();
  auto graph = [](const UOp& x) {
    UOp s = reduce(Ops::ADD, x, {1});
    return UOp::make(Ops::CONTIGUOUS, dtypes::float32, {s + full(1, {2, 1})}) * full(3, {2, 1});
  };
  UOp x1 = data({1, 2, 3, 4}, {2, 2}), x2 = data({5, 6, 7, 8}, {2, 2});
  ScheduleResult r1 = schedule({graph(x1)});
  ScheduleResult r2 = schedule({graph(x2)});
  EXPECT_FALSE(r1.cache_hit);
  EXPECT_TRUE(r2.cache_hit);
  EXPECT_EQ(schedule_cache_size(), 1u);
  ASSERT_EQ(r1.linear.src().size(), r2.linear.src().size());
  EXPECT_FALSE(r1.linear == r2.linear) << "the hit is bound to the new buffers";
  run_linear(r1.linear, on_device("REF"));
  run_linear(r2.linear, on_device("REF"));
  EXPECT_EQ(values(r1.becomes[0].second), (std::vector<float>{12, 24}));
  EXPECT_EQ(values(r2.becomes[0].second), (std::vector<float>{36, 48}));
  EXPECT_FALSE(base_buffer(r1.becomes[0].second) == base_buffer(r2.becomes[0].second));
}

TEST(Schedule, ADifferentGraphIsACacheMiss) {
  clear_schedule_cache();
  UOp x = data({1, 2}, {2});
  EXPECT_FALSE(schedule({x + full(1, {2})}).cache_hit);
  EXPECT_FALSE(schedule({x * full(1, {2})}).cache_hit);
  EXPECT_TRUE(schedule({data({3, 4}, {2}) + full(1, {2})}).cache_hit);
  EXPECT_EQ(schedule_cache_size(), 2u);
}

TEST(Schedule, TheSameBufferTwiceIsNotTheSameKeyAsTwoBuffers) {
  clear_schedule_cache();
  UOp a = data({1, 2}, {2}), b = data({3, 4}, {2});
  schedule({a + a});
  EXPECT_FALSE(schedule({a + b}).cache_hit) << "a+a and a+b differ in structure";
}

TEST(Schedule, BuffersOfAnotherSizeOrDtypeAreACacheMiss) {
  clear_schedule_cache();
  auto graph = [](const UOp& b) { return b + UOp::make(Ops::EXPAND, b.dtype(), {UOp::make(Ops::RESHAPE, b.dtype(), {UOp::const_(b.dtype(), int64_t{1})}, IntTuple{1})}, *b.shape()); };
  EXPECT_FALSE(schedule({graph(new_buffer(dtypes::float32, 4))}).cache_hit);
  EXPECT_TRUE(schedule({graph(new_buffer(dtypes::float32, 4))}).cache_hit);
  EXPECT_FALSE(schedule({graph(new_buffer(dtypes::float32, 5))}).cache_hit) << "another size";
  EXPECT_FALSE(schedule({graph(new_buffer(dtypes::int32, 4))}).cache_hit) << "another dtype";
  EXPECT_FALSE(schedule({graph(new_buffer(dtypes::float32, 4, "NV"))}).cache_hit) << "another device";
}

TEST(HostBuffers, StorageIsReleasedWhenTheLastUOpNamingTheBufferGoes) {
  size_t before = host_storage_bytes();
  {
    UOp b = new_buffer(dtypes::float32, 1000);
    UOp view = UOp::make(Ops::RESHAPE, dtypes::float32, {b}, IntTuple{10, 100});
    buffer_bytes(b)[0] = std::byte{1};
    EXPECT_EQ(host_storage_bytes(), before + 4000);
    b = UOp();
    EXPECT_EQ(host_storage_bytes(), before + 4000) << "the view still names the buffer";
    EXPECT_EQ(buffer_bytes(base_buffer(view))[0], std::byte{1});
  }
  EXPECT_EQ(host_storage_bytes(), before);
}

TEST(HostBuffers, ScheduledIntermediatesAndOutputsAreReleasedWithTheirGraphs) {
  size_t before = host_storage_bytes();
  {
    UOp x = data({1, 2, 3, 4}, {4});
    ScheduleResult r = schedule({UOp::make(Ops::CONTIGUOUS, dtypes::float32, {x + full(1, {4})}) * full(2, {4})});
    run_linear(r.linear, on_device("REF"));
    EXPECT_EQ(values(r.becomes[0].second), (std::vector<float>{4, 6, 8, 10}));
    EXPECT_GT(host_storage_bytes(), before);
  }
  EXPECT_EQ(host_storage_bytes(), before);
}

TEST(Schedule, AnAssignWithTheWrongShapeIsAnError) {
  UOp t = data({1, 2, 3}, {3});
  UOp v = full(1, {2});
  UOp bad = UOp::make(Ops::AFTER, dtypes::float32, {t, UOp::make(Ops::STORE, dtypes::void_, {t, v})});
  try {
    schedule({bad});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("assign: value shape (2,) differs from target shape (3,)"), std::string::npos) << e.what();
  }
}

// ---- deep graphs: a kernel computes at most kMaxFusedDepth ops of a chain -------------------------------------

size_t count_ops(const UOp& kernel_body, Ops op) {
  size_t n = 0;
  for (const UOp& u : kernel_body.toposort()) n += u.op() == op;
  return n;
}

TEST(Schedule, AddChainAsDeepAsTheFusionBoundIsOneKernel) {
  UOp x = data({1, 2, 3}, {3}), y = data({1, 1, 1}, {3});
  UOp v = x;
  for (int64_t i = 0; i < kMaxFusedDepth; i++) v = v + y;
  ScheduleResult r = schedule({v});
  ASSERT_EQ(r.linear.src().size(), 1u) << "fusion is unchanged below the bound";
  EXPECT_EQ(count_ops(r.linear.src(0).src(0), Ops::ADD), static_cast<size_t>(kMaxFusedDepth));
  run_linear(r.linear, on_device("REF"));
  EXPECT_EQ(values(r.becomes[0].second), (std::vector<float>{257, 258, 259}));
}

TEST(Schedule, AddChainTenTimesTheFusionBoundIsElevenKernelsTenOfThemAlike) {
  UOp x = data({1, 2, 3}, {3}), y = data({1, 1, 1}, {3});
  UOp v = x;
  const int64_t adds = 10 * kMaxFusedDepth + 5;
  for (int64_t i = 0; i < adds; i++) v = v + y;  // y is a buffer: nothing folds
  ScheduleResult r = schedule({v});
  ASSERT_EQ(r.linear.src().size(), 11u);
  for (size_t k = 0; k < 10; k++) {
    const UOp& body = r.linear.src(k).src(0);
    EXPECT_EQ(count_ops(body, Ops::ADD), static_cast<size_t>(kMaxFusedDepth)) << "kernel " << k;
    EXPECT_EQ(body, r.linear.src(0).src(0)) << "kernel " << k << " is the first one over other buffers: compiled once";
  }
  EXPECT_EQ(count_ops(r.linear.src(10).src(0), Ops::ADD), 5u);
  run_linear(r.linear, on_device("REF"));
  EXPECT_EQ(values(r.becomes[0].second), (std::vector<float>{1 + adds, 2 + adds, 3 + adds}));
}

TEST(Schedule, TranscendentalsWeighSixteenOpsTowardTheFusionBound) {
  UOp x = data({1, 2, 4}, {3});
  UOp v = x;
  for (int i = 0; i < 10; i++) v = v.alu(Ops::EXP2).alu(Ops::LOG2);  // 20 ops of weight 16: 320 > 256
  ScheduleResult r = schedule({v});
  ASSERT_EQ(r.linear.src().size(), 2u);
  EXPECT_EQ(count_ops(r.linear.src(0).src(0), Ops::EXP2) + count_ops(r.linear.src(0).src(0), Ops::LOG2), 16u);
  run_linear(r.linear, on_device("REF"));
  std::vector<float> got = values(r.becomes[0].second);
  for (size_t i = 0; i < 3; i++) EXPECT_NEAR(got[i], (std::vector<float>{1, 2, 4})[i], 1e-4) << i;
}

TEST(Schedule, MovementChainOfTwentyThousandOpsIsSplitAndKeepsTheElementOrder) {
  // permute then reshape, (2, 3) -> (3, 2) -> (2, 3): a permutation of six elements, applied 10,000 times
  std::vector<float> start{0, 1, 2, 3, 4, 5};
  UOp v = data(start, {2, 3});
  const int rounds = 10'000;
  for (int i = 0; i < rounds; i++) v = mop(Ops::RESHAPE, mop(Ops::PERMUTE, v, {1, 0}), {2, 3});
  ScheduleResult r = schedule({v});
  EXPECT_GT(r.linear.src().size(), 1u);
  for (const UOp& call : r.linear.src())
    EXPECT_LE(count_ops(call.src(0), Ops::FLOORDIV), static_cast<size_t>(kMaxFusedDepth)) << "index math is bounded too";
  std::vector<float> want = start;
  for (int i = 0; i < rounds; i++) {
    std::vector<float> next(6);
    for (int a = 0; a < 3; a++)  // the permuted view (3, 2) read row-major: element [a][b] is want[b * 3 + a]
      for (int b = 0; b < 2; b++) next[a * 2 + b] = want[b * 3 + a];
    want = next;
  }
  run_linear(r.linear, on_device("REF"));
  EXPECT_EQ(values(r.becomes[0].second), want);
}

}  // namespace
}  // namespace doorbell
