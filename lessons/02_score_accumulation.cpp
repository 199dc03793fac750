// Lesson 02: importance scores are attention, added up step after step.
// Mirrors the blog's learn_02_scores.py ("Add attention to importance scores").
//
// Every cached token carries an importance score that starts at 0. Each time a new token is
// processed, it pays some attention to every cached token (the weights sum to 1), and H2O adds
// that attention to the scores:  old importance + new attention = new importance.
// A token the model keeps looking at therefore climbs above the others: it becomes a heavy hitter.
// H2O never looks at what a word means - only at these numbers.
//
// Step 1 is the blog's addition. Steps 2-3 let four more tokens arrive and watch one token take
// the lead. Step 4 chooses who stays with lesson 01's rule, from the library (h2o::plan_keep).
// Plain lists (std::vector), no tensors, like the blog's plain-Python first lessons.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/rows.hpp"
#include "h2o/cache/selection.hpp"
#include "h2o/report/table.hpp"

using h2o::fixed;
using h2o::format_list;

namespace {
// A table of the addition, one row per token (defined below main).
void print_addition(const std::vector<std::string>& tokens, const std::vector<float>& old_scores,
                    const std::vector<float>& attention, const std::vector<float>& new_scores);
}  // namespace

int main(int argc, char** argv) try {
  h2o::ArgParser args("02_score_accumulation",
                      "Lesson 02: add attention to importance scores (blog learn_02_scores.py).");
  args.add_option("shares", "N", "4", "shares of attention later tokens give 'cat' (others 1)");
  if (!args.parse(argc, argv)) return 0;
  const auto cat_shares = static_cast<float>(args.integer("shares", 0, 100));
  std::cout << "Lesson 02: add attention to importance scores (blog: learn_02_scores.py)\n\n";

  // Step 1: the blog's example. The cache holds three tokens with scores from earlier steps; the
  // current token's attention over them is 0.20, 0.50, 0.30 (it sums to 1).
  std::vector<std::string> tokens = {"The", "cat", "sat"};
  std::vector<float> h2o_scores = {1.0f, 0.7f, 0.2f};
  const std::vector<float> attention = {0.2f, 0.5f, 0.3f};
  const std::vector<float> old_scores = h2o_scores;
  // h2o_scores = h2o_scores + attention.squeeze(0)
  for (std::size_t i = 0; i < h2o_scores.size(); ++i) h2o_scores[i] = h2o_scores[i] + attention[i];
  std::cout << "Step 1: old importance + new attention = new importance\n";
  print_addition(tokens, old_scores, attention, h2o_scores);
  std::vector<float> library_scores = old_scores;
  h2o::accumulate_attention(library_scores, attention);  // the same line, from the library
  std::cout << "  new scores " << format_list(h2o_scores) << "\n"
            << "  library h2o::accumulate_attention (used from now on) agrees: "
            << (library_scores == h2o_scores ? "yes" : "no") << "\n";

  // Step 2: more tokens arrive. In this made-up sentence every later word keeps referring back to
  // "cat" (the subject), so it gives "cat" more attention than anything else. A new token enters
  // the cache with score 0 and then attends to every cached token, itself included. Its attention
  // is a share count divided by the total, so it sums to 1, as a softmax would.
  const std::vector<std::string> arriving = {"because", "it", "was", "tired"};
  std::cout << "\nStep 2: " << arriving.size() << " more tokens arrive; each gives 'cat' "
            << fixed(cat_shares, 0) << " shares of attention and every other token 1\n";
  for (const std::string& token : arriving) {
    tokens.push_back(token);
    h2o_scores.push_back(0.0f);  // a new token has no history yet
    std::vector<float> shares(tokens.size(), 1.0f);
    shares[1] = cat_shares;  // slot 1 holds "cat"
    const float total = std::accumulate(shares.begin(), shares.end(), 0.0f);
    std::vector<float> step_attention(tokens.size());
    for (std::size_t i = 0; i < tokens.size(); ++i) step_attention[i] = shares[i] / total;

    const std::vector<float> before = h2o_scores;
    for (std::size_t i = 0; i < h2o_scores.size(); ++i) h2o_scores[i] += step_attention[i];
    std::cout << "\n  '" << token << "' arrives (" << tokens.size() << " tokens in the cache, "
              << fixed(total, 0) << " shares in total)\n";
    print_addition(tokens, before, step_attention, h2o_scores);
  }

  // Step 3: who is the heavy hitter now? "cat" started below "The" and now leads. Every step
  // hands out exactly 1 unit of attention, so the scores always add up to (what they held before)
  // + (number of steps): a check that no attention was lost or counted twice.
  const auto best = static_cast<std::size_t>(
      std::max_element(h2o_scores.begin(), h2o_scores.end()) - h2o_scores.begin());
  const float start_total = std::accumulate(old_scores.begin(), old_scores.end(), 0.0f);
  const float end_total = std::accumulate(h2o_scores.begin(), h2o_scores.end(), 0.0f);
  const std::size_t steps = 1 + arriving.size();
  const bool balanced = std::abs(end_total - (start_total + static_cast<float>(steps))) < 1e-4f;
  std::cout << "\nStep 3: after all the steps\n"
            << "  scores " << format_list(h2o_scores) << "\n"
            << "  largest score: " << tokens[best] << " (" << fixed(h2o_scores[best]) << ")\n"
            << "  total score " << fixed(end_total) << " = start " << fixed(start_total) << " + "
            << steps << " steps x 1: " << (balanced ? "yes" : "no") << "\n";

  // Step 4: lesson 01's choice on these scores: one heavy slot, two recent slots.
  std::vector<h2o::Position> positions(tokens.size());
  std::iota(positions.begin(), positions.end(), h2o::Position{0});
  const h2o::CacheBudget budget(1, 2);
  const h2o::KeepPlan plan = h2o::plan_keep(positions, h2o_scores, budget);
  std::cout << "\nStep 4: choosing with " << budget.describe() << " (library h2o::plan_keep)\n"
            << "  heavy " << format_list(h2o::take(tokens, plan.heavy)) << "\n"
            << "  kept cache " << format_list(h2o::take(tokens, plan.kept)) << "\n";
  return 0;
} catch (...) {
  return h2o::exit_with_error(argv[0]);
}

namespace {
void print_addition(const std::vector<std::string>& tokens, const std::vector<float>& old_scores,
                    const std::vector<float>& attention, const std::vector<float>& new_scores) {
  h2o::Table table({"token", "old score", "+ attention", "= new score"});
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    table.add({tokens[i], fixed(old_scores[i]), fixed(attention[i]), fixed(new_scores[i])});
  }
  table.print(std::cout);
}
}  // namespace
