// Lesson 04: H2O online - tokens arrive one at a time and the cache never outgrows its budget.
// Mirrors the blog's learn_04_online.py ("Process tokens one at a time").
//
// The new idea is the order of work for every arriving token (the blog's and the paper's order):
//   1. append the token's key and value; it enters with score 0;
//   2. the token attends to every cached token, ITSELF included;
//   3. that attention is added to the scores (lesson 02);
//   4. if the cache now holds more than heavy + recent tokens, choose who stays (lesson 01) and
//      drop the other rows from every list together (lesson 03).
// Steps 1-3 run this loop on the blog's sentence with tiny 2-number queries and keys; attention
// comes from the library (softmax of query . key / sqrt(2); lesson 05 writes it out). Steps 4-6 run
// the same loop on the handbook's 50-token demonstration: 8 heads of random attention, whose
// scores are averaged over the heads, with positions 5 and 10 given extra attention.
// (The handbook's H2OCache attends BEFORE appending, so its new token enters with score 0 and does
// not see itself; its printed scores differ a little from ours for that reason and its random
// numbers, but the kept positions are the same.)
// Plain lists (std::vector), no tensors, like the blog's plain-Python first lessons.
//
// Dimension legend: T = tokens in the cache, D = numbers in a key (2), H = attention heads.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/attention/attention.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/random.hpp"
#include "h2o/base/rows.hpp"
#include "h2o/cache/selection.hpp"
#include "h2o/cache/toy_cache.hpp"
#include "h2o/report/table.hpp"

using h2o::format_list;
using h2o::Row;

namespace {
void print_step(const h2o::ToyKVCache& cache, const std::vector<float>& attention);  // below main
bool contains(const std::vector<h2o::Position>& positions, h2o::Position p);
}  // namespace

int main(int argc, char** argv) try {
  h2o::ArgParser args("04_online_tokens",
                      "Lesson 04: process tokens one at a time with an H2O budget\n"
                      "(blog learn_04_online.py; steps 4-6 are the handbook's 50-token demo).");
  args.add_option("seed", "N", "2306", "seed of the random attention in steps 4-6")
      .add_option("tokens", "N", "50", "tokens in the demonstration of steps 4-6 (20 to 5000)");
  if (!args.parse(argc, argv)) return 0;
  const auto seed = static_cast<std::uint64_t>(args.integer("seed", 0, 1000000000));
  const auto demo_tokens = static_cast<std::size_t>(args.integer("tokens", 20, 5000));
  std::cout << "Lesson 04: process tokens one at a time (blog: learn_04_online.py)\n\n";

  // Step 1: each word brings a query and a key (and a value, carried along but not used here).
  // The keys are made up so that "cat" answers most queries well.
  const std::vector<std::string> words = {"The", "cat", "sat", "because", "it", "was", "tired"};
  const std::vector<Row> queries = {{0.5f, 0.5f}, {1.0f, 0.5f}, {1.0f, 0.0f}, {0.5f, 1.0f},
                                    {1.5f, 0.5f}, {1.0f, 1.0f}, {1.0f, 0.5f}};
  const std::vector<Row> keys = {{1.0f, 0.5f}, {2.0f, 1.0f}, {0.5f, 0.0f}, {0.0f, 0.5f},
                                 {0.5f, 0.5f}, {0.0f, 1.0f}, {0.5f, 0.0f}};
  const h2o::CacheBudget budget(2, 2);  // heavy_size = 2, recent_size = 2
  std::cout << "Step 1: the blog's sentence, " << budget.describe() << "; every word has a query\n"
            << "        and a key of 2 numbers\n";
  h2o::Table table({"word", "query", "key"});
  for (std::size_t t = 0; t < words.size(); ++t) {
    table.add({words[t], format_list(queries[t], 1), format_list(keys[t], 1)});
  }
  table.print(std::cout);

  // Step 2: the online loop, one arriving token at a time.
  std::cout << "\nStep 2: tokens arrive one at a time (append, attend, add, evict)\n";
  h2o::ToyKVCache cache;
  for (std::size_t t = 0; t < words.size(); ++t) {
    // 1. append: the new key and value become new rows; the new score starts at 0.
    cache.append(words[t], static_cast<h2o::Position>(t), keys[t], keys[t]);
    // 2. attend: the new token's query against every cached key, its own included.
    const std::vector<float> attention = h2o::attention_weights(queries[t], cache.key_cache);
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
  }

  // Step 3: the budget held at every step, so the cache stopped growing. Each token holds a key
  // and a value of 2 numbers: 4 numbers a token.
  std::cout << "\nStep 3: after " << words.size() << " tokens\n"
            << "  full cache: " << words.size() << " tokens and " << 4 * words.size()
            << " KV numbers\n"
            << "  H2O cache: " << cache.size() << " tokens and " << cache.kv_numbers()
            << " KV numbers " << format_list(cache.tokens) << "\n";

  // Step 4: the handbook's demo, through the same four steps: recent 8 + heavy 8, 8 heads. Each
  // head's attention is random (uniform 0..1 before the softmax), but positions 5 and 10 get +2
  // before the softmax, about 7 times the weight of an ordinary token. Each head adds 1/8 of its
  // attention, so a score grows by the MEAN over heads and every head keeps the same tokens.
  const h2o::CacheBudget demo_budget(8, 8);
  const std::size_t n_heads = 8;
  const std::vector<h2o::Position> boosted = {5, 10};
  const float boost = 2.0f, share = 1.0f / static_cast<float>(n_heads);
  std::cout << "\nStep 4: the handbook's demo: " << demo_tokens << " tokens, "
            << demo_budget.describe() << ", " << n_heads << " heads, seed " << seed << "\n"
            << "  random attention, +2 before softmax on positions " << format_list(boosted)
            << ", scores averaged over heads\n";
  const std::size_t print_every = std::max<std::size_t>(1, demo_tokens / 5);  // 5 snapshots
  h2o::Rng rng(seed);
  h2o::ToyKVCache demo;
  for (std::size_t t = 0; t < demo_tokens; ++t) {
    const Row key = {rng.normal(), rng.normal()}, value = {rng.normal(), rng.normal()};
    demo.append("t" + std::to_string(t), static_cast<h2o::Position>(t), key, value);  // 1.
    for (std::size_t h = 0; h < n_heads; ++h) {
      std::vector<float> logits(demo.size());
      for (std::size_t s = 0; s < demo.size(); ++s) {
        logits[s] = rng.uniform() + (contains(boosted, demo.positions[s]) ? boost : 0.0f);
      }
      const std::vector<float> attention = h2o::softmax(logits);  // 2.
      for (std::size_t s = 0; s < demo.size(); ++s)
        demo.h2o_scores[s] += attention[s] * share;  // 3.
    }
    if (demo.size() > demo_budget.total()) {  // 4.
      demo.keep(h2o::plan_keep(demo.positions, demo.h2o_scores, demo_budget).kept);
    }
    if ((t + 1) % print_every == 0 || t + 1 == demo_tokens) {
      std::cout << "  after " << h2o::pad_left(std::to_string(t + 1), 4) << " tokens: positions "
                << format_list(demo.positions) << "\n";
    }
  }

  // Step 5: the final cache, like the handbook's listing. (plan_keep only labels the rows here:
  // the cache is within its budget, so nothing is evicted.)
  const h2o::KeepPlan final_plan = h2o::plan_keep(demo.positions, demo.h2o_scores, demo_budget);
  std::cout << "\nStep 5: the final cache holds " << demo.size() << " tokens\n";
  h2o::Table final_table({"position", "score", "kept as"});
  for (std::size_t s = 0; s < demo.size(); ++s) {
    const bool recent = std::count(final_plan.recent.begin(), final_plan.recent.end(), s) > 0;
    final_table.add({std::to_string(demo.positions[s]), h2o::fixed(demo.h2o_scores[s], 3),
                     std::string(recent ? "recent" : "heavy") +
                         (contains(boosted, demo.positions[s]) ? " (boosted)" : "")});
  }
  final_table.print(std::cout);

  // Step 6: check the claim instead of eyeballing it: the two boosted positions are in the cache
  // and hold its two largest scores. Which tokens hold the other heavy slots? Nothing boosted them.
  std::vector<std::size_t> by_score(demo.size());
  for (std::size_t s = 0; s < demo.size(); ++s) by_score[s] = s;
  std::sort(by_score.begin(), by_score.end(),
            [&](std::size_t a, std::size_t b) { return demo.h2o_scores[a] > demo.h2o_scores[b]; });
  std::vector<h2o::Position> top_two = h2o::take(demo.positions, {by_score.at(0), by_score.at(1)});
  std::sort(top_two.begin(), top_two.end());
  std::vector<h2o::Position> other_heavy;
  for (std::size_t s : final_plan.heavy) {
    if (!contains(boosted, demo.positions[s])) other_heavy.push_back(demo.positions[s]);
  }
  std::cout << "\nStep 6: positions 5 and 10 survive with the two largest scores: "
            << (top_two == boosted ? "yes" : "no") << "\n";
  if (top_two != boosted) {
    std::cout << "  the two largest belong to positions " << format_list(top_two)
              << ": in a short run, age can still outweigh the boost\n";
  }
  std::cout << "  the other heavy slots hold positions " << format_list(other_heavy)
            << ", none of them boosted:\n"
            << "  a token that arrived early was attended to at more steps, so its sum grew\n"
            << "  larger. Accumulated scores favour old tokens; that is real H2O behaviour.\n";
  return 0;
} catch (...) {
  return h2o::exit_with_error(argv[0]);
}

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
}  // namespace
