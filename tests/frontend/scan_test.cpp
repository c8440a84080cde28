// Scans (frontend/scan.cpp): cumsum, cumprod, cummax, cummin values on short axes (one stage), long axes (two
// stages: longer than 512, odd prime lengths, non-last axes, long enough that the chunk totals split again), their
// dtypes, and that a long cumsum's kernels do O(n * 256) adds, not O(n^2).
#include <algorithm>
#include <numeric>

#include "compiler/kernel_estimates.h"
#include "frontend_test_util.h"

namespace doorbell {
namespace {

using testing::error_of;

std::vector<int64_t> prefix_sums(const std::vector<int64_t>& v) {
  std::vector<int64_t> out(v.size());
  std::partial_sum(v.begin(), v.end(), out.begin());
  return out;
}

// Small pseudo-random integers, so float32 sums stay exact.
std::vector<int64_t> small_ints(size_t n, uint64_t seed) {
  std::vector<int64_t> v(n);
  for (size_t i = 0; i < n; i++) v[i] = static_cast<int64_t>(((i + seed) * 2654435761u >> 7) % 19) - 9;
  return v;
}

TEST(Scan, CumsumShortAxisValues) {
  Tensor x({{1, 2, 3, 4}, {5, 6, 7, 8}});
  EXPECT_EQ(x.cumsum(1).tolist<int>(), (std::vector<int>{1, 3, 6, 10, 5, 11, 18, 26}));
  EXPECT_EQ(x.cumsum(-2).tolist<int>(), (std::vector<int>{1, 2, 3, 4, 6, 8, 10, 12}));
}

TEST(Scan, CumsumOf70000FloatsCountsUpExactly) {
  Tensor x = Tensor::ones({70000}).realize();
  std::vector<float> got = x.cumsum().tolist<float>();
  ASSERT_EQ(got.size(), 70000u);
  for (size_t i = 0; i < got.size(); i++) ASSERT_EQ(got[i], static_cast<float>(i + 1)) << "at " << i;
}

TEST(Scan, CumsumOfOddPrimeLengthMatchesPrefixSums) {
  std::vector<int64_t> v = small_ints(65537, 3);
  Tensor x = Tensor(v, dtypes::float32).realize();
  std::vector<int64_t> want = prefix_sums(v);
  std::vector<double> got = x.cumsum().tolist<double>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++) ASSERT_EQ(got[i], static_cast<double>(want[i])) << "at " << i;
}

TEST(Scan, CumsumAlongLongFirstAxisOfMatrix) {
  const int64_t n = 1031, m = 3;  // 1031 is prime and above 512: two stages, along axis 0
  std::vector<int64_t> v = small_ints(static_cast<size_t>(n * m), 5);
  Tensor x = Tensor(v, {n, m}, dtypes::int32).realize();
  std::vector<int64_t> got = x.cumsum(0).tolist<int64_t>();
  for (int64_t j = 0; j < m; j++) {
    int64_t s = 0;
    for (int64_t i = 0; i < n; i++) {
      s += v[i * m + j];
      ASSERT_EQ(got[i * m + j], s) << "at (" << i << ", " << j << ")";
    }
  }
}

TEST(Scan, CumsumLongEnoughThatChunkTotalsSplitAgain) {
  // 140001 elements: 547 chunks of 256, more than 512, so the totals' scan is two stages too.
  std::vector<int64_t> v = small_ints(140001, 11);
  Tensor x = Tensor(v, dtypes::int32).realize();
  std::vector<int64_t> want = prefix_sums(v), got = x.cumsum().tolist<int64_t>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++) ASSERT_EQ(got[i], want[i]) << "at " << i;
}

TEST(Scan, LongCumsumKernelsDoLinearlyManyOpsNotQuadratic) {
  Tensor x = Tensor::ones({70000}).realize();
  UOp linear = x.cumsum().schedule_linear();
  int64_t ops = 0;
  for (const UOp& call : linear.src()) ops += estimate_kernel(call).ops;
  // One window of n per element would be 70000^2 = 4.9e9 adds; chunks of 256 need about 70000 * 256 = 1.8e7 (the
  // estimate counts about 3 ops per window element: the pad's bound check, its select and the add).
  EXPECT_GT(ops, int64_t{70000} * 256);
  EXPECT_LT(ops, int64_t{70000} * 256 * 4) << ops << " ops";
}

TEST(Scan, CumprodValuesShortAndLong) {
  EXPECT_EQ(Tensor({1, 2, 3, 4}).cumprod().tolist<int>(), (std::vector<int>{1, 2, 6, 24}));
  Tensor m({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  EXPECT_EQ(m.cumprod(0).tolist<float>(), (std::vector<float>{1, 2, 3, 4, 10, 18}));
  // 1000 factors of +1 and -1: the sign flips at every multiple of 7.
  std::vector<int> v(1000);
  for (size_t i = 0; i < v.size(); i++) v[i] = i % 7 == 0 ? -1 : 1;
  std::vector<int> got = Tensor(v).cumprod().tolist<int>();
  int p = 1;
  for (size_t i = 0; i < v.size(); i++) ASSERT_EQ(got[i], p *= v[i]) << "at " << i;
}

TEST(Scan, CummaxValuesAndFirstIndexOfTheRunningMax) {
  auto [values, idx] = Tensor({0, 1, -1, 2, -2, 3, -3}).cummax();
  EXPECT_EQ(values.tolist<int>(), (std::vector<int>{0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(idx.tolist<int>(), (std::vector<int>{0, 1, 1, 3, 3, 5, 5}));
  EXPECT_EQ(idx.dtype(), dtypes::int32);
  auto [tv, ti] = Tensor({1.f, 3.f, 3.f, 2.f, 5.f}).cummax();  // a tie: the first 3 is the index
  EXPECT_EQ(tv.tolist<float>(), (std::vector<float>{1, 3, 3, 3, 5}));
  EXPECT_EQ(ti.tolist<int>(), (std::vector<int>{0, 1, 1, 1, 4}));
  auto [mv, mi] = Tensor({{3, 1}, {1, 4}, {5, 0}}).cummax(0);
  EXPECT_EQ(mv.tolist<int>(), (std::vector<int>{3, 1, 3, 4, 5, 4}));
  EXPECT_EQ(mi.tolist<int>(), (std::vector<int>{0, 0, 0, 1, 2, 1}));
}

TEST(Scan, CumminValuesAndIndices) {
  auto [values, idx] = Tensor({3, 1, 2, 1, 0}).cummin();
  EXPECT_EQ(values.tolist<int>(), (std::vector<int>{3, 1, 1, 1, 0}));
  EXPECT_EQ(idx.tolist<int>(), (std::vector<int>{0, 1, 1, 1, 4}));
  auto [fv, fi] = Tensor({2.5f, -1.f, 4.f}).cummin();
  EXPECT_EQ(fv.tolist<float>(), (std::vector<float>{2.5f, -1.f, -1.f}));
  EXPECT_EQ(fi.tolist<int>(), (std::vector<int>{0, 1, 1}));
  auto [uv, ui] = Tensor({7, 9, 2}, dtypes::uint8).cummin();  // ~x for unsigned integers
  EXPECT_EQ(uv.tolist<int>(), (std::vector<int>{7, 7, 2}));
  EXPECT_EQ(ui.tolist<int>(), (std::vector<int>{0, 0, 2}));
}

TEST(Scan, LongCummaxMatchesHostScan) {
  std::vector<int64_t> v = small_ints(1500, 17);
  for (size_t i = 0; i < v.size(); i++) v[i] += static_cast<int64_t>(i / 100);  // rises now and then
  auto [values, idx] = Tensor(v, dtypes::int32).cummax();
  std::vector<int64_t> gv = values.tolist<int64_t>(), gi = idx.tolist<int64_t>();
  int64_t best = v[0], at = 0;
  for (size_t i = 0; i < v.size(); i++) {
    if (v[i] > best) best = v[i], at = static_cast<int64_t>(i);
    ASSERT_EQ(gv[i], best) << "at " << i;
    ASSERT_EQ(gi[i], at) << "at " << i;
  }
}

TEST(Scan, DtypesEmptyAndZeroDimensional) {
  EXPECT_EQ(Tensor::empty({3}, dtypes::int8).cumsum().dtype(), dtypes::int32);  // as sum
  EXPECT_EQ(Tensor::empty({3}, dtypes::float16).cumsum().dtype(), dtypes::float16);
  EXPECT_EQ(Tensor::empty({3}, dtypes::int8).cumprod().dtype(), dtypes::int8);  // as prod
  EXPECT_EQ(Tensor::empty({3}, dtypes::bool_).cummax().first.dtype(), dtypes::bool_);
  EXPECT_EQ(Tensor::empty({0, 3}).cumsum(0).shape(), (IntTuple{0, 3}));
  EXPECT_EQ(Tensor(5, dtypes::int8).cumsum().dtype(), dtypes::int32);
  EXPECT_EQ(Tensor(5).cumsum().item<int>(), 5);
  EXPECT_EQ(Tensor(5).cummax().second.item<int>(), 0);
  EXPECT_EQ(error_of([] { Tensor::empty({3, 4}).cumprod(2); }), "cumprod: axis 2 is out of range for shape (3, 4); expected [-2, 1]");
  EXPECT_EQ(error_of([] { Tensor::empty({3, 4}).cummax(-3); }), "cummax: axis -3 is out of range for shape (3, 4); expected [-2, 1]");
}

}  // namespace
}  // namespace doorbell
