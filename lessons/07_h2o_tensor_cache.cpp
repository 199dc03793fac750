// Lesson 07: H2O over real key and value tensors, with several attention heads.
//
// Mirrors the blog's learn_06_h2o_tensor_cache.py. Every head has its own keys, values and
// attention, so "which tokens matter" can differ from head to head. Two ways to score:
//   per-head (the H2O paper's official code): each head adds up its OWN attention and keeps its own
//     heavy hitters, so different heads may keep different tokens;
//   shared (the handbook's H2OCache): the attention is averaged over heads first, so every head
//     keeps the same tokens.
// The keep/evict rule (lesson 01), adding attention to scores (02), moving rows together (03) and
// attention itself (05) come from the library; the new idea written out here is the scoring mode.
#include <iostream>
#include <string>
#include <vector>
#include <xtensor/xview.hpp>

#include "h2o/app/cli.hpp"
#include "h2o/attention/attention.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/random.hpp"
#include "h2o/cache/kv_cache.hpp"
#include "h2o/cache/toy_cache.hpp"
#include "h2o/policy/h2o_policy.hpp"

using h2o::format_list;

namespace {
constexpr std::size_t kHeads = 3, kHeadDim = 4;

// The made-up per-head vectors of one token.
struct TokenVectors {
  h2o::Matrix queries;  // (H, D)
  h2o::Matrix keys;     // (H, D)
  h2o::Matrix values;   // (H, D)
};

// Head h's queries all point roughly along direction h; token `favourite[h]` gets a key along the
// same direction in head h, so head h keeps looking back at it. Other keys are small noise.
TokenVectors make_token(h2o::Rng& rng, std::size_t position,
                        const std::vector<std::size_t>& favourite) {
  TokenVectors tv{xt::zeros<float>({kHeads, kHeadDim}), xt::zeros<float>({kHeads, kHeadDim}),
                  xt::zeros<float>({kHeads, kHeadDim})};
  for (std::size_t h = 0; h < kHeads; ++h) {
    for (std::size_t d = 0; d < kHeadDim; ++d) {
      tv.queries(h, d) = (d == h ? 2.0f : 0.0f) + 0.3f * rng.normal();
      tv.keys(h, d) = 0.5f * rng.normal();
      tv.values(h, d) = rng.normal();
    }
    if (position == favourite[h]) tv.keys(h, h) += 2.5f;
  }
  return tv;
}

std::string kept_text(const std::vector<h2o::Position>& positions) {
  return format_list(positions);
}
}  // namespace

int main(int argc, char** argv) {
  return h2o::run_program("07_h2o_tensor_cache", [&] {
    h2o::ArgParser args(
        "07_h2o_tensor_cache",
        "Lesson 07: H2O over real K/V rows in 3 heads, per-head and shared scoring.");
    args.add_option("tokens", "N", "12", "how many tokens arrive (1..40)");
    h2o::add_budget_options(args, 2, 2, "slots per head");
    args.add_option("seed", "N", "7", "seed for the made-up vectors");
    if (!args.parse(argc, argv)) return 0;
    const auto n_tokens = static_cast<std::size_t>(args.integer("tokens", 1, 40));
    const h2o::CacheBudget budget = h2o::budget_from_options(args);
    h2o::Rng rng(static_cast<std::uint64_t>(args.integer("seed", 0, 1'000'000'000)));

    // Step 1: three heads, each with its own favourite old token.
    const std::vector<std::size_t> favourite = {1, 3, 5};
    std::cout
        << "Lesson 07: H2O over real K and V tensors (blog: learn_06_h2o_tensor_cache.py)\n\n";
    std::cout << "Step 1: " << kHeads << " heads, keys and values of " << kHeadDim
              << " numbers, budget " << budget.describe() << " per head.\n"
              << "        Heads 0, 1, 2 keep looking back at their favourite old tokens: positions "
              << format_list(std::vector<std::size_t>(favourite)) << ".\n\n";

    // Step 2: one blog-style cache per head for each mode (rows appended, then filtered).
    std::vector<h2o::ToyKVCache> per_head(kHeads, h2o::ToyKVCache(kHeadDim));
    std::vector<h2o::ToyKVCache> shared(kHeads, h2o::ToyKVCache(kHeadDim));

    // The library's preallocated cache and H2O policy, fed the very same vectors, as a cross-check.
    h2o::LayerKVCache lib_per_head_cache(kHeads, kHeadDim, budget.total() + 1);
    h2o::LayerKVCache lib_shared_cache(kHeads, kHeadDim, budget.total() + 1);
    h2o::H2OPolicy lib_per_head(budget, h2o::ScoringMode::PerHead);
    h2o::H2OPolicy lib_shared(budget, h2o::ScoringMode::Shared);
    bool library_agrees = true;

    std::cout
        << "Step 2: per token: append K and V rows in every head, attend, add to scores, evict\n\n";
    std::cout
        << "  pos  per-head: kept positions of head 0, head 1, head 2       | shared: all heads\n";
    for (std::size_t t = 0; t < n_tokens; ++t) {
      const TokenVectors tv = make_token(rng, t, favourite);
      const auto position = static_cast<h2o::Position>(t);
      const std::string word = "t" + std::to_string(t);

      // Per-head scoring: each head scores and evicts on its own.
      for (std::size_t h = 0; h < kHeads; ++h) {
        h2o::ToyKVCache& cache = per_head[h];
        cache.append(word, position, xt::row(tv.keys, h), xt::row(tv.values, h));
        const h2o::Vector weights =
            h2o::attend(xt::row(tv.queries, h), cache.keys(), cache.values()).weights;
        cache.add_attention(weights);
        cache.keep(cache.plan(budget).kept);
      }

      // Shared scoring: average the heads' attention, then one decision for every head.
      h2o::Vector mean_weights = xt::zeros<float>({shared[0].size() + 1});  // (T,)
      for (std::size_t h = 0; h < kHeads; ++h) {
        h2o::ToyKVCache& cache = shared[h];
        cache.append(word, position, xt::row(tv.keys, h), xt::row(tv.values, h));
        const h2o::Vector weights =
            h2o::attend(xt::row(tv.queries, h), cache.keys(), cache.values()).weights;
        mean_weights += weights / static_cast<float>(kHeads);
      }
      for (auto& cache : shared) cache.add_attention(mean_weights);
      const std::vector<std::size_t> keep = shared[0].plan(budget).kept;
      for (auto& cache : shared) cache.keep(keep);

      // Library cross-check: same vectors through LayerKVCache + H2OPolicy.
      for (auto* run : {&lib_per_head, &lib_shared}) {
        h2o::LayerKVCache& cache = run == &lib_per_head ? lib_per_head_cache : lib_shared_cache;
        cache.append(tv.keys.data(), tv.values.data(), position);
        h2o::Matrix attention = xt::zeros<float>({kHeads, cache.size()});  // (H, T)
        h2o::Vector unused_output = xt::zeros<float>({kHeadDim});
        for (std::size_t h = 0; h < kHeads; ++h) {
          h2o::attend_into(&tv.queries(h, 0), cache.keys(h), cache.values(h), cache.size(),
                           kHeadDim, &attention(h, 0), unused_output.data());
        }
        run->after_attention(cache, h2o::StepAttention{attention.data(), kHeads, cache.size()});
      }
      for (std::size_t h = 0; h < kHeads; ++h) {
        library_agrees = library_agrees &&
                         lib_per_head_cache.sorted_positions(h) == per_head[h].positions() &&
                         lib_shared_cache.sorted_positions(h) == shared[h].positions();
      }

      std::string heads;
      for (std::size_t h = 0; h < kHeads; ++h)
        heads += h2o::pad_right(kept_text(per_head[h].positions()), 18);
      std::cout << "  " << h2o::pad_left(std::to_string(t), 3) << "  " << h2o::pad_right(heads, 56)
                << "| " << kept_text(shared[0].positions()) << "\n";
    }

    // Step 3: the scores behind the last decisions.
    std::cout << "\nStep 3: accumulated scores at the end\n";
    for (std::size_t h = 0; h < kHeads; ++h) {
      std::cout << "  per-head, head " << h << ": positions "
                << h2o::pad_right(kept_text(per_head[h].positions()), 16) << " scores "
                << format_list(per_head[h].scores(), 2) << "\n";
    }
    std::cout << "  shared, every head: positions "
              << h2o::pad_right(kept_text(shared[0].positions()), 16) << " scores "
              << format_list(shared[0].scores(), 2) << "\n";

    // How many heads still hold the token they keep looking back at, in each mode.
    auto holds = [&](const std::vector<h2o::Position>& kept, std::size_t h) {
      for (h2o::Position p : kept) {
        if (p == static_cast<h2o::Position>(favourite[h])) return std::size_t{1};
      }
      return std::size_t{0};
    };
    std::size_t per_head_keeping = 0, shared_keeping = 0;
    for (std::size_t h = 0; h < kHeads; ++h) {
      per_head_keeping += holds(per_head[h].positions(), h);
      shared_keeping += holds(shared[h].positions(), h);
    }
    std::cout << "\nStep 4: what it shows\n";
    std::cout << "  per-head mode: " << per_head_keeping << " of " << kHeads
              << " heads still hold their own favourite token.\n";
    std::cout << "  shared mode:   " << shared_keeping << " of " << kHeads << " heads do";
    if (shared_keeping < per_head_keeping) {
      std::cout
          << ": one list serves every head, so a token that only one\n"
             "                 head needs loses out when the average over heads is what counts.\n";
    } else {
      std::cout << " as well: this budget is large enough for every favourite.\n";
    }
    std::cout << "  library LayerKVCache + H2OPolicy kept the same positions at every step: "
              << (library_agrees ? "yes" : "NO") << "\n";
    return library_agrees ? 0 : 1;
  });
}
