// The fusion corpus: tensor programs with the exact number of kernels each must schedule to, every schedule's
// memory plan verified, and every result checked against an independent evaluation of the tensor graph
// (tensor_reference.h) after compiling the schedule's kernels and running them on the CPU device.
//
// `tinygrad` is the count tinygrad a9069c17 gives for the same program on DEV=CPU (measured here with
// Tensor.schedule_linear on Tensor.empty inputs); every case matches it.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "frontend/tensor.h"
#include "fusion_corpus_cases.h"
#include "hcq/compile_linear.h"
#include "hcq/run_linear.h"
#include "scheduler/memory_planner.h"
#include "scheduler/schedule.h"
#include "tensor_reference.h"

namespace doorbell {
namespace {

using fusion_corpus::Case;
using fusion_corpus::corpus;
using fusion_corpus::R;

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
  run_linear(linear, on_device("REF"));
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
