// Lesson 08: a full cache against H2O - memory saved, and what it costs in accuracy.
// Mirrors the blog's learn_07_compare_full_vs_h2o.py ("Compare a full cache with H2O").
//
// Steps 1-2 are the blog's toy: 7 tokens, keys and values of 2 numbers, H2O with heavy 2 +
// recent 2, through lesson 04's loop, side by side with a cache that keeps everything.
// Step 3 shows how the library's decoder lets a cache policy shape its caches: per layer and token
// the decoder appends the new key and value and computes the attention, then hands the cache and
// the attention to the policy, which
//   observe         sees the attention and updates its per-token scores (H2O: adds it, lesson 02);
//   choose_victims  names the token each KV head evicts once the cache is over budget (lesson 01).
// LessonH2O below is that contract written out in a few lines.
// Steps 3-5 run a tiny Llama-style decoder (RANDOM weights, shaped like the stories260K model)
// token by token three times - keeping every token, with LessonH2O, and with the library's
// h2o::H2OPolicy - and compare their logits at every step. Random weights make every logit noise,
// so a small change in the cache moves them a lot: lesson 09 measures what H2O costs a trained
// model.
//
// Dimension legend: D = numbers in a key or value, V = vocabulary size.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <vector>
#include "h2o/base/xtensor.hpp"

#include "h2o/app/cli.hpp"
#include "h2o/app/step_option.hpp"
#include "h2o/attention/attention.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/random.hpp"
#include "h2o/cache/selection.hpp"
#include "h2o/cache/toy_cache.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/model/weights.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "h2o/report/table.hpp"
#include "h2o/text/sampler.hpp"

using h2o::fixed;
using h2o::Row;

namespace {
// Step 3: lesson 04's H2O as a cache policy. The decoder calls observe() once per layer and token
// with every query head's attention, then, when the cache holds more than max_tokens(),
// choose_victims() for the one slot per KV head to evict. Per-head scoring: a KV head's score
// grows by the mean attention of the query heads that read it.
class LessonH2O final : public h2o::CachePolicy {
 public:
  explicit LessonH2O(h2o::CacheBudget budget) : budget_(budget) {}
  std::string name() const override { return "lesson-h2o"; }
  std::string describe() const override { return "lesson 08's H2O, " + budget_.describe(); }
  std::size_t max_tokens(std::size_t max_positions) const override {
    return std::min(budget_.total(), max_positions);
  }

  // See the attention, update the scores: h2o_scores = h2o_scores + attention.
  void observe(h2o::LayerKVCache& cache, const h2o::StepAttention& attention) override {
    const std::size_t group = attention.n_heads / cache.n_kv_heads();  // query heads per KV head
    for (std::size_t h = 0; h < attention.n_heads; ++h) {
      for (std::size_t slot = 0; slot < cache.size(); ++slot) {
        cache.scores(h / group)[slot] += attention.head(h)[slot] / static_cast<float>(group);
      }
    }
  }
  // Choose the victims: per KV head, the one slot lesson 01's rule does not keep.
  void choose_victims(h2o::LayerKVCache& cache, std::size_t* victims) override {
    for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
      const std::vector<h2o::Position> positions(cache.positions(g),
                                                 cache.positions(g) + cache.size());
      const std::vector<float> h2o_scores(cache.scores(g), cache.scores(g) + cache.size());
      victims[g] = h2o::plan_keep(positions, h2o_scores, budget_).evicted.at(0);
    }
  }

 private:
  h2o::CacheBudget budget_;
};

Row random_row(h2o::Rng& rng, std::size_t n);  // small helpers, defined below main
float largest_gap(const Row& a, const Row& b);
const char* yes_no(bool yes) { return yes ? "yes" : "NO"; }
}  // namespace

int main(int argc, char** argv) {
  h2o::report_uncaught_errors(argv[0]);  // any error: one line on stderr, no abort
  h2o::ArgParser args("08_full_vs_h2o",
                      "Lesson 08: full cache versus H2O, on the blog's toy and on a tiny decoder.");
  args.add_option("tokens", "N", "32", "tokens the tiny decoder processes (1..512)")
      .add_option("seed", "N", "8", "seed for the toy vectors, the decoder weights and the tokens");
  h2o::add_step_flag(args);  // --step: wait for Enter after each token and draw H2O's cache
  if (!h2o::add_budget_options(args, 4, 4, "slots per layer and KV head").parse(argc, argv)) {
    return 0;
  }
  h2o::StepView step = h2o::step_view(args);
  const auto n_tokens = static_cast<std::size_t>(args.integer("tokens", 1, 512));
  const h2o::CacheBudget budget = h2o::budget_from_options(args);
  const auto seed = static_cast<std::uint64_t>(args.integer("seed", 0, 1'000'000'000));
  std::cout << "Lesson 08: full cache compared with H2O (blog: learn_07_compare_full_vs_h2o.py)\n";

  // Step 1: the blog's toy. Both caches read the same made-up query, key and value per token; the
  // full cache keeps every row, H2O (heavy 2 + recent 2) runs lesson 04's loop.
  const std::vector<std::string> words = {"The", "cat", "sat", "on", "the", "mat", "because"};
  const std::size_t head_dim = 2;
  const std::size_t heavy_size = 2;
  const std::size_t recent_size = 2;
  const h2o::CacheBudget toy_budget(heavy_size, recent_size);
  h2o::Rng rng(seed);
  h2o::ToyKVCache full_toy, h2o_toy;
  std::cout << "\nStep 1: the blog's toy, " << words.size() << " tokens, keys and values of "
            << head_dim << " numbers,\n        H2O " << toy_budget.describe() << "\n\n";
  h2o::Table toy_table({"token", "full rows", "H2O rows", "H2O keeps", "|full out - H2O out|"});
  for (std::size_t t = 0; t < words.size(); ++t) {
    const Row query = random_row(rng, head_dim), new_key = random_row(rng, head_dim),
              new_value = random_row(rng, head_dim);
    full_toy.append(words[t], static_cast<h2o::Position>(t), new_key, new_value);
    const Row full_out = h2o::attention_output(h2o::attention_weights(query, full_toy.key_cache),
                                               full_toy.value_cache);
    h2o_toy.append(words[t], static_cast<h2o::Position>(t), new_key, new_value);
    const std::vector<float> attention = h2o::attention_weights(query, h2o_toy.key_cache);
    const Row h2o_out = h2o::attention_output(attention, h2o_toy.value_cache);
    h2o::accumulate_attention(h2o_toy.h2o_scores, attention);
    if (h2o_toy.size() > toy_budget.total()) {
      h2o_toy.keep(h2o::plan_keep(h2o_toy.positions, h2o_toy.h2o_scores, toy_budget).kept);
    }
    toy_table.row(words[t], full_toy.size(), h2o_toy.size(), h2o::format_list(h2o_toy.tokens),
                  fixed(largest_gap(full_out, h2o_out), 4));
  }
  toy_table.print(std::cout);

  // Step 2: the blog's comparison: each token holds a key and a value of 2 numbers.
  std::cout << "\nStep 2: Full cache: " << full_toy.size() << " tokens and "
            << full_toy.kv_numbers() << " KV numbers\n        H2O cache: " << h2o_toy.size()
            << " tokens and " << h2o_toy.kv_numbers() << " KV numbers\n";

  // Step 3: the contract (LessonH2O above main), and a tiny decoder's weights shared by three
  // runs: full cache, LessonH2O, and the library's h2o::H2OPolicy, which lessons 09-11 use.
  const h2o::ModelConfig config = h2o::stories260k_shape();
  auto weights = std::make_shared<const h2o::DecoderWeights>(h2o::random_weights(config, seed));
  h2o::Decoder full(weights, std::make_unique<h2o::FullCachePolicy>());
  h2o::Decoder lesson(weights, std::make_unique<LessonH2O>(budget));
  h2o::Decoder library(weights, std::make_unique<h2o::H2OPolicy>(budget));
  std::cout << "\nStep 3: a cache policy sees each step's attention (observe: add it to the "
            << "scores)\n        and names the token to evict (choose_victims: lesson 01's rule);"
            << "\n        LessonH2O above main writes that out in about 20 lines.\n"
            << "        A tiny decoder with RANDOM weights\n        (" << config.describe()
            << ")\n        reads " << n_tokens << " random tokens three times: full cache, "
            << "LessonH2O and h2o::H2OPolicy,\n        both " << budget.describe() << "\n";

  // Step 4: token by token, compare the logits of the three runs.
  h2o::Rng token_rng(seed + 1);
  std::vector<std::vector<std::string>> rows;  // (tokens, 6) the table's cells, printed in part
  std::size_t agreements = 0, policies_agree = 0;
  long first_eviction = -1, first_difference = -1;
  for (std::size_t t = 0; t < n_tokens; ++t) {
    const auto token =
        static_cast<int>(token_rng.below(static_cast<std::uint32_t>(config.vocab_size)));
    const h2o::Vector full_logits = full.forward(token);   // (V,) a copy: the buffer is reused
    const h2o::Vector h2o_logits = lesson.forward(token);  // (V,)
    const h2o::Vector& library_logits = library.forward(token);
    policies_agree += h2o_logits == library_logits ? 1 : 0;
    const float gap = xt::amax(xt::abs(full_logits - h2o_logits))();
    const bool same_top = h2o::sample_argmax(full_logits.data(), config.vocab_size) ==
                          h2o::sample_argmax(h2o_logits.data(), config.vocab_size);
    agreements += same_top ? 1 : 0;
    if (first_eviction < 0 && lesson.evicted_tokens(0) > 0) first_eviction = static_cast<long>(t);
    if (first_difference < 0 && gap > 0.0f) first_difference = static_cast<long>(t);
    rows.push_back({std::to_string(t), std::to_string(token), std::to_string(full.cache(0).size()),
                    std::to_string(lesson.cache(0).size()), fixed(gap, 6),
                    same_top ? "yes" : "no"});
    step.rows("H2O layer 0", lesson.cache(0), budget);
    step.pause("token " + std::to_string(t) + ": max |logit diff| " + fixed(gap, 6));
  }
  // What the numbers say, first. The logits must be identical until the first eviction: before
  // it, both caches hold exactly the same tokens. Then the rows around that eviction.
  const bool evicted = first_eviction >= 0;
  const bool identical = first_difference < 0 || (evicted && first_difference > first_eviction);
  std::cout << "\nStep 4: what it shows\n  "
            << (evicted ? "first eviction at position " + std::to_string(first_eviction) +
                              "; logits identical through that position: " + yes_no(identical)
                        : std::string("H2O never had to evict; logits identical at every step: ") +
                              yes_no(identical))
            << "\n  the top token agreed on " << agreements << " of " << n_tokens
            << " steps; the weights are random, so the logits are noise\n  that any change in "
            << "the cache moves (lesson 09: a trained model)\n  LessonH2O and h2o::H2OPolicy "
            << "gave the same logits at " << policies_agree << " of " << n_tokens << " steps\n";
  const std::size_t around = evicted ? static_cast<std::size_t>(first_eviction) : 0;
  const std::size_t first_row = around > 2 ? around - 2 : 0;
  const std::size_t end_row = std::min(n_tokens, first_row + 6);
  h2o::Table table(
      {"pos", "token", "full KV tokens", "H2O KV tokens", "max |logit diff|", "same top token"});
  for (std::size_t t = first_row; t < end_row; ++t) table.add(rows[t]);
  std::cout << "\n  the logits of full and LessonH2O at positions " << first_row << "-"
            << end_row - 1 << " of 0-" << n_tokens - 1 << "\n";
  table.print(std::cout);

  // Step 5: memory at the end (float32: 4 bytes a number), every layer and KV head.
  const double share = static_cast<double>(lesson.live_kv_bytes()) / full.live_kv_bytes();
  std::cout << "\nStep 5: KV bytes at the end: full " << full.live_kv_bytes() << ", H2O "
            << lesson.live_kv_bytes() << " (" << fixed(100.0 * share, 1) << "% of full)\n";
  return 0;
}

namespace {
// n seeded standard-normal numbers.
Row random_row(h2o::Rng& rng, std::size_t n) {
  Row row(n);
  for (float& x : row) x = rng.normal();
  return row;
}

float largest_gap(const Row& a, const Row& b) {
  float gap = 0.0f;
  for (std::size_t i = 0; i < a.size(); ++i) gap = std::max(gap, std::abs(a[i] - b[i]));
  return gap;
}
}  // namespace
