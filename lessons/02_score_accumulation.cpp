// Lesson 02: importance scores are attention, added up step after step.
// Mirrors the blog's learn_02_scores.py ("Add attention to importance scores").
//
// Every cached token carries an importance score that starts at 0. Each time a new token is
// processed, it pays some attention to every cached token (its attention sums to 1), and H2O adds
// that attention to the scores:  old importance + new attention = new importance.
// A token the model keeps looking at therefore climbs above the others: it becomes a heavy hitter.
// H2O never looks at what a word means - only at these numbers.
//
// Step 1 is the blog's addition. Step 2 lets four more tokens arrive and shows one table of the
// scores before and after them: one token takes the lead. Step 3 chooses who stays with lesson 01's
// rule, from the library (h2o::plan_keep).
// Plain lists (std::vector), no tensors, like the blog's plain-Python first lessons.
#include <algorithm>
#include <cstddef>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/program.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/rows.hpp"
#include "h2o/cache/selection.hpp"
#include "h2o/report/table.hpp"

using h2o::fixed;
using h2o::format_list;

namespace {
// A table of the addition, one row per token: old score + attention = new score.
void print_addition(const std::vector<std::string>& tokens, const std::vector<float>& old_scores,
                    const std::vector<float>& attention, const std::vector<float>& new_scores) {
  h2o::Table table({"token", "old score", "+ attention", "= new score"});
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    table.add({tokens[i], fixed(old_scores[i]), fixed(attention[i]), fixed(new_scores[i])});
  }
  table.print(std::cout);
}
}  // namespace

int run_lesson(int argc, char** argv) {
  h2o::start_lesson(argc, argv,
                    "Lesson 02: add attention to importance scores (blog learn_02_scores.py).");
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
  // "cat" (the subject), so it gives "cat" 4 shares of its attention and every other cached token
  // 1 share. A new token enters the cache with score 0 and then attends to every cached token,
  // itself included. Its attention is each token's shares divided by the total, so it sums to 1.
  const std::vector<std::string> arriving = {"because", "it", "was", "tired"};
  const float cat_shares = 4.0f;
  const std::vector<float> scores_before = h2o_scores;
  std::vector<float> received(tokens.size() + arriving.size(), 0.0f);  // attention, all 4 steps
  for (const std::string& token : arriving) {
    tokens.push_back(token);
    h2o_scores.push_back(0.0f);  // a new token has no history yet
    std::vector<float> shares(tokens.size(), 1.0f);
    shares[1] = cat_shares;  // slot 1 holds "cat"
    const float total = std::accumulate(shares.begin(), shares.end(), 0.0f);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      h2o_scores[i] += shares[i] / total;
      received[i] += shares[i] / total;
    }
  }
  std::vector<float> before(tokens.size(), 0.0f);  // the newcomers entered with 0
  std::copy(scores_before.begin(), scores_before.end(), before.begin());
  const auto best = static_cast<std::size_t>(
      std::max_element(h2o_scores.begin(), h2o_scores.end()) - h2o_scores.begin());
  std::cout << "\nStep 2: " << format_list(arriving) << " arrive; each gives 'cat' "
            << fixed(cat_shares, 0) << " shares of attention\n        and every other token 1\n";
  print_addition(tokens, before, received, h2o_scores);
  std::cout << "  largest score: " << tokens[best] << " (" << fixed(h2o_scores[best])
            << "): the token the model keeps looking at becomes the heavy hitter\n";

  // Step 3: lesson 01's choice on these scores, from the library, with one heavy slot.
  const std::size_t heavy_size = 1;
  const std::size_t recent_size = 2;
  std::vector<h2o::Position> positions(tokens.size());
  std::iota(positions.begin(), positions.end(), h2o::Position{0});
  const h2o::CacheBudget budget(heavy_size, recent_size);
  const h2o::KeepPlan plan = h2o::plan_keep(positions, h2o_scores, budget);
  std::cout << "\nStep 3: choosing with " << budget.describe() << " (library h2o::plan_keep)\n"
            << "  heavy " << format_list(h2o::take(tokens, plan.heavy)) << ", kept cache "
            << format_list(h2o::take(tokens, plan.kept)) << "\n";
  return 0;
}

int main(int argc, char** argv) { return h2o::run_program(argc, argv, run_lesson); }
