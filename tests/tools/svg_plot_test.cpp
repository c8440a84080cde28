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
  plot.x_scale = AxisScale::kLog;
  plot.series = {{"a<b & \"c\"", {100, 1000}}};
  plot.references = {{"floor", 300}};
  std::string svg = cdf_svg(plot);
  EXPECT_EQ(xml_problem(svg), "");
  // x: 100 .. 1000 ns over pixels 70 .. 835 (ticks 100, 200, 500, 1000); y: 0 .. 1 over 400 .. 40.
  EXPECT_NE(svg.find("<path d=\"M70 400H70V220H835V40\""), std::string::npos) << svg;
  EXPECT_NE(svg.find(">a&lt;b &amp; &quot;c&quot; (2 samples; p50 100 ns, p90 1 us, p99 1 us)</text>"), std::string::npos);
  EXPECT_NE(svg.find("floor (300 ns)"), std::string::npos);
  EXPECT_NE(svg.find(">1 us</text>"), std::string::npos);
  EXPECT_EQ(svg, cdf_svg(plot));  // deterministic
}

TEST(CdfSvg, LinearAxisAndErrorsNameThePlot) {
  CdfPlot plot;
  plot.title = "lin";
  plot.x_scale = AxisScale::kLinear;
  plot.x_format = TickFormat::kNumber;
  plot.series = {{"s", {0, 10}}};
  std::string svg = cdf_svg(plot);
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_NE(svg.find("<path d=\"M70 400H70V220H835V40\""), std::string::npos) << svg;
  plot.x_scale = AxisScale::kLog;
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

// Over a decade (hi > 10 lo, all > 0) the axis is logarithmic; a decade or less, or a value <= 0, linear.
TEST(LogAxis, AutoIsLogBeyondADecade) {
  EXPECT_FALSE(log_axis(AxisScale::kAuto, 10, 100));
  EXPECT_TRUE(log_axis(AxisScale::kAuto, 10, 100.5));
  EXPECT_FALSE(log_axis(AxisScale::kAuto, 0, 1e9));
  EXPECT_FALSE(log_axis(AxisScale::kAuto, -1, 1e9));
  EXPECT_FALSE(log_axis(AxisScale::kAuto, 5, 5));
  EXPECT_TRUE(log_axis(AxisScale::kLog, 5, 5));
  EXPECT_FALSE(log_axis(AxisScale::kLinear, 1, 1e9));
}

// The ticks' pixels: 10 ns .. 10 us spans 3 decades, so the axis is log with a tick per decade, 255 px apart on the
// 765 px from x = 70 to x = 835 (label 17 px under the axis at y = 400); 1 us .. 10 us is exactly a decade, so a
// linear axis 0 .. 10 us with ticks every 2 us, 153 px apart.
TEST(CdfSvg, TheAxisTurnsLogBeyondADecadeWithATickAtEachDecade) {
  CdfPlot plot;
  plot.title = "t";
  plot.x_label = "latency";
  plot.series = {{"s", {10, 1e4}}};
  std::string svg = cdf_svg(plot);
  EXPECT_EQ(xml_problem(svg), "");
  const char* decades[][2] = {{"70", "10 ns"}, {"325", "100 ns"}, {"580", "1 us"}, {"835", "10 us"}};
  for (auto [x, label] : decades) {
    EXPECT_NE(svg.find(std::string("<line x1=\"") + x + "\" y1=\"40\" x2=\"" + x + "\" y2=\"400\" stroke=\"#e0e0e0\"/>"),
              std::string::npos) << x;
    EXPECT_NE(svg.find(std::string("<text x=\"") + x + "\" y=\"417\" text-anchor=\"middle\">" + label + "</text>"),
              std::string::npos) << label;
  }
  EXPECT_EQ(svg.find(">200 ns</text>"), std::string::npos);  // 3 decades: no 2x, 5x ticks
  EXPECT_NE(svg.find(">latency (log scale)</text>"), std::string::npos);
  plot.series = {{"s", {1e3, 1e4}}};
  svg = cdf_svg(plot);
  const char* linear[][2] = {{"70", "0 ns"}, {"223", "2 us"}, {"376", "4 us"}, {"529", "6 us"}, {"682", "8 us"},
                             {"835", "10 us"}};
  for (auto [x, label] : linear)
    EXPECT_NE(svg.find(std::string("<text x=\"") + x + "\" y=\"417\" text-anchor=\"middle\">" + label + "</text>"),
              std::string::npos) << label;
  EXPECT_NE(svg.find(">latency</text>"), std::string::npos);
}

TEST(NearestRank, TheSmallestSampleWithThatFractionAtOrBelowIt) {
  std::vector<double> hundred;
  for (int i = 100; i >= 1; i--) hundred.push_back(i);
  EXPECT_EQ(nearest_rank(hundred, 500), 50);
  EXPECT_EQ(nearest_rank(hundred, 900), 90);
  EXPECT_EQ(nearest_rank(hundred, 990), 99);  // rank 99 exactly, not ceil(0.99 * 100) in doubles
  EXPECT_EQ(nearest_rank(hundred, 1000), 100);
  EXPECT_EQ(nearest_rank(hundred, 1), 1);
  EXPECT_EQ(nearest_rank({7}, 990), 7);
  EXPECT_EQ(nearest_rank({3, NAN, 1}, 500), 1);  // rank ceil(0.5 * 2) = 1 of {1, 3}
  EXPECT_EQ(nearest_rank({}, 500), 0);
  EXPECT_THROW(nearest_rank({1}, 0), std::invalid_argument);
  EXPECT_THROW(nearest_rank({1}, 1001), std::invalid_argument);
}

// 100 samples: 50 x 10 ns, 40 x 100 ns, 9 x 1 us, 1 x 10 us, so p50 (rank 50) = 10 ns, p90 (rank 90) = 100 ns,
// p99 (rank 99) = 1 us. The axis is log 10 ns .. 10 us (1000x): x = 70 + 255 per decade; y = 400 - 360 p.
TEST(CdfSvg, MarksP50P90AndP99OnTheCurveAndNamesThemInTheLegend) {
  CdfPlot plot;
  plot.title = "t";
  plot.series = {{"s", {}}};
  for (auto [value, count] : {std::pair{10.0, 50}, {100.0, 40}, {1000.0, 9}, {10000.0, 1}})
    plot.series[0].samples.insert(plot.series[0].samples.end(), count, value);
  std::string svg = cdf_svg(plot);
  EXPECT_EQ(xml_problem(svg), "");
  // The curve: (10, 0.5) at (70, 220), (100, 0.9) at (325, 76), (1000, 0.99) at (580, 43.6), (10000, 1) at (835, 40).
  EXPECT_NE(svg.find("<path d=\"M70 400H70V220H325V76H580V43.6H835V40\""), std::string::npos) << svg;
  // p50: a circle at (70, 220); p90: a 7 px square centred on (325, 76); p99: a diamond 4.5 px each way of (580, 43.6).
  const std::string paint = "fill=\"white\" stroke=\"#0072B2\" stroke-width=\"1.5\"/>";
  EXPECT_NE(svg.find("<circle cx=\"70\" cy=\"220\" r=\"3.5\" " + paint), std::string::npos) << svg;
  EXPECT_NE(svg.find("<rect x=\"321.5\" y=\"72.5\" width=\"7\" height=\"7\" " + paint), std::string::npos) << svg;
  EXPECT_NE(svg.find("<polygon points=\"580,39.1 584.5,43.6 580,48.1 575.5,43.6\" " + paint), std::string::npos) << svg;
  EXPECT_NE(svg.find(">s (100 samples; p50 10 ns, p90 100 ns, p99 1 us)</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">marked on each curve (nearest rank)</text>"), std::string::npos);
}

// One sample, or all samples equal, still draw: a linear axis from 0 to the value (no zero-wide range), every
// marker at the value, no NaN or infinity anywhere.
TEST(CdfSvg, OneSampleOrEqualSamplesStillDrawAValidPlot) {
  CdfPlot plot;
  plot.title = "one";
  plot.series = {{"one", {300}}, {"equal", {300, 300, 300}}};
  std::string svg = cdf_svg(plot);
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_EQ(svg.find("nan"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("inf"), std::string::npos) << svg;
  // Ticks 0 .. 300 ns every 50 ns: 300 ns at x = 835; p50 at y = 220.
  EXPECT_NE(svg.find("<path d=\"M835 400H835V40\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("<circle cx=\"835\" cy=\"220\""), std::string::npos) << svg;
  EXPECT_NE(svg.find(">one (1 sample; p50 300 ns, p90 300 ns, p99 300 ns)</text>"), std::string::npos);
  EXPECT_NE(svg.find(">equal (3 samples; p50 300 ns, p90 300 ns, p99 300 ns)</text>"), std::string::npos);
  plot.x_scale = AxisScale::kLog;  // one decade around the value: 100 ns .. 1 us
  svg = cdf_svg(plot);
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_EQ(svg.find("nan"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">1 us</text>"), std::string::npos);
}

// Seven colours: the eighth series has the first one's colour again, so it is dashed (the legend's line too).
TEST(CdfSvg, SeriesPastTheColoursAreDashed) {
  CdfPlot plot;
  plot.title = "many";
  for (int i = 1; i <= 8; i++) plot.series.push_back({"s" + std::to_string(i), {100.0 * i}});
  std::string svg = cdf_svg(plot);
  EXPECT_EQ(xml_problem(svg), "");
  const std::string first = "stroke=\"#0072B2\" stroke-width=\"2\"";
  size_t solid = 0, dashed = 0;
  for (size_t at = svg.find(first); at != std::string::npos; at = svg.find(first, at + 1))
    (svg.compare(at + first.size(), 19, " stroke-dasharray=\"") == 0 ? dashed : solid)++;
  EXPECT_EQ(solid, 2u) << svg;   // s1's path and legend line
  EXPECT_EQ(dashed, 2u) << svg;  // s8's
}

TEST(BoxStats, QuartilesInterpolateBetweenTheNearestRanks) {
  // 5 samples: positions 0, 1, 2, 3, 4 of the sorted {10, 20, 30, 40, 50}.
  EXPECT_EQ(box_stats({50, 10, 40, 20, 30}), (BoxStats{10, 20, 30, 40, 50, 5}));
  // 4 samples: q25 at position 0.75 (1 + 0.75 * (2 - 1)), the median at 1.5 (as median_of), q75 at 2.25.
  EXPECT_EQ(box_stats({4, 3, 2, 1}), (BoxStats{1, 1.75, 2.5, 3.25, 4, 4}));
  EXPECT_EQ(box_stats({7}), (BoxStats{7, 7, 7, 7, 7, 1}));
  EXPECT_EQ(box_stats({2, NAN, 2}), (BoxStats{2, 2, 2, 2, 2, 2}));
  EXPECT_EQ(box_stats({}), BoxStats{});
}

// A 10-character label puts the plot's left edge at 16 + 10 * 7.2 = 88 px; the width is 860 with 80 px on the right,
// so x runs from 88 to 780. Values 10 .. 50 and floor 5 .. 10 on a linear axis: ticks every 10 from 0 to 50,
// x(v) = 88 + v * 692 / 50 = 88 + 13.84 v. One row: centre y = 72 + 34 / 2 = 89, values' lane 7 above (82),
// floor's 7 below (96).
TEST(BoxSvg, BoxWhiskersAndMedianAtTheirExactCoordinates) {
  BoxPlot plot;
  plot.title = "box";
  plot.x_scale = AxisScale::kLinear;
  plot.x_format = TickFormat::kNumber;
  plot.rows = {{"a<b & 'cd'", {50, 10, 40, 20, 30}, {5, 10, 5, 10, 10}}};
  std::string svg = box_svg(plot);
  EXPECT_EQ(xml_problem(svg), "");
  // Values: min 10 (226.4), q25 20 (364.8), median 30 (503.2), q75 40 (641.6), max 50 (780).
  // Whisker at y = 82 with caps 4 px each way; the box 5 px each way (y 77, height 10); the median bar 7 px each way.
  const std::string blue = "stroke=\"#0072B2\"";
  EXPECT_NE(svg.find("<line x1=\"226.4\" y1=\"82\" x2=\"780\" y2=\"82\" " + blue), std::string::npos) << svg;
  EXPECT_NE(svg.find("<line x1=\"226.4\" y1=\"78\" x2=\"226.4\" y2=\"86\" " + blue), std::string::npos) << svg;
  EXPECT_NE(svg.find("<line x1=\"780\" y1=\"78\" x2=\"780\" y2=\"86\" " + blue), std::string::npos) << svg;
  EXPECT_NE(svg.find("<rect x=\"364.8\" y=\"77\" width=\"276.8\" height=\"10\" fill=\"#0072B2\" fill-opacity=\"0.35\" " + blue),
            std::string::npos) << svg;
  EXPECT_NE(svg.find("<line x1=\"503.2\" y1=\"75\" x2=\"503.2\" y2=\"89\" " + blue + " stroke-width=\"3\""),
            std::string::npos) << svg;
  // Floor {5, 5, 10, 10, 10}: min 5 (157.2), q25 5, median 10 (226.4), q75 10, max 10; lane y = 96, hollow box.
  const std::string orange = "stroke=\"#D55E00\"";
  EXPECT_NE(svg.find("<line x1=\"157.2\" y1=\"96\" x2=\"226.4\" y2=\"96\" " + orange), std::string::npos) << svg;
  EXPECT_NE(svg.find("<rect x=\"157.2\" y=\"91\" width=\"69.2\" height=\"10\" fill=\"white\" " + orange),
            std::string::npos) << svg;
  EXPECT_NE(svg.find("<line x1=\"226.4\" y1=\"89\" x2=\"226.4\" y2=\"103\" " + orange + " stroke-width=\"3\""),
            std::string::npos) << svg;
  // Ticks 0, 10, .., 50; the ratio of the medians 30 / 10; the label escaped, right-aligned 8 px left of the plot.
  EXPECT_NE(svg.find("<text x=\"364.8\" y=\"" + std::to_string(72 + 34 + 17) + "\" text-anchor=\"middle\">20</text>"),
            std::string::npos) << svg;
  EXPECT_NE(svg.find("<text x=\"852\" y=\"93\" text-anchor=\"end\">3.0x</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("<text x=\"80\" y=\"93\" text-anchor=\"end\">a&lt;b &amp; &apos;cd&apos;</text>"),
            std::string::npos) << svg;
  EXPECT_EQ(svg, box_svg(plot));  // deterministic
}

TEST(BoxSvg, LegendTooltipsAndLabelsAreEscapedAndTheFloorMayBeMissing) {
  BoxPlot plot;
  plot.title = "k & f";
  plot.value_name = "ours <fast>";
  plot.floor_name = "\"floor\"";
  plot.rows = {{"matmul <512>", {200e3, 220e3}, {100e3}}, {"no floor here", {50e3}, {}}};
  std::string svg = box_svg(plot);
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_NE(svg.find("<title>k &amp; f</title>"), std::string::npos);
  EXPECT_NE(svg.find(">matmul &lt;512&gt;</text>"), std::string::npos);
  EXPECT_NE(svg.find(">ours &lt;fast&gt;</text>"), std::string::npos);
  EXPECT_NE(svg.find(">&quot;floor&quot;</text>"), std::string::npos);
  EXPECT_NE(svg.find(">ours &lt;fast&gt; / &quot;floor&quot;</text>"), std::string::npos);
  EXPECT_NE(svg.find("<title>ours &lt;fast&gt;: median 210 us, p25 205 us, p75 215 us, min 200 us, max 220 us, "
                     "2 samples</title>"),
            std::string::npos) << svg;
  EXPECT_NE(svg.find(">2.1x</text>"), std::string::npos);
  EXPECT_NE(svg.find(">no floor</text>"), std::string::npos);
  // The row without a floor has its one lane on the row's centre: y = 72 + 34 * 1.5 = 123.
  EXPECT_NE(svg.find(" y1=\"123\" "), std::string::npos) << svg;
}

// A single sample, equal samples and a floor of 0: no NaN, no infinity, no division by zero in the ratio.
TEST(BoxSvg, SingleOrEqualSamplesAndAZeroFloorStillDrawAValidPlot) {
  BoxPlot plot;
  plot.title = "degenerate";
  plot.rows = {{"one", {1000}, {1000}}, {"equal", {1000, 1000, 1000}, {0, 0}}};
  std::string svg = box_svg(plot);
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_EQ(svg.find("nan"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("inf"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">1.0x</text>"), std::string::npos);
  EXPECT_NE(svg.find(">floor 0</text>"), std::string::npos);
  // 0 .. 1 us linear: the zero-wide box of 1000 at x = 780.
  EXPECT_NE(svg.find("<rect x=\"780\" y=\"" ), std::string::npos) << svg;
  EXPECT_NE(svg.find("width=\"0\" height=\"10\""), std::string::npos) << svg;
  plot.rows = {{"same", {1000, 1000}, {1000}}};
  svg = box_svg(plot);
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_EQ(svg.find("nan"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">1 us</text>"), std::string::npos);
}

TEST(BoxSvg, ErrorsNameThePlotAndTheRow) {
  BoxPlot plot;
  plot.title = "bad";
  EXPECT_THROW(box_svg(plot), std::invalid_argument);
  plot.rows = {{"r", {0, 1}, {}}};
  plot.x_scale = AxisScale::kLog;
  EXPECT_THROW(box_svg(plot), std::invalid_argument);  // 0 on a log axis
  plot.rows = {{"empty row", {}, {1}}};
  try {
    box_svg(plot);
    FAIL() << "expected an exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "box_svg 'bad': row 'empty row' has no values");
  }
}

}  // namespace
}  // namespace doorbell::plot
