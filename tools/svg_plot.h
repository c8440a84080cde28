// A small SVG writer for the plots `doorbell bench --plot DIR` draws: axes with 1-2-5 ticks (linear) or decade ticks
// (log), step lines of empirical CDFs with a legend and dashed reference lines, and a dot chart of two values per row
// (kernel-only time against its floor). No plotting library: SVG is text, and the output is a pure function of the
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

// One step of an empirical CDF: fraction `p` of the samples are <= x.
struct CdfPoint {
  double x = 0, p = 0;
  bool operator==(const CdfPoint&) const = default;
};
// The empirical CDF of `samples` (NaNs dropped): with at most `max_points` distinct values, one point per distinct
// value (x, fraction <= x); with more, the `max_points` quantiles p = j / max_points (j = 1..max_points), each at
// the smallest sample x with a fraction >= p of the samples <= x. Empty for no samples.
std::vector<CdfPoint> empirical_cdf(std::vector<double> samples, size_t max_points = 400);

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
  std::string x_label;
  bool log_x = true;
  TickFormat x_format = TickFormat::kNanoseconds;
  std::vector<CdfSeries> series;
  std::vector<ReferenceLine> references;
};
// An SVG document: one step line per series (fraction of samples <= x against x), the reference lines, a legend.
// Throws std::invalid_argument when no series has a sample, or a log axis gets a value <= 0.
std::string cdf_svg(const CdfPlot& plot);

// One row of a dot chart: a measured value against its floor (floor <= 0: none, said in the row's note).
struct DotRow {
  std::string label;
  double value = 0;
  double floor = 0;
};
struct DotPlot {
  std::string title;
  std::string x_label;
  std::string value_name = "measured";  // the legend's names of the two dots
  std::string floor_name = "floor";
  bool log_x = true;
  TickFormat x_format = TickFormat::kNanoseconds;
  std::vector<DotRow> rows;
};
// An SVG document: a row per DotRow, its value (filled) and floor (hollow) joined by a line, value / floor at the
// right. Throws std::invalid_argument when there is no row, or a log axis gets a value <= 0.
std::string dot_svg(const DotPlot& plot);

}  // namespace doorbell::plot
