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
// eviction, from the rule: what it would evict). So a lesson only hands over its cache as it
// stands. Each token shows as word@position (or #position, when it has no word) and its score.
//
// Colour only when the output is a terminal and NO_COLOR is not set (https://no-color.org: set to
// anything but the empty string turns colour off). On a terminal the screen is also cleared after
// each Enter, so the next frame is drawn in place. A view that is off does nothing at all: without
// --step a lesson's output is byte for byte what it was. Enter goes on; "q" then Enter, or the end
// of the input, stops stepping (the lesson then runs to its end without waiting or drawing).
//
// Dimension legend: T = tokens in a cache, G = heads of a layer cache.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "h2o/base/tensor.hpp"
#include "h2o/cache/budget.hpp"
#include "h2o/cache/kv_cache.hpp"

namespace h2o {

// True when colour may be used on standard output: it is a terminal and NO_COLOR is unset or empty.
bool stdout_wants_color();

class StepView {
 public:
  // On standard input and output, colour and screen clearing as the terminal allows.
  explicit StepView(bool on);
  // For tests: any streams, colour and screen clearing as given.
  StepView(bool on, std::istream& in, std::ostream& out, bool color, bool clear_screen);

  bool on() const { return on_; }

  // One cache row of the frame being drawn: tokens (T,) as words, positions and scores, in any
  // order (shown in position order). `label` names the row ("cache", "per-head, head 0") and
  // identifies it from frame to frame, to find what it evicted.
  void row(const std::string& label, const std::vector<std::string>& words,
           const std::vector<Position>& positions, const std::vector<float>& scores,
           const CacheBudget& budget);
  // The same for tokens known by position only, with their scores in a tensor (T,).
  void row(const std::string& label, const std::vector<Position>& positions, const Vector& scores,
           const CacheBudget& budget);
  // One row per head of a layer cache (labels "`label` head g"; tokens shown by position).
  void rows(const std::string& label, const LayerKVCache& cache, const CacheBudget& budget);

  // Draws the frame under `heading` with the rows given since the last pause, and waits for Enter.
  void pause(const std::string& heading);

  // A one-row frame and its pause, for lessons with one cache.
  void show(const std::string& heading, const std::vector<std::string>& words,
            const std::vector<Position>& positions, const std::vector<float>& scores,
            const CacheBudget& budget);
  void show(const std::string& heading, const std::vector<Position>& positions,
            const Vector& scores, const CacheBudget& budget);  // tokens shown by position

 private:
  struct Shown {
    std::string word;
    Position position;
  };
  bool on_;
  std::istream& in_;
  std::ostream& out_;
  bool color_, clear_screen_;
  std::vector<std::string> lines_;                    // the frame being built
  std::map<std::string, std::vector<Shown>> before_;  // label -> tokens of its last frame
};

}  // namespace h2o
