// Deep tensor graphs through realize (issue 14): chains of a million ops are built, scheduled, compiled and run on
// the CPU device without recursion, and a long chain is split into kernels of at most kMaxFusedDepth ops
// (scheduler/rangeify.h), so no kernel is too big to compile. Every chain reads buffers, so nothing folds away.
#include <cmath>

#include "frontend_test_util.h"

namespace doorbell {
namespace {

TEST(DeepGraph, MillionAddChainRealizesToTheExactSum) {
  constexpr int kChain = 1'000'000;
  Tensor x = Tensor({1.f, 2.f, 3.f}).realize();
  for (int i = 0; i < kChain; i++) x = x + 1;
  // 1,000,003 < 2^24: every partial sum is exact in float32
  EXPECT_EQ(x.realize().tolist<float>(), (std::vector<float>{1.f + kChain, 2.f + kChain, 3.f + kChain}));
}

TEST(DeepGraph, HundredThousandOpMulAddChainOfBuffersRealizes) {
  // x * y + z with y, z buffers: per element, x -> 1 - x, x -> x and x -> -x; 50,001 rounds of 2 ops
  constexpr int kRounds = 50'001;
  Tensor x = Tensor({0.25f, 5.f, 7.f}).realize(), y = Tensor({-1.f, 1.f, -1.f}).realize(), z = Tensor({1.f, 0.f, 0.f}).realize();
  for (int i = 0; i < kRounds; i++) x = x * y + z;
  EXPECT_EQ(x.realize().tolist<float>(), (std::vector<float>{0.75f, 5.f, -7.f})) << "an odd number of rounds";
}

TEST(DeepGraph, HundredThousandOpExp2Log2ChainRealizes) {
  constexpr int kRounds = 50'000;
  Tensor x = Tensor({1.f, 2.f, 0.5f}).realize();
  for (int i = 0; i < kRounds; i++) x = x.exp2().log2();
  std::vector<float> got = x.realize().tolist<float>();
  std::vector<float> want{1.f, 2.f, 0.5f};
  for (size_t i = 0; i < want.size(); i++) EXPECT_NEAR(got[i], want[i], 1e-3) << "element " << i;
}

TEST(DeepGraph, HundredThousandOpWhereCastChainRealizes) {
  // x -> (x < 10 ? x + 1 : x - 10), through float16 and back: x + 1 mod 11, exactly; 5 ops a round
  constexpr int kRounds = 20'000;
  Tensor x = Tensor({0.f, 3.f, 10.f}).realize();
  for (int i = 0; i < kRounds; i++) x = (x < 10).where(x + 1, x - 10).cast(dtypes::float16).cast(dtypes::float32);
  std::vector<float> want;
  for (float v : {0.f, 3.f, 10.f}) want.push_back(std::fmod(v + kRounds, 11.f));
  EXPECT_EQ(x.realize().tolist<float>(), want);
}

TEST(DeepGraph, FiftyThousandOpPermuteReshapeChainRealizesInElementOrder) {
  // (2, 3) -> permute (3, 2) -> reshape (2, 3): a permutation of six elements, applied 25,000 times
  constexpr int kRounds = 25'000;
  std::vector<float> want{0, 1, 2, 3, 4, 5};
  Tensor x = Tensor(want, {2, 3}).realize();
  for (int i = 0; i < kRounds; i++) x = x.permute({1, 0}).reshape({2, 3});
  for (int i = 0; i < kRounds; i++) {
    std::vector<float> next(6);
    for (int a = 0; a < 3; a++)  // the permuted view (3, 2) read row-major: element [a][b] is [b][a] of (2, 3)
      for (int b = 0; b < 2; b++) next[a * 2 + b] = want[b * 3 + a];
    want = next;
  }
  EXPECT_EQ(x.realize().tolist<float>(), want);
}

TEST(DeepGraph, AssignChainRunsEachAssignOnceAndLeavesTheTensorOnItsBuffer) {
  for (int n : {2, 3, 500}) {
    Tensor x = Tensor({1.f, 2.f, 3.f}).realize();
    for (int i = 0; i < n; i++) x.assign(x + 1);
    x.realize();
    EXPECT_TRUE(x.is_realized()) << n << " assigns: the tensor is a view of its buffer, not the previous assign";
    EXPECT_EQ(x.tolist<float>(), (std::vector<float>{1.f + n, 2.f + n, 3.f + n})) << n << " assigns, each once";
  }
}

}  // namespace
}  // namespace doorbell
