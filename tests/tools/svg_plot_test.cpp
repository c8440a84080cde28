#include "tools/svg_plot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>

#include "tests/tools/xml_check.h"

namespace doorbell::plot {
namespace {

using test::xml_problem;

TEST(XmlCheck, AcceptsWellFormedAndNamesEachProblem) {
  EXPECT_EQ(xml_problem("<svg a=\"1\"><g><text>x &amp; y</text></g><line/></svg>\n"), "");
  EXPECT_NE(xml_problem("<svg><g></svg>"), "");
  EXPECT_NE(xml_problem("<svg><g></text></g></svg>"), "");
  EXPECT_NE(xml_problem("<svg><text>a & b</text></svg>"), "");
  EXPECT_NE(xml_problem("<svg><text>a < b</text></svg>"), "");
  EXPECT_NE(xml_problem("<svg><text>a > b</text></svg>"), "");
  EXPECT_NE(xml_problem("<svg a=1></svg>"), "");
  EXPECT_NE(xml_problem("<svg a=\"<\"></svg>"), "");
  EXPECT_NE(xml_problem("<svg></svg><svg></svg>"), "");
  EXPECT_NE(xml_problem("<svg>"), "");
}

TEST(XmlEscape, ReplacesTheFiveSpecialCharactersAndControlCharacters) {
  EXPECT_EQ(xml_escape("a<b & \"c\" 'd' > e"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos; &gt; e");
  EXPECT_EQ(xml_escape(std::string("x\x01y\tz")), "x\xEF\xBF\xBDy\tz");
  EXPECT_EQ(xml_escape("submit -> done"), "submit -&gt; done");
}

TEST(FormatNs, UsesTheLargestUnitReached) {
  EXPECT_EQ(format_ns(0), "0 ns");
  EXPECT_EQ(format_ns(999), "999 ns");
  EXPECT_EQ(format_ns(1000), "1 us");
  EXPECT_EQ(format_ns(2500), "2.5 us");
  EXPECT_EQ(format_ns(6.15e6), "6.15 ms");
  EXPECT_EQ(format_ns(2e9), "2 s");
}

void expect_ticks(const Ticks& t, std::vector<double> values, std::vector<std::string> labels) {
  EXPECT_EQ(t.values, values);
  EXPECT_EQ(t.labels, labels);
  ASSERT_FALSE(values.empty());
  EXPECT_EQ(t.lo, values.front());
  EXPECT_EQ(t.hi, values.back());
}

TEST(LinearTicks, StepOneTwoOrFiveTimesAPowerOfTenAndTheRangeWidenedToIt) {
  expect_ticks(linear_ticks(0, 1), {0, 0.2, 0.4, 0.6, 0.8, 1.0}, {"0", "0.2", "0.4", "0.6", "0.8", "1.0"});
  expect_ticks(linear_ticks(0, 7.3), {0, 2, 4, 6, 8}, {"0", "2", "4", "6", "8"});
  // Bounds that are multiples of the step stay (0.6 / 0.2 is 2.9999999999999996 in doubles).
  expect_ticks(linear_ticks(0.6, 1.4), {0.6, 0.8, 1.0, 1.2, 1.4}, {"0.6", "0.8", "1.0", "1.2", "1.4"});
  expect_ticks(linear_ticks(-3, 12), {-5, 0, 5, 10, 15}, {"-5", "0", "5", "10", "15"});
  expect_ticks(linear_ticks(3, 3), {2.5, 3.0, 3.5}, {"2.5", "3.0", "3.5"});
  expect_ticks(linear_ticks(0, 2500, TickFormat::kNanoseconds), {0, 500, 1000, 1500, 2000, 2500},
               {"0 ns", "500 ns", "1 us", "1.5 us", "2 us", "2.5 us"});
  expect_ticks(linear_ticks(0, 1, TickFormat::kNumber, 3), {0, 0.5, 1.0}, {"0", "0.5", "1.0"});
}

TEST(LinearTicks, RefusesABadRange) {
  EXPECT_THROW(linear_ticks(2, 1), std::invalid_argument);
  EXPECT_THROW(linear_ticks(0, NAN), std::invalid_argument);
  EXPECT_THROW(linear_ticks(0, INFINITY), std::invalid_argument);
  EXPECT_THROW(linear_ticks(0, 1, TickFormat::kNumber, 1), std::invalid_argument);
}

TEST(LogTicks, DecadesAroundTheRangeWithTwoAndFiveWhenItSpansLessThanTwo) {
  expect_ticks(log_ticks(55, 6.1e6, TickFormat::kNanoseconds), {10, 100, 1e3, 1e4, 1e5, 1e6, 1e7},
               {"10 ns", "100 ns", "1 us", "10 us", "100 us", "1 ms", "10 ms"});
  expect_ticks(log_ticks(200, 800, TickFormat::kNanoseconds), {100, 200, 500, 1000},
               {"100 ns", "200 ns", "500 ns", "1 us"});
  expect_ticks(log_ticks(1000, 1000), {1000, 2000, 5000, 10000}, {"1000", "2000", "5000", "10000"});
  expect_ticks(log_ticks(0.01, 0.05), {0.01, 0.02, 0.05, 0.1}, {"0.01", "0.02", "0.05", "0.1"});
  expect_ticks(log_ticks(0.01, 0.5), {0.01, 0.1, 1}, {"0.01", "0.1", "1"});
  expect_ticks(log_ticks(100, 1e4), {100, 1000, 1e4}, {"100", "1000", "10000"});
  EXPECT_THROW(log_ticks(0, 10), std::invalid_argument);
  EXPECT_THROW(log_ticks(-1, 10), std::invalid_argument);
}

TEST(EmpiricalCdf, OnePointPerDistinctValueWithTheFractionAtOrBelowIt) {
  EXPECT_EQ(empirical_cdf({3, 1, 2, 2, NAN}), (std::vector<CdfPoint>{{1, 0.25}, {2, 0.75}, {3, 1.0}}));
  EXPECT_EQ(empirical_cdf({5}), (std::vector<CdfPoint>{{5, 1.0}}));
  EXPECT_TRUE(empirical_cdf({}).empty());
}

TEST(EmpiricalCdf, ManyValuesGiveTheQuantilesAtEvenFractions) {
  EXPECT_EQ(empirical_cdf({10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 2), (std::vector<CdfPoint>{{5, 0.5}, {10, 1.0}}));
  EXPECT_EQ(empirical_cdf({1, 2, 3, 4, 5, 6, 7}, 3), (std::vector<CdfPoint>{{3, 1.0 / 3}, {5, 2.0 / 3}, {7, 1.0}}));
  // Each point is the p-quantile: at least p of the samples are <= x, fewer than p are < x.
  std::mt19937 rng(7);
  std::lognormal_distribution<double> latency(6, 1);
  std::vector<double> samples(5000);
  for (double& s : samples) s = std::round(latency(rng));
  std::vector<CdfPoint> cdf = empirical_cdf(samples, 100);
  ASSERT_EQ(cdf.size(), 100u);
  for (const CdfPoint& p : cdf) {
    double at_or_below = 0, below = 0;
    for (double s : samples) at_or_below += s <= p.x, below += s < p.x;
    EXPECT_GE(at_or_below / samples.size(), p.p) << p.x;
    EXPECT_LT(below / samples.size(), p.p) << p.x;
  }
}

TEST(CdfSvg, StepsThroughTheKnownPointsOnALogAxis) {
  CdfPlot plot;
  plot.title = "t";
  plot.x_label = "latency";
  plot.series = {{"a<b & \"c\"", {100, 1000}}};
  plot.references = {{"floor", 300}};
  std::string svg = cdf_svg(plot);
  EXPECT_EQ(xml_problem(svg), "");
  // x: 100 .. 1000 ns over pixels 70 .. 835 (ticks 100, 200, 500, 1000); y: 0 .. 1 over 400 .. 40.
  EXPECT_NE(svg.find("<path d=\"M70 400H70V220H835V40\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("a&lt;b &amp; &quot;c&quot; (2 samples, median 100 ns)"), std::string::npos);
  EXPECT_NE(svg.find("floor (300 ns)"), std::string::npos);
  EXPECT_NE(svg.find(">1 us</text>"), std::string::npos);
  EXPECT_EQ(svg, cdf_svg(plot));  // deterministic
}

TEST(CdfSvg, LinearAxisAndErrorsNameThePlot) {
  CdfPlot plot;
  plot.title = "lin";
  plot.log_x = false;
  plot.x_format = TickFormat::kNumber;
  plot.series = {{"s", {0, 10}}};
  std::string svg = cdf_svg(plot);
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_NE(svg.find("<path d=\"M70 400H70V220H835V40\""), std::string::npos) << svg;
  plot.log_x = true;
  EXPECT_THROW(cdf_svg(plot), std::invalid_argument);  // 0 on a log axis
  try {
    CdfPlot empty;
    empty.title = "empty";
    empty.series = {{"s", {}}};
    cdf_svg(empty);
    FAIL() << "expected an exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'empty'"), std::string::npos) << e.what();
  }
}

TEST(DotSvg, ValueAgainstFloorWithTheRatio) {
  DotPlot plot;
  plot.title = "k & f";
  plot.rows = {{"matmul <512>", 200, 100}, {"no floor here", 50, 0}};
  std::string svg = dot_svg(plot);
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_NE(svg.find(">2.0x</text>"), std::string::npos);
  EXPECT_NE(svg.find(">no floor</text>"), std::string::npos);
  EXPECT_NE(svg.find(">matmul &lt;512&gt;</text>"), std::string::npos);
  EXPECT_NE(svg.find("<title>k &amp; f</title>"), std::string::npos);
  EXPECT_EQ(svg, dot_svg(plot));
  plot.rows.clear();
  EXPECT_THROW(dot_svg(plot), std::invalid_argument);
  plot.rows = {{"r", 0, 1}};
  EXPECT_THROW(dot_svg(plot), std::invalid_argument);  // 0 on a log axis
}

}  // namespace
}  // namespace doorbell::plot
