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
// LessonH2O above main is that contract written out in a few lines.
// Steps 3-5 run a tiny Llama-style decoder (RANDOM weights, shaped like the stories260K model)
// token by token three times - keeping every token, with LessonH2O, and with the library's
// h2o::H2OPolicy - and compare their logits at every step. Random weights make every logit noise,
// so a small change in the cache moves them a lot: lesson 09 measures what H2O costs a trained
// model.
//
// Dimension legend: D = numbers in a key or value, V = vocabulary size.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "h2o/app/program.hpp"
#include "h2o/app/step_option.hpp"
#include "h2o/attention/attention.hpp"
#include "h2o/attention/query_groups.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/random.hpp"
#include "h2o/base/xtensor.hpp"
#include "h2o/cache/selection.hpp"
#include "h2o/cache/tensor_cache.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/model/weights.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "h2o/report/table.hpp"
#include "h2o/text/sampler.hpp"

using h2o::fixed;

namespace {
// n seeded standard-normal numbers (n,).
h2o::Vector random_vector(h2o::Rng& rng, std::size_t n) {
  h2o::Vector v = h2o::Vector::from_shape({n});
  for (float& x : v) x = rng.normal();
  return v;
}

// "[The, cat, because, mat]": the words at a cache's positions, in the cache's row order.
std::string words_at(const std::vector<std::string>& words,
                     const std::vector<h2o::Position>& positions) {
  std::vector<std::string> kept;
  for (h2o::Position p : positions) kept.push_back(words.at(static_cast<std::size_t>(p)));
  return h2o::format_list(kept);
}

// Step 3: lesson 04's H2O as a cache policy, one object per layer. The decoder calls observe()
// once per token with every query head's attention, then, when the cache holds more than keep()
// (the budget handed to LayerPolicy), choose_victims() for the one slot per KV head to evict.
// Per-head scoring: a KV head's score grows by the mean attention of the query heads that read it.
class LessonH2O final : public h2o::LayerPolicy {
 public:
  LessonH2O(h2o::CacheBudget budget, const h2o::LayerShape& shape)
      : LayerPolicy(shape, budget.total()), budget_(budget) {}
  std::string name() const override { return "lesson-h2o"; }
  std::string describe() const override { return "lesson 08's H2O, " + budget_.describe(); }

  // See the attention, update the scores: h2o_scores = h2o_scores + attention.
  void observe(h2o::LayerKVCache& cache, const h2o::StepAttention& attention) override {
    const h2o::QueryGroups groups(attention.n_heads, cache.n_kv_heads(), "lesson 08");
    for (std::size_t h = 0; h < attention.n_heads; ++h) {
      const std::size_t g = groups.kv_head_of(h);  // the KV head query head h reads
      for (std::size_t slot = 0; slot < cache.size(g); ++slot) {
        cache.scores(g)[slot] += attention.head(h)[slot] / static_cast<float>(groups.size());
      }
    }
  }
  // Choose the victims: per KV head, the one slot lesson 01's rule does not keep.
  void choose_victims(h2o::LayerKVCache& cache, std::size_t* victims) override {
    for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
      const std::vector<h2o::Position> positions(cache.positions(g),
                                                 cache.positions(g) + cache.size(g));
      const std::vector<float> h2o_scores(cache.scores(g), cache.scores(g) + cache.size(g));
      victims[g] = h2o::plan_keep(positions, h2o_scores, budget_).evicted.at(0);
    }
  }

 private:
  h2o::CacheBudget budget_;
};

const char* yes_no(bool yes) { return yes ? "yes" : "NO"; }
}  // namespace

int run_lesson(int argc, char** argv) {
  // Options (see --help): --tokens, --seed, --heavy, --recent and --step (for a classroom).
  h2o::TokenLessonOptions options = h2o::start_token_lesson(
      argc, argv, "Lesson 08: full cache versus H2O, on the blog's toy and on a tiny decoder.",
      h2o::TokensOption{32, 512, "tokens the tiny decoder processes"},
      h2o::SeedOption{8, "seed for the toy vectors, the decoder weights and the tokens"},
      h2o::BudgetOption{4, 4, "slots per layer and KV head"});
  const std::size_t n_tokens = options.tokens;
  const h2o::CacheBudget budget = options.budget;
  std::cout << "Lesson 08: full cache compared with H2O (blog: learn_07_compare_full_vs_h2o.py)\n";

  // Step 1: the blog's toy. Both caches read the same made-up query, key and value per token; the
  // full cache keeps every row, H2O (heavy 2 + recent 2) runs lesson 04's loop on lesson 07's
  // tensor cache, with lesson 05's h2o::attend.
  const std::vector<std::string> words = {"The", "cat", "sat", "on", "the", "mat", "because"};
  const std::size_t head_dim = 2;
  const std::size_t heavy_size = 2;
  const std::size_t recent_size = 2;
  const h2o::CacheBudget toy_budget(heavy_size, recent_size);
  h2o::Rng rng(options.seed);
  h2o::TensorKVCache full_toy(head_dim), h2o_toy(head_dim);
  std::cout << "\nStep 1: the blog's toy, " << words.size() << " tokens, keys and values of "
            << head_dim << " numbers,\n        H2O " << toy_budget.describe() << "\n\n";
  h2o::Table toy_table({"token", "full rows", "H2O rows", "H2O keeps", "|full out - H2O out|"});
  for (std::size_t t = 0; t < words.size(); ++t) {
    const h2o::Vector query = random_vector(rng, head_dim), new_key = random_vector(rng, head_dim),
                      new_value = random_vector(rng, head_dim);  // (D,) each
    full_toy.append(new_key, new_value, static_cast<h2o::Position>(t));
    const h2o::AttentionResult full = h2o::attend(query, full_toy.key_cache, full_toy.value_cache);
    h2o_toy.append(new_key, new_value, static_cast<h2o::Position>(t));
    const h2o::AttentionResult h2o = h2o::attend(query, h2o_toy.key_cache, h2o_toy.value_cache);
    // h2o_scores = h2o_scores + attention
    h2o_toy.h2o_scores = h2o_toy.h2o_scores + h2o.weights;
    if (h2o_toy.size() > toy_budget.total()) {
      h2o_toy.keep(h2o::plan_keep(h2o_toy.positions, h2o_toy.h2o_scores, toy_budget).kept);
    }
    toy_table.row(words[t], full_toy.size(), h2o_toy.size(), words_at(words, h2o_toy.positions),
                  fixed(xt::amax(xt::abs(full.output - h2o.output))(), 4));
  }
  toy_table.print(std::cout);

  // Step 2: the blog's comparison: each token holds a key and a value of 2 numbers.
  std::cout << "\nStep 2: Full cache: " << full_toy.size() << " tokens and "
            << full_toy.kv_numbers() << " KV numbers\n        H2O cache: " << h2o_toy.size()
            << " tokens and " << h2o_toy.kv_numbers() << " KV numbers\n";

  // Step 3: the contract (LessonH2O above main), and a tiny decoder's weights shared by three
  // runs: full cache, LessonH2O, and the library's h2o::H2OPolicy, which lessons 09-11 use.
  const h2o::ModelConfig config = h2o::stories260k_shape();
  auto weights =
      std::make_shared<const h2o::DecoderWeights>(h2o::random_weights(config, options.seed));
  h2o::Decoder full(weights, h2o::policy_of<h2o::FullCachePolicy>());
  h2o::Decoder lesson(weights, h2o::policy_of<LessonH2O>(budget));
  h2o::Decoder library(weights, h2o::policy_of<h2o::H2OPolicy>(budget));
  std::cout << "\nStep 3: a cache policy sees each step's attention (observe: add it to the "
            << "scores)\n        and names the token to evict (choose_victims: lesson 01's rule);"
            << "\n        LessonH2O above main writes that out in under 30 lines.\n"
            << "        A tiny decoder with RANDOM weights\n        (" << config.describe()
            << ")\n        reads " << n_tokens << " random tokens three times: full cache, "
            << "LessonH2O and h2o::H2OPolicy,\n        both " << budget.describe() << "\n"
            << "        logits: the decoder's score for every token of the vocabulary to come "
            << "next\n        (softmax, lesson 05, makes them probabilities); the top "
            << "token (top-1) scores highest\n";

  // Step 4: token by token, compare the logits of the three runs; a classroom (--step) steps
  // through H2O's layer-0 cache.
  h2o::Rng token_rng(options.seed + 1);
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
    rows.push_back(
        {std::to_string(t), std::to_string(token), std::to_string(full.cache(0).uniform_size()),
         std::to_string(lesson.cache(0).uniform_size()), fixed(gap, 6), same_top ? "yes" : "no"});
    options.step.show("token " + std::to_string(t) + ": max |logit diff| " + fixed(gap, 6),
                      h2o::cache_rows("H2O layer 0", lesson.cache(0)), budget);
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

int main(int argc, char** argv) { return h2o::run_program(argc, argv, run_lesson); }
