// Lesson 08: a full cache against H2O — memory saved, and what it costs in accuracy.
//
// Mirrors the blog's learn_07_compare_full_vs_h2o.py. Steps 1-2 are the blog's toy: 7 tokens, keys
// and values of 2 numbers, H2O with heavy 2 + recent 2. Steps 3-6 run a tiny Llama-style decoder
// (random weights, shaped like the stories260K model) token by token twice — once keeping every
// token, once with H2O — and measure, per step, how far the H2O logits drift from the full cache's.
// The new idea here is the side-by-side comparison; the caches, H2O and the decoder come from the
// library (lessons 01-07).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <vector>
#include <xtensor/xmath.hpp>

#include "h2o/app/cli.hpp"
#include "h2o/attention/attention.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/random.hpp"
#include "h2o/cache/toy_cache.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/model/weights.hpp"
#include "h2o/policy/h2o_policy.hpp"

using h2o::fixed;
using h2o::pad_left;
using h2o::pad_right;

namespace {

h2o::Vector random_vector(h2o::Rng& rng, std::size_t n) {
  h2o::Vector v = xt::zeros<float>({n});
  for (auto& x : v) x = rng.normal();
  return v;
}

std::size_t argmax(const h2o::Vector& v) {
  return static_cast<std::size_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

// Steps 1-2: the blog's toy comparison.
void toy_comparison(std::uint64_t seed) {
  const std::vector<std::string> words = {"The", "cat", "sat", "on", "the", "mat", "because"};
  const std::size_t head_dim = 2;
  const h2o::CacheBudget budget{2, 2};
  h2o::Rng rng(seed);
  h2o::ToyKVCache full(head_dim), h2o_cache(head_dim);

  std::cout << "Step 1: the blog's toy, " << words.size() << " tokens, keys and values of "
            << head_dim << " numbers, H2O " << budget.describe() << "\n\n";
  std::cout << "  token     full rows  H2O rows  H2O keeps                 |full out - H2O out|\n";
  for (std::size_t t = 0; t < words.size(); ++t) {
    const h2o::Vector q = random_vector(rng, head_dim), k = random_vector(rng, head_dim),
                      v = random_vector(rng, head_dim);
    const auto position = static_cast<h2o::Position>(t);

    full.append(words[t], position, k, v);
    const h2o::Vector full_out = h2o::attend(q, full.keys(), full.values()).output;  // (D,)

    h2o_cache.append(words[t], position, k, v);
    const h2o::AttentionResult step = h2o::attend(q, h2o_cache.keys(), h2o_cache.values());
    h2o_cache.add_attention(step.weights);
    h2o_cache.keep(h2o_cache.plan(budget).kept);

    const float gap = xt::amax(xt::abs(full_out - step.output))();
    std::cout << "  " << pad_right(words[t], 8) << pad_left(std::to_string(full.size()), 11)
              << pad_left(std::to_string(h2o_cache.size()), 10) << "  "
              << pad_right(h2o::format_list(h2o_cache.words()), 27) << fixed(gap, 4) << "\n";
  }
  std::cout << "\nStep 2: what each cache holds after the last token\n";
  std::cout << "  Full cache: " << full.size() << " tokens and " << full.kv_numbers()
            << " KV numbers\n";
  std::cout << "  H2O cache: " << h2o_cache.size() << " tokens and " << h2o_cache.kv_numbers()
            << " KV numbers\n";
  std::cout << "  (each token holds a key and a value of " << head_dim
            << " numbers: " << 2 * head_dim << " numbers a token)\n";
  std::cout << "  The outputs agree until the cache first drops a token; after that H2O is an\n"
               "  approximation.\n\n";
}

}  // namespace

int main(int argc, char** argv) {
  return h2o::run_program("08_full_vs_h2o", [&] {
    h2o::ArgParser args(
        "08_full_vs_h2o",
        "Lesson 08: full cache versus H2O, on the blog's toy and on a tiny decoder.");
    args.add_option("tokens", "N", "32", "tokens the tiny decoder processes (1..512)");
    h2o::add_budget_options(args, 4, 4, "slots per layer and KV head");
    args.add_option("scoring", "MODE", "per-head", "H2O scoring: per-head or shared");
    args.add_option("seed", "N", "8",
                    "seed for the toy vectors, the decoder weights and the tokens");
    if (!args.parse(argc, argv)) return 0;
    const auto n_tokens = static_cast<std::size_t>(args.integer("tokens", 1, 512));
    const h2o::CacheBudget budget = h2o::budget_from_options(args);
    const h2o::ScoringMode mode = h2o::parse_scoring_mode(args.text("scoring"));
    const auto seed = static_cast<std::uint64_t>(args.integer("seed", 0, 1'000'000'000));

    std::cout
        << "Lesson 08: full cache compared with H2O (blog: learn_07_compare_full_vs_h2o.py)\n\n";
    // Steps 1-2.
    toy_comparison(seed);

    // Step 3: one tiny decoder's weights, shared by two runs with different caches.
    const h2o::ModelConfig config = h2o::stories260k_shape();
    auto weights = std::make_shared<const h2o::DecoderWeights>(h2o::random_weights(config, seed));
    h2o::Decoder full(weights, std::make_unique<h2o::FullCachePolicy>());
    h2o::Decoder compressed(weights, std::make_unique<h2o::H2OPolicy>(budget, mode));
    std::cout << "Step 3: a tiny decoder (" << config.describe() << ")\n"
              << "        with random weights, fed the same " << n_tokens
              << " random tokens twice:\n"
              << "        " << full.policy().describe() << "\n        "
              << compressed.policy().describe() << "\n\n";

    // Step 4: token by token, compare the logits.
    h2o::Rng token_rng(seed + 1);
    std::cout << "Step 4: both read the same tokens; compare their logits at every step\n\n";
    std::cout << "  pos  token  full KV tokens  H2O KV tokens  max |logit diff|  same top token\n";
    std::size_t agreements = 0;
    long first_eviction = -1, first_difference = -1;
    for (std::size_t t = 0; t < n_tokens; ++t) {
      const int token =
          static_cast<int>(token_rng.below(static_cast<std::uint32_t>(config.vocab_size)));
      // (V,) copied, because the decoder reuses its logits buffer on the next call.
      const h2o::Vector full_logits = full.forward(token);
      const h2o::Vector& h2o_logits = compressed.forward(token);
      const float gap = xt::amax(xt::abs(full_logits - h2o_logits))();
      const bool same_top = argmax(full_logits) == argmax(h2o_logits);
      agreements += same_top;
      if (first_eviction < 0 && compressed.evicted_tokens(0) > 0)
        first_eviction = static_cast<long>(t);
      if (first_difference < 0 && gap > 0.0f) first_difference = static_cast<long>(t);
      std::cout << "  " << pad_left(std::to_string(t), 3) << "  "
                << pad_left(std::to_string(token), 5)
                << pad_left(std::to_string(full.cache(0).size()), 16)
                << pad_left(std::to_string(compressed.cache(0).size()), 15)
                << pad_left(fixed(gap, 6), 18) << pad_left(same_top ? "yes" : "no", 16) << "\n";
    }

    // Step 5: memory per layer at the end (float32: 4 bytes a number).
    std::cout << "\nStep 5: the caches after the last token, layer by layer\n";
    std::cout << "\n  layer  full: tokens  KV numbers   bytes    H2O: tokens  KV numbers   bytes\n";
    for (std::size_t l = 0; l < config.n_layers; ++l) {
      const h2o::LayerKVCache& a = full.cache(l);
      const h2o::LayerKVCache& b = compressed.cache(l);
      std::cout << "  " << pad_left(std::to_string(l), 5) << pad_left(std::to_string(a.size()), 14)
                << pad_left(std::to_string(a.live_kv_numbers()), 12)
                << pad_left(std::to_string(a.live_kv_bytes()), 8)
                << pad_left(std::to_string(b.size()), 13)
                << pad_left(std::to_string(b.live_kv_numbers()), 12)
                << pad_left(std::to_string(b.live_kv_bytes()), 8) << "\n";
    }
    std::cout << "  total bytes: full " << full.live_kv_bytes() << ", H2O "
              << compressed.live_kv_bytes() << " ("
              << fixed(100.0 * static_cast<double>(compressed.live_kv_bytes()) /
                           static_cast<double>(full.live_kv_bytes()),
                       1)
              << "% of full)\n";

    // Step 6: what the numbers say.
    std::cout << "\nStep 6: what it shows\n";
    if (first_eviction < 0) {
      std::cout << "  H2O never had to evict (its budget covers every token).\n"
                << "  logits identical to the full cache at every step: "
                << (first_difference < 0 ? "yes" : "NO") << "\n";
    } else {
      std::cout << "  first eviction during position " << first_eviction
                << "; logits identical through that position: "
                << (first_difference < 0 || first_difference > first_eviction ? "yes" : "NO")
                << "\n";
      std::cout << "  first logit difference at position "
                << (first_difference < 0 ? std::string("none") : std::to_string(first_difference))
                << "\n";
    }
    std::cout << "  the top token agreed on " << agreements << " of " << n_tokens << " steps.\n";
    std::cout
        << "  Full cache = more memory, exact result; H2O = bounded memory, approximate result.\n"
           "  (Random weights make a poor language model; lesson 09 repeats this on a real one.)\n";
    return 0;
  });
}
