// Lesson 02: importance scores are attention, added up step after step.
// Mirrors the blog's learn_02_scores.py ("Add attention to importance scores").
//
// Every cached token carries an importance score that starts at 0. Each time a new token is
// processed, it pays some attention to every cached token (the weights sum to 1), and H2O adds
// that attention to the scores:  old importance + new attention = new importance.
// A token the model keeps looking at therefore climbs above the others: it becomes a heavy hitter.
// H2O never looks at what a word means - only at these numbers.
//
// This lesson writes the addition out by hand, checks it against h2o::accumulate_attention, and
// then lets four more tokens arrive to watch one token take the lead. Choosing who stays is lesson
// 01's idea, so here it is the library's h2o::plan_keep.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/base/format.hpp"
#include "h2o/cache/selection.hpp"

namespace {

const char* yes_no(bool ok) { return ok ? "yes" : "no"; }

void print_table(const std::vector<std::string>& words, const std::vector<float>& old_scores,
                 const std::vector<float>& attention, const std::vector<float>& new_scores) {
  std::cout << "    word       old score  + attention  = new score\n";
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::cout << "    " << h2o::pad_right(words[i], 9)
              << h2o::pad_left(h2o::fixed(old_scores[i]), 10)
              << h2o::pad_left(h2o::fixed(attention[i]), 13)
              << h2o::pad_left(h2o::fixed(new_scores[i]), 13) << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  return h2o::run_program("02_score_accumulation", [&] {
    h2o::ArgParser args("02_score_accumulation",
                        "Lesson 02: add attention to importance scores (blog learn_02_scores.py).");
    args.add_option("shares", "N", "4", "shares of attention later tokens give 'cat' (others 1)");
    if (!args.parse(argc, argv)) return 0;
    const float cat_shares = static_cast<float>(args.integer("shares", 0, 100));

    std::cout << "Lesson 02: add attention to importance scores (blog: learn_02_scores.py)\n\n";

    // Step 1: the blog's example. The cache holds three tokens with scores from earlier steps; the
    // current token's attention over them is 0.20, 0.50, 0.30 (it sums to 1).
    std::vector<std::string> words = {"The", "cat", "sat"};
    const std::vector<float> old_scores = {1.0f, 0.7f, 0.2f};
    const std::vector<float> attention = {0.2f, 0.5f, 0.3f};
    std::vector<float> scores(old_scores.size());
    for (std::size_t i = 0; i < scores.size(); ++i) scores[i] = old_scores[i] + attention[i];
    std::cout << "Step 1: old importance + new attention = new importance\n";
    print_table(words, old_scores, attention, scores);
    std::cout << "  new scores " << h2o::format_list(scores) << "\n";
    std::vector<float> library_scores = old_scores;
    h2o::accumulate_attention(library_scores, attention);
    std::cout << "  library h2o::accumulate_attention agrees: " << yes_no(library_scores == scores)
              << "\n";

    // Step 2: more tokens arrive. In this made-up sentence every later word keeps referring back
    // to "cat" (the subject), so it gives "cat" more attention than anything else. A new token is
    // added to the cache first (score 0) and then attends to every cached token, itself included.
    // Its attention is a share count divided by the total, so it sums to 1 like a softmax would.
    const std::vector<std::string> arriving = {"because", "it", "was", "tired"};
    std::cout << "\nStep 2: " << arriving.size() << " more tokens arrive; each gives 'cat' "
              << h2o::fixed(cat_shares, 0) << " shares of attention and every other token 1\n";
    for (const std::string& word : arriving) {
      words.push_back(word);
      scores.push_back(0.0f);  // a new token has no history yet
      std::vector<float> shares(words.size(), 1.0f);
      shares[1] = cat_shares;  // slot 1 holds "cat"
      const float total = std::accumulate(shares.begin(), shares.end(), 0.0f);
      std::vector<float> step_attention(words.size());
      for (std::size_t i = 0; i < words.size(); ++i) step_attention[i] = shares[i] / total;

      const std::vector<float> before = scores;
      h2o::accumulate_attention(scores, step_attention);  // Step 1's addition, from the library
      std::cout << "\n  '" << word << "' arrives (" << words.size() << " tokens in the cache, "
                << h2o::fixed(total, 0) << " shares in total)\n";
      print_table(words, before, step_attention, scores);
    }

    // Step 3: who is the heavy hitter now? "cat" started below "The" and now leads.
    const std::size_t best =
        static_cast<std::size_t>(std::max_element(scores.begin(), scores.end()) - scores.begin());
    std::cout << "\nStep 3: after all the steps\n";
    std::cout << "  scores " << h2o::format_list(scores) << "\n";
    std::cout << "  largest score: " << words[best] << " (" << h2o::fixed(scores[best]) << ")\n";
    // Every step hands out exactly 1 unit of attention, so the scores always add up to
    // (what they held before) + (number of steps).
    const float start_total = std::accumulate(old_scores.begin(), old_scores.end(), 0.0f);
    const float end_total = std::accumulate(scores.begin(), scores.end(), 0.0f);
    const std::size_t steps = 1 + arriving.size();
    std::cout << "  total score " << h2o::fixed(end_total) << " = start " << h2o::fixed(start_total)
              << " + " << steps << " steps x 1: "
              << yes_no(std::abs(end_total - (start_total + static_cast<float>(steps))) < 1e-4f)
              << "\n";

    // Step 4: lesson 01's choice on these scores: one heavy slot, two recent slots.
    std::vector<h2o::Position> positions(words.size());
    std::iota(positions.begin(), positions.end(), h2o::Position{0});
    const h2o::CacheBudget budget = h2o::CacheBudget(1, 2);
    const h2o::KeepPlan plan = h2o::plan_keep(positions, scores, budget);
    std::vector<std::string> heavy_words, kept_words;
    for (std::size_t s : plan.heavy) heavy_words.push_back(words[s]);
    for (std::size_t s : plan.kept) kept_words.push_back(words[s]);
    std::cout << "\nStep 4: choosing with " << budget.describe() << " (library h2o::plan_keep)\n";
    std::cout << "  heavy " << h2o::format_list(heavy_words) << "\n";
    std::cout << "  kept cache " << h2o::format_list(kept_words) << "\n";
    return 0;
  });
}
