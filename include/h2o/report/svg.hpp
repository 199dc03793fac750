// svg.hpp: the pictures the programs write, as plain SVG text that any web browser shows.
//
// Every picture the project makes comes from here, so every one has the same parts: a title, a
// subtitle saying what was measured, labelled axes with units, a legend, and the exact command
// that made it (in the SVG's <desc>, announced by a comment at the top) so it can be made again.
// Output is deterministic: numbers are printed with fixed decimals, nothing depends on the clock,
// the locale or the machine.
//
// Three kinds of picture:
//   line_chart_svg     one line per series over a shared x axis (linear or log axes)
//   heatmap_svg        a matrix of values as coloured cells (e.g. attention: query step x key)
//   occupancy_svg      panels of which positions a cache holds after each step (compare_policies)
//
// Dimension legend: R = rows of a heatmap, K = columns; S = steps, P = positions.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "h2o/base/tensor.hpp"

namespace h2o {

// Parts every picture has.
struct PictureText {
  std::string title;                  // one line, bold, at the top
  std::vector<std::string> subtitle;  // lines under the title: what, on which data
  std::string command;                // the command that made the picture (for <desc>)
};

// ---------------------------------------------------------------------------- line charts
struct Series {
  std::string name;       // legend entry
  std::vector<double> x;  // (n,)
  std::vector<double> y;  // (n,) non-finite values break the line there
  bool dashed = false;
  bool markers = true;  // a dot on every point
};

struct LineChart {
  PictureText text;
  std::string x_label, y_label;  // with units, e.g. "budget (% of the text's tokens)"
  bool log_x = false, log_y = false;
  std::vector<Series> series;
  double width = 720, height = 440;
};

std::string line_chart_svg(const LineChart& chart);

// ------------------------------------------------------------------------------- heatmaps
struct Heatmap {
  PictureText text;
  std::string x_label, y_label;  // columns and rows
  std::string value_label;       // the colour scale's meaning, e.g. "attention weight"
  Matrix values;                 // (R, K) row r drawn from the top; NaN = no value (white)
  double max_value = 0;          // colour scale top; 0 = the largest value
  double width = 720, height = 620;
};

std::string heatmap_svg(const Heatmap& map);

// -------------------------------------------------------------------------- occupancy grids
// One unbroken stay of a position in the cache: held after steps first_step .. end_step - 1.
// A panel stores these instead of every step's list of kept positions: a position enters the cache
// once and, once evicted, never returns, so there are at most S spans (memory grows with the text,
// not with its square).
struct KeptSpan {
  Position position = 0;
  std::size_t first_step = 0, end_step = 0;
};

// Turns the positions a cache holds after each step into spans, one step at a time.
class KeptSpanRecorder {
 public:
  void after_step(const std::vector<Position>& kept_sorted);  // (kept,) ascending
  std::vector<KeptSpan> finish();  // closes the spans still open after the last step
 private:
  std::size_t step_ = 0;
  std::vector<Position> open_;           // (kept,) ascending: held after the last step
  std::vector<std::size_t> open_since_;  // (kept,) the step each of them entered
  std::vector<KeptSpan> spans_;          // closed so far, in the order they closed
};

struct OccupancyPanel {
  std::string title, subtitle;
  std::vector<KeptSpan> spans;  // in drawing order (KeptSpanRecorder's: by closing step, then
                                // position)
};

struct OccupancyGrid {
  PictureText text;
  std::size_t steps = 0;  // S: step t reads position t, so positions run 0 .. S-1
  std::vector<OccupancyPanel> panels;
};

std::string occupancy_svg(const OccupancyGrid& grid);

// Writes `svg` to `path` as an OutputFile (base/output_file.hpp): complete or not at all; throws
// a one-line std::runtime_error naming the path when it cannot.
void save_svg(const std::string& path, const std::string& svg);

// Text safe inside SVG/XML: control characters and invalid UTF-8 shown as printable() shows
// them (base/format.hpp), then & < > " escaped. Every string a picture shows passes through it.
std::string xml_escape(const std::string& text);

}  // namespace h2o
