// step_view.hpp: the lessons' terminal step mode (--step): after each token the lesson draws its
// cache and waits for Enter, so a class can watch H2O decide, one token at a time.
//
// A frame names every cached token by its role, in words AND (on a terminal) in colour, so a
// colour-blind reader or a black-and-white projector loses nothing:
//   heavy    kept for its accumulated score (a heavy hitter)       bold, black on yellow
//   recent   kept because it is among the newest `recent` tokens    black on cyan
//   evicted  left the cache at this token                           red, struck out
// Roles come from the selection rule itself (cache/selection.hpp's plan_keep); the evicted tokens
// from what the previous frame of the same row held (or, for a row handed over before its
// eviction, from the rule: what it would evict). So a lesson only hands over its caches as they
// stand when it prints a token's line (CacheRow copies, built from the cache itself: a frame holds
// nothing the lesson does not have); a view that is off ignores them. Each token shows as
// word@position (or #position, when it has no word) and its score; one gone since the last frame
// by its name alone.
//
// Colour only when the output is a terminal and NO_COLOR is not set (https://no-color.org: set to
// anything but the empty string turns colour off). On a terminal the screen is also cleared after
// each Enter, so the next frame is drawn in place. A view that is off does nothing at all: without
// --step a lesson's output is byte for byte what it was. Enter goes on; "q" then Enter, or the end
// of the input, stops stepping (the lesson then runs to its end without waiting or drawing).
//
// Frames fit the terminal: lines break between tokens (never inside one) at its width, measured
// before every frame (a window may be resized), and at least 80 columns. On a terminal the
// lesson's own lines, 100 columns wide, break between words too (report/line_wrap.hpp), for as
// long as the view lives. Into a pipe or a file nothing is measured or wrapped: the frames are
// laid out for 100 columns and the output is what it always was.
//
// Dimension legend: T = tokens in a cache, G = heads of a layer cache.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "h2o/base/tensor.hpp"
#include "h2o/cache/budget.hpp"
#include "h2o/cache/kv_cache.hpp"

namespace h2o {

// True when colour may be used on standard output: it is a terminal and NO_COLOR is unset or empty.
bool stdout_wants_color();

// The columns a frame may fill on standard output: a terminal's width (its window size, else
// $COLUMNS), at least 80; the lessons' 100 when standard output is not a terminal.
std::size_t stdout_columns();

// One cache as a frame draws it: a copy, so that a lesson's loop can record it at every token and
// the lesson can show the recorded steps afterwards, without the loop knowing about a viewer.
// `label` names the row ("cache", "per-head 0") and identifies it from frame to frame, to find
// what it evicted. The tokens may come in any order (they are shown in position order).
struct CacheRow {
  std::string label;
  std::vector<std::string> words;   // (T,), or none: tokens known by position only (#position)
  std::vector<Position> positions;  // (T,)
  std::vector<float> scores;        // (T,)
};

// A row of tokens known by position only, with their scores in a tensor (T,).
CacheRow cache_row(const std::string& label, const std::vector<Position>& positions,
                   const Vector& scores);
// One row per KV head of a layer cache: "`label` head g" (G rows, tokens shown by position).
std::vector<CacheRow> cache_rows(const std::string& label, const LayerKVCache& cache);

class StepView {
 public:
  // On standard input and output, colour, screen clearing and width as the terminal allows.
  explicit StepView(bool on);
  // For tests: any streams, colour, screen clearing and width (at least 50 columns) as given.
  StepView(bool on, std::istream& in, std::ostream& out, bool color, bool clear_screen,
           std::size_t width = 100);

  bool on() const { return on_; }

  // Draws one frame - `heading`, the legend, then every row of `frame` - and waits for Enter.
  void show(const std::string& heading, const std::vector<CacheRow>& frame,
            const CacheBudget& budget);

 private:
  struct Shown {
    std::string word;
    Position position;
  };
  // The row's lines of the frame (and what it holds now, remembered for its next frame).
  std::vector<std::string> row_lines(const CacheRow& row, const CacheBudget& budget);
  void wait_for_enter();

  // Standard output wrapped to the terminal while a view on it lives (shared by its copies).
  struct Terminal;

  bool on_;
  std::istream& in_;
  std::ostream& out_;
  bool color_, clear_screen_;
  std::size_t width_;
  std::shared_ptr<Terminal> terminal_;                // none unless on, on a terminal
  std::map<std::string, std::vector<Shown>> before_;  // label -> tokens of its last frame
};

}  // namespace h2o
