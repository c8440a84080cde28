// GraphMap (ir/graph_map.h): the bottom-up rebuild the imperative passes share: each node seen once with its sources
// already mapped, untouched parts kept as the same nodes, several roots through one memo, a stop, sources it does not
// enter, and a chain of 300,000 nodes without recursion.
#include <gtest/gtest.h>

#include "ir/graph_map.h"

namespace doorbell {
namespace {

TEST(GraphMap, EachNodeSeesItsSourcesAlreadyMappedAndUntouchedPartsStayTheSameNodes) {
  UOp x = UOp::variable("x", 0, 10), y = UOp::variable("y", 0, 10);
  UOp shared = x * 3;
  UOp root = (shared + 1) * (shared + y);
  int calls = 0;
  UOp out = map_graph(root, "test", [&](const UOp& u, std::vector<UOp>& src) {
    calls++;
    if (u == y) return UOp::const_(y.dtype(), int64_t{2});
    return rebuilt(u, std::move(src));
  });
  EXPECT_EQ(out, (shared + 1) * (shared + 2)) << "y replaced below the shared part";
  EXPECT_EQ(calls, static_cast<int>(root.toposort().size())) << "each node once";
  UOp same = map_graph(root, "test", [](const UOp& u, std::vector<UOp>& src) { return rebuilt(u, std::move(src)); });
  EXPECT_EQ(same, root) << "nothing changed: the very same node";
}

TEST(GraphMap, SeveralRootsShareOneMemoAndSetReplacesWithoutVisitingBelow) {
  UOp x = UOp::variable("x", 0, 10);
  UOp a = x + 1, b = (x + 1) * 2;
  int calls = 0;
  GraphMap map("test", [&](const UOp& u, std::vector<UOp>& src) {
    calls++;
    return rebuilt(u, std::move(src));
  });
  map.set(x + 1, UOp::const_(x.dtype(), int64_t{7}));
  EXPECT_EQ(map(a), UOp::const_(x.dtype(), int64_t{7}));
  EXPECT_EQ(calls, 0) << "a replaced node's sources are not visited";
  EXPECT_EQ(map(b), UOp::const_(x.dtype(), int64_t{7}) * 2);
  EXPECT_EQ(calls, 2) << "the MUL and its CONST 2";
  ASSERT_NE(map.find(b), nullptr);
  EXPECT_EQ(map.find(x), nullptr) << "below a replacement nothing was visited";
}

TEST(GraphMap, ANullResultStopsTheMapAndSourcesItDoesNotEnterAreKept) {
  UOp x = UOp::variable("x", 0, 10);
  EXPECT_FALSE(map_graph(x * 2 + 1, "test", [](const UOp& u, std::vector<UOp>& src) {
    return u.op() == Ops::MUL ? UOp() : rebuilt(u, std::move(src));
  }));
  GraphMap skip_first(
      "test", [](const UOp& u, std::vector<UOp>& src) { return u.op() == Ops::PARAM ? UOp::const_(u.dtype(), int64_t{0}) : rebuilt(u, std::move(src)); },
      [](const UOp& u, size_t i) { return !(u.op() == Ops::ADD && i == 0); });
  UOp z = UOp::variable("z", 0, 10);
  EXPECT_EQ(skip_first(x + z), x + UOp::const_(z.dtype(), int64_t{0})) << "source 0 of the ADD kept as it is";
}

TEST(GraphMap, AChainOfThreeHundredThousandNodesNeedsNoRecursion) {
  UOp x = UOp::variable("x", 0, 10);
  UOp chain = x;
  for (int i = 0; i < 300'000; i++) chain = chain + 1;  // far past what a recursive walk's stack holds
  UOp out = map_graph(chain, "test", [&](const UOp& u, std::vector<UOp>& src) {
    return u == x ? UOp::variable("w", 0, 10) : rebuilt(u, std::move(src));
  });
  UOp n = out;
  while (n.op() == Ops::ADD) n = n.src(0);
  EXPECT_EQ(n, UOp::variable("w", 0, 10));
}

}  // namespace
}  // namespace doorbell
