// Lesson 04: H2O online - tokens arrive one at a time and the cache never outgrows its budget.
// Mirrors the blog's learn_04_online.py ("Process tokens one at a time").
//
// The new idea is the order of work for every arriving token (the blog's and the paper's order):
//   1. append the token's key and value; it enters with score 0;
//   2. the token attends to every cached token, ITSELF included;
//   3. that attention is added to the scores (lesson 02);
//   4. if the cache now holds more than heavy + recent tokens, choose who stays (lesson 01) and
//      drop the other rows from every array together (lesson 03).
// Part 1 runs this on the blog's sentence with tiny 2-number queries and keys; attention comes from
// h2o::attend (softmax of query . key / sqrt(2); lesson 05 explains it). Part 2 repeats the
// handbook's 50-token demonstration with 8 heads of random attention whose scores are averaged over
// the heads ("shared" scores). Part 3 replays both runs through the library's h2o::H2OPolicy.
//
// Dimension legend: T = tokens in the cache, D = numbers in a key, H = attention heads.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <map>
#include <string>
#include <vector>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "h2o/app/cli.hpp"
#include "h2o/attention/attention.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/random.hpp"
#include "h2o/cache/kv_cache.hpp"
#include "h2o/cache/selection.hpp"
#include "h2o/cache/toy_cache.hpp"
#include "h2o/policy/cache_policy.hpp"
#include "h2o/policy/h2o_policy.hpp"

namespace {

const char* yes_no(bool ok) { return ok ? "yes" : "no"; }

// What one step looked like, kept so Part 3 can replay it through the library.
struct StepRecord {
  std::vector<h2o::Position> positions;  // (T,) the cache after the append, in position order
  h2o::Matrix attention;                 // (H, T) each head's weights over those tokens
};

// Step 3 of the header: each of the H heads adds 1/H of its attention (H, T) to the scores, so a
// token's score grows by the MEAN over heads and every head agrees on who stays. With one head this
// is just that head's row.
void add_mean_attention(h2o::ToyKVCache& cache, const h2o::Matrix& attention) {
  const std::size_t n_heads = attention.shape()[0];
  const float share = 1.0f / static_cast<float>(n_heads);
  for (std::size_t h = 0; h < n_heads; ++h) {
    const h2o::Vector head_part = xt::view(attention, h, xt::all()) * share;  // (T,)
    cache.add_attention(head_part);
  }
}

// Step 4 of the header: over budget, lesson 01 chooses and lesson 03 drops the rows.
// Returns the words that were evicted (none while the cache fits).
std::vector<std::string> evict_if_over_budget(h2o::ToyKVCache& cache,
                                              const h2o::CacheBudget& budget) {
  std::vector<std::string> evicted;
  if (cache.size() <= budget.total()) return evicted;
  const h2o::KeepPlan plan = cache.plan(budget);
  for (std::size_t s : plan.evicted) evicted.push_back(cache.words()[s]);
  cache.keep(plan.kept);
  return evicted;
}

// Runs the recorded steps through h2o::H2OPolicy (shared scores) on a preallocated LayerKVCache
// and reports whether it ends with the same positions and the same scores. Both add each head's
// share in the same order, so the scores must match exactly, not just to rounding.
bool library_policy_agrees(const std::vector<StepRecord>& steps, const h2o::CacheBudget& budget,
                           const h2o::ToyKVCache& final_cache) {
  const std::size_t n_heads = steps.empty() ? 1 : steps[0].attention.shape()[0];
  h2o::LayerKVCache cache(1, 1, budget.total() + 1);
  h2o::H2OPolicy policy(budget, h2o::ScoringMode::Shared);
  const float unused_row[1] = {0.0f};
  for (const StepRecord& step : steps) {
    cache.append(unused_row, unused_row, step.positions.back());
    if (cache.size() != step.positions.size()) return false;
    // The library keeps its slots in its own order: look each slot's position up in the record.
    std::map<h2o::Position, std::size_t> column_of;
    for (std::size_t t = 0; t < step.positions.size(); ++t) column_of[step.positions[t]] = t;
    std::vector<float> by_slot(n_heads * cache.size());  // (H, T) in slot order
    for (std::size_t s = 0; s < cache.size(); ++s) {
      const auto found = column_of.find(cache.positions(0)[s]);
      if (found == column_of.end()) return false;
      for (std::size_t h = 0; h < n_heads; ++h) {
        by_slot[h * cache.size() + s] = step.attention(h, found->second);
      }
    }
    policy.after_attention(cache, h2o::StepAttention{by_slot.data(), n_heads, cache.size()});
  }
  if (cache.sorted_positions(0) != final_cache.positions()) return false;
  for (std::size_t s = 0; s < cache.size(); ++s) {
    const auto at = std::find(final_cache.positions().begin(), final_cache.positions().end(),
                              cache.positions(0)[s]);
    const float toy_score =
        final_cache.scores()[static_cast<std::size_t>(at - final_cache.positions().begin())];
    if (toy_score != cache.scores(0)[s]) return false;
  }
  return true;
}

void print_cache_row(const std::string& label, const std::vector<std::string>& cells) {
  std::cout << "    " << h2o::pad_right(label, 11);
  for (const std::string& cell : cells) std::cout << h2o::pad_left(cell, 9);
  std::cout << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  return h2o::run_program("04_online_tokens", [&] {
    h2o::ArgParser args("04_online_tokens",
                        "Lesson 04: process tokens one at a time with an H2O budget\n"
                        "(blog learn_04_online.py; Part 2 is the handbook's 50-token demo).");
    args.add_option("seed", "N", "2306", "seed of the random attention in Part 2");
    args.add_option("tokens", "N", "50", "tokens in the Part 2 demonstration (20 to 5000)");
    if (!args.parse(argc, argv)) return 0;
    const auto seed = static_cast<std::uint64_t>(args.integer("seed", 0, 1000000000));
    const auto demo_tokens = static_cast<std::size_t>(args.integer("tokens", 20, 5000));

    std::cout << "Lesson 04: process tokens one at a time (blog: learn_04_online.py)\n\n";

    // ---------------------------------------------------------------- Part 1: the blog's sentence
    // Step 1: each word brings a query and a key (and a value, carried along but not used here).
    // The keys are made up so that "cat" answers most queries well.
    const std::vector<std::string> words = {"The", "cat", "sat", "because", "it", "was", "tired"};
    const std::vector<std::vector<float>> queries = {{0.5f, 0.5f}, {1.0f, 0.5f}, {1.0f, 0.0f},
                                                     {0.5f, 1.0f}, {1.5f, 0.5f}, {1.0f, 1.0f},
                                                     {1.0f, 0.5f}};
    const std::vector<std::vector<float>> keys = {{1.0f, 0.5f}, {2.0f, 1.0f}, {0.5f, 0.0f},
                                                  {0.0f, 0.5f}, {0.5f, 0.5f}, {0.0f, 1.0f},
                                                  {0.5f, 0.0f}};
    const std::size_t head_dim = 2;
    const h2o::CacheBudget budget = h2o::CacheBudget(2, 2);
    std::cout << "Part 1: the blog's sentence, " << budget.describe() << ", one head\n\n";
    std::cout << "Step 1: every word has a query and a key (2 numbers each)\n";
    for (std::size_t t = 0; t < words.size(); ++t) {
      std::cout << "  " << h2o::pad_right(words[t], 9) << "query "
                << h2o::format_list(queries[t], 1) << "  key " << h2o::format_list(keys[t], 1)
                << "\n";
    }

    // Step 2: the online loop. One table per arriving token: the cache after the append, the
    // token's attention, and the scores after adding it; then eviction if over budget.
    std::cout << "\nStep 2: tokens arrive one at a time (append, attend, add, evict)\n";
    h2o::ToyKVCache cache(head_dim);
    std::vector<StepRecord> sentence_steps;
    for (std::size_t t = 0; t < words.size(); ++t) {
      const h2o::Vector key = {keys[t][0], keys[t][1]};          // (D,)
      const h2o::Vector query = {queries[t][0], queries[t][1]};  // (D,)
      const h2o::Vector value = key;  // (D,) rides along; lesson 05 uses values
      cache.append(words[t], static_cast<h2o::Position>(t), key, value);  // 1. append, score 0
      const h2o::AttentionResult seen = h2o::attend(query, cache.keys(), cache.values());  // 2.
      h2o::Matrix attention = xt::zeros<float>({std::size_t{1}, cache.size()});  // (H=1, T)
      xt::view(attention, 0, xt::all()) = seen.weights;
      sentence_steps.push_back(StepRecord{cache.positions(), attention});
      add_mean_attention(cache, attention);  // 3. add to the scores

      std::vector<std::string> word_cells, position_cells, attention_cells, score_cells;
      for (std::size_t s = 0; s < cache.size(); ++s) {
        word_cells.push_back(cache.words()[s]);
        position_cells.push_back(std::to_string(cache.positions()[s]));
        attention_cells.push_back(h2o::fixed(seen.weights(s)));
        score_cells.push_back(h2o::fixed(cache.scores()[s]));
      }
      std::cout << "\n  token " << t << ": '" << words[t] << "' arrives\n";
      print_cache_row("word", word_cells);
      print_cache_row("position", position_cells);
      print_cache_row("attention", attention_cells);
      print_cache_row("score", score_cells);

      const std::size_t held = cache.size();
      const std::vector<std::string> evicted = evict_if_over_budget(cache, budget);  // 4. evict
      if (evicted.empty()) {
        std::cout << "    " << held << " tokens <= budget " << budget.total()
                  << ": nothing to evict\n";
      } else {
        std::cout << "    " << held << " tokens > budget " << budget.total() << ": evict "
                  << h2o::format_list(evicted) << " -> cache " << h2o::format_list(cache.words())
                  << "\n";
      }
    }

    // Step 3: the budget held at every step, so memory stopped growing.
    std::cout << "\nStep 3: after " << words.size() << " tokens\n";
    std::cout << "  full cache: " << words.size() << " tokens and " << 2 * words.size() * head_dim
              << " KV numbers\n";
    std::cout << "  H2O cache: " << cache.size() << " tokens and " << cache.kv_numbers()
              << " KV numbers " << h2o::format_list(cache.words()) << "\n";
    const h2o::ToyKVCache sentence_cache = cache;

    // -------------------------------------------------- Part 2: the handbook's 50-token demo
    // Step 4: recent 8 + heavy 8, 8 heads. Each head's attention is random (uniform 0..1 before
    // softmax), but positions 5 and 10 get +2 before the softmax, about 7 times the weight of an
    // ordinary token. A token's score grows by its attention averaged over the 8 heads, so every
    // head keeps the same tokens. Order of work: the blog's (append first, the token sees itself);
    // the handbook computes attention before the append, which shifts scores slightly.
    const h2o::CacheBudget demo_budget = h2o::CacheBudget(8, 8);
    const std::size_t n_heads = 8;
    const std::vector<h2o::Position> boosted = {5, 10};
    const float boost = 2.0f;
    std::cout << "\nPart 2: the handbook's demo: " << demo_tokens << " tokens, "
              << demo_budget.describe() << ", " << n_heads << " heads, seed " << seed << "\n";
    std::cout << "\nStep 4: random attention, +" << h2o::fixed(boost, 0)
              << " before softmax on positions " << h2o::format_list(boosted)
              << ", scores averaged over heads\n";
    const std::size_t print_every = std::max<std::size_t>(1, demo_tokens / 5);  // 5 snapshots
    h2o::Rng rng(seed);
    h2o::ToyKVCache demo(head_dim);
    std::vector<StepRecord> demo_steps;
    for (std::size_t t = 0; t < demo_tokens; ++t) {
      const h2o::Vector key = {rng.normal(), rng.normal()};    // (D,) random, like the handbook's;
      const h2o::Vector value = {rng.normal(), rng.normal()};  // only carried along here
      demo.append("t" + std::to_string(t), static_cast<h2o::Position>(t), key, value);
      h2o::Matrix attention = xt::zeros<float>({n_heads, demo.size()});  // (H, T)
      for (std::size_t h = 0; h < n_heads; ++h) {
        h2o::Vector logits = xt::zeros<float>({demo.size()});  // (T,)
        for (std::size_t s = 0; s < demo.size(); ++s) {
          logits(s) = rng.uniform();
          const bool is_boosted =
              std::find(boosted.begin(), boosted.end(), demo.positions()[s]) != boosted.end();
          if (is_boosted) logits(s) += boost;
        }
        xt::view(attention, h, xt::all()) = h2o::softmax(logits);
      }
      demo_steps.push_back(StepRecord{demo.positions(), attention});
      add_mean_attention(demo, attention);
      evict_if_over_budget(demo, demo_budget);
      if ((t + 1) % print_every == 0 || t + 1 == demo_tokens) {
        std::cout << "  after " << h2o::pad_left(std::to_string(t + 1), 4) << " tokens: positions "
                  << h2o::format_list(demo.positions()) << "\n";
      }
    }

    // Step 5: the final cache, like the handbook's listing.
    const h2o::KeepPlan final_plan = demo.plan(demo_budget);  // only to label recent vs heavy
    std::cout << "\nStep 5: the final cache holds " << demo.size() << " tokens\n";
    std::cout << "  position   score  kept as\n";
    for (std::size_t s = 0; s < demo.size(); ++s) {
      const h2o::Position p = demo.positions()[s];
      const bool recent = std::find(final_plan.recent.begin(), final_plan.recent.end(), s) !=
                          final_plan.recent.end();
      const bool is_boosted = std::find(boosted.begin(), boosted.end(), p) != boosted.end();
      std::cout << "  " << h2o::pad_left(std::to_string(p), 8)
                << h2o::pad_left(h2o::fixed(demo.scores()[s], 3), 8) << "  "
                << (recent ? "recent" : "heavy") << (is_boosted ? " (boosted)" : "") << "\n";
    }

    // Step 6: check the claim instead of eyeballing it: the two boosted positions are in the cache
    // and hold its two largest scores.
    std::vector<std::size_t> by_score(demo.size());
    for (std::size_t s = 0; s < demo.size(); ++s) by_score[s] = s;
    std::sort(by_score.begin(), by_score.end(),
              [&](std::size_t a, std::size_t b) { return demo.scores()[a] > demo.scores()[b]; });
    std::vector<h2o::Position> top_two;
    for (std::size_t i = 0; i < std::min<std::size_t>(2, by_score.size()); ++i) {
      top_two.push_back(demo.positions()[by_score[i]]);
    }
    std::sort(top_two.begin(), top_two.end());
    std::cout << "\nStep 6: positions 5 and 10 survive with the two largest scores: "
              << yes_no(top_two == boosted) << "\n";
    if (top_two != boosted) {
      std::cout << "  the two largest belong to positions " << h2o::format_list(top_two)
                << ": in a short run, age can still outweigh the boost\n";
    }
    // Which tokens hold the other heavy slots? Nothing boosted them.
    std::vector<h2o::Position> other_heavy;
    for (std::size_t s : final_plan.heavy) {
      const h2o::Position p = demo.positions()[s];
      if (std::find(boosted.begin(), boosted.end(), p) == boosted.end()) other_heavy.push_back(p);
    }
    std::cout << "  the other heavy slots hold positions " << h2o::format_list(other_heavy)
              << ", none of them boosted:\n"
              << "  a token that arrived early was attended to at more steps, so its sum grew\n"
              << "  larger. Accumulated scores favour old tokens; that is real H2O behaviour.\n";

    // ------------------------------------------------- Part 3: the library does the same loop
    std::cout << "\nPart 3: replaying the same attention through the library\n";
    std::cout << "  h2o::H2OPolicy (shared scores) matches Part 1: "
              << yes_no(library_policy_agrees(sentence_steps, budget, sentence_cache)) << "\n";
    std::cout << "  h2o::H2OPolicy (shared scores) matches Part 2: "
              << yes_no(library_policy_agrees(demo_steps, demo_budget, demo)) << "\n";
    return 0;
  });
}
