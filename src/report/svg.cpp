#include "h2o/report/svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "h2o/base/format.hpp"
#include "h2o/base/output_file.hpp"

namespace h2o {

namespace {

// Distinguishable line colours, in legend order (a series past the last reuses them).
// Twelve: lesson 11 draws every evicting policy of the factory and the score variants.
const char* const kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
                                "#e377c2", "#7f7f7f", "#17becf", "#bcbd22", "#393b79", "#000000"};
constexpr std::size_t kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);

// Coordinates with one decimal: enough for a screen, identical on every run.
std::string num(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.1f", value);
  std::string text = buffer;
  if (text == "-0.0") text = "0.0";
  return text;
}

// A tick label: at most 4 significant digits, no trailing zeros ("0.05", "20", "1e+03").
std::string tick_text(double value) {
  if (std::fabs(value) < 1e-12) return "0";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.4g", value);
  return buffer;
}

// The opening of every picture: <svg>, the provenance comment and <desc>, background, title and
// subtitle lines. Returns the y coordinate below them.
double begin_picture(std::ostringstream& svg, double width, double height,
                     const PictureText& text) {
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\""
      << num(height) << "\" viewBox=\"0 0 " << num(width) << " " << num(height)
      << "\" font-family=\"sans-serif\">\n"
      << "<!-- Made by the command in <desc>; run it again to draw this picture afresh. -->\n"
      << "<title>" << xml_escape(text.title) << "</title>\n"
      << "<desc>Made by: " << xml_escape(text.command) << "</desc>\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
      << "<text x=\"20\" y=\"28\" font-size=\"18\" font-weight=\"bold\">" << xml_escape(text.title)
      << "</text>\n";
  double y = 28;
  for (const std::string& line : text.subtitle) {
    y += 17;
    svg << "<text x=\"20\" y=\"" << num(y) << "\" font-size=\"12\" fill=\"#333\">"
        << xml_escape(line) << "</text>\n";
  }
  return y + 12;
}

// Round tick positions over [lo, hi]: about `target` of them, at 1, 2 or 5 times a power of ten.
std::vector<double> linear_ticks(double lo, double hi, int target) {
  const double span = hi - lo;
  if (!(span > 0)) return {lo};
  const double raw = span / target;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power;
  for (double factor : {1.0, 2.0, 5.0, 10.0}) {
    step = factor * power;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) {
    ticks.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  }
  return ticks;
}

// Log-axis ticks over [lo, hi] (both > 0): powers of ten, plus 2 and 5 times them when the range
// spans two decades or less.
std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> ticks;
  const bool fine = std::log10(hi / lo) <= 2.0;
  for (int e = static_cast<int>(std::floor(std::log10(lo))); e <= std::ceil(std::log10(hi)); ++e) {
    for (double factor : {1.0, 2.0, 5.0}) {
      if (factor != 1.0 && !fine) continue;
      const double v = factor * std::pow(10.0, e);
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) ticks.push_back(v);
    }
  }
  if (ticks.empty()) ticks = {lo, hi};
  return ticks;
}

// Maps data values to pixels along one axis (linear or log).
struct Axis {
  double lo = 0, hi = 1;    // data range
  double from = 0, to = 1;  // pixel range
  bool log = false;
  double operator()(double v) const {
    const double a = log ? std::log10(lo) : lo, b = log ? std::log10(hi) : hi;
    const double x = log ? std::log10(v) : v;
    return b == a ? (from + to) / 2 : from + (x - a) / (b - a) * (to - from);
  }
};

// The range of finite (and, on a log axis, positive) values, padded a little on a linear axis.
Axis axis_for(const std::vector<double>& values, bool log, double from, double to) {
  double lo = INFINITY, hi = -INFINITY;
  for (double v : values) {
    if (!std::isfinite(v) || (log && v <= 0)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (!std::isfinite(lo)) lo = log ? 1 : 0, hi = log ? 10 : 1;
  if (log) {
    if (hi <= lo) hi = lo * 10;
    return Axis{lo, hi, from, to, true};
  }
  if (hi <= lo) {
    lo -= 0.5;
    hi += 0.5;
  }
  const double pad = 0.05 * (hi - lo);
  return Axis{lo - pad, hi + pad, from, to, false};
}

// White (0) to dark blue (1).
std::string blue_scale(double t) {
  t = std::clamp(t, 0.0, 1.0);
  const int r = static_cast<int>(std::lround(255 - t * (255 - 16)));
  const int g = static_cast<int>(std::lround(255 - t * (255 - 62)));
  const int b = static_cast<int>(std::lround(255 - t * (255 - 140)));
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "#%02x%02x%02x", r, g, b);
  return buffer;
}

}  // namespace

std::string xml_escape(const std::string& text) {
  // printable() first: XML 1.0 allows no control character (not even as &#1;) and no invalid
  // UTF-8, so a file name or story holding one would make the whole picture unreadable.
  return escape_markup(printable(text));
}

void save_svg(const std::string& path, const std::string& svg) {
  write_output_file(path, "the picture", svg);
}

// ------------------------------------------------------------------------------- line charts

std::string line_chart_svg(const LineChart& chart) {
  std::ostringstream svg;
  const double top = begin_picture(svg, chart.width, chart.height, chart.text) + 10;
  const double left = 80, right = chart.width - 190, bottom = chart.height - 55;

  std::vector<double> xs, ys;
  for (const Series& s : chart.series) {
    if (s.x.size() != s.y.size()) {
      throw std::invalid_argument("line chart series '" + s.name + "' has " +
                                  std::to_string(s.x.size()) + " x values but " +
                                  std::to_string(s.y.size()) + " y values");
    }
    xs.insert(xs.end(), s.x.begin(), s.x.end());
    ys.insert(ys.end(), s.y.begin(), s.y.end());
  }
  const Axis ax = axis_for(xs, chart.log_x, left, right);
  const Axis ay = axis_for(ys, chart.log_y, bottom, top);

  // Grid lines and tick labels.
  svg << "<g font-size=\"11\" fill=\"#333\">\n";
  const std::vector<double> x_ticks =
      chart.log_x ? log_ticks(ax.lo, ax.hi) : linear_ticks(ax.lo, ax.hi, 6);
  for (double v : x_ticks) {
    const double x = ax(v);
    svg << "<line x1=\"" << num(x) << "\" y1=\"" << num(top) << "\" x2=\"" << num(x) << "\" y2=\""
        << num(bottom) << "\" stroke=\"#e4e4e4\"/>\n"
        << "<text x=\"" << num(x) << "\" y=\"" << num(bottom + 16) << "\" text-anchor=\"middle\">"
        << tick_text(v) << "</text>\n";
  }
  const std::vector<double> y_ticks =
      chart.log_y ? log_ticks(ay.lo, ay.hi) : linear_ticks(ay.lo, ay.hi, 6);
  for (double v : y_ticks) {
    const double y = ay(v);
    svg << "<line x1=\"" << num(left) << "\" y1=\"" << num(y) << "\" x2=\"" << num(right)
        << "\" y2=\"" << num(y) << "\" stroke=\"#e4e4e4\"/>\n"
        << "<text x=\"" << num(left - 6) << "\" y=\"" << num(y + 4) << "\" text-anchor=\"end\">"
        << tick_text(v) << "</text>\n";
  }
  svg << "</g>\n";
  svg << "<rect x=\"" << num(left) << "\" y=\"" << num(top) << "\" width=\"" << num(right - left)
      << "\" height=\"" << num(bottom - top) << "\" fill=\"none\" stroke=\"#444\"/>\n";
  svg << "<text x=\"" << num((left + right) / 2) << "\" y=\"" << num(bottom + 38)
      << "\" font-size=\"12\" text-anchor=\"middle\">" << xml_escape(chart.x_label)
      << (chart.log_x ? " (log scale)" : "") << "</text>\n";
  svg << "<text font-size=\"12\" text-anchor=\"middle\" transform=\"translate(" << num(22) << " "
      << num((top + bottom) / 2) << ") rotate(-90)\">" << xml_escape(chart.y_label)
      << (chart.log_y ? " (log scale)" : "") << "</text>\n";

  // The lines, then the legend on the right.
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    const Series& s = chart.series[i];
    const char* colour = kPalette[i % kPaletteSize];
    std::string points;
    auto flush = [&] {
      if (points.empty()) return;
      svg << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"2\""
          << (s.dashed ? " stroke-dasharray=\"6 4\"" : "") << " points=\"" << points << "\"/>\n";
      points.clear();
    };
    for (std::size_t k = 0; k < s.x.size(); ++k) {
      const bool usable = std::isfinite(s.x[k]) && std::isfinite(s.y[k]) &&
                          (!chart.log_x || s.x[k] > 0) && (!chart.log_y || s.y[k] > 0);
      if (!usable) {
        flush();
        continue;
      }
      points += (points.empty() ? "" : " ") + num(ax(s.x[k])) + "," + num(ay(s.y[k]));
      if (s.markers) {
        svg << "<circle cx=\"" << num(ax(s.x[k])) << "\" cy=\"" << num(ay(s.y[k]))
            << "\" r=\"3\" fill=\"" << colour << "\"/>\n";
      }
    }
    flush();
    const double ly = top + 8 + 20.0 * static_cast<double>(i);
    svg << "<line x1=\"" << num(right + 16) << "\" y1=\"" << num(ly) << "\" x2=\""
        << num(right + 44) << "\" y2=\"" << num(ly) << "\" stroke=\"" << colour
        << "\" stroke-width=\"2\"" << (s.dashed ? " stroke-dasharray=\"6 4\"" : "") << "/>\n"
        << "<text x=\"" << num(right + 50) << "\" y=\"" << num(ly + 4) << "\" font-size=\"12\">"
        << xml_escape(s.name) << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

// ---------------------------------------------------------------------------------- heatmaps

std::string heatmap_svg(const Heatmap& map) {
  const std::size_t R = map.values.shape()[0], K = map.values.shape()[1];
  if (R == 0 || K == 0) throw std::invalid_argument("heatmap: no values to draw");
  std::ostringstream svg;
  const double top = begin_picture(svg, map.width, map.height, map.text) + 10;
  const double left = 80, right = map.width - 110, bottom = map.height - 55;
  const double cell_w = (right - left) / static_cast<double>(K);
  const double cell_h = (bottom - top) / static_cast<double>(R);

  double max_value = map.max_value;
  if (max_value <= 0) {
    for (float v : map.values) {
      if (std::isfinite(v)) max_value = std::max(max_value, static_cast<double>(v));
    }
  }
  if (max_value <= 0) max_value = 1;
  // Colour ~ sqrt(value / max): small weights stay visible next to large ones. 32 levels, so that
  // neighbouring cells of one level merge into one rectangle and the file stays small. Values
  // below 1% of the maximum (the H2O paper's "tiny" threshold) are left white.
  constexpr int kLevels = 32;
  auto level_of = [&](float v) {
    if (!std::isfinite(v) || v < 0.01 * max_value) return 0;
    return static_cast<int>(std::lround(std::sqrt(std::min(1.0, v / max_value)) * kLevels));
  };

  svg << "<rect x=\"" << num(left) << "\" y=\"" << num(top) << "\" width=\"" << num(right - left)
      << "\" height=\"" << num(bottom - top) << "\" fill=\"#ffffff\"/>\n<g>\n";
  for (std::size_t r = 0; r < R; ++r) {
    std::size_t k = 0;
    while (k < K) {
      const int level = level_of(map.values(r, k));
      std::size_t end = k + 1;
      while (end < K && level_of(map.values(r, end)) == level) ++end;
      if (level > 0) {
        svg << "<rect x=\"" << num(left + static_cast<double>(k) * cell_w) << "\" y=\""
            << num(top + static_cast<double>(r) * cell_h) << "\" width=\""
            << num(static_cast<double>(end - k) * cell_w + 0.05) << "\" height=\""
            << num(cell_h + 0.05) << "\" fill=\""
            << blue_scale(static_cast<double>(level) / kLevels) << "\"/>\n";
      }
      k = end;
    }
  }
  svg << "</g>\n<rect x=\"" << num(left) << "\" y=\"" << num(top) << "\" width=\""
      << num(right - left) << "\" height=\"" << num(bottom - top)
      << "\" fill=\"none\" stroke=\"#444\"/>\n";

  // Ticks: column and row indices.
  svg << "<g font-size=\"11\" fill=\"#333\">\n";
  for (double v : linear_ticks(0, static_cast<double>(K - 1), 6)) {
    const double x = left + (v + 0.5) * cell_w;
    svg << "<text x=\"" << num(x) << "\" y=\"" << num(bottom + 16) << "\" text-anchor=\"middle\">"
        << tick_text(v) << "</text>\n";
  }
  for (double v : linear_ticks(0, static_cast<double>(R - 1), 6)) {
    const double y = top + (v + 0.5) * cell_h;
    svg << "<text x=\"" << num(left - 6) << "\" y=\"" << num(y + 4) << "\" text-anchor=\"end\">"
        << tick_text(v) << "</text>\n";
  }
  svg << "</g>\n";
  svg << "<text x=\"" << num((left + right) / 2) << "\" y=\"" << num(bottom + 38)
      << "\" font-size=\"12\" text-anchor=\"middle\">" << xml_escape(map.x_label) << "</text>\n";
  svg << "<text font-size=\"12\" text-anchor=\"middle\" transform=\"translate(" << num(22) << " "
      << num((top + bottom) / 2) << ") rotate(-90)\">" << xml_escape(map.y_label) << "</text>\n";

  // The legend: a colour bar from 0 to the top of the scale.
  const double bar_x = right + 30, bar_w = 18, bar_top = top, bar_bottom = top + 220;
  for (int level = kLevels; level >= 1; --level) {
    const double y0 = bar_top + (bar_bottom - bar_top) * (kLevels - level) / kLevels;
    svg << "<rect x=\"" << num(bar_x) << "\" y=\"" << num(y0) << "\" width=\"" << num(bar_w)
        << "\" height=\"" << num((bar_bottom - bar_top) / kLevels + 0.05) << "\" fill=\""
        << blue_scale(static_cast<double>(level) / kLevels) << "\"/>\n";
  }
  svg << "<rect x=\"" << num(bar_x) << "\" y=\"" << num(bar_top) << "\" width=\"" << num(bar_w)
      << "\" height=\"" << num(bar_bottom - bar_top) << "\" fill=\"none\" stroke=\"#444\"/>\n";
  for (double fraction : {1.0, 0.25, 0.0}) {
    // sqrt scale: a quarter of the maximum sits half-way up the bar.
    const double y = bar_bottom - (bar_bottom - bar_top) * std::sqrt(fraction);
    svg << "<text x=\"" << num(bar_x + bar_w + 4) << "\" y=\"" << num(y + 4)
        << "\" font-size=\"11\">" << tick_text(fraction * max_value) << "</text>\n";
  }
  svg << "<text font-size=\"12\" text-anchor=\"middle\" transform=\"translate(" << num(bar_x - 8)
      << " " << num((bar_top + bar_bottom) / 2) << ") rotate(-90)\">" << xml_escape(map.value_label)
      << " (sqrt scale)</text>\n";
  svg << "</svg>\n";
  return svg.str();
}

// ------------------------------------------------------------------------- occupancy grids

namespace {
constexpr double kPlot = 260.0;  // side of one panel's plot, in pixels
constexpr double kPanelLeft = 58.0, kPanelRight = 18.0, kPanelTop = 52.0, kPanelBottom = 46.0;
constexpr double kPanelWidth = kPanelLeft + kPlot + kPanelRight;
constexpr double kPanelHeight = kPanelTop + kPlot + kPanelBottom;
const char* const kKeptColour = "#1f5fa8";
const char* const kEvictedColour = "#dedede";

// One panel. Inside the plot, coordinates are cells: step t covers x in [t, t + 1], position p
// covers y in [S - 1 - p, S - p] (position 0 at the bottom), then scaled to kPlot pixels.
void write_panel(std::ostream& svg, const OccupancyPanel& panel, std::size_t steps, double x0,
                 double y0) {
  const double px = x0 + kPanelLeft, py = y0 + kPanelTop;
  const double cell = kPlot / static_cast<double>(steps);
  const std::string S = std::to_string(steps);

  svg << "<text x=\"" << num(px) << "\" y=\"" << num(y0 + 20)
      << "\" font-size=\"15\" font-weight=\"bold\">" << xml_escape(panel.title) << "</text>\n"
      << "<text x=\"" << num(px) << "\" y=\"" << num(y0 + 38)
      << "\" font-size=\"11\" fill=\"#333\">" << xml_escape(panel.subtitle) << "</text>\n";
  svg << "<rect x=\"" << num(px) << "\" y=\"" << num(py) << "\" width=\"" << kPlot << "\" height=\""
      << kPlot << "\" fill=\"#fff\"/>\n";
  svg << "<g transform=\"translate(" << num(px) << " " << num(py) << ") scale("
      << std::to_string(cell) << ")\">\n";
  // Every position that has arrived (p <= t): a staircase under the diagonal, in grey.
  svg << "<path fill=\"" << kEvictedColour << "\" d=\"M0 " << S;
  for (std::size_t t = 0; t < steps; ++t) svg << "v-1h1";
  svg << "V" << S << "Z\"/>\n";
  // Still cached: one rectangle per unbroken run of steps a position spends in the cache. A thin
  // outline in the same colour hides the hairline seams anti-aliasing draws between neighbours.
  svg << "<g fill=\"" << kKeptColour << "\" stroke=\"" << kKeptColour
      << "\" stroke-width=\"0.2\">\n";
  for (const KeptSpan& span : panel.spans) {
    if (span.position < 0 || static_cast<std::size_t>(span.position) >= steps) continue;
    const std::size_t end = std::min(span.end_step, steps);
    if (span.first_step >= end) continue;
    svg << "<rect x=\"" << span.first_step << "\" y=\"" << steps - 1 - span.position
        << "\" width=\"" << end - span.first_step << "\" height=\"1\"/>\n";
  }
  svg << "</g>\n</g>\n";
  svg << "<rect x=\"" << num(px) << "\" y=\"" << num(py) << "\" width=\"" << kPlot << "\" height=\""
      << kPlot << "\" fill=\"none\" stroke=\"#444\"/>\n";

  // Ticks and axis labels, at cell centres.
  svg << "<g font-size=\"10\" fill=\"#333\" stroke=\"#444\">\n";
  for (double v : linear_ticks(0, static_cast<double>(steps - 1), 4)) {
    const double x = px + (v + 0.5) * cell;
    const double y = py + (static_cast<double>(steps - 1) - v + 0.5) * cell;
    svg << "<line x1=\"" << num(x) << "\" y1=\"" << num(py + kPlot) << "\" x2=\"" << num(x)
        << "\" y2=\"" << num(py + kPlot + 4) << "\"/>\n"
        << "<text stroke=\"none\" text-anchor=\"middle\" x=\"" << num(x) << "\" y=\""
        << num(py + kPlot + 15) << "\">" << tick_text(v) << "</text>\n"
        << "<line x1=\"" << num(px - 4) << "\" y1=\"" << num(y) << "\" x2=\"" << num(px)
        << "\" y2=\"" << num(y) << "\"/>\n"
        << "<text stroke=\"none\" text-anchor=\"end\" x=\"" << num(px - 6) << "\" y=\""
        << num(y + 3.5) << "\">" << tick_text(v) << "</text>\n";
  }
  svg << "</g>\n";
  svg << "<text font-size=\"11\" text-anchor=\"middle\" x=\"" << num(px + kPlot / 2) << "\" y=\""
      << num(py + kPlot + 32) << "\">decoding step (token index)</text>\n"
      << "<text font-size=\"11\" text-anchor=\"middle\" transform=\"translate(" << num(px - 40)
      << " " << num(py + kPlot / 2) << ") rotate(-90)\">original position (token index)</text>\n";
}
}  // namespace

void KeptSpanRecorder::after_step(const std::vector<Position>& kept_sorted) {
  // Merge the last step's list with this one: a position in the old list only has left (its span
  // closes now, in ascending order), one in the new list only has just arrived.
  std::vector<Position> open;
  std::vector<std::size_t> since;
  open.reserve(kept_sorted.size());
  since.reserve(kept_sorted.size());
  std::size_t i = 0;
  for (Position p : kept_sorted) {
    for (; i < open_.size() && open_[i] < p; ++i)
      spans_.push_back({open_[i], open_since_[i], step_});
    open.push_back(p);
    if (i < open_.size() && open_[i] == p) {
      since.push_back(open_since_[i++]);
    } else {
      since.push_back(step_);
    }
  }
  for (; i < open_.size(); ++i) spans_.push_back({open_[i], open_since_[i], step_});
  open_.swap(open);
  open_since_.swap(since);
  ++step_;
}

std::vector<KeptSpan> KeptSpanRecorder::finish() {
  for (std::size_t i = 0; i < open_.size(); ++i)
    spans_.push_back({open_[i], open_since_[i], step_});
  open_.clear();
  open_since_.clear();
  return std::move(spans_);
}

std::string occupancy_svg(const OccupancyGrid& grid) {
  if (grid.steps == 0) throw std::invalid_argument("occupancy picture: no steps to draw");
  const std::size_t columns = std::clamp<std::size_t>(grid.panels.size(), 1, 3);
  const std::size_t rows = (grid.panels.size() + columns - 1) / columns;
  const double width = std::max(640.0, 20.0 + static_cast<double>(columns) * kPanelWidth);
  // Title and subtitle lines (begin_picture), then a legend row, then the panels.
  const double header = 28.0 + 17.0 * static_cast<double>(grid.text.subtitle.size()) + 12.0 + 26.0;
  const double height = header + static_cast<double>(rows) * kPanelHeight + 10.0;

  std::ostringstream svg;
  const double ly = begin_picture(svg, width, height, grid.text);
  svg << "<rect x=\"20\" y=\"" << num(ly) << "\" width=\"14\" height=\"14\" fill=\"" << kKeptColour
      << "\"/>\n<text x=\"40\" y=\"" << num(ly + 12)
      << "\" font-size=\"12\">still in the cache after that step</text>\n"
      << "<rect x=\"250\" y=\"" << num(ly) << "\" width=\"14\" height=\"14\" fill=\""
      << kEvictedColour << "\"/>\n<text x=\"270\" y=\"" << num(ly + 12)
      << "\" font-size=\"12\">read, then evicted</text>\n"
      << "<rect x=\"400\" y=\"" << num(ly)
      << "\" width=\"14\" height=\"14\" fill=\"#fff\" stroke=\"#444\"/>\n<text x=\"420\" y=\""
      << num(ly + 12) << "\" font-size=\"12\">not read yet</text>\n";
  for (std::size_t i = 0; i < grid.panels.size(); ++i) {
    const double x0 = 10.0 + static_cast<double>(i % columns) * kPanelWidth;
    const double y0 = header + static_cast<double>(i / columns) * kPanelHeight;
    write_panel(svg, grid.panels[i], grid.steps, x0, y0);
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace h2o
