// test_fastgen_policy.cpp: FastGen (fastgen_policy.hpp): each KV head's rule chosen from its
// profile, worked out by hand for a local, a heavy, a sink and a spread head; the profile it
// builds token by token against profile_heads on the same rows (seeded random attention); the one
// cut of a prompt read to be compressed against the same prompt read token by token; a second
// sequence profiled afresh; at a target of 1 the full cache's logits; its errors.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "h2o/base/random.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/policy/fastgen_policy.hpp"
#include "h2o/policy/head_profile.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "h2o_catch.hpp"
#include "head_rule_support.hpp"
#include "policy_test_support.hpp"

using namespace h2o;
using h2o_test::append_token;
using h2o_test::four_kinds;
using h2o_test::read_tokens;
using h2o_test::step_weights;
using h2o_test::WeightOf;

namespace {

using Positions = std::vector<Position>;
}  // namespace

TEST_CASE("FastGen gives a local, a heavy, a sink and a spread head each its own rule",
          "[fastgen]") {
  // r = 2, k = 1, s = 1, target 0.9, the first 8 tokens profiled.
  FastGenPolicy policy(CacheBudget{1, 2}, 1, 0.9, 8);
  LayerKVCache cache(4, 2, 16);
  read_tokens(policy, cache, 4, 8, four_kinds);
  const std::vector<HeadRule> expected = {HeadRule::Window, HeadRule::HeavyWindow,
                                          HeadRule::SinkWindow, HeadRule::Full};
  REQUIRE(policy.rules() == expected);
  const std::vector<HeadProfile>& profiles = policy.profiles();
  REQUIRE(profiles.size() == 4);
  // Rows 3..7 count (t >= r + s = 3): five rows.
  CHECK(profiles[0].rows == 5);
  CHECK(profiles[0].local_share == Approx(1.0));
  // Head 1: at row 3 position 2 is still in the window; from row 4 on it is the heavy hitter.
  CHECK(profiles[1].local_share == Approx(0.2));
  CHECK(profiles[1].heavy_share == Approx(0.8));
  CHECK(profiles[2].sink_share == Approx(1.0));
  // The spread head: the window holds 2 of t + 1 tokens, the heavy hitter 1, over rows 3..7.
  double local = 0, heavy = 0;
  for (int t = 3; t <= 7; ++t) {
    local += 2.0 / (t + 1);
    heavy += 1.0 / (t + 1);
  }
  CHECK(profiles[3].local_share == Approx(local / 5));
  CHECK(profiles[3].heavy_share == Approx(heavy / 5));
  // Right after the 8th token each head was cut to its rule.
  CHECK(cache.sorted_positions(0) == Positions{6, 7});
  CHECK(cache.sorted_positions(1) == Positions{2, 6, 7});
  CHECK(cache.sorted_positions(2) == Positions{0, 6, 7});
  CHECK(cache.sorted_positions(3) == Positions{0, 1, 2, 3, 4, 5, 6, 7});
  // Four more tokens: each head keeps its rule.
  for (std::size_t t = 8; t < 12; ++t) {
    append_token(cache, static_cast<Position>(t));
    const std::vector<float> data = step_weights(cache, 4, t, four_kinds);
    policy.after_attention(cache, StepAttention{data.data(), 4, cache.capacity()});
  }
  CHECK(cache.sorted_positions(0) == Positions{10, 11});
  CHECK(cache.sorted_positions(1) == Positions{2, 10, 11});
  CHECK(cache.sorted_positions(2) == Positions{0, 10, 11});
  CHECK(cache.size(3) == 12);
  CHECK(policy.rule_tokens(HeadRule::Window) == 2);
  CHECK(policy.rule_tokens(HeadRule::SinkWindow) == 3);
  CHECK(policy.rule_tokens(HeadRule::HeavyWindow) == 3);
  CHECK(policy.rule_tokens(HeadRule::Full) == std::numeric_limits<std::size_t>::max());
}

TEST_CASE("FastGen's target decides how much a head must recover", "[fastgen]") {
  // The spread head recovers about 0.35 with its window and 0.53 with sink+window or
  // heavy+window (a tie: sink+window is cheaper); the sink head 0 with its window, 1 with
  // sink+window.
  const auto rules_at = [](double target) {
    FastGenPolicy policy(CacheBudget{1, 2}, 1, target, 8);
    LayerKVCache cache(4, 2, 16);
    read_tokens(policy, cache, 4, 8, four_kinds);
    return policy.rules();
  };
  CHECK(rules_at(0.3)[3] == HeadRule::Window);
  CHECK(rules_at(0.5)[3] == HeadRule::SinkWindow);
  CHECK(rules_at(0.6)[3] == HeadRule::Full);
  CHECK(rules_at(0.1)[2] == HeadRule::SinkWindow);
  CHECK(rules_at(1.0)[2] == HeadRule::SinkWindow);
  CHECK(rules_at(1.0)[0] == HeadRule::Window);
}

TEST_CASE("FastGen's profile, built slot by slot, is profile_heads' on the same rows",
          "[fastgen]") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    Rng rng(seed);
    const std::size_t G = 1 + rng.below(3), group = 1 + rng.below(2), H = G * group;
    const std::size_t r = 1 + rng.below(4), k = rng.below(4), T = r + 2 + rng.below(20);
    // Random rows over positions 0..t that sum to 1: (H, T, T).
    std::vector<float> dense(H * T * T, 0.0f);
    for (std::size_t h = 0; h < H; ++h) {
      for (std::size_t t = 0; t < T; ++t) {
        float* row = &dense[(h * T + t) * T];
        float sum = 0;
        for (std::size_t j = 0; j <= t; ++j) sum += row[j] = 0.05f + rng.uniform();
        for (std::size_t j = 0; j <= t; ++j) row[j] /= sum;
      }
    }
    const WeightOf weight = [&](std::size_t h, Position j, std::size_t t) {
      return dense[(h * T + t) * T + static_cast<std::size_t>(j)];
    };
    FastGenPolicy policy(CacheBudget{k, r}, 1, 0.8, T);
    LayerKVCache cache(G, 2, T + 1);
    read_tokens(policy, cache, H, T, weight);
    const std::vector<HeadProfile> expected =
        profile_heads({dense.data(), H, T}, G, HeadProfileOptions{r, k, 1});
    const std::vector<HeadProfile>& got = policy.profiles();
    REQUIRE(got.size() == G);
    for (std::size_t g = 0; g < G; ++g) {
      INFO("seed " << seed << " head " << g);
      CHECK(got[g].rows == expected[g].rows);
      CHECK(got[g].sink_share == Approx(expected[g].sink_share).margin(1e-6));
      CHECK(got[g].local_share == Approx(expected[g].local_share).margin(1e-6));
      CHECK(got[g].heavy_share == Approx(expected[g].heavy_share).margin(1e-6));
      CHECK(got[g].uniform_share == Approx(expected[g].uniform_share));
      CHECK(policy.rules()[g] == cheapest_rule(got[g], 0.8));
    }
  }
}

TEST_CASE("FastGen cuts a prompt read to be compressed as it cuts the same prompt read step by "
          "step",
          "[fastgen]") {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    Rng rng(seed);
    const std::size_t T = 10 + rng.below(10);
    std::vector<float> dense(4 * T * T);
    for (float& w : dense) w = rng.uniform();
    // Heads 0-3 as four_kinds, with random noise on the spread head (no ties).
    const WeightOf weight = [&](std::size_t h, Position j, std::size_t t) {
      return h < 3 ? four_kinds(h, j, t) : dense[(h * T + t) * T + static_cast<std::size_t>(j)];
    };
    FastGenPolicy step_by_step(CacheBudget{2, 3}, 1, 0.7, T);
    FastGenPolicy once(CacheBudget{2, 3}, 1, 0.7, T + 100);  // never decides on its own
    LayerKVCache a(4, 2, T + 1), b(4, 2, T + 1);
    read_tokens(step_by_step, a, 4, T, weight);
    read_tokens(once, b, 4, T, weight, /*compress_once=*/true);
    INFO("seed " << seed);
    CHECK(once.rules() == step_by_step.rules());
    for (std::size_t g = 0; g < 4; ++g) CHECK(a.sorted_positions(g) == b.sorted_positions(g));
  }
}

TEST_CASE("FastGen's prompt cut honours compress's keep", "[fastgen]") {
  // Cut to the rules, then every head above keep loses its own victims: a subset of what the
  // rules kept, never above keep, the newest token always there. A keep of 0: the rules alone.
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    Rng rng(seed);
    const std::size_t T = 16;
    std::vector<float> dense(4 * T * T);
    for (float& w : dense) w = rng.uniform();
    const WeightOf weight = [&](std::size_t h, Position j, std::size_t t) {
      return h < 3 ? four_kinds(h, j, t) : dense[(h * T + t) * T + static_cast<std::size_t>(j)];
    };
    FastGenPolicy ruled(CacheBudget{2, 3}, 1, 0.7, T + 100), capped(CacheBudget{2, 3}, 1, 0.7, T + 100);
    LayerKVCache a(4, 2, T + 1), b(4, 2, T + 1);
    read_tokens(ruled, a, 4, T, weight, /*compress_once=*/true);
    for (std::size_t t = 0; t < T; ++t) {
      append_token(b, static_cast<Position>(t));
      const std::vector<float> data = step_weights(b, 4, t, weight);
      capped.observe(b, StepAttention{data.data(), 4, b.capacity()});
    }
    capped.compress(b, 4);
    INFO("seed " << seed);
    for (std::size_t g = 0; g < 4; ++g) {
      const std::vector<Position> all = a.sorted_positions(g), kept = b.sorted_positions(g);
      CHECK(kept.size() == std::min<std::size_t>(all.size(), 4));
      CHECK(std::includes(all.begin(), all.end(), kept.begin(), kept.end()));
      CHECK(kept.back() == static_cast<Position>(T - 1));
    }
  }
}

TEST_CASE("FastGen profiles a second sequence afresh", "[fastgen]") {
  FastGenPolicy policy(CacheBudget{1, 2}, 1, 0.9, 8);
  LayerKVCache cache(4, 2, 16);
  read_tokens(policy, cache, 4, 8, four_kinds);
  REQUIRE(policy.rules()[0] == HeadRule::Window);
  // The same cache, cleared, reads a sequence where head 0 is the sink and head 2 local.
  cache.clear();
  const WeightOf swapped = [](std::size_t h, Position j, std::size_t t) {
    return four_kinds(h == 0 ? 2 : h == 2 ? 0 : h, j, t);
  };
  read_tokens(policy, cache, 4, 4, swapped);
  CHECK(policy.rules().empty());  // still reading the new prompt: nothing evicted
  CHECK(cache.size(0) == 4);
  for (std::size_t t = 4; t < 8; ++t) {
    append_token(cache, static_cast<Position>(t));
    const std::vector<float> data = step_weights(cache, 4, t, swapped);
    policy.after_attention(cache, StepAttention{data.data(), 4, cache.capacity()});
  }
  CHECK(policy.rules()[0] == HeadRule::SinkWindow);
  CHECK(policy.rules()[2] == HeadRule::Window);
}

TEST_CASE("FastGen at a target of 1 keeps every token and reads as the full cache", "[fastgen]") {
  const auto weights = h2o_test::random_model(48, 7);
  const std::vector<int> tokens = h2o_test::random_tokens(48, weights->config.vocab_size, 3);
  PolicySettings settings = settings_for_budget("fastgen", 8);
  settings.fastgen.target = 1.0;
  Decoder fastgen(weights, make_policy("fastgen", settings), tokens.size());
  Decoder full(weights, make_policy("full"), tokens.size());
  for (int token : tokens) {
    const Vector& a = fastgen.forward(token);
    const Vector& b = full.forward(token);
    REQUIRE(std::equal(a.begin(), a.end(), b.begin()));
  }
  for (std::size_t l = 0; l < fastgen.config().n_layers; ++l) {
    CHECK(fastgen.cache(l).total_size() == full.cache(l).total_size());
  }
}

TEST_CASE("FastGen in a decoder: every head within its rule, the window always kept",
          "[fastgen]") {
  const auto weights = h2o_test::random_model(96, 11);
  const std::vector<int> tokens = h2o_test::random_tokens(96, weights->config.vocab_size, 5);
  for (double target : {0.3, 0.6, 0.9}) {
    PolicySettings settings = settings_for_budget("fastgen", 12);
    settings.fastgen.target = target;
    Decoder decoder(weights, make_policy("fastgen", settings), tokens.size());
    CHECK(decoder.policy().prompt_tokens() == 24);  // twice the budget
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      decoder.forward(tokens[i]);
      for (std::size_t l = 0; l < decoder.config().n_layers; ++l) {
        const LayerKVCache& cache = decoder.cache(l);
        for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
          const Positions kept = cache.sorted_positions(g);
          if (i + 1 < 24) {
            REQUIRE(kept.size() == i + 1);  // the prompt: nothing evicted
            continue;
          }
          const auto& policy = dynamic_cast<const FastGenPolicy&>(decoder.layer_policy(l));
          const HeadRule rule = policy.rules().at(g);
          REQUIRE(kept.size() == std::min(i + 1, policy.rule_tokens(rule)));
          REQUIRE(kept.back() == static_cast<Position>(i));
          const std::size_t window = std::min<std::size_t>(settings.recent, kept.size());
          REQUIRE(kept[kept.size() - window] == static_cast<Position>(i + 1 - window));
          if (rule == HeadRule::SinkWindow) REQUIRE(kept.front() == 0);
        }
      }
    }
  }
}

TEST_CASE("FastGen refuses a target outside 0 to 1, no window, and a profile with no row",
          "[fastgen]") {
  CHECK_THROWS_WITH(FastGenPolicy(CacheBudget{2, 2}, 1, 0.0, 16),
                    h2o_catch::Contains("target share"));
  CHECK_THROWS_WITH(FastGenPolicy(CacheBudget{2, 2}, 1, 1.5, 16),
                    h2o_catch::Contains("target share"));
  CHECK_THROWS_WITH(FastGenPolicy(CacheBudget{2, 2}, 1, std::nan(""), 16),
                    h2o_catch::Contains("target share"));
  CHECK_THROWS_WITH(FastGenPolicy(CacheBudget{4, 0}, 1, 0.9, 16),
                    h2o_catch::Contains("recent window"));
  CHECK_THROWS_WITH(FastGenPolicy(CacheBudget{2, 2}, 1, 0.9, 3),
                    h2o_catch::Contains("no row past the window"));
  // compress() on a cache it never saw read.
  FastGenPolicy policy(CacheBudget{2, 2}, 1, 0.9, 16);
  LayerKVCache cache(1, 2, 4);
  CHECK_THROWS_AS(policy.compress(cache, 2), std::logic_error);
}
