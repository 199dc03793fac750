// Lesson 01: choose the heavy hitters and the recent tokens.
// Mirrors the blog's learn_01_h2o.py ("Choose heavy and recent tokens").
//
// H2O keeps a KV cache small by keeping two kinds of tokens:
//   recent tokens - the newest recent_size tokens, kept whatever their score;
//   heavy hitters - among the older tokens, the heavy_size with the largest importance scores.
// Every other token is evicted. Steps 1-4 write that choice out on the blog's sentence. Step 5
// runs the same rule from the library (h2o::plan_keep, which the later lessons call) on a worked
// example, on a tie, and on the two special budgets.
//
// Scores are given here; lesson 02 shows where they come from. Like the blog's first lessons,
// which are plain Python, this one uses plain lists (std::vector) and no tensors.
#include <cstddef>
#include <iostream>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/program.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/rows.hpp"
#include "h2o/cache/selection.hpp"

using h2o::format_list;
using h2o::take;

int run_lesson(int argc, char** argv) {
  h2o::start_lesson(argc, argv,
                    "Lesson 01: choose heavy and recent tokens (blog learn_01_h2o.py).");
  std::cout << "Lesson 01: choose heavy and recent tokens (blog: learn_01_h2o.py)\n\n";

  // Step 1: the blog's cache: five tokens, each with an importance score, and its budget.
  const std::vector<std::string> tokens = {"The", "cat", "sat", "because", "it"};
  const std::vector<float> h2o_scores = {1.78f, 1.58f, 0.91f, 0.51f, 0.22f};
  const std::size_t heavy_size = 2;
  const std::size_t recent_size = 2;
  std::cout << "Step 1: the cache holds " << tokens.size() << " tokens " << format_list(tokens)
            << "\n        with scores " << format_list(h2o_scores)
            << "; heavy_size = " << heavy_size << ", recent_size = " << recent_size << "\n";

  // Step 2: the newest recent_size tokens are always kept: they have not yet had a chance to
  // collect attention. Slot i holds the token at position i, so "newest" = largest index.
  const std::size_t first_recent = tokens.size() - recent_size;
  std::vector<std::size_t> recent_indices;
  for (std::size_t i = first_recent; i < tokens.size(); ++i) recent_indices.push_back(i);
  std::cout << "Step 2: the last " << recent_size << " tokens are always kept: recent "
            << format_list(take(tokens, recent_indices)) << "\n";

  // Step 3: among the older tokens, keep the heavy_size largest scores. An older token is a heavy
  // hitter when fewer than heavy_size older tokens beat it. On a tie the OLDER token wins, so
  // two runs always agree (the tie-break).
  std::vector<std::size_t> heavy_indices, evicted_indices;
  for (std::size_t i = 0; i < first_recent; ++i) {
    std::size_t beaten_by = 0;
    for (std::size_t j = 0; j < first_recent; ++j) {
      const bool j_wins =
          h2o_scores[j] > h2o_scores[i] || (h2o_scores[j] == h2o_scores[i] && j < i);
      beaten_by += j_wins ? 1 : 0;
    }
    (beaten_by < heavy_size ? heavy_indices : evicted_indices).push_back(i);
  }
  std::cout << "Step 3: of the older tokens, the " << heavy_size << " largest scores stay: heavy "
            << format_list(take(tokens, heavy_indices)) << "\n";

  // Step 4: keep_indices = heavy + recent, in sentence order. Every other token is evicted.
  std::vector<std::size_t> keep_indices = heavy_indices;
  keep_indices.insert(keep_indices.end(), recent_indices.begin(), recent_indices.end());
  const h2o::KeepPlan plan =
      h2o::plan_keep({0, 1, 2, 3, 4}, h2o_scores, h2o::CacheBudget(heavy_size, recent_size));
  const bool agrees = plan.kept == keep_indices && plan.evicted == evicted_indices;
  std::cout << "Step 4: kept cache " << format_list(take(tokens, keep_indices)) << ", evicted "
            << format_list(take(tokens, evicted_indices)) << "\n        library h2o::plan_keep "
            << "(used from now on) agrees: " << (agrees ? "yes" : "no") << "\n";

  // Step 5: the same rule, from the library, on other caches (slot i = position i):
  //   a worked example: an old low score goes, the newest low scores stay;
  //   a tie: three older tokens share one score but there are only two heavy slots;
  //   the special budgets: heavy 0 keeps only the newest tokens, a sliding window; recent 0
  //     keeps only high scores, so the newest token, with no score yet, is evicted at once: it
  //     never gets the chance to become important. That is why the recent window exists.
  struct Example {
    std::string title;
    std::vector<float> scores;
    h2o::CacheBudget budget;
  };
  const std::vector<Example> examples = {
      {"a worked example - an old low score goes, new ones stay",
       {3.8f, 0.4f, 2.1f, 0.3f, 0.0f},
       {2, 2}},
      {"a tie - on equal scores the older token stays", {0.9f, 0.9f, 0.9f, 0.3f, 0.1f}, {2, 2}},
      {"heavy 0 is a sliding window (the blog's scores)", h2o_scores, {0, 3}},
      {"recent 0 keeps top scores only (the blog's scores)", h2o_scores, {3, 0}}};
  std::cout << "\nStep 5: the library's h2o::plan_keep on other caches (slot i = position i)\n";
  for (const Example& e : examples) {
    const h2o::KeepPlan p = h2o::plan_keep({0, 1, 2, 3, 4}, e.scores, e.budget);
    std::cout << "\n  " << e.title << ", " << e.budget.describe() << "\n    scores "
              << format_list(e.scores) << " -> recent positions " << format_list(p.recent)
              << ", heavy positions " << format_list(p.heavy) << "\n    kept positions "
              << format_list(p.kept) << ", evicted positions " << format_list(p.evicted) << "\n";
  }
  return 0;
}

int main(int argc, char** argv) { return h2o::run_program(argc, argv, run_lesson); }
