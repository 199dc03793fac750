// Lesson 01: choose the heavy hitters and the recent tokens.
// Mirrors the blog's learn_01_h2o.py ("Choose heavy and recent tokens").
//
// H2O keeps a KV cache small by keeping two kinds of tokens:
//   recent tokens - the newest recent_size tokens, kept whatever their score;
//   heavy hitters - among the older tokens, the heavy_size with the largest importance scores.
// Every other token is evicted. Steps 1-4 write that choice out on the blog's sentence. Steps 5-8
// run the same rule from the library (h2o::plan_keep, which the later lessons call) on the
// handbook's worked example, on a tie, and on the two special budgets.
//
// Scores are given here; lesson 02 shows where they come from. Like the blog's first lessons,
// which are plain Python, this one uses plain lists (std::vector) and no tensors.
#include <algorithm>
#include <cstddef>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/rows.hpp"
#include "h2o/cache/selection.hpp"

using h2o::format_list;
using h2o::take;

namespace {
std::vector<h2o::Position> positions_0_to(std::size_t n);  // small helpers, defined below main
const char* yes_no(bool yes);
}  // namespace

// main's body runs inside `try`: any error ends the lesson with a one-line message (app/cli.hpp).
int main(int argc, char** argv) try {
  h2o::ArgParser args("01_heavy_and_recent",
                      "Lesson 01: choose heavy and recent tokens (blog learn_01_h2o.py).\n"
                      "--heavy and --recent change the budget of the blog example (steps 1-4).");
  if (!h2o::add_budget_options(args, 2, 2, "slots for the blog example").parse(argc, argv))
    return 0;
  const h2o::CacheBudget budget = h2o::budget_from_options(args);
  std::cout << "Lesson 01: choose heavy and recent tokens (blog: learn_01_h2o.py)\n\n";

  // Step 1: the blog's cache: five tokens, each with an importance score.
  const std::vector<std::string> tokens = {"The", "cat", "sat", "because", "it"};
  const std::vector<float> h2o_scores = {1.78f, 1.58f, 0.91f, 0.51f, 0.22f};
  // heavy_size = 2
  // recent_size = 2
  const std::size_t heavy_size = budget.heavy, recent_size = budget.recent;
  const std::size_t n = tokens.size();
  std::cout << "Step 1: the cache holds " << n << " tokens " << format_list(tokens) << "\n"
            << "        with scores " << format_list(h2o_scores) << "; budget " << budget.describe()
            << "\n";

  // Step 2: the newest recent_size tokens are always kept: they have not yet had a chance to
  // collect attention. Slot i holds the token at position i, so "newest" = largest index.
  const std::size_t first_recent = n > recent_size ? n - recent_size : 0;
  std::vector<std::size_t> recent_indices;
  for (std::size_t i = first_recent; i < n; ++i) recent_indices.push_back(i);
  std::cout << "Step 2: the last " << recent_size << " tokens are always kept: recent "
            << format_list(take(tokens, recent_indices)) << "\n";

  // Step 3: among the older tokens, the heavy_size largest scores win. stable_sort keeps equal
  // scores in position order, so on a tie the OLDER token comes first and stays (the tie-break).
  std::vector<std::size_t> older_indices(first_recent);
  std::iota(older_indices.begin(), older_indices.end(), std::size_t{0});
  std::stable_sort(older_indices.begin(), older_indices.end(),
                   [&](std::size_t a, std::size_t b) { return h2o_scores[a] > h2o_scores[b]; });
  const auto n_heavy = static_cast<std::ptrdiff_t>(std::min(heavy_size, older_indices.size()));
  std::vector<std::size_t> heavy_indices(older_indices.begin(), older_indices.begin() + n_heavy);
  std::vector<std::size_t> evicted_indices(older_indices.begin() + n_heavy, older_indices.end());
  std::sort(heavy_indices.begin(), heavy_indices.end());  // back into sentence order
  std::sort(evicted_indices.begin(), evicted_indices.end());
  std::cout << "Step 3: older tokens by score " << format_list(take(tokens, older_indices))
            << "; keep the " << heavy_size << " largest: heavy "
            << format_list(take(tokens, heavy_indices)) << "\n";

  // Step 4: keep_indices = heavy + recent, in sentence order. Every other token is evicted.
  std::vector<std::size_t> keep_indices = heavy_indices;
  keep_indices.insert(keep_indices.end(), recent_indices.begin(), recent_indices.end());
  std::sort(keep_indices.begin(), keep_indices.end());
  const h2o::KeepPlan plan = h2o::plan_keep(positions_0_to(n), h2o_scores, budget);
  const bool agrees = plan.kept == keep_indices && plan.evicted == evicted_indices;
  std::cout << "Step 4: kept cache " << format_list(take(tokens, keep_indices)) << ", evicted "
            << format_list(take(tokens, evicted_indices)) << "\n        library h2o::plan_keep "
            << "(used from now on) agrees: " << yes_no(agrees) << "\n";

  // Steps 5-8: the same rule, now from the library, on other caches (slot i = position i):
  //   the handbook's worked example;
  //   a tie: three older tokens share one score but there are only two heavy slots, so the rule
  //     must say who stays, or two runs could differ. Ours: the OLDER token stays;
  //   the special budgets: heavy = 0 keeps only the newest tokens, a sliding window; recent = 0
  //     keeps only high scores, so the newest token, with no score yet, is evicted at once: it
  //     never gets the chance to become important. That is why the recent window exists.
  struct Example {
    std::string title;
    std::vector<float> scores;
    h2o::CacheBudget budget;
  };
  const std::vector<Example> examples = {
      {"Step 5: the handbook's worked example", {3.8f, 0.4f, 2.1f, 0.3f, 0.0f}, {2, 2}},
      {"Step 6: a tie - on equal scores the older token stays",
       {0.9f, 0.9f, 0.9f, 0.3f, 0.1f},
       {2, 2}},
      {"Step 7: heavy 0 is a sliding window (the blog's scores)", h2o_scores, {0, 3}},
      {"Step 8: recent 0 keeps top scores only (the blog's scores)", h2o_scores, {3, 0}}};
  for (const Example& e : examples) {
    const h2o::KeepPlan p = h2o::plan_keep(positions_0_to(e.scores.size()), e.scores, e.budget);
    std::cout << "\n"
              << e.title << ", " << e.budget.describe() << "\n  scores " << format_list(e.scores)
              << " -> recent positions " << format_list(p.recent) << ", heavy positions "
              << format_list(p.heavy) << "\n  kept positions " << format_list(p.kept)
              << ", evicted positions " << format_list(p.evicted) << "\n";
  }
  return 0;
} catch (...) {
  return h2o::exit_with_error(argv[0]);
}

namespace {
// Positions 0, 1, ..., n - 1: the lesson's caches hold their tokens in sentence order.
std::vector<h2o::Position> positions_0_to(std::size_t n) {
  std::vector<h2o::Position> positions(n);
  std::iota(positions.begin(), positions.end(), h2o::Position{0});
  return positions;
}

const char* yes_no(bool yes) { return yes ? "yes" : "no"; }
}  // namespace
