// Lesson 01: choose the heavy hitters and the recent tokens.
// Mirrors the blog's learn_01_h2o.py ("Choose heavy and recent tokens").
//
// H2O keeps a KV cache small by keeping only two kinds of tokens:
//   recent tokens - the newest `recent` tokens, kept whatever their score;
//   heavy hitters - among the older tokens, the `heavy` with the largest importance scores.
// Every other token is evicted. This lesson writes that choice out by hand on the blog's sentence,
// repeats it on the handbook's worked example, shows the tie-break rule and the two special budgets
// (heavy = 0 and recent = 0), and checks each answer against the library's h2o::plan_keep.
//
// Scores are given here; lesson 02 shows where they come from.
#include <algorithm>
#include <cstddef>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/base/format.hpp"
#include "h2o/cache/selection.hpp"

namespace {

// The choice, as slot indices. In this lesson slot i holds the token at position i, so "newest"
// simply means "largest index".
struct Choice {
  std::vector<std::size_t> recent, heavy, kept, evicted;
};

Choice choose_heavy_and_recent(const std::vector<float>& scores, std::size_t heavy,
                               std::size_t recent) {
  const std::size_t n = scores.size();
  Choice choice;

  // The recent window: the last `recent` tokens (or all of them, if the cache is shorter).
  const std::size_t first_recent = n > recent ? n - recent : 0;
  for (std::size_t i = first_recent; i < n; ++i) choice.recent.push_back(i);

  // The older tokens, best first. stable_sort keeps equal scores in position order, so on a tie
  // the OLDER token comes first and stays (the tie-break rule).
  std::vector<std::size_t> older(first_recent);
  std::iota(older.begin(), older.end(), std::size_t{0});
  std::stable_sort(older.begin(), older.end(),
                   [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  const std::size_t n_heavy = std::min(heavy, older.size());
  choice.heavy.assign(older.begin(), older.begin() + static_cast<std::ptrdiff_t>(n_heavy));
  choice.evicted.assign(older.begin() + static_cast<std::ptrdiff_t>(n_heavy), older.end());

  // Back into position order, so the cache reads like the sentence.
  std::sort(choice.heavy.begin(), choice.heavy.end());
  std::sort(choice.evicted.begin(), choice.evicted.end());
  choice.kept = choice.heavy;
  choice.kept.insert(choice.kept.end(), choice.recent.begin(), choice.recent.end());
  std::sort(choice.kept.begin(), choice.kept.end());
  return choice;
}

// Does the library make the same choice? Positions are 0, 1, 2, ... here, like the slots.
bool library_agrees(const Choice& mine, const std::vector<float>& scores,
                    const h2o::CacheBudget& budget) {
  std::vector<h2o::Position> positions(scores.size());
  std::iota(positions.begin(), positions.end(), h2o::Position{0});
  const h2o::KeepPlan plan = h2o::plan_keep(positions, scores, budget);
  return plan.recent == mine.recent && plan.heavy == mine.heavy && plan.kept == mine.kept &&
         plan.evicted == mine.evicted;
}

std::vector<std::string> words_at(const std::vector<std::string>& words,
                                  const std::vector<std::size_t>& slots) {
  std::vector<std::string> out;
  for (std::size_t s : slots) out.push_back(words.at(s));
  return out;
}

const char* yes_no(bool ok) { return ok ? "yes" : "no"; }

}  // namespace

int main(int argc, char** argv) {
  return h2o::run_program("01_heavy_and_recent", [&] {
    h2o::ArgParser args(
        "01_heavy_and_recent",
        "Lesson 01: choose heavy hitters and recent tokens (blog learn_01_h2o.py).\n"
        "--heavy and --recent change the budget of the blog example (steps 1-4).");
    h2o::add_budget_options(args, 2, 2, "slots for the blog example");
    if (!args.parse(argc, argv)) return 0;
    // A budget of 0 + 0 or a negative count is refused with a clear message.
    const h2o::CacheBudget budget = h2o::budget_from_options(args);

    std::cout << "Lesson 01: choose heavy and recent tokens (blog: learn_01_h2o.py)\n\n";

    // Step 1: the cache as the blog shows it - five tokens, each with an importance score.
    const std::vector<std::string> words = {"The", "cat", "sat", "because", "it"};
    const std::vector<float> scores = {1.78f, 1.58f, 0.91f, 0.51f, 0.22f};
    std::cout << "Step 1: the cache holds " << words.size() << " tokens\n";
    std::cout << "  position  word      score\n";
    for (std::size_t i = 0; i < words.size(); ++i) {
      std::cout << "  " << h2o::pad_left(std::to_string(i), 8) << "  "
                << h2o::pad_right(words[i], 8) << h2o::pad_left(h2o::fixed(scores[i]), 5) << "\n";
    }
    std::cout << "  budget: " << budget.describe() << "\n";
    const Choice choice = choose_heavy_and_recent(scores, budget.heavy, budget.recent);

    // Step 2: the newest tokens are protected, whatever their scores: they have not yet had a
    // chance to collect attention.
    std::cout << "\nStep 2: the last " << budget.recent << " tokens are always kept\n";
    std::cout << "  recent " << h2o::format_list(words_at(words, choice.recent)) << "\n";

    // Step 3: among the older tokens, the largest scores win the heavy slots.
    std::cout << "\nStep 3: among the older tokens, keep the " << budget.heavy
              << " largest scores\n";
    std::cout << "  older tokens:";
    const std::size_t n_older = words.size() - choice.recent.size();
    for (std::size_t i = 0; i < n_older; ++i) {
      std::cout << " " << words[i] << " " << h2o::fixed(scores[i]) << (i + 1 < n_older ? "," : "");
    }
    std::cout << "\n  heavy " << h2o::format_list(words_at(words, choice.heavy)) << "\n";

    // Step 4: the cache keeps both groups, in sentence order; the rest is evicted.
    std::cout << "\nStep 4: the cache after eviction\n";
    std::cout << "  kept cache " << h2o::format_list(words_at(words, choice.kept)) << "\n";
    std::cout << "  evicted " << h2o::format_list(words_at(words, choice.evicted)) << "\n";
    std::cout << "  library h2o::plan_keep agrees: "
              << yes_no(library_agrees(choice, scores, budget)) << "\n";

    // Step 5: the handbook's worked example, by position. Same rule, other numbers.
    const std::vector<float> handbook_scores = {3.8f, 0.4f, 2.1f, 0.3f, 0.0f};
    const h2o::CacheBudget handbook_budget = h2o::CacheBudget(2, 2);
    const Choice handbook = choose_heavy_and_recent(handbook_scores, 2, 2);
    std::cout << "\nStep 5: the handbook's worked example (" << handbook_budget.describe() << ")\n";
    std::cout << "  positions [0, 1, 2, 3, 4]  scores " << h2o::format_list(handbook_scores, 1)
              << "\n";
    std::cout << "  recent positions " << h2o::format_list(handbook.recent) << "\n";
    std::cout << "  heavy positions " << h2o::format_list(handbook.heavy) << "\n";
    std::cout << "  kept positions " << h2o::format_list(handbook.kept) << "\n";
    std::cout << "  evicted positions " << h2o::format_list(handbook.evicted) << "\n";
    std::cout << "  library h2o::plan_keep agrees on the handbook example: "
              << yes_no(library_agrees(handbook, handbook_scores, handbook_budget)) << "\n";

    // Step 6: the tie-break rule. Three older tokens share one score but only two heavy slots
    // exist; the rule must say who stays, or runs could differ. Ours: the OLDER token stays.
    const std::vector<float> tied_scores = {0.9f, 0.9f, 0.9f, 0.3f, 0.1f};
    const Choice tied = choose_heavy_and_recent(tied_scores, 2, 2);
    std::cout << "\nStep 6: the tie-break rule - on equal scores the older token stays\n";
    std::cout << "  scores " << h2o::format_list(tied_scores, 1) << ", heavy 2 + recent 2\n";
    std::cout << "  heavy positions " << h2o::format_list(tied.heavy) << ", evicted positions "
              << h2o::format_list(tied.evicted) << "\n";
    std::cout << "  library h2o::plan_keep agrees on the tie: "
              << yes_no(library_agrees(tied, tied_scores, h2o::CacheBudget(2, 2))) << "\n";

    // Step 7: the two special budgets, on the blog's sentence.
    std::cout << "\nStep 7: special budgets on the blog's tokens\n";
    // heavy = 0: no token is kept for its score, only the newest ones - a sliding window.
    const Choice window = choose_heavy_and_recent(scores, 0, 3);
    std::cout << "  heavy 0 + recent 3 (a sliding window): kept "
              << h2o::format_list(words_at(words, window.kept)) << ", library agrees: "
              << yes_no(library_agrees(window, scores, h2o::CacheBudget(0, 3))) << "\n";
    // recent = 0: only scores count, so the newest token, with almost no score yet, is evicted
    // at once - it never gets the chance to become important. That is why the window exists.
    const Choice top_only = choose_heavy_and_recent(scores, 3, 0);
    std::cout << "  heavy 3 + recent 0 (top scores only):  kept "
              << h2o::format_list(words_at(words, top_only.kept)) << ", library agrees: "
              << yes_no(library_agrees(top_only, scores, h2o::CacheBudget(3, 0))) << "\n";
    std::cout << "  with recent 0 the newest token '" << words.back() << "' (score "
              << h2o::fixed(scores.back()) << ") is "
              << (std::find(top_only.kept.begin(), top_only.kept.end(), words.size() - 1) ==
                          top_only.kept.end()
                      ? "evicted before it can collect any attention"
                      : "kept")
              << "\n";
    return 0;
  });
}
