// The fusion corpus: tensor programs with the exact number of kernels each must schedule to, every schedule's
// memory plan verified, and every result checked against an independent evaluation of the tensor graph
// (tensor_reference.h) after compiling the schedule's kernels and running them on the CPU device.
//
// `tinygrad` is the count tinygrad a9069c17 gives for the same program on DEV=CPU (measured here with
// Tensor.schedule_linear on Tensor.empty inputs); every case matches it.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "compiler/compile_linear.h"
#include "frontend/tensor.h"
#include "hcq/run_linear.h"
#include "scheduler/memory_planner.h"
#include "scheduler/schedule.h"
#include "tensor_reference.h"

namespace doorbell {
namespace {

struct Case {
  const char* name;
  int kernels;
  int tinygrad;
  // Builds the outputs; inputs are realized data tensors made inside.
  std::function<std::vector<Tensor>()> build;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

Tensor R(IntTuple shape) { return Tensor::randn(std::move(shape)); }

std::vector<Case> corpus() {
  return {
      {"add_mul", 1, 1, [] { return std::vector{(Tensor({1.f, 2.f, 3.f}) + 1) * 2}; }},
      {"elementwise_chain", 1, 1, [] { Tensor a = R({4, 4}), b = R({4, 4}); return std::vector{((a * b + a).relu() * 2 - 1).exp()}; }},
      {"reduce_then_elementwise", 1, 1, [] { return std::vector{R({4, 4}).sum(1) + 1}; }},
      {"sum_all", 1, 1, [] { return std::vector{R({4, 4}).sum()}; }},
      {"softmax", 3, 3, [] { return std::vector{R({4, 4}).softmax(-1)}; }},
      {"log_softmax", 3, 3, [] { return std::vector{R({4, 4}).log_softmax(-1)}; }},
      {"matmul", 1, 1, [] { return std::vector{R({4, 4}).matmul(R({4, 4}))}; }},
      {"matmul_bias_relu", 1, 1, [] { return std::vector{(R({4, 4}).matmul(R({4, 4})) + R({4})).relu()}; }},
      {"two_consumers_recomputed", 1, 1, [] { Tensor c = R({4, 4}) + 1; return std::vector{c * 2 + c.exp()}; }},
      {"two_outputs_share_value", 2, 2, [] { Tensor c = R({4, 4}) + 1; return std::vector{c * 2, c * 3}; }},
      {"contiguous_forces_store", 2, 2, [] { return std::vector{(R({4, 4}) + 1).contiguous() * 2}; }},
      {"assign_elementwise", 1, 1, [] { Tensor a = R({4, 4}); return std::vector{a.assign(a * 2)}; }},
      {"assign_through_permute", 2, 2, [] { Tensor a = R({4, 4}); return std::vector{a.assign(a.transpose() + 1)}; }},
      {"assign_through_flip", 2, 2, [] { Tensor a = R({4, 4}); return std::vector{a.assign(a.flip(0) + 0)}; }},
      {"write_after_read", 2, 2, [] { Tensor a = R({4}); Tensor b = a + 1; a.assign(a * 2); return std::vector{b, a}; }},
      {"reduce_of_reduce", 1, 1, [] { return std::vector{R({4, 4}).sum(1).sum(0)}; }},
      {"pad_shrink_chain", 1, 1, [] { return std::vector{R({6}).pad({{7, 7}}).shrink({{5, 10}}) + 1}; }},
      {"flip_chain", 1, 1, [] { return std::vector{R({4, 4}).flip(0).flip(1) + 1}; }},
      {"cat", 1, 1, [] { return std::vector{Tensor::cat({R({4, 4}), R({4, 4})})}; }},
      {"broadcast_after_reduce", 2, 2, [] { Tensor a = R({4, 4}); return std::vector{a - a.mean(1, true)}; }},
      {"var", 2, 2, [] { return std::vector{R({4, 4}).var(1)}; }},
      {"divide_by_max", 1, 1, [] { Tensor a = R({4, 4}); return std::vector{a / a.max()}; }},
      {"expand_input", 1, 1, [] { return std::vector{R({16}).reshape({1, 16}).expand({4, 16}) + 1}; }},
      {"permute_then_reduce", 1, 1, [] { return std::vector{R({4, 4}).transpose().sum(1)}; }},
      {"cumsum", 1, 1, [] { return std::vector{R({16}).cumsum()}; }},
      {"argmax", 2, 2, [] { return std::vector{R({4, 4}).argmax(1)}; }},
      {"stack", 1, 1, [] { return std::vector{Tensor::stack({R({4, 4}), R({4, 4})})}; }},
      {"repeat", 1, 1, [] { return std::vector{R({4, 4}).repeat({2, 2}) + 1}; }},
      {"strided_slice", 1, 1, [] { return std::vector{R({16})[{slice(std::nullopt, std::nullopt, 2)}] + 1}; }},
      {"mlp_two_layers", 2, 2, [] { return std::vector{R({8, 16}).matmul(R({16, 16})).relu().matmul(R({16, 4}))}; }},
      {"matmul_chain", 2, 2, [] { return std::vector{R({4, 4}).matmul(R({4, 4})).matmul(R({4, 4}))}; }},
      {"where", 1, 1, [] { Tensor a = R({4, 4}), b = R({4, 4}); return std::vector{a.gt(0).where(a, b)}; }},
      {"mean_all", 1, 1, [] { return std::vector{R({4, 4}).mean()}; }},
      {"std", 2, 2, [] { return std::vector{R({4, 4}).std(1)}; }},
      {"reduce_used_twice", 1, 1, [] { Tensor s = R({4, 4}).sum(1); return std::vector{s * s + s}; }},
      {"nested_reduce_matmul_relu_sum", 1, 1, [] { return std::vector{(R({8, 8}).matmul(R({8, 8})).relu() + 1).sum(0)}; }},
      {"shrink_then_pad", 1, 1, [] { return std::vector{R({8})[{slice(2, 6)}].pad({{1, 1}}) * 2}; }},
      {"flip_reduce", 1, 1, [] { return std::vector{R({4, 4}).flip(1).max(1)}; }},
  };
}

class FusionCorpus : public ::testing::TestWithParam<Case> {};

TEST_P(FusionCorpus, SchedulesToTheExpectedKernelsAndComputesTheReferenceValues) {
  const Case& c = GetParam();
  Tensor::manual_seed(1234);
  std::vector<Tensor> outs = c.build();
  std::vector<testing::Dense> want;
  for (const Tensor& t : outs) want.push_back(testing::reference_eval(t.uop()));  // before any assign runs
  UOp linear = Tensor::schedule_linear(outs);
  EXPECT_EQ(static_cast<int>(linear.src().size()), c.kernels) << c.name;
  EXPECT_NO_THROW(verify_memory_plan(linear)) << c.name;
  run_linear(compile_linear(linear));
  for (size_t i = 0; i < outs.size(); i++) {
    std::vector<double> got = testing::as_doubles(testing::reference_eval(outs[i].uop()));
    std::vector<double> ref = testing::as_doubles(want[i]);
    ASSERT_EQ(got.size(), ref.size()) << c.name << " output " << i;
    for (size_t k = 0; k < got.size(); k++)
      EXPECT_NEAR(got[k], ref[k], 1e-4 * (1 + std::abs(ref[k]))) << c.name << " output " << i << " element " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, FusionCorpus, ::testing::ValuesIn(corpus()),
                         [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

TEST(SeedFacts, AddThenMultiplyOnARealizedTensorIsALinearOfCallsThatComputes) {
  Tensor x = Tensor({1.f, 2.f, 3.f}).realize();
  Tensor y = (x + 1) * 2;
  UOp linear = y.schedule_linear();
  ASSERT_EQ(linear.op(), Ops::LINEAR);
  ASSERT_FALSE(linear.src().empty());
  for (const UOp& call : linear.src()) EXPECT_EQ(call.op(), Ops::CALL);
  run_linear(linear);
  EXPECT_EQ(y.tolist<float>(), (std::vector<float>{4, 6, 8}));
}

TEST(MemoryPlan, AChainOfContiguousIntermediatesNeedsTwoSlotsWhateverItsLength) {
  for (int n : {4, 16, 64}) {
    Tensor x = Tensor::rand({256});
    Tensor t = x;
    for (int i = 0; i < n; i++) t = (t + 1).contiguous();
    ScheduleResult r = schedule({(t * 2).uop()});
    EXPECT_EQ(static_cast<int>(r.linear.src().size()), n + 1);
    EXPECT_EQ(r.peak_bytes, 2 * 256 * 4) << n << " intermediates share two 1 KiB slots";
    EXPECT_NO_THROW(verify_memory_plan(r.linear));
  }
}

// schedule_linear repoints every live tensor: scheduling some of many live tensors, one at a time, must leave
// every tensor's value as it was (scheduled ones now read their buffers, the others still compute).
TEST(Repointing, ManyLiveTensorsKeepTheirValuesAcrossRepeatedSchedules) {
  Tensor::manual_seed(7);
  for (int round = 0; round < 20; round++) {
    std::vector<Tensor> live;
    std::vector<std::vector<double>> want;
    Tensor base = R({4, 8});
    for (int i = 0; i < 12; i++) {
      Tensor t = i % 3 == 0 ? (base * (i + 1)).sum(1) : i % 3 == 1 ? (base + i).relu().max(0) : (base - i).std(1);
      live.push_back(t);
      want.push_back(testing::as_doubles(testing::reference_eval(t.uop())));
    }
    for (int i = 0; i < 12; i += 2) run_linear(live[i].schedule_linear());  // half of them, one at a time
    for (int i = 0; i < 12; i++) {
      std::vector<double> got = testing::as_doubles(testing::reference_eval(live[i].uop()));
      ASSERT_EQ(got.size(), want[i].size());
      for (size_t k = 0; k < got.size(); k++) ASSERT_NEAR(got[k], want[i][k], 1e-4 * (1 + std::abs(want[i][k]))) << "round " << round << " tensor " << i;
    }
  }
}

TEST(FusionCorpusSize, HasAtLeastThirtyCasesThatAllMatchTinygrad) {
  std::vector<Case> cases = corpus();
  EXPECT_GE(cases.size(), 30u);
  for (const Case& c : cases) EXPECT_EQ(c.kernels, c.tinygrad) << c.name;
}

}  // namespace
}  // namespace doorbell
