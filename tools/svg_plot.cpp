#include "tools/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace doorbell::plot {
namespace {

// Okabe and Ito's colour-blind-safe palette (yellow left out: it does not show on white).
constexpr const char* kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"};
constexpr const char* kDashes[] = {"6 3", "2 3", "8 3 2 3", "12 4"};
constexpr double kFontSize = 12;
constexpr double kCharWidth = 0.6 * kFontSize;  // sans-serif average; only used to size margins and the legend
constexpr double kLegendRow = 18;

std::string format(const char* fmt, auto... args) {
  char buf[128];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

// Coordinates with one decimal: deterministic, and finer than a pixel.
std::string px(double v) {
  std::string s = format("%.1f", v);
  if (s == "-0.0") s = "0.0";
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

// 10^e exactly for the integers a double holds exactly, correctly rounded below 1.
double pow10(int e) {
  double p = 1;
  for (int i = 0; i < std::abs(e); i++) p *= 10;
  return e >= 0 ? p : 1 / p;
}
// k * 10^e with one rounding: 0.6 rather than 6 * 0.1 = 0.6000000000000001.
double scaled(double k, int e) { return e >= 0 ? k * pow10(e) : k / pow10(-e); }

std::string tick_label(double v, int decimals, TickFormat format_kind) {
  if (format_kind == TickFormat::kNanoseconds) return format_ns(v);
  if (v == 0) return "0";
  return format("%.*f", std::max(0, decimals), v);
}

void require_finite_range(double lo, double hi, const char* what) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi)
    throw std::invalid_argument(std::string(what) + ": expected a finite range lo <= hi, got [" + format("%g", lo) +
                                ", " + format("%g", hi) + "]");
}

// Maps data values to pixels along one axis.
struct Axis {
  Ticks ticks;
  bool log = false;
  double from = 0, to = 0;  // pixels of ticks.lo and ticks.hi
  double at(double v) const {
    const double span = log ? std::log10(ticks.hi) - std::log10(ticks.lo) : ticks.hi - ticks.lo;
    if (!(span > 0)) return (from + to) / 2;  // a range too narrow for two ticks: no division by zero
    double f = log ? (std::log10(v) - std::log10(ticks.lo)) / span : (v - ticks.lo) / span;
    return from + f * (to - from);
  }
};

Axis make_axis(double lo, double hi, AxisScale scale, TickFormat format_kind, const std::string& what) {
  const bool log = log_axis(scale, lo, hi);
  if (log && lo <= 0) throw std::invalid_argument(what + ": a log axis needs values > 0, got " + format("%g", lo));
  // Equal values on a linear axis: from 0 to them (linear_ticks' unit-wide range is a sliver of 1 ns at 1 ms).
  if (!log && lo == hi) lo = std::min(lo, 0.0), hi = std::max(hi, 0.0);
  return Axis{log ? log_ticks(lo, hi, format_kind) : linear_ticks(lo, hi, format_kind), log};
}

class Svg {
 public:
  Svg(double width, double height) : width_(width), height_(height) {}
  void raw(const std::string& element) { body_ += element + "\n"; }
  void text(double x, double y, std::string_view s, const std::string& attributes = {}) {
    raw("<text x=\"" + px(x) + "\" y=\"" + px(y) + "\"" + (attributes.empty() ? "" : " " + attributes) + ">" +
        xml_escape(s) + "</text>");
  }
  void line(double x1, double y1, double x2, double y2, const std::string& attributes) {
    raw("<line x1=\"" + px(x1) + "\" y1=\"" + px(y1) + "\" x2=\"" + px(x2) + "\" y2=\"" + px(y2) + "\" " + attributes +
        "/>");
  }
  void rect(double x, double y, double w, double h, const std::string& attributes) {
    raw("<rect x=\"" + px(x) + "\" y=\"" + px(y) + "\" width=\"" + px(w) + "\" height=\"" + px(h) + "\" " + attributes +
        "/>");
  }
  std::string document(std::string_view title) const {
    std::string w = px(width_), h = px(height_);
    return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + w + "\" height=\"" + h + "\" viewBox=\"0 0 " + w +
           " " + h + "\" font-family=\"sans-serif\" font-size=\"" + px(kFontSize) + "\">\n<title>" + xml_escape(title) +
           "</title>\n<rect width=\"" + w + "\" height=\"" + h + "\" fill=\"white\"/>\n" + body_ + "</svg>\n";
  }

 private:
  double width_, height_;
  std::string body_;
};

void draw_x_axis(Svg& svg, const Axis& x, double top, double bottom, std::string label) {
  if (x.log) label += " (log scale)";
  for (size_t i = 0; i < x.ticks.values.size(); i++) {
    double at = x.at(x.ticks.values[i]);
    svg.line(at, top, at, bottom, "stroke=\"#e0e0e0\"");
    svg.line(at, bottom, at, bottom + 4, "stroke=\"black\"");
    svg.text(at, bottom + 17, x.ticks.labels[i], "text-anchor=\"middle\"");
  }
  svg.line(x.from, bottom, x.to, bottom, "stroke=\"black\"");
  svg.text((x.from + x.to) / 2, bottom + 36, label, "text-anchor=\"middle\"");
}

void draw_title(Svg& svg, double width, std::string_view title) {
  svg.text(width / 2, 22, title, "text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\"");
}

std::string format_value(double v, TickFormat format_kind) {
  return format_kind == TickFormat::kNanoseconds ? format_ns(v) : format("%.4g", v);
}

double text_width(std::string_view s) { return static_cast<double>(s.size()) * kCharWidth; }

// The marker of the i-th percentile of kCdfMarksPerMille centred on (cx, cy): a circle, a square, a diamond, hollow
// so the step line shows through.
constexpr double kMarkerHalf = 3.5;
void draw_marker(Svg& svg, size_t i, double cx, double cy, const std::string& colour) {
  const std::string paint = "fill=\"white\" stroke=\"" + colour + "\" stroke-width=\"1.5\"";
  const double h = kMarkerHalf;
  if (i == 0) {
    svg.raw("<circle cx=\"" + px(cx) + "\" cy=\"" + px(cy) + "\" r=\"" + px(h) + "\" " + paint + "/>");
  } else if (i == 1) {
    svg.rect(cx - h, cy - h, 2 * h, 2 * h, paint);
  } else {
    const double d = h + 1;  // a diamond of the square's area looks smaller: a little larger
    svg.raw("<polygon points=\"" + px(cx) + "," + px(cy - d) + " " + px(cx + d) + "," + px(cy) + " " + px(cx) + "," +
            px(cy + d) + " " + px(cx - d) + "," + px(cy) + "\" " + paint + "/>");
  }
}

std::string percentile_name(int per_mille) {
  return per_mille % 10 == 0 ? format("p%d", per_mille / 10) : format("p%.1f", per_mille / 10.0);
}

// Box plot geometry (pixels): each row's two lanes sit kLaneOffset above and below its centre.
constexpr double kLaneOffset = 7, kBoxHalf = 5, kMedianHalf = 7, kCapHalf = 4;

// A whisker from min to max with caps, the p25-p75 box, and the median bar, at height cy; a tooltip with the numbers.
void draw_box(Svg& svg, const Axis& x, const BoxStats& b, double cy, const std::string& colour, bool filled,
              const std::string& name, TickFormat f) {
  svg.raw("<g>");
  svg.raw("<title>" + xml_escape(name + ": median " + format_value(b.median, f) + ", p25 " + format_value(b.q25, f) +
                                 ", p75 " + format_value(b.q75, f) + ", min " + format_value(b.min, f) + ", max " +
                                 format_value(b.max, f) + ", " +
                                 std::to_string(b.count) + (b.count == 1 ? " sample" : " samples")) +
          "</title>");
  const std::string stroke = "stroke=\"" + colour + "\"";
  svg.line(x.at(b.min), cy, x.at(b.max), cy, stroke + " stroke-width=\"1.5\"");
  svg.line(x.at(b.min), cy - kCapHalf, x.at(b.min), cy + kCapHalf, stroke + " stroke-width=\"1.5\"");
  svg.line(x.at(b.max), cy - kCapHalf, x.at(b.max), cy + kCapHalf, stroke + " stroke-width=\"1.5\"");
  svg.rect(x.at(b.q25), cy - kBoxHalf, x.at(b.q75) - x.at(b.q25), 2 * kBoxHalf,
           (filled ? "fill=\"" + colour + "\" fill-opacity=\"0.35\" " : std::string("fill=\"white\" ")) + stroke +
               " stroke-width=\"1.5\"");
  svg.line(x.at(b.median), cy - kMedianHalf, x.at(b.median), cy + kMedianHalf, stroke + " stroke-width=\"3\"");
  svg.raw("</g>");
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n') out += "\xEF\xBF\xBD";
        else out += ch;
    }
  }
  return out;
}

std::string format_ns(double ns) {
  const double a = std::abs(ns);
  if (a < 1e3) return format("%.4g ns", ns);
  if (a < 1e6) return format("%.4g us", ns / 1e3);
  if (a < 1e9) return format("%.4g ms", ns / 1e6);
  return format("%.4g s", ns / 1e9);
}

Ticks linear_ticks(double lo, double hi, TickFormat format_kind, int max_ticks) {
  require_finite_range(lo, hi, "linear_ticks");
  if (max_ticks < 2)
    throw std::invalid_argument("linear_ticks: expected max_ticks >= 2, got " + std::to_string(max_ticks));
  if (lo == hi) lo -= 0.5, hi += 0.5;
  // The slack keeps a bound that is a multiple of the step (0.6 / 0.2 = 2.9999999999999996) from widening the range.
  constexpr double kSlack = 1e-9;
  int e = static_cast<int>(std::floor(std::log10((hi - lo) / max_ticks))) - 1;
  for (;; e++) {
    for (int m : {1, 2, 5}) {
      const double step = scaled(m, e);
      const double k_lo = std::floor(lo / step + kSlack), k_hi = std::ceil(hi / step - kSlack);
      if (k_hi - k_lo + 1 > max_ticks) continue;
      Ticks t;
      for (double k = k_lo; k <= k_hi; k++) {
        double v = scaled(k * m, e);
        if (v == 0) v = 0;  // no -0
        t.values.push_back(v);
        t.labels.push_back(tick_label(v, -e, format_kind));
      }
      t.lo = t.values.front();
      t.hi = t.values.back();
      return t;
    }
  }
}

Ticks log_ticks(double lo, double hi, TickFormat format_kind) {
  require_finite_range(lo, hi, "log_ticks");
  if (lo <= 0) throw std::invalid_argument("log_ticks: expected lo > 0, got " + format("%g", lo));
  constexpr double kSlack = 1e-9;
  int d_lo = static_cast<int>(std::floor(std::log10(lo) + kSlack));
  int d_hi = static_cast<int>(std::ceil(std::log10(hi) - kSlack));
  if (d_hi == d_lo) d_hi++;
  Ticks t;
  const bool minor = d_hi - d_lo < 2;
  for (int d = d_lo; d <= d_hi; d++) {
    for (int m : {1, 2, 5}) {
      if (m != 1 && (!minor || d == d_hi)) continue;
      double v = scaled(m, d);
      t.values.push_back(v);
      t.labels.push_back(format_kind == TickFormat::kNanoseconds ? format_ns(v) : format("%.6g", v));
    }
  }
  t.lo = t.values.front();
  t.hi = t.values.back();
  return t;
}

std::vector<CdfPoint> empirical_cdf(std::vector<double> samples, size_t max_points) {
  std::erase_if(samples, [](double v) { return std::isnan(v); });
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  std::vector<CdfPoint> points;
  if (n == 0 || max_points == 0) return points;
  size_t distinct = 1;
  for (size_t i = 1; i < n; i++) distinct += samples[i] != samples[i - 1];
  if (distinct <= max_points) {
    for (size_t i = 0; i < n; i++)
      if (i + 1 == n || samples[i + 1] != samples[i])
        points.push_back({samples[i], static_cast<double>(i + 1) / static_cast<double>(n)});
    return points;
  }
  for (size_t j = 1; j <= max_points; j++) {
    // The smallest index i with (i + 1) / n >= j / max_points, in integers: i = ceil(j * n / max_points) - 1.
    size_t i = (j * n + max_points - 1) / max_points - 1;
    points.push_back({samples[i], static_cast<double>(j) / static_cast<double>(max_points)});
  }
  return points;
}

bool log_axis(AxisScale scale, double lo, double hi) {
  if (scale != AxisScale::kAuto) return scale == AxisScale::kLog;
  return lo > 0 && hi > 10 * lo;
}

double nearest_rank(std::vector<double> samples, int per_mille) {
  if (per_mille < 1 || per_mille > 1000)
    throw std::invalid_argument("nearest_rank: expected a per mille in 1..1000, got " + std::to_string(per_mille));
  std::erase_if(samples, [](double v) { return std::isnan(v); });
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  // The rank ceil(per_mille * n / 1000), 1-based, in integers.
  const size_t n = samples.size(), rank = (static_cast<size_t>(per_mille) * n + 999) / 1000;
  return samples[rank - 1];
}

BoxStats box_stats(std::vector<double> samples) {
  std::erase_if(samples, [](double v) { return std::isnan(v); });
  BoxStats b;
  if (samples.empty()) return b;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  // Position (n - 1) * quarter / 4 in quarters, in integers: quartiles at whole ranks or between two.
  auto quartile = [&](size_t quarter) {
    const size_t q = (n - 1) * quarter, i = q / 4, r = q % 4;
    return r == 0 ? samples[i] : samples[i] + (samples[i + 1] - samples[i]) * static_cast<double>(r) / 4;
  };
  b.min = samples.front(), b.q25 = quartile(1), b.median = quartile(2), b.q75 = quartile(3), b.max = samples.back();
  b.count = n;
  return b;
}

std::string cdf_svg(const CdfPlot& plot) {
  const std::string what = "cdf_svg '" + plot.title + "'";
  std::vector<std::vector<CdfPoint>> curves;
  double lo = INFINITY, hi = -INFINITY;
  for (const CdfSeries& s : plot.series) {
    curves.push_back(empirical_cdf(s.samples));
    if (!curves.back().empty()) lo = std::min(lo, curves.back().front().x), hi = std::max(hi, curves.back().back().x);
  }
  if (!std::isfinite(lo)) throw std::invalid_argument(what + ": expected a series with samples, got none");
  for (const ReferenceLine& r : plot.references) lo = std::min(lo, r.x), hi = std::max(hi, r.x);

  const size_t legend_entries = plot.series.size() + plot.references.size() + 1;  // + the markers' key
  const double width = 860, left = 70, right = 25, top = 40, plot_height = 360;
  const double bottom = top + plot_height;
  const double height = bottom + 50 + kLegendRow * static_cast<double>(legend_entries) + 10;
  Axis x = make_axis(lo, hi, plot.x_scale, plot.x_format, what);
  x.from = left, x.to = width - right;
  Axis y{linear_ticks(0, 1), false, bottom, top};

  Svg svg(width, height);
  draw_title(svg, width, plot.title);
  for (size_t i = 0; i < y.ticks.values.size(); i++) {
    double at = y.at(y.ticks.values[i]);
    svg.line(left, at, x.to, at, "stroke=\"#e0e0e0\"");
    svg.line(left - 4, at, left, at, "stroke=\"black\"");
    svg.text(left - 7, at + 4, y.ticks.labels[i], "text-anchor=\"end\"");
  }
  svg.line(left, top, left, bottom, "stroke=\"black\"");
  svg.text(16, (top + bottom) / 2, "fraction of samples <= x",
           "text-anchor=\"middle\" transform=\"rotate(-90 16 " + px((top + bottom) / 2) + ")\"");
  draw_x_axis(svg, x, top, bottom, plot.x_label);

  double legend_y = bottom + 50;
  auto legend = [&](const std::string& stroke_attributes, const std::string& label) {
    svg.line(left, legend_y + 10, left + 30, legend_y + 10, stroke_attributes);
    svg.text(left + 38, legend_y + 14, label);
    legend_y += kLegendRow;
  };
  for (size_t i = 0; i < plot.references.size(); i++) {
    const ReferenceLine& r = plot.references[i];
    std::string stroke = std::string("stroke=\"#555555\" stroke-width=\"1.5\" stroke-dasharray=\"") +
                         kDashes[i % std::size(kDashes)] + "\"";
    svg.line(x.at(r.x), top, x.at(r.x), bottom, stroke);
    legend(stroke, r.label + " (" + format_value(r.x, plot.x_format) + ")");
  }
  for (size_t i = 0; i < plot.series.size(); i++) {
    const std::vector<CdfPoint>& c = curves[i];
    const std::string colour = kColours[i % std::size(kColours)];
    std::string stroke = "stroke=\"" + colour + "\" stroke-width=\"2\"";
    if (i >= std::size(kColours)) stroke += " stroke-dasharray=\"6 3\"";  // colours come round again: dashed
    std::string label = plot.series[i].label;
    if (!c.empty()) {
      // Steps: from (first x, 0), across at the previous fraction to each x, then up to its fraction.
      std::string d = "M" + px(x.at(c.front().x)) + " " + px(y.at(0));
      for (const CdfPoint& p : c) d += "H" + px(x.at(p.x)) + "V" + px(y.at(p.p));
      svg.raw("<path d=\"" + d + "\" fill=\"none\" " + stroke + "/>");
      // Each percentile at (its sample, p): the nearest-rank sample is where the curve first reaches p, so the
      // marker sits on that step's rise (or at its top, when p is exactly a sample's fraction).
      const size_t n = static_cast<size_t>(std::count_if(plot.series[i].samples.begin(), plot.series[i].samples.end(),
                                                         [](double v) { return !std::isnan(v); }));
      label += " (" + std::to_string(n) + (n == 1 ? " sample" : " samples");
      for (size_t m = 0; m < std::size(kCdfMarksPerMille); m++) {
        const double v = nearest_rank(plot.series[i].samples, kCdfMarksPerMille[m]);
        draw_marker(svg, m, x.at(v), y.at(kCdfMarksPerMille[m] / 1000.0), colour);
        label += (m == 0 ? "; " : ", ") + percentile_name(kCdfMarksPerMille[m]) + " " + format_value(v, plot.x_format);
      }
      label += ")";
    } else {
      label += " (no samples)";
    }
    legend(stroke, label);
  }
  // The markers' key, in grey: one marker and its percentile's name each.
  double kx = left + 15;
  for (size_t m = 0; m < std::size(kCdfMarksPerMille); m++) {
    draw_marker(svg, m, kx, legend_y + 10, "#555555");
    const std::string name = percentile_name(kCdfMarksPerMille[m]);
    svg.text(kx + 9, legend_y + 14, name);
    kx += 9 + text_width(name) + 16;
  }
  svg.text(kx, legend_y + 14, "marked on each curve (nearest rank)");
  return svg.document(plot.title);
}

std::string box_svg(const BoxPlot& plot) {
  const std::string what = "box_svg '" + plot.title + "'";
  if (plot.rows.empty()) throw std::invalid_argument(what + ": expected rows, got none");
  std::vector<BoxStats> values, floors;
  double lo = INFINITY, hi = -INFINITY;
  size_t longest = 0;
  for (const BoxRow& r : plot.rows) {
    values.push_back(box_stats(r.values));
    floors.push_back(box_stats(r.floor));
    if (values.back().count == 0) throw std::invalid_argument(what + ": row '" + r.label + "' has no values");
    for (const BoxStats* b : {&values.back(), &floors.back()})
      if (b->count > 0) lo = std::min(lo, b->min), hi = std::max(hi, b->max);
    longest = std::max(longest, r.label.size());
  }
  const double row_height = 34, top = 72, right = 80;
  const double left = 16 + static_cast<double>(longest) * kCharWidth;
  const double width = std::max(860.0, left + 500 + right);
  const double bottom = top + row_height * static_cast<double>(plot.rows.size());
  const double height = bottom + 50;
  Axis x = make_axis(lo, hi, plot.x_scale, plot.x_format, what);
  x.from = left, x.to = width - right;

  Svg svg(width, height);
  draw_title(svg, width, plot.title);
  // Legend under the title: the filled box, the hollow one, then what a box shows.
  const std::string value_colour = kColours[0], floor_colour = kColours[1];
  double lx = left;
  svg.rect(lx, 35, 16, 10, "fill=\"" + value_colour + "\" fill-opacity=\"0.35\" stroke=\"" + value_colour + "\"");
  svg.text(lx + 22, 44, plot.value_name);
  lx += 22 + text_width(plot.value_name) + 24;
  svg.rect(lx, 35, 16, 10, "fill=\"white\" stroke=\"" + floor_colour + "\" stroke-width=\"1.5\"");
  svg.text(lx + 22, 44, plot.floor_name);
  svg.text(left, 62, "box: p25 to p75, bar: median, whiskers: min to max");
  svg.text(width - 8, 62, plot.value_name + " / " + plot.floor_name, "text-anchor=\"end\"");

  draw_x_axis(svg, x, top, bottom, plot.x_label);
  for (size_t i = 0; i < plot.rows.size(); i++) {
    const BoxRow& r = plot.rows[i];
    const double cy = top + row_height * (static_cast<double>(i) + 0.5);
    const bool has_floor = floors[i].count > 0;
    svg.text(left - 8, cy + 4, r.label, "text-anchor=\"end\"");
    draw_box(svg, x, values[i], has_floor ? cy - kLaneOffset : cy, value_colour, true, plot.value_name,
             plot.x_format);
    if (has_floor) draw_box(svg, x, floors[i], cy + kLaneOffset, floor_colour, false, plot.floor_name, plot.x_format);
    std::string ratio = !has_floor                ? "no floor"
                        : floors[i].median > 0    ? format("%.1fx", values[i].median / floors[i].median)
                                                  : "floor 0";
    svg.text(width - 8, cy + 4, ratio, "text-anchor=\"end\"");
  }
  return svg.document(plot.title);
}

}  // namespace doorbell::plot
