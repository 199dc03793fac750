// Lesson 04: H2O online - tokens arrive one at a time and the cache never outgrows its budget.
// Mirrors the blog's learn_04_online.py ("Process tokens one at a time").
//
// The new idea is the order of work for every arriving token (the blog's and the paper's order):
//   1. append the token's key and value; it enters with score 0;
//   2. the token attends to every cached token, ITSELF included;
//   3. that attention is added to the scores (lesson 02);
//   4. if the cache now holds more than heavy + recent tokens, choose who stays (lesson 01) and
//      drop the other rows from every list together (lesson 03).
// The attention is given, as the blog's section 4 gives it ("The: 0.20, cat: 0.50, sat: 0.30"):
// one row of weights per arriving token over the cache as it stands, summing to 1. Lesson 05 shows
// how a model computes such rows from queries and keys.
// Steps 1-2 run the loop on the blog's sentence; the rows were chosen so that after "it" the cache
// holds exactly the blog's section 8 scores. Steps 3-5 run the same loop on a 50-token
// demonstration: 8 heads of random attention, averaged over the heads, with positions 5 and 10
// given extra attention. (A cache that attends BEFORE appending lets its new token enter with
// score 0 and not see itself; its scores differ a little from ours, but the kept positions on
// this demo are the same.)
// Plain lists (std::vector), no tensors, like the blog's plain-Python first lessons.
//
// Dimension legend: T = tokens in the cache, D = numbers in a key or value (2).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iostream>
#include <string>
#include <vector>

#include "h2o/app/program.hpp"
#include "h2o/app/step_option.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/random.hpp"
#include "h2o/base/rows.hpp"
#include "h2o/cache/selection.hpp"
#include "h2o/cache/toy_cache.hpp"
#include "h2o/report/table.hpp"

using h2o::format_list;
using h2o::Row;

namespace {
// One arriving token's view of the cache: each column a cached token, its attention from the new
// token and its score after the addition.
void print_step(const h2o::ToyKVCache& cache, const std::vector<float>& attention) {
  std::string words = "    word      ", positions = "    position  ", weights = "    attention ",
              scores = "    score     ";
  for (std::size_t s = 0; s < cache.size(); ++s) {
    words += h2o::pad_left(cache.tokens[s], 9);
    positions += h2o::pad_left(std::to_string(cache.positions[s]), 9);
    weights += h2o::pad_left(h2o::fixed(attention[s]), 9);
    scores += h2o::pad_left(h2o::fixed(cache.h2o_scores[s]), 9);
  }
  std::cout << words << "\n" << positions << "\n" << weights << "\n" << scores << "\n";
}

bool contains(const std::vector<h2o::Position>& positions, h2o::Position p) {
  return std::find(positions.begin(), positions.end(), p) != positions.end();
}

// Step 3's four steps for the demo's token t. Each head's attention is random: every cached
// token gets a random share between 1 and e (2.72), and the boosted positions get e^boost times
// more; each share divided by the total is the token's attention, so a head's attention sums to 1
// (a softmax of random numbers, plus 2 where boosted; lesson 05 names it). Each head adds 1/n_heads
// of its attention, so a score grows by the MEAN over heads and every head keeps the same tokens.
void demo_token(h2o::ToyKVCache& demo, std::size_t t, std::size_t n_heads,
                const std::vector<h2o::Position>& boosted, float boost,
                const h2o::CacheBudget& budget, h2o::Rng& rng) {
  const float share_of_head = 1.0f / static_cast<float>(n_heads);
  const Row new_key = {rng.normal(), rng.normal()}, new_value = {rng.normal(), rng.normal()};
  demo.append("t" + std::to_string(t), static_cast<h2o::Position>(t), new_key, new_value);  // 1.
  for (std::size_t h = 0; h < n_heads; ++h) {
    std::vector<float> shares(demo.size());
    float total = 0.0f;
    for (std::size_t s = 0; s < demo.size(); ++s) {
      shares[s] = std::exp(rng.uniform() + (contains(boosted, demo.positions[s]) ? boost : 0.0f));
      total += shares[s];
    }
    for (std::size_t s = 0; s < demo.size(); ++s) {
      demo.h2o_scores[s] += shares[s] / total * share_of_head;  // 2. and 3.
    }
  }
  if (demo.size() > budget.total()) {  // 4.
    demo.keep(h2o::plan_keep(demo.positions, demo.h2o_scores, budget).kept);
  }
}
}  // namespace

int run_lesson(int argc, char** argv) {
  // --step (for a classroom): wait for Enter after each token and draw the cache.
  h2o::StepView step = h2o::start_lesson_with_step(
      argc, argv,
      "Lesson 04: process tokens one at a time with an H2O budget\n"
      "(blog learn_04_online.py; steps 3-5: a 50-token demo of random attention).");
  std::cout << "Lesson 04: process tokens one at a time (blog: learn_04_online.py)\n\n";

  // Step 1: the blog's sentence and budget, and each arriving word's attention over the cache as
  // it stands then (the word itself last). Keys and values are made up as in lesson 03: the whole
  // part of every number is the token's position.
  const std::vector<std::string> words = {"The", "cat", "sat", "because", "it", "was", "tired"};
  const std::vector<std::vector<float>> attention_rows = {
      {1.00f},                               // The      over [The]
      {0.30f, 0.70f},                        // cat      over [The, cat]
      {0.20f, 0.50f, 0.30f},                 // sat      over [The, cat, sat] (the blog's)
      {0.18f, 0.21f, 0.30f, 0.31f},          // because  over [The, cat, sat, because]
      {0.10f, 0.17f, 0.31f, 0.20f, 0.22f},   // it       over [The, cat, sat, because, it]
      {0.30f, 0.30f, 0.10f, 0.20f, 0.10f},   // was      over the cache after eviction + was
      {0.25f, 0.35f, 0.10f, 0.10f, 0.20f}};  // tired    likewise
  const std::size_t heavy_size = 2;
  const std::size_t recent_size = 2;
  const h2o::CacheBudget budget(heavy_size, recent_size);
  std::cout << "Step 1: the blog's sentence " << format_list(words)
            << "\n        heavy_size = " << heavy_size << ", recent_size = " << recent_size
            << "; each word's attention over "
            << "the cache\n        is given, as in the blog's section 4\n";

  // Step 2: the online loop, one arriving token at a time; each draws the cache it leaves.
  std::cout << "\nStep 2: tokens arrive one at a time (append, attend, add, evict)\n";
  h2o::ToyKVCache cache;
  for (std::size_t t = 0; t < words.size(); ++t) {
    // 1. append: the new key and value become new rows; the new score starts at 0.
    const auto p = static_cast<float>(t);
    const Row new_key = {p + 0.1f, p + 0.2f}, new_value = {p + 0.7f, p + 0.8f};
    cache.append(words[t], static_cast<h2o::Position>(t), new_key, new_value);
    // 2. attend: the new token's attention over every cached token, its own included (given).
    const std::vector<float>& attention = attention_rows[t];
    // 3. add: h2o_scores = h2o_scores + attention
    h2o::accumulate_attention(cache.h2o_scores, attention);
    std::cout << "\n  token " << t << ": '" << words[t] << "' arrives\n";
    print_step(cache, attention);
    // 4. evict: over budget, keep recent + heavy and drop every other row of every list.
    if (cache.size() > budget.total()) {
      const h2o::KeepPlan plan = h2o::plan_keep(cache.positions, cache.h2o_scores, budget);
      std::cout << "    " << cache.size() << " tokens > budget " << budget.total() << ": evict "
                << format_list(h2o::take(cache.tokens, plan.evicted));
      cache.keep(plan.kept);
      std::cout << " -> cache " << format_list(cache.tokens) << "\n";
    } else {
      std::cout << "    " << cache.size() << " tokens <= budget " << budget.total()
                << ": nothing to evict\n";
    }
    step.show("the cache after token " + std::to_string(t) + " ('" + words[t] + "')",
              {{"cache", cache.tokens, cache.positions, cache.h2o_scores}}, budget);
  }
  // The budget held at every step, so the cache stopped growing. Each token holds a key and a
  // value of 2 numbers: 4 numbers a token.
  std::cout << "\n  after " << words.size() << " tokens\n"
            << "  full cache: " << words.size() << " tokens and " << 4 * words.size()
            << " KV numbers\n"
            << "  H2O cache: " << cache.size() << " tokens and " << cache.kv_numbers()
            << " KV numbers " << format_list(cache.tokens) << "\n";

  // Step 3: the demo through the same four steps (demo_token above main): recent 8 +
  // heavy 8, 8 heads of random attention, positions 5 and 10 given e^2 (7.39) times more.
  const h2o::CacheBudget demo_budget(8, 8);
  const std::size_t demo_tokens = 50, n_heads = 8;
  const std::vector<h2o::Position> boosted = {5, 10};
  const float boost = 2.0f;
  std::cout << "\nStep 3: a demo of random attention: " << demo_tokens << " tokens, "
            << demo_budget.describe() << ", " << n_heads << " heads\n"
            << "  random attention, e^2 times more on positions " << format_list(boosted)
            << ", scores averaged over heads\n";
  h2o::Rng rng(2306);
  h2o::ToyKVCache demo;
  for (std::size_t t = 0; t < demo_tokens; ++t) {
    demo_token(demo, t, n_heads, boosted, boost, demo_budget, rng);
    step.show("the demo's cache after token " + std::to_string(t),
              {{"cache", demo.tokens, demo.positions, demo.h2o_scores}}, demo_budget);
    if ((t + 1) % 10 == 0) {
      std::cout << "  after " << h2o::pad_left(std::to_string(t + 1), 2) << " tokens: positions "
                << format_list(demo.positions) << "\n";
    }
  }

  // Step 4: the final cache, position by position. (plan_keep only labels the rows here:
  // the cache is within its budget, so nothing is evicted.)
  const h2o::KeepPlan final_plan = h2o::plan_keep(demo.positions, demo.h2o_scores, demo_budget);
  std::cout << "\nStep 4: the final cache holds " << demo.size() << " tokens\n";
  h2o::Table final_table({"position", "score", "kept as"});
  for (std::size_t s = 0; s < demo.size(); ++s) {
    const bool recent = std::count(final_plan.recent.begin(), final_plan.recent.end(), s) > 0;
    final_table.add({std::to_string(demo.positions[s]), h2o::fixed(demo.h2o_scores[s], 3),
                     std::string(recent ? "recent" : "heavy") +
                         (contains(boosted, demo.positions[s]) ? " (boosted)" : "")});
  }
  final_table.print(std::cout);

  // Step 5: check the claim instead of eyeballing it: the two boosted positions are in the cache
  // and hold its two largest scores. Which tokens hold the other heavy slots? Nothing boosted them.
  std::vector<float> sorted_scores = demo.h2o_scores;
  std::sort(sorted_scores.rbegin(), sorted_scores.rend());
  std::size_t boosted_in_top_two = 0;
  for (std::size_t s = 0; s < demo.size(); ++s) {
    const bool top_two = demo.h2o_scores[s] >= sorted_scores.at(1);
    boosted_in_top_two += contains(boosted, demo.positions[s]) && top_two ? 1 : 0;
  }
  std::vector<h2o::Position> other_heavy;
  for (std::size_t s : final_plan.heavy) {
    if (!contains(boosted, demo.positions[s])) other_heavy.push_back(demo.positions[s]);
  }
  std::cout << "\nStep 5: positions 5 and 10 survive with the two largest scores: "
            << (boosted_in_top_two == boosted.size() ? "yes" : "no") << "\n"
            << "  the other heavy slots hold positions " << format_list(other_heavy)
            << ", none of them boosted:\n"
            << "  a token that arrived early was attended to at more steps, so its sum grew\n"
            << "  larger. Accumulated scores favour old tokens; that is real H2O behaviour.\n";
  return 0;
}

int main(int argc, char** argv) { return h2o::run_program(argc, argv, run_lesson); }
