// Printers: exact text of print_graph, print_node and render_expr.
#include "ir/printer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace doorbell {
namespace {

TEST(PrinterTest, PrintGraphNumbersNodesInToposortOrder) {
  UOp x = UOp::variable("x", 0, 10, dtypes::int32);
  UOp s = x + 3;
  UOp root = s * s;
  EXPECT_EQ(print_graph(root),
            "%0 = PARAM int32 x[0..10]\n"
            "%1 = CONST int32 3\n"
            "%2 = ADD int32 (%0, %1)\n"
            "%3 = MUL int32 (%2, %2)\n");
  EXPECT_EQ(root.to_string(), print_graph(root));
}

TEST(PrinterTest, PrintGraphShowsShapesTagsAndArgs) {
  UOp buf = UOp::make(Ops::BUFFER, dtypes::float32, {}, int64_t{6});
  UOp r = UOp::make(Ops::RESHAPE, dtypes::float32, {buf}, IntTuple{2, 3});
  UOp red = UOp::make(Ops::REDUCE, dtypes::float32, {r}, ReduceArg{Ops::ADD, {1}}, 7);
  EXPECT_EQ(print_graph(UOp::sink({red})),
            "%0 = BUFFER float32 6 shape=(6,)\n"
            "%1 = RESHAPE float32 (2, 3) shape=(2, 3) (%0)\n"
            "%2 = REDUCE float32 ADD (1,) tag=7 shape=(2, 1) (%1)\n"
            "%3 = SINK void (%2)\n");
}

TEST(PrinterTest, PrintGraphOfLeavesAndSpecialArgs) {
  EXPECT_EQ(print_graph(UOp::const_(dtypes::float32, 1.5)), "%0 = CONST float32 1.5\n");
  EXPECT_EQ(print_graph(UOp::const_(dtypes::float32, -0.0)), "%0 = CONST float32 -0.0\n");
  EXPECT_EQ(print_graph(UOp::const_(dtypes::float64, INFINITY)), "%0 = CONST float64 inf\n");
  EXPECT_EQ(print_graph(UOp::const_(dtypes::float64, NAN)), "%0 = CONST float64 nan\n");
  EXPECT_EQ(print_graph(UOp::const_(dtypes::bool_, true)), "%0 = CONST bool True\n");
  EXPECT_EQ(print_graph(UOp::invalid()), "%0 = CONST bool Invalid\n");
  EXPECT_EQ(print_graph(UOp::const_(dtypes::uint64, int64_t{-1})), "%0 = CONST uint64 18446744073709551615\n");
  EXPECT_EQ(print_graph(UOp::range(4, 2)),
            "%0 = CONST weakint 4\n"
            "%1 = RANGE weakint 2 LOOP (%0)\n");
}

TEST(PrinterTest, PrintNode) {
  UOp x = UOp::variable("x", 0, 10, dtypes::int32);
  EXPECT_EQ(print_node(x + 3), "ADD int32 (2 srcs)");
  EXPECT_EQ(print_node(-x), "NEG int32 (1 src)");
  EXPECT_EQ(print_node(UOp::const_(dtypes::int32, 3)), "CONST int32 arg=3");
  EXPECT_EQ(print_node(x), "PARAM int32 arg=x[0..10]");
  EXPECT_EQ(print_node((x + 3).with_tag(4)), "ADD int32 tag=4 (2 srcs)");
  EXPECT_EQ(print_node(UOp::const_(dtypes::uint8, 255)), "CONST uint8 arg=255");
  EXPECT_EQ(print_node(UOp::const_(dtypes::uint64, int64_t{-2})), "CONST uint64 arg=18446744073709551614");
}

TEST(PrinterTest, RenderExpr) {
  UOp x = UOp::variable("x", 0, 10), y = UOp::variable("y", 0, 5);
  EXPECT_EQ(render_expr((x * 4 + 3) / 2), "(((x*4)+3)//2)");
  EXPECT_EQ(render_expr(x * 4 + y / 2), "((x*4)+(y//2))");
  EXPECT_EQ(render_expr(x % 3 - y), "((x%3)-y)");
  EXPECT_EQ(render_expr(-x), "(-x)");
  EXPECT_EQ(render_expr(x.maximum(y)), "max(x, y)");
  EXPECT_EQ(render_expr(x.lt(y).where(x, y)), "((x<y) ? x : y)");
  EXPECT_EQ(render_expr(x.cast(dtypes::int8)), "(int8)x");
  EXPECT_EQ(render_expr(UOp::range(8, 3) * 2), "(r3*2)");
  EXPECT_EQ(render_expr(UOp::infer(Ops::CDIV, {x, y})), "(x cdiv y)");
  EXPECT_EQ(render_expr(x ^ (y << 1)), "(x^(y<<1))");
  EXPECT_EQ(render_expr(x.ne(y) & x.eq(y)), "((x!=y)&(x==y))");
  EXPECT_EQ(render_expr(UOp::sink({x, y + 1})), "SINK(x, (y+1))");
  EXPECT_EQ(render_expr(UOp::const_(dtypes::float32, 2.0) * 0.5), "(2.0*0.5)");
  EXPECT_EQ(render_expr(UOp::const_(dtypes::float32, 100.0)), "100.0") << "not 1e+02";
  EXPECT_EQ(render_expr(UOp::const_(dtypes::float64, 1e20)), "1e+20");
  EXPECT_EQ(render_expr(UOp::const_(dtypes::float64, 0.1)), "0.1");
  EXPECT_EQ(render_expr(UOp::const_(dtypes::float32, 0.1)), "0.10000000149011612");
  EXPECT_EQ(render_expr(UOp::const_(dtypes::uint64, int64_t{-1}) + UOp::const_(dtypes::uint64, 1)),
            "(18446744073709551615+1)");
}

TEST(PrinterTest, RenderExprOfADeepChainDoesNotRecurse) {
  UOp e = UOp::variable("x", 0, 10);
  for (int i = 0; i < 2000; i++) e = -e;
  std::string s = render_expr(e);
  EXPECT_EQ(s.size(), 2000u * 3 + 1);
  EXPECT_EQ(s.substr(0, 4), "(-(-");
}

TEST(PrinterTest, PrintGraphAndRenderExprOfAHundredThousandNodeChainDoNotRecurse) {
  constexpr int kChain = 100'000;
  UOp e = UOp::variable("x", 0, 10);
  for (int i = 0; i < kChain; i++) e = -e;
  std::string graph = print_graph(e);
  EXPECT_EQ(std::count(graph.begin(), graph.end(), '\n'), kChain + 1) << "one line per node";
  EXPECT_NE(graph.find("%100000 = NEG weakint (%99999)"), std::string::npos);
  std::string want;
  for (int i = 0; i < kChain; i++) want += "(-";
  want += "x" + std::string(kChain, ')');
  EXPECT_TRUE(render_expr(e) == want) << "written in linear time: no level copies the text below it";
}

}  // namespace
}  // namespace doorbell
