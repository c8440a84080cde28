// Tensor handles: shared state, the registry of live tensors and its repointing after scheduling, assign, realize
// and contiguous.
#include "frontend_test_util.h"
#include "hcq/run_linear.h"
#include "scheduler/schedule.h"

namespace doorbell {
namespace {

using testing::error_of;

bool graph_has(const UOp& root, const UOp& node) {
  for (const UOp& u : root.toposort())
    if (u == node) return true;
  return false;
}

TEST(TensorState, CopiesShareState) {
  Tensor a = Tensor({1.f, 2.f}).realize();
  Tensor b = a;  // a Python reference, not a new tensor
  EXPECT_TRUE(b.same_state(a));
  a.assign(a + 1);
  EXPECT_EQ(b.uop(), a.uop());
  EXPECT_EQ(b.uop().op(), Ops::AFTER);
  Tensor c = a + 0;  // a new tensor
  EXPECT_FALSE(c.same_state(a));
}

TEST(TensorState, RegistryCountsLiveTensors) {
  size_t before = Tensor::live_tensor_count();
  {
    Tensor a = Tensor::zeros({2});
    Tensor b = a;  // same state: not counted twice
    Tensor c = a + 1;
    EXPECT_EQ(Tensor::live_tensor_count(), before + 2);
  }
  EXPECT_EQ(Tensor::live_tensor_count(), before);
}

TEST(TensorState, ApplyMapRepointsEveryLiveGraph) {
  Tensor x = Tensor::empty({3});
  Tensor y = x * 2;
  Tensor y_ref = y;
  Tensor w = y + 1;
  Tensor unrelated = Tensor::empty({3}) - 1;
  UOp unrelated_before = unrelated.uop();
  UOp buffer = new_buffer(dtypes::float32, 3);
  UOp old = y.uop();
  Tensor::apply_map_to_tensors({{old, buffer}});
  EXPECT_EQ(y.uop(), buffer);
  EXPECT_EQ(y_ref.uop(), buffer);
  EXPECT_EQ(w.uop().op(), Ops::ADD);
  EXPECT_EQ(w.uop().src(0), buffer);  // readers of y now read the buffer
  EXPECT_FALSE(graph_has(w.uop(), old));
  EXPECT_EQ(unrelated.uop(), unrelated_before);
  EXPECT_EQ(x.uop().op(), Ops::BUFFER);
}

TEST(TensorState, ScheduleLinearRepointsLiveTensorsAtBuffers) {
  Tensor x = Tensor({1.f, 2.f, 3.f}).realize();
  Tensor y = (x + 1) * 2;
  Tensor y_ref = y;
  Tensor w = y + 10;  // built before scheduling: must read y's buffer afterwards, not recompute
  UOp old = y.uop();
  UOp linear = y.schedule_linear();
  ASSERT_EQ(linear.op(), Ops::LINEAR);
  EXPECT_GT(linear.src().size(), 0u);
  for (const UOp& call : linear.src()) EXPECT_EQ(call.op(), Ops::CALL);
  EXPECT_TRUE(y.is_realized());  // a plain view of a BUFFER now
  EXPECT_EQ(y_ref.uop(), y.uop());
  EXPECT_FALSE(graph_has(w.uop(), old));
  EXPECT_TRUE(graph_has(w.uop(), y.uop()));
  EXPECT_EQ(x.uop().op(), Ops::BUFFER);  // an input keeps its buffer
}

TEST(TensorState, ScheduleLinearOfSeveralOutputs) {
  Tensor x = Tensor({1.f, 2.f}).realize();
  Tensor a = x + 1, b = x * 3;
  UOp linear = Tensor::schedule_linear({a, b});
  EXPECT_EQ(linear.op(), Ops::LINEAR);
  EXPECT_TRUE(a.is_realized());
  EXPECT_TRUE(b.is_realized());
  run_linear(linear);
  EXPECT_EQ(a.tolist<float>(), (std::vector<float>{2, 3}));
  EXPECT_EQ(b.tolist<float>(), (std::vector<float>{3, 6}));
}

TEST(TensorState, RealizeOfABufferDoesNothing) {
  Tensor x({1.f, 2.f});
  UOp before = x.uop();
  x.realize();
  EXPECT_EQ(x.uop(), before);
  Tensor r = x.reshape({2, 1});
  UOp view = r.uop();
  r.realize();
  EXPECT_EQ(r.uop(), view);
}

TEST(TensorState, RealizeComputesIntoABuffer) {
  Tensor x = Tensor({1.f, 2.f}).realize();
  Tensor y = x * x;
  EXPECT_FALSE(y.is_realized());
  Tensor same = y.realize();
  EXPECT_TRUE(same.same_state(y));
  EXPECT_TRUE(y.is_realized());
  EXPECT_EQ(y.tolist<float>(), (std::vector<float>{1, 4}));
}

TEST(Assign, BuildsAfterOfStore) {
  Tensor a = Tensor({1.f, 2.f, 3.f}).realize();
  UOp target = a.uop();
  Tensor v = a * 2;
  Tensor r = a.assign(v);
  EXPECT_TRUE(r.same_state(a));
  const UOp& u = a.uop();
  ASSERT_EQ(u.op(), Ops::AFTER);
  EXPECT_EQ(u.src(0), target);
  ASSERT_EQ(u.src(1).op(), Ops::STORE);
  EXPECT_EQ(u.src(1).src(0), target);
  EXPECT_EQ(u.src(1).src(1), v.uop());
  EXPECT_EQ(*u.shape(), (IntTuple{3}));
  EXPECT_EQ(u.dtype(), dtypes::float32);
  EXPECT_FALSE(a.is_realized());
}

TEST(Assign, ReadersBuiltBeforeKeepTheOldValue) {
  Tensor a = Tensor({1.f, 2.f, 3.f}).realize();
  Tensor b = a + 1;
  a.assign(a * 2);
  EXPECT_FALSE(graph_has(b.uop(), a.uop()));  // b reads the buffer, not the AFTER
  run_linear(Tensor::schedule_linear({b, a}));
  EXPECT_EQ(b.tolist<float>(), (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(a.tolist<float>(), (std::vector<float>{2, 4, 6}));
}

TEST(Assign, SchedulingAReaderRealizesTheAssignToo) {
  Tensor b = Tensor({1.f, 2.f, 3.f}).realize();
  b.assign(b * 10);
  Tensor c = b + 1;
  c.realize();
  EXPECT_TRUE(b.is_realized());  // b's store ran with c's schedule: b now names its buffer, not the AFTER
  EXPECT_EQ(b.tolist<float>(), (std::vector<float>{10, 20, 30}));  // so reading b does not store a second time
  EXPECT_EQ(c.tolist<float>(), (std::vector<float>{11, 21, 31}));
  Tensor a = Tensor({1.f, 2.f, 3.f}).realize();
  a.assign(a + 1);
  EXPECT_EQ(a.reshape({3, 1}).tolist<float>(), (std::vector<float>{2, 3, 4}));  // a view of a is copied out...
  EXPECT_EQ(a.tolist<float>(), (std::vector<float>{2, 3, 4}));                  // ...and a itself was stored once
}

TEST(Contiguous, ScheduledWithAReaderItKeepsItsBuffer) {
  Tensor x = Tensor({1.f, 2.f}).realize();
  Tensor c = (x * 2).contiguous();
  Tensor y = c + 1;
  y.realize();
  EXPECT_TRUE(c.is_realized());
}

TEST(Assign, ToAnUnstoredTensorJustRepoints) {
  Tensor z = Tensor::zeros({2});
  Tensor v = Tensor({5.f, 6.f});
  z.assign(v);
  EXPECT_EQ(z.uop(), v.uop());
  Tensor s = Tensor::ones({2});
  s.assign(3);
  EXPECT_EQ(s.tolist<float>(), (std::vector<float>{3, 3}));
}

TEST(Assign, ChecksShapeAndDtype) {
  Tensor a = Tensor::empty({2, 3});
  EXPECT_EQ(error_of([&] { a.assign(Tensor::empty({3})); }),
            "assign: a tensor of shape (2, 3) cannot take a value of shape (3,); expected equal shapes");
  EXPECT_EQ(error_of([&] { a.assign(Tensor::empty({2, 3}, dtypes::int32)); }),
            "assign: a float32 tensor cannot take a value of dtype int32; expected equal dtypes (cast the value first)");
}

TEST(Contiguous, AddsContiguousToAComputedValue) {
  Tensor x = Tensor::empty({2, 3});
  Tensor t = x.permute({1, 0}).contiguous();
  EXPECT_EQ(t.uop().op(), Ops::CONTIGUOUS);
  EXPECT_EQ(t.shape(), (IntTuple{3, 2}));
  EXPECT_EQ(t.contiguous().uop(), t.uop());  // once is enough
  EXPECT_EQ(x.contiguous().uop(), x.uop());  // already stored contiguously
  EXPECT_EQ(Tensor::zeros({2}).contiguous().uop().op(), Ops::CONTIGUOUS);  // a constant gets a buffer
}

TEST(Contiguous, TolistOfAViewCopiesItOut) {
  Tensor x(std::vector<int>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor t = x.permute({1, 0});
  EXPECT_EQ(t.tolist<int>(), (std::vector<int>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(t.uop().op(), Ops::PERMUTE);  // the view itself is unchanged
}

}  // namespace
}  // namespace doorbell
