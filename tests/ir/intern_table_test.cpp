// The hash-consing table under load: many nodes born and freed (probe runs shift on erase), and threads that
// build the same nodes at once must all get one node.
#include <gtest/gtest.h>

#include <thread>

#include "ir/uop.h"

namespace doorbell {
namespace {

TEST(InternTable, NodesSurviveEraseOfTheirNeighboursAndStayUnique) {
  size_t before = live_uop_count();
  UOp x = UOp::variable("x", 0, 100, dtypes::int32);
  std::vector<UOp> keep;
  for (int round = 0; round < 4; round++) {
    std::vector<UOp> temp;
    for (int i = 0; i < 50000; i++) temp.push_back(x + UOp::const_(dtypes::int32, i * 4 + round));
    for (int i = 0; i < 50000; i += 97) keep.push_back(temp[i]);
  }  // most nodes die here; the kept ones must still be found by a fresh construction
  for (const UOp& k : keep) EXPECT_EQ(x + k.src(1), k);
  keep.clear();
  x = UOp();
  EXPECT_EQ(live_uop_count(), before);
}

TEST(InternTable, ThreadsBuildingTheSameNodesShareThem) {
  size_t before = live_uop_count();
  constexpr int kThreads = 4, kNodes = 20000;
  std::vector<std::vector<UOp>> built(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++)
    threads.emplace_back([t, &built] {
      UOp x = UOp::variable("x", 0, 100, dtypes::int32);
      for (int round = 0; round < 3; round++) {  // build, drop, build again: races between free and reuse
        built[t].clear();
        for (int i = 0; i < kNodes; i++) built[t].push_back((x + i) * 3);
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 1; t < kThreads; t++)
    for (int i = 0; i < kNodes; i++) ASSERT_EQ(built[t][i], built[0][i]) << "thread " << t << " node " << i;
  built.clear();
  EXPECT_EQ(live_uop_count(), before);
}

}  // namespace
}  // namespace doorbell
