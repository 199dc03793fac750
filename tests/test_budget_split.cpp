// test_budget_split.cpp: budgets spread by layer (PyramidKV, pyramid_policy.hpp) and by KV head
// (Ada-KV, adakv_policy.hpp): the pyramid's numbers worked out by hand and its invariants over
// seeded shapes; Ada-KV's joint eviction on hand-made attention, with and without its floor, and
// its one-cut compress; both in a decoder holding what H2O holds in all; their errors.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "h2o/base/random.hpp"
#include "h2o/policy/adakv_policy.hpp"
#include "h2o/policy/knorm_policy.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "h2o/policy/pyramid_policy.hpp"
#include "h2o/policy/tova_policy.hpp"
#include "h2o_catch.hpp"
#include "policy_test_support.hpp"

using namespace h2o;
using h2o_test::append_token;
using h2o_test::CraftedAttention;

namespace {

// Two KV heads of one query head each, head size 2, room for 8 tokens; token t's rows are (t, t).
LayerKVCache two_head_cache() { return LayerKVCache(2, 2, 8); }

// Four steps of hand-made attention: head 0 spreads its attention, head 1 gives most of it to the
// first token. Scores after step 3 (positions 0..3):
//   head 0: 2.05, 1.05, 0.65, 0.25      head 1: 3.4, 0.3, 0.2, 0.1
const std::vector<std::vector<std::vector<float>>> kRows = {
    {{1.0f}, {0.5f, 0.5f}, {0.3f, 0.3f, 0.4f}, {0.25f, 0.25f, 0.25f, 0.25f}},
    {{1.0f}, {0.9f, 0.1f}, {0.8f, 0.1f, 0.1f}, {0.7f, 0.1f, 0.1f, 0.1f}}};

StepAttention step_rows(CraftedAttention& attention, std::size_t t) {
  attention.set_row(0, kRows[0][t]);
  attention.set_row(1, kRows[1][t]);
  return attention.view();
}

// The four steps through `policy`: append, then after_attention (or only observe).
void run_four_steps(LayerPolicy& policy, LayerKVCache& cache, bool observe_only) {
  CraftedAttention attention(2, 8);
  for (std::size_t t = 0; t < 4; ++t) {
    append_token(cache, static_cast<Position>(t));
    if (observe_only) {
      policy.observe(cache, step_rows(attention, t));
    } else {
      policy.after_attention(cache, step_rows(attention, t));
    }
  }
}

using Positions = std::vector<Position>;

}  // namespace

TEST_CASE("PyramidKV's heavy budgets, worked by hand", "[budget_split]") {
  // Average 8 over 4 layers, beta 20: the line runs from 2 * 8 - 0.4 = 15.6 down to 0.4 in steps of
  // 5.0667; its sums 15.6, 26.13, 31.6, 32 round to 16, 26, 32, 32: layers keep 16, 10, 6, 0.
  const std::vector<std::size_t> expected = {16, 10, 6, 0};
  for (std::size_t l = 0; l < 4; ++l) CHECK(pyramid_heavy_budget(8, l, 4, 20.0) == expected[l]);
  // beta 1 is flat; one layer keeps the average.
  for (std::size_t l = 0; l < 5; ++l) CHECK(pyramid_heavy_budget(7, l, 5, 1.0) == 7);
  CHECK(pyramid_heavy_budget(9, 0, 1, 20.0) == 9);
  // A line above the sequence is capped, as kvpress caps it: at most 10 a layer, the line from 10
  // down to 2 * 8 - 10 = 6, its sums 10, 18.67, 26, 32: layers keep 10, 9, 7, 6. At or above the
  // cap every layer is full.
  const std::vector<std::size_t> capped = {10, 9, 7, 6};
  for (std::size_t l = 0; l < 4; ++l) CHECK(pyramid_heavy_budget(8, l, 4, 20.0, 10) == capped[l]);
  for (std::size_t l = 0; l < 4; ++l) CHECK(pyramid_heavy_budget(12, l, 4, 20.0, 10) == 10);
  // The policy: recent 8 in every layer, plus the layer's heavy hitters.
  const auto layer = [](std::size_t l, std::size_t max_positions) {
    return PyramidKVPolicy(CacheBudget{8, 8}, ScoringMode::PerHead, H2OScore::Sum, kDefaultH2ODecay,
                           PyramidKVPolicy::kPaperBeta, {l, 4, 1, max_positions})
        .keep();
  };
  CHECK(layer(0, 1000) == 24);
  CHECK(layer(3, 1000) == 8);
  CHECK(layer(0, 20) == 20);  // never more than the sequence
  CHECK(make_policy("pyramid", settings_for_budget("pyramid", 16))->max_tokens(1000) ==
        16);  // the average
}

TEST_CASE("PyramidKV's budgets sum to the uniform total and follow the line", "[budget_split]") {
  Rng rng(31);
  for (int trial = 0; trial < 500; ++trial) {
    const std::size_t heavy = rng.below(300), n_layers = 1 + rng.below(40);
    const double beta = 1.0 + 30.0 * rng.uniform();
    const std::size_t most = heavy + rng.below(400);  // at or above the average
    std::size_t sum = 0;
    for (std::size_t l = 0; l < n_layers; ++l) {
      const std::size_t h = pyramid_heavy_budget(heavy, l, n_layers, beta, most);
      REQUIRE(h <= most);
      // Within one token of the line's own value (capped at most, the bottom raised to match).
      const double m = static_cast<double>(heavy);
      double low = m / beta, high = 2.0 * m - low;
      if (high > double(most)) {
        high = double(most);
        low = 2.0 * m - high;
      }
      const double line =
          n_layers == 1 ? m : high - static_cast<double>(l) * (high - low) / double(n_layers - 1);
      CHECK(std::fabs(static_cast<double>(h) - line) < 1.0 + 1e-9);
      sum += h;
    }
    CHECK(sum == heavy * n_layers);
  }
}

TEST_CASE("Ada-KV takes the layer's lowest scores, from whichever head", "[budget_split]") {
  // heavy 2 + recent 1 per head: the layer keeps 6 tokens. At step 3 it holds 8, so two go: head
  // 1's 0.2 and 0.3, both lower than anything of head 0's outside its window (0.65). Uniform H2O
  // would take position 2 from each head instead.
  AdaKVPolicy ada(CacheBudget{2, 1});
  CHECK(ada.floor_per_head() == 0);  // floor(0.2 * 2)
  LayerKVCache cache = two_head_cache();
  run_four_steps(ada, cache, false);
  CHECK(cache.sorted_positions(0) == Positions{0, 1, 2, 3});
  CHECK(cache.sorted_positions(1) == Positions{0, 3});
  CHECK(cache.total_size() == 6);

  LayerKVCache uniform_cache = two_head_cache();
  H2OPolicy h2o(CacheBudget{2, 1});
  run_four_steps(h2o, uniform_cache, false);
  CHECK(uniform_cache.sorted_positions(0) == Positions{0, 1, 3});
  CHECK(uniform_cache.sorted_positions(1) == Positions{0, 1, 3});
}

TEST_CASE("Ada-KV's floor keeps a head's own best", "[budget_split]") {
  // Safeguard 1: every head keeps all of its 2 heavy hitters' worth (floor 2) beyond its window,
  // so head 1 gives up only its 0.2 and the second victim is head 0's 0.65: H2O's choice again.
  AdaKVPolicy ada(CacheBudget{2, 1}, ScoringMode::PerHead, H2OScore::Sum, kDefaultH2ODecay, 1.0);
  CHECK(ada.floor_per_head() == 2);
  LayerKVCache cache = two_head_cache();
  run_four_steps(ada, cache, false);
  CHECK(cache.sorted_positions(0) == Positions{0, 1, 3});
  CHECK(cache.sorted_positions(1) == Positions{0, 1, 3});
  // The most one head can hold: recent + G heavy - (G - 1) floor, 1 + 4 - 2 = 3 here, 5 at floor 0.
  const auto capacity = [](double safeguard, std::size_t max_positions) {
    return AdaKVPolicy(CacheBudget{2, 1}, ScoringMode::PerHead, H2OScore::Sum, kDefaultH2ODecay,
                       safeguard, {0, 1, 2, max_positions})
        .head_capacity();
  };
  CHECK(capacity(1.0, 1000) == 3);
  CHECK(capacity(AdaKVPolicy::kPaperSafeguard, 1000) == 5);
  CHECK(capacity(AdaKVPolicy::kPaperSafeguard, 4) == 4);
}

TEST_CASE("Ada-KV's one cut keeps what its steps keep", "[budget_split]") {
  AdaKVPolicy ada(CacheBudget{2, 1});
  LayerKVCache cache = two_head_cache();
  run_four_steps(ada, cache, true);  // scores only, nothing evicted
  REQUIRE(cache.total_size() == 8);
  ada.compress(cache, 3);
  CHECK(cache.sorted_positions(0) == Positions{0, 1, 2, 3});
  CHECK(cache.sorted_positions(1) == Positions{0, 3});
  ada.compress(cache, 3);  // at its budget: nothing more goes
  CHECK(cache.total_size() == 6);
}

TEST_CASE("Budgets by layer and by head hold in a decoder what H2O holds in all",
          "[budget_split]") {
  const auto weights = h2o_test::random_model(96, 5);
  const ModelConfig& c = weights->config;
  const std::vector<int> tokens = h2o_test::random_tokens(96, c.vocab_size, 6);
  for (const char* name : {"pyramid", "adakv"}) {
    INFO(name);
    const PolicySettings settings = settings_for_budget(name, 20);  // heavy 10 + recent 10
    Decoder decoder(weights, make_policy(name, settings), tokens.size());
    for (std::size_t t = 0; t < tokens.size(); ++t) {
      decoder.forward(tokens[t]);
      const std::size_t per_head = std::min<std::size_t>(t + 1, 20);
      std::size_t all = 0;
      for (std::size_t l = 0; l < c.n_layers; ++l) {
        const LayerKVCache& cache = decoder.cache(l);
        all += cache.total_size();
        for (std::size_t g = 0; g < c.n_kv_heads; ++g) {
          // Every head keeps its recent window and never more than its capacity.
          const std::vector<Position> kept = cache.sorted_positions(g);
          const std::size_t window = std::min<std::size_t>(t + 1, 10);
          REQUIRE(kept.size() >= window);
          REQUIRE(kept[kept.size() - window] == static_cast<Position>(t + 1 - window));
          REQUIRE(kept.size() <= decoder.layer_policy(l).head_capacity());
        }
        if (std::string(name) == "adakv") {
          REQUIRE(cache.total_size() == c.n_kv_heads * per_head);  // the layer's share, exactly
        } else {
          REQUIRE(cache.uniform_size() ==
                  std::min<std::size_t>(t + 1, decoder.layer_policy(l).keep()));
        }
      }
      if (t + 1 >= 40) REQUIRE(all == c.n_layers * c.n_kv_heads * per_head);  // as H2O's
    }
  }
}

namespace {

// A scored policy by name, for the layer of `shape`: key norm, or TOVA with per-head scores (with
// shared scores every head keeps the same tokens and there is nothing to spread by head).
std::unique_ptr<ScoredPolicy> scorer_named(const std::string& name, CacheBudget budget,
                                           const LayerShape& shape) {
  if (name == "knorm") return std::make_unique<KeyNormPolicy>(budget, shape);
  return std::make_unique<TovaPolicy>(budget, ScoringMode::PerHead, shape);
}

// A decoder's logits and caches, step by step: true when the two decoders agree on both.
bool same_run(Decoder& a, Decoder& b, const std::vector<int>& tokens, std::size_t n_layers) {
  for (int token : tokens) {
    if (a.forward(token) != b.forward(token)) return false;
    for (std::size_t l = 0; l < n_layers; ++l) {
      for (std::size_t g = 0; g < a.cache(l).n_kv_heads(); ++g) {
        if (a.cache(l).sorted_positions(g) != b.cache(l).sorted_positions(g)) return false;
      }
    }
  }
  return true;
}

}  // namespace

TEST_CASE("Ada-KV and PyramidKV spread the budget of any scored policy", "[budget_split]") {
  // Spread so that nothing moves (Ada-KV: every head's floor is its whole share; PyramidKV:
  // beta 1, a flat line), each is exactly the scored policy it wraps: same logits, same caches.
  // At the paper's settings Ada-KV's heads hold different counts, the layer what the scorer holds.
  const auto weights = h2o_test::random_model(80, 17);
  const ModelConfig& c = weights->config;
  REQUIRE(c.n_kv_heads > 1);
  const std::vector<int> tokens = h2o_test::random_tokens(80, c.vocab_size, 18);
  const CacheBudget budget{8, 4};
  for (const std::string scorer : {"knorm", "tova"}) {
    INFO(scorer);
    const auto alone = [&] {
      return std::make_unique<CachePolicy>([&](const LayerShape& shape) {
        return std::unique_ptr<LayerPolicy>(scorer_named(scorer, budget, shape));
      });
    };
    const auto spread = [&](const std::string& how, double share) {
      return std::make_unique<CachePolicy>([&, how, share](const LayerShape& shape) {
        std::unique_ptr<ScoredPolicy> scores = scorer_named(scorer, budget, shape);
        return how == "adakv"
                   ? std::unique_ptr<LayerPolicy>(
                         std::make_unique<AdaKVPolicy>(budget, std::move(scores), share, shape))
                   : std::make_unique<PyramidKVPolicy>(budget, std::move(scores), share, shape);
      });
    };
    Decoder plain(weights, alone(), tokens.size());
    Decoder ada_floor_all(weights, spread("adakv", 1.0), tokens.size());
    CHECK(same_run(plain, ada_floor_all, tokens, c.n_layers));
    Decoder plain_again(weights, alone(), tokens.size());
    Decoder flat_pyramid(weights, spread("pyramid", 1.0), tokens.size());
    CHECK(same_run(plain_again, flat_pyramid, tokens, c.n_layers));

    Decoder ada(weights, spread("adakv", AdaKVPolicy::kPaperSafeguard), tokens.size());
    bool uneven = false;
    for (int token : tokens) {
      ada.forward(token);
      for (std::size_t l = 0; l < c.n_layers; ++l) {
        const LayerKVCache& cache = ada.cache(l);
        REQUIRE(cache.total_size() <= c.n_kv_heads * budget.total());
        for (std::size_t g = 1; g < c.n_kv_heads; ++g) uneven |= cache.size(g) != cache.size(0);
      }
    }
    CHECK(uneven);
  }
}

TEST_CASE("Budgets by layer and by head refuse what they cannot do", "[budget_split]") {
  CHECK_THROWS_WITH(pyramid_heavy_budget(8, 0, 4, 0.5), h2o_catch::Contains("beta"));
  CHECK_THROWS_WITH(pyramid_heavy_budget(8, 4, 4, 20.0), h2o_catch::Contains("layer 4 of 4"));
  CHECK_THROWS_WITH(PyramidKVPolicy(CacheBudget{8, 0}), h2o_catch::Contains("recent window"));
  CHECK_THROWS_WITH(
      AdaKVPolicy(CacheBudget{8, 8}, ScoringMode::PerHead, H2OScore::Sum, kDefaultH2ODecay, 1.5),
      h2o_catch::Contains("between 0 and 1"));
}
