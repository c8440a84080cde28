// A small SVG writer for the plots `doorbell bench --plot DIR` draws: axes with 1-2-5 ticks (linear) or decade ticks
// (log, chosen when the values span more than a decade), step lines of empirical CDFs with their p50, p90 and p99
// marked, a legend and dashed reference lines, and a box plot of two sample sets per row (kernel-only times against
// their floor's). No plotting library: SVG is text, and the output is a pure function of the
// input (fixed number formatting, no time or locale), so a committed plot changes only when its data does.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace doorbell::plot {

// Text and attribute values with &, <, >, " and ' replaced by entities; control characters other than tab and
// newline (not allowed in XML 1.0) become U+FFFD.
std::string xml_escape(std::string_view text);

// How an axis labels its ticks: plain numbers, or nanoseconds written as ns, us, ms or s.
enum class TickFormat { kNumber, kNanoseconds };

// "2.5 us" for 2500: the value in the largest unit it reaches, up to 4 significant digits.
std::string format_ns(double ns);

struct Ticks {
  double lo = 0, hi = 0;  // the axis range: the data range widened to the outer ticks
  std::vector<double> values;
  std::vector<std::string> labels;
};

// Ticks every 1, 2 or 5 times a power of ten, the step the smallest giving at most `max_ticks` ticks over
// [lo, hi]; the range widens to the multiples of the step around it. lo == hi gets a unit-wide range around it.
// Throws std::invalid_argument when lo > hi, either is not finite, or max_ticks < 2.
Ticks linear_ticks(double lo, double hi, TickFormat format = TickFormat::kNumber, int max_ticks = 6);
// Ticks at the powers of ten around [lo, hi] (lo > 0), plus 2x and 5x each decade when the range spans fewer
// than two decades. Throws std::invalid_argument when lo <= 0, lo > hi or either is not finite.
Ticks log_ticks(double lo, double hi, TickFormat format = TickFormat::kNumber);

// How a plot scales its x axis. kAuto: log when every value is > 0 and the largest is more than 10 times the
// smallest, else linear. Not two decades: latency samples with a tail (70 ns .. 3 us in `doorbell bench`, 45x) on a
// linear axis put every step but the tail's into the first 3% of the width.
enum class AxisScale { kLinear, kLog, kAuto };
// Whether `scale` draws [lo, hi] (the values' range) on a log axis.
bool log_axis(AxisScale scale, double lo, double hi);

// One step of an empirical CDF: fraction `p` of the samples are <= x.
struct CdfPoint {
  double x = 0, p = 0;
  bool operator==(const CdfPoint&) const = default;
};
// The empirical CDF of `samples` (NaNs dropped): with at most `max_points` distinct values, one point per distinct
// value (x, fraction <= x); with more, the `max_points` quantiles p = j / max_points (j = 1..max_points), each at
// the smallest sample x with a fraction >= p of the samples <= x. Empty for no samples.
std::vector<CdfPoint> empirical_cdf(std::vector<double> samples, size_t max_points = 400);

// The nearest-rank percentile of `samples` (NaNs dropped), p = per_mille / 1000 in (0, 1]: the smallest sample with
// at least that fraction of the samples <= it, as the latency rows' p50/p90/p99 (tools/bench_latency.h). Integer
// ranks, so p = 0.99 of 100 samples is the 99th and not the 100th. 0 for no samples; throws std::invalid_argument
// when per_mille is outside 1..1000.
double nearest_rank(std::vector<double> samples, int per_mille);

// The percentiles each CDF marks on its curve and names in its legend, in per mille: p50, p90, p99.
inline constexpr int kCdfMarksPerMille[] = {500, 900, 990};

struct CdfSeries {
  std::string label;
  std::vector<double> samples;
};
// A vertical dashed line at x (e.g. a latency floor), named in the legend.
struct ReferenceLine {
  std::string label;
  double x = 0;
};
struct CdfPlot {
  std::string title;
  std::string x_label;  // " (log scale)" is appended when the axis is logarithmic
  AxisScale x_scale = AxisScale::kAuto;
  TickFormat x_format = TickFormat::kNanoseconds;
  std::vector<CdfSeries> series;
  std::vector<ReferenceLine> references;
};
// An SVG document: one step line per series (fraction of samples <= x against x) with a marker at each percentile
// of kCdfMarksPerMille (p50 a circle, p90 a square, p99 a diamond, at (percentile, p): on the curve's step there),
// the reference lines, and a legend naming each series' sample count and percentiles. Throws std::invalid_argument
// when no series has a sample, or a log axis gets a value <= 0.
std::string cdf_svg(const CdfPlot& plot);

// The five numbers a box plot draws. Quartiles interpolate linearly between the two nearest ranks (position
// (n - 1) * p in the sorted samples), so the median is the suite's median_of (the mean of the middle two for an
// even count) and 5 repetitions give the 2nd and 4th samples as quartiles.
struct BoxStats {
  double min = 0, q25 = 0, median = 0, q75 = 0, max = 0;
  size_t count = 0;
  bool operator==(const BoxStats&) const = default;
};
// NaNs dropped; all zero for no samples.
BoxStats box_stats(std::vector<double> samples);

// One row of a box plot: the measured samples and the floor's (empty: no floor, said in the row's ratio column).
struct BoxRow {
  std::string label;
  std::vector<double> values;
  std::vector<double> floor;
};
struct BoxPlot {
  std::string title;
  std::string x_label;  // " (log scale)" is appended when the axis is logarithmic
  std::string value_name = "measured";  // the legend's names of the two boxes
  std::string floor_name = "floor";
  AxisScale x_scale = AxisScale::kAuto;
  TickFormat x_format = TickFormat::kNanoseconds;
  std::vector<BoxRow> rows;
};
// An SVG document: per row, a box from p25 to p75 with a line at the median and whiskers to the min and max, for the
// values (filled, upper lane) and the floor (hollow, lower lane), and median / floor median at the right. Throws
// std::invalid_argument when there is no row, a row has no value, or a log axis gets a value <= 0.
std::string box_svg(const BoxPlot& plot);

}  // namespace doorbell::plot
