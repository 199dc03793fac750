// Lesson 08: a full cache against H2O - memory saved, and what it costs in accuracy.
// Mirrors the blog's learn_07_compare_full_vs_h2o.py ("Compare a full cache with H2O").
//
// Steps 1-2 are the blog's toy: 7 tokens, keys and values of 2 numbers, H2O with heavy 2 +
// recent 2, through lesson 04's loop, side by side with a cache that keeps everything. Steps 3-6
// run a tiny Llama-style decoder (random weights, shaped like the stories260K model) token by token
// twice - once keeping every token, once with H2O - and measure, per step, how far the H2O logits
// drift from the full cache's. The new idea is the side-by-side comparison; the caches, H2O and
// the decoder come from the library (lessons 01-07).
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
Row random_row(h2o::Rng& rng, std::size_t n);  // small helpers, defined below main
float largest_gap(const Row& a, const Row& b);
const char* yes_no(bool yes) { return yes ? "yes" : "NO"; }
}  // namespace

int main(int argc, char** argv) try {
  h2o::ArgParser args("08_full_vs_h2o",
                      "Lesson 08: full cache versus H2O, on the blog's toy and on a tiny decoder.");
  args.add_option("tokens", "N", "32", "tokens the tiny decoder processes (1..512)")
      .add_option("scoring", "MODE", "per-head", "H2O scoring: per-head or shared")
      .add_option("seed", "N", "8", "seed for the toy vectors, the decoder weights and the tokens");
  if (!h2o::add_budget_options(args, 4, 4, "slots per layer and KV head").parse(argc, argv)) {
    return 0;
  }
  const auto n_tokens = static_cast<std::size_t>(args.integer("tokens", 1, 512));
  const h2o::CacheBudget budget = h2o::budget_from_options(args);
  const h2o::ScoringMode mode = h2o::parse_scoring_mode(args.text("scoring"));
  const auto seed = static_cast<std::uint64_t>(args.integer("seed", 0, 1'000'000'000));
  std::cout << "Lesson 08: full cache compared with H2O (blog: learn_07_compare_full_vs_h2o.py)\n";

  // Step 1: the blog's toy. Both caches read the same made-up query, key and value per token; the
  // full cache keeps every row, H2O (heavy 2 + recent 2) runs lesson 04's loop.
  const std::vector<std::string> words = {"The", "cat", "sat", "on", "the", "mat", "because"};
  const std::size_t head_dim = 2;
  const h2o::CacheBudget toy_budget(2, 2);
  h2o::Rng rng(seed);
  h2o::ToyKVCache full_toy, h2o_toy;
  std::cout << "\nStep 1: the blog's toy, " << words.size() << " tokens, keys and values of "
            << head_dim << " numbers,\n        H2O " << toy_budget.describe() << "\n\n";
  h2o::Table toy_table({"token", "full rows", "H2O rows", "H2O keeps", "|full out - H2O out|"});
  for (std::size_t t = 0; t < words.size(); ++t) {
    const Row q = random_row(rng, head_dim), k = random_row(rng, head_dim),
              v = random_row(rng, head_dim);
    full_toy.append(words[t], static_cast<h2o::Position>(t), k, v);
    const Row full_out =
        h2o::attention_output(h2o::attention_weights(q, full_toy.key_cache), full_toy.value_cache);
    h2o_toy.append(words[t], static_cast<h2o::Position>(t), k, v);
    const std::vector<float> attention = h2o::attention_weights(q, h2o_toy.key_cache);
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
            << " tokens and " << h2o_toy.kv_numbers() << " KV numbers\n\n";

  // Step 3: one tiny decoder's weights, shared by two runs with different caches.
  const h2o::ModelConfig config = h2o::stories260k_shape();
  auto weights = std::make_shared<const h2o::DecoderWeights>(h2o::random_weights(config, seed));
  h2o::Decoder full(weights, std::make_unique<h2o::FullCachePolicy>());
  h2o::Decoder compressed(weights, std::make_unique<h2o::H2OPolicy>(budget, mode));
  std::cout << "Step 3: a tiny decoder with random weights\n        (" << config.describe()
            << ")\n        reads " << n_tokens << " random tokens twice: full cache, H2O "
            << budget.describe() << "\n\n";

  // Step 4: token by token, compare the logits.
  h2o::Rng token_rng(seed + 1);
  std::cout << "Step 4: both read the same tokens; compare their logits at every step\n\n";
  h2o::Table table(
      {"pos", "token", "full KV tokens", "H2O KV tokens", "max |logit diff|", "same top token"});
  std::size_t agreements = 0;
  long first_eviction = -1, first_difference = -1;
  for (std::size_t t = 0; t < n_tokens; ++t) {
    const auto token =
        static_cast<int>(token_rng.below(static_cast<std::uint32_t>(config.vocab_size)));
    const h2o::Vector full_logits = full.forward(token);  // (V,) a copy: the buffer is reused
    const h2o::Vector& h2o_logits = compressed.forward(token);
    const float gap = xt::amax(xt::abs(full_logits - h2o_logits))();
    const bool same_top = h2o::sample_argmax(full_logits.data(), config.vocab_size) ==
                          h2o::sample_argmax(h2o_logits.data(), config.vocab_size);
    agreements += same_top ? 1 : 0;
    if (first_eviction < 0 && compressed.evicted_tokens(0) > 0)
      first_eviction = static_cast<long>(t);
    if (first_difference < 0 && gap > 0.0f) first_difference = static_cast<long>(t);
    table.row(t, token, full.cache(0).size(), compressed.cache(0).size(), fixed(gap, 6),
              same_top ? "yes" : "no");
  }
  table.print(std::cout);

  // Step 5: memory at the end (float32: 4 bytes a number), every layer and KV head.
  const double share = static_cast<double>(compressed.live_kv_bytes()) / full.live_kv_bytes();
  std::cout << "\nStep 5: KV bytes at the end: full " << full.live_kv_bytes() << ", H2O "
            << compressed.live_kv_bytes() << " (" << fixed(100.0 * share, 1) << "% of full)\n";

  // Step 6: what the numbers say. The logits must be identical until the first eviction: before
  // it, both caches hold exactly the same tokens.
  const bool evicted = first_eviction >= 0;
  const bool identical = first_difference < 0 || (evicted && first_difference > first_eviction);
  const std::string verdict =
      evicted ? "first eviction at position " + std::to_string(first_eviction) +
                    "; logits identical through that position: " + yes_no(identical)
              : std::string("H2O never had to evict; logits identical at every step: ") +
                    yes_no(identical);
  std::cout << "\nStep 6: what it shows\n  " << verdict << "\n  the top token agreed on "
            << agreements << " of " << n_tokens
            << " steps (random weights; lesson 09: a trained model)\n";
  return 0;
} catch (...) {
  return h2o::exit_with_error(argv[0]);
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
