// course_answer.hpp: the course's answer in one paragraph (lesson 14 prints it first): on one
// model and one set of stories, where H2O wins against a sliding window of the same bytes, where
// it loses and why (each head's kind), and what rules per head change - each fact a number the
// caller measured, each comparison with measure/verdict.hpp's change and 95% interval, in
// verdict_text.hpp's words.
//
// Dimension legend: L = layers, G = KV heads of a layer, T = FastGen targets.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "h2o/measure/policy_sweep.hpp"
#include "h2o/policy/head_profile.hpp"
#include "h2o/report/attention_report.hpp"

namespace h2o {

// How H2O's heavy hitters are spread over a story's age: of the tokens it held outside its recent
// window at the end of a story, how many lie in the story's oldest tenth of positions (a tenth
// of them if age did not matter).
struct OldHeavyHitters {
  std::size_t held = 0;    // heavy hitters held, over the layers counted
  std::size_t oldest = 0;  // of them in positions 0 .. n/10 - 1
};
// Counted from `kept` (L,) x (kept,) positions of a story of n_tokens (SweepRun::kept_at_end),
// every position in the last `recent` being the window, not a heavy hitter.
OldHeavyHitters old_heavy_hitters(const std::vector<std::vector<Position>>& kept,
                                  std::size_t n_tokens, std::size_t recent);

// FastGen at one target, and the window given the bytes it held (read_at_equal_bytes).
struct RulesReading {
  double target = 0;
  const SweepRun* fastgen = nullptr;
  const SweepRun* window = nullptr;
};

// What the answer is made of; every run over the same stories at the same budget.
struct CourseAnswer {
  std::string stories;  // "12 stories"
  int percent = 0;      // the budget, percent of each story
  const SweepRun* full = nullptr;
  const SweepRun* h2o = nullptr;     // one budget for every layer and KV head
  const SweepRun* window = nullptr;  // the same bytes, the last tokens only
  std::vector<RulesReading> rules;   // (T,)
  // (L,) x (G,) the first story's heads at kKindSizes (head_profile.hpp's one definition of a
  // kind), as lesson 10 profiles them: which are local, what their window and heavy hitters hold.
  std::vector<std::vector<HeadProfile>> profiles;
  OldHeavyHitters old;
};

// The paragraph, verdict first, wrapped to `width` columns with `indent` before every line. Each
// conclusion only as far as the numbers carry it: H2O "wins" where its perplexity is lower than
// the window's beyond noise (measure/verdict.hpp) or where it predicts more long-gap names (said
// as names only, and as a disagreement when its perplexity is worse), "loses" where it is worse
// beyond noise or predicts fewer names, and neither otherwise; then, in one sentence, the targets
// at which FastGen is better, worse or no different than the window at its bytes (the numbers
// are the caller's table). Throws std::invalid_argument when a run is missing or a profile has
// no kind (not measured at kKindSizes).
std::string course_answer_text(const CourseAnswer& answer, std::size_t width,
                               const std::string& indent);

// Perplexity against KV bytes (both over the full cache's): FastGen at each target beside the
// window at the same bytes, and H2O and the window at the one budget; written to
// dir/rules_per_head.svg, `command` recorded in its <desc>.
void write_course_answer_picture(const std::string& dir, const CourseAnswer& answer,
                                 const std::string& command);

}  // namespace h2o
