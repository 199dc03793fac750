// test_duo_attention_policy.cpp: DuoAttention (duo_attention_policy.hpp): retrieval and streaming
// heads split from a profile, worked out by hand for a local, a heavy, a sink and a spread head;
// the split rule against np.quantile's numbers; every head within its kind over seeded random
// attention; the one cut of a prompt read to be compressed against the same prompt read token by
// token; a second sequence profiled afresh; no streaming heads, or a window covering the text,
// read as the full cache; its errors. tests/duo_anchor.py replays the published code's split and
// cut (duo_attn/utils.py, duo_attn/patch/static_kv_cache.py) on this policy's own numbers.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "h2o/base/random.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/policy/duo_attention_policy.hpp"
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
// Positions 0..n-1.
Positions first_positions(std::size_t n) {
  Positions all(n);
  for (std::size_t p = 0; p < n; ++p) all[p] = static_cast<Position>(p);
  return all;
}

// What a streaming head keeps of positions 0..n-1: the first s and the last r.
Positions sinks_and_window(std::size_t n, std::size_t s, std::size_t r) {
  Positions kept;
  for (std::size_t p = 0; p < n; ++p) {
    if (p < s || p + r >= n) kept.push_back(static_cast<Position>(p));
  }
  return kept;
}

}  // namespace

TEST_CASE("DuoAttention makes the heads that look far back retrieval heads", "[duo]") {
  // s = 1 sink, r = 2 recent, q = 0.5, the first 8 tokens profiled: rows 3..7 count (t >= s + r).
  DuoAttentionPolicy policy(1, 2, 0.5, 8);
  LayerKVCache cache(4, 2, 16);
  read_tokens(policy, cache, 4, 8, four_kinds);
  // Outside position 0 and the last 2: the local and the sink head nothing; the heavy head all
  // from row 4 on (at row 3 position 2 is still recent): 4 of 5 rows; the spread head (t - 2) of
  // t + 1 positions.
  double spread = 0;
  for (int t = 3; t <= 7; ++t) spread += (t - 2.0) / (t + 1.0);
  const std::vector<double>& scores = policy.scores();
  REQUIRE(scores.size() == 4);
  CHECK(scores[0] == 0.0);
  CHECK(scores[1] == Approx(0.8));
  CHECK(scores[2] == 0.0);
  CHECK(scores[3] == Approx(spread / 5));
  // The 0.5-quantile of [0, 0, 0.45, 0.8] lies between 0 and 0.45: heads 1 and 3 retrieve.
  CHECK(policy.retrieval() == std::vector<bool>{false, true, false, true});
  // Right after the 8th token the streaming heads were cut to position 0 and the last 2.
  CHECK(cache.sorted_positions(0) == Positions{0, 6, 7});
  CHECK(cache.sorted_positions(1) == first_positions(8));
  CHECK(cache.sorted_positions(2) == Positions{0, 6, 7});
  CHECK(cache.sorted_positions(3) == first_positions(8));
  // Four more tokens: a streaming head keeps its sink and window, a retrieval head everything.
  for (std::size_t t = 8; t < 12; ++t) {
    append_token(cache, static_cast<Position>(t));
    std::vector<float> data(4 * 16, 0.0f);
    for (std::size_t h = 0; h < 4; ++h) {
      for (std::size_t s = 0; s < cache.size(h); ++s) {
        data[h * 16 + s] = four_kinds(h, cache.positions(h)[s], t);
      }
    }
    policy.after_attention(cache, StepAttention{data.data(), 4, 16});
  }
  CHECK(cache.sorted_positions(0) == Positions{0, 10, 11});
  CHECK(cache.sorted_positions(2) == Positions{0, 10, 11});
  CHECK(cache.sorted_positions(3) == first_positions(12));
  CHECK_THAT(policy.describe(), h2o_catch::Contains("the 50% of KV heads"));
}

TEST_CASE("DuoAttention splits the heads at np.quantile as sparsify_attention_heads", "[duo]") {
  const std::vector<double> four = {0.3, 0.1, 0.4, 0.2};
  // np.quantile([0.1, 0.2, 0.3, 0.4], q): q = 0.25 -> 0.175, 0.5 -> 0.25, 0.75 -> 0.325.
  CHECK(duo_retrieval_heads(four, 0.0) == std::vector<bool>{true, true, true, true});
  CHECK(duo_retrieval_heads(four, 0.25) == std::vector<bool>{true, false, true, true});
  CHECK(duo_retrieval_heads(four, 0.5) == std::vector<bool>{true, false, true, false});
  CHECK(duo_retrieval_heads(four, 0.75) == std::vector<bool>{false, false, true, false});
  CHECK(duo_retrieval_heads(four, 1.0) == std::vector<bool>{false, false, false, false});
  // A threshold on a score (q = 1/3 of 4 scores: index 1): that head retrieves (>=).
  CHECK(duo_retrieval_heads(four, 1.0 / 3.0) == std::vector<bool>{true, false, true, true});
  // Equal scores all meet the threshold: every head retrieves (no tie-breaking noise here).
  CHECK(duo_retrieval_heads({0.5, 0.5, 0.5}, 0.5) == std::vector<bool>{true, true, true});
  CHECK(duo_retrieval_heads({0.7}, 0.5) == std::vector<bool>{true});
  // Over seeded distinct scores: G - ceil((G - 1) q) heads retrieve.
  Rng rng(17);
  for (int trial = 0; trial < 2000; ++trial) {
    const std::size_t G = 1 + rng.below(12);
    std::vector<double> scores(G);
    for (double& s : scores) s = rng.uniform();
    const double q = rng.uniform();
    const std::vector<bool> retrieval = duo_retrieval_heads(scores, q);
    const auto retrieving =
        static_cast<std::size_t>(std::count(retrieval.begin(), retrieval.end(), true));
    INFO("G " << G << ", q " << q);
    REQUIRE(retrieving == G - static_cast<std::size_t>(std::ceil((G - 1) * q)));
    // The retrieval heads are the best scores.
    for (std::size_t a = 0; a < G; ++a) {
      for (std::size_t b = 0; b < G; ++b) {
        if (retrieval[a] && !retrieval[b]) REQUIRE(scores[a] > scores[b]);
      }
    }
  }
}

TEST_CASE("DuoAttention keeps every head within its kind over seeded random attention", "[duo]") {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    Rng rng(seed);
    const std::size_t G = 1 + rng.below(4), group = 1 + rng.below(2), H = G * group;
    const std::size_t s = rng.below(3), r = 1 + rng.below(5), n = 60;
    const std::size_t P = s + r + 1 + rng.below(20);
    const double q = static_cast<double>(rng.below(5)) / 4.0;
    std::vector<float> dense(H * n * n);  // (H, n, n): row (h, t) over positions 0..t sums to 1
    for (std::size_t row = 0; row < H * n; ++row) {
      float* w = dense.data() + row * n;
      const std::size_t t = row % n;
      float sum = 0.0f;
      for (std::size_t j = 0; j <= t; ++j) sum += w[j] = rng.uniform(0.01f, 1.0f);
      for (std::size_t j = 0; j <= t; ++j) w[j] /= sum;
    }
    const WeightOf weight = [&](std::size_t h, Position j, std::size_t t) {
      return dense[(h * n + t) * n + static_cast<std::size_t>(j)];
    };
    DuoAttentionPolicy policy(s, r, q, P);
    LayerKVCache cache(G, 2, n + 1);
    INFO("seed " << seed << ": G " << G << ", H " << H << ", s " << s << ", r " << r << ", P " << P
                 << ", q " << q);
    for (std::size_t t = 0; t < n; ++t) {
      append_token(cache, static_cast<Position>(t));
      std::vector<float> data(H * (n + 1), 0.0f);
      for (std::size_t h = 0; h < H; ++h) {
        for (std::size_t j = 0; j < cache.size(h / group); ++j) {
          data[h * (n + 1) + j] = weight(h, cache.positions(h / group)[j], t);
        }
      }
      policy.after_attention(cache, StepAttention{data.data(), H, n + 1});
      for (std::size_t g = 0; g < G; ++g) {
        const Positions kept = cache.sorted_positions(g);
        if (t + 1 < P) {
          REQUIRE(kept == first_positions(t + 1));  // the profile: nothing evicted
          continue;
        }
        REQUIRE(policy.retrieval().size() == G);
        REQUIRE(kept ==
                (policy.retrieval()[g] ? first_positions(t + 1) : sinks_and_window(t + 1, s, r)));
      }
    }
    // Distinct random scores: G - ceil((G - 1) q) retrieval heads (none at q = 1).
    const std::vector<bool>& retrieval = policy.retrieval();
    const std::size_t expected =
        q >= 1.0 ? 0 : G - static_cast<std::size_t>(std::ceil((G - 1) * q));
    CHECK(static_cast<std::size_t>(std::count(retrieval.begin(), retrieval.end(), true)) ==
          expected);
  }
}

TEST_CASE("DuoAttention cuts a prompt read to be compressed as it cuts it step by step", "[duo]") {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    Rng rng(seed);
    const std::size_t T = 10 + rng.below(10);
    std::vector<float> dense(4 * T * T);
    for (float& w : dense) w = rng.uniform();
    const WeightOf weight = [&](std::size_t h, Position j, std::size_t t) {
      return dense[(h * T + t) * T + static_cast<std::size_t>(j)];
    };
    DuoAttentionPolicy step_by_step(2, 3, 0.5, T);
    DuoAttentionPolicy once(2, 3, 0.5, T + 100);  // never splits on its own
    LayerKVCache a(4, 2, T + 1), b(4, 2, T + 1);
    read_tokens(step_by_step, a, 4, T, weight);
    read_tokens(once, b, 4, T, weight, /*compress_once=*/true);
    INFO("seed " << seed);
    CHECK(once.scores() == step_by_step.scores());
    CHECK(once.retrieval() == step_by_step.retrieval());
    for (std::size_t g = 0; g < 4; ++g) CHECK(a.sorted_positions(g) == b.sorted_positions(g));
  }
}

TEST_CASE("DuoAttention's prompt cut honours compress's keep", "[duo]") {
  // Streaming heads keep their 2 sinks + 3; retrieval heads, capped at 6, their sinks and the
  // newest 4. A keep of 0: the split alone.
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    Rng rng(seed);
    const std::size_t T = 16;
    std::vector<float> dense(4 * T * T);
    for (float& w : dense) w = rng.uniform();
    const WeightOf weight = [&](std::size_t h, Position j, std::size_t t) {
      return dense[(h * T + t) * T + static_cast<std::size_t>(j)];
    };
    DuoAttentionPolicy policy(2, 3, 0.5, T + 100);
    LayerKVCache cache(4, 2, T + 1);
    for (std::size_t t = 0; t < T; ++t) {
      append_token(cache, static_cast<Position>(t));
      const std::vector<float> data = step_weights(cache, 4, t, weight);
      policy.observe(cache, StepAttention{data.data(), 4, cache.capacity()});
    }
    policy.compress(cache, 6);
    INFO("seed " << seed);
    for (std::size_t g = 0; g < 4; ++g) {
      const std::vector<Position> kept = cache.sorted_positions(g);
      const std::vector<Position> expected = policy.retrieval()[g]
                                                 ? std::vector<Position>{0, 1, 12, 13, 14, 15}
                                                 : std::vector<Position>{0, 1, 13, 14, 15};
      CHECK(kept == expected);
    }
  }
}

TEST_CASE("DuoAttention profiles a second sequence afresh", "[duo]") {
  DuoAttentionPolicy policy(1, 2, 0.5, 8);
  LayerKVCache cache(4, 2, 16);
  read_tokens(policy, cache, 4, 8, four_kinds);
  REQUIRE(policy.retrieval() == std::vector<bool>{false, true, false, true});
  // The same cache, cleared, reads a sequence where heads 1 and 0 swap: head 0 now retrieves.
  cache.clear();
  const WeightOf swapped = [](std::size_t h, Position j, std::size_t t) {
    return four_kinds(h == 0 ? 1 : h == 1 ? 0 : h, j, t);
  };
  read_tokens(policy, cache, 4, 4, swapped);
  CHECK(policy.retrieval().empty());  // still profiling the new sequence: nothing evicted
  CHECK(cache.size(0) == 4);
  cache.clear();
  read_tokens(policy, cache, 4, 8, swapped);
  CHECK(policy.retrieval() == std::vector<bool>{true, false, false, true});
}

TEST_CASE("DuoAttention with no streaming head or a window covering the text is the full cache",
          "[duo]") {
  const auto weights = h2o_test::random_model(48, 7);
  const std::vector<int> tokens = h2o_test::random_tokens(48, weights->config.vocab_size, 3);
  const auto full_cache_reads = [&](std::unique_ptr<CachePolicy> policy) {
    Decoder duo(weights, std::move(policy), tokens.size());
    Decoder full(weights, make_policy("full"), tokens.size());
    for (int token : tokens) {
      const Vector& a = duo.forward(token);
      const Vector& b = full.forward(token);
      REQUIRE(std::equal(a.begin(), a.end(), b.begin()));
    }
    for (std::size_t l = 0; l < duo.config().n_layers; ++l) {
      CHECK(duo.cache(l).total_size() == full.cache(l).total_size());
    }
  };
  // Sparsity 0: every head retrieves.
  full_cache_reads(policy_of<DuoAttentionPolicy>(std::size_t{4}, std::size_t{4}, 0.0,
                                                 std::size_t{16}, ScoringMode::PerHead));
  // Sinks and window covering all 48 tokens: whatever the split, a streaming head keeps them all.
  full_cache_reads(make_policy("duo", settings_for_budget("duo", 48)));
}

TEST_CASE("DuoAttention in a decoder: profile, then each head within its kind", "[duo]") {
  const auto weights = h2o_test::random_model(96, 11);
  const std::vector<int> tokens = h2o_test::random_tokens(96, weights->config.vocab_size, 5);
  const PolicySettings settings = settings_for_budget("duo", 12);  // 4 sinks + 8 recent
  Decoder decoder(weights, make_policy("duo", settings), tokens.size());
  CHECK(decoder.policy().prompt_tokens() == 24);  // twice the budget
  const std::size_t G = decoder.config().n_kv_heads;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    decoder.forward(tokens[i]);
    for (std::size_t l = 0; l < decoder.config().n_layers; ++l) {
      const auto& layer = dynamic_cast<const DuoAttentionPolicy&>(decoder.layer_policy(l));
      std::size_t retrieving = 0;
      for (std::size_t g = 0; g < G; ++g) {
        const Positions kept = decoder.cache(l).sorted_positions(g);
        if (i + 1 < 24) {
          REQUIRE(kept == first_positions(i + 1));
          continue;
        }
        retrieving += layer.retrieval().at(g) ? 1 : 0;
        REQUIRE(kept ==
                (layer.retrieval()[g] ? first_positions(i + 1) : sinks_and_window(i + 1, 4, 8)));
      }
      if (i + 1 >= 24) REQUIRE(retrieving == G / 2);  // 4 KV heads: the 0.5-quantile splits 2:2
    }
  }
}

TEST_CASE("DuoAttention refuses no window, a share outside 0 to 1 and a profile with no row",
          "[duo]") {
  CHECK_THROWS_WITH(DuoAttentionPolicy(4, 0, 0.5, 16), h2o_catch::Contains("recent window"));
  CHECK_THROWS_WITH(DuoAttentionPolicy(4, 4, -0.1, 16),
                    h2o_catch::Contains("streaming heads must be 0 to 1"));
  CHECK_THROWS_WITH(DuoAttentionPolicy(4, 4, 1.5, 16),
                    h2o_catch::Contains("streaming heads must be 0 to 1"));
  CHECK_THROWS_WITH(DuoAttentionPolicy(4, 4, std::nan(""), 16), h2o_catch::Contains("0 to 1"));
  CHECK_THROWS_WITH(DuoAttentionPolicy(4, 4, 0.5, 8),
                    h2o_catch::Contains("no row past the sinks and window"));
  CHECK_THROWS_WITH(duo_retrieval_heads({}, 0.5), h2o_catch::Contains("no heads"));
  CHECK_THROWS_WITH(duo_retrieval_heads({0.5}, std::nan("")), h2o_catch::Contains("not a number"));
  // Through the factory: a budget whose window is empty (all of it sinks) is refused too.
  PolicySettings settings;
  settings.sinks = 4;
  settings.heavy = 4;
  settings.recent = 0;
  CHECK_THROWS_AS(make_policy("duo", settings), std::invalid_argument);
  // compress() on a cache it never saw read.
  DuoAttentionPolicy policy(1, 2, 0.5, 8);
  LayerKVCache cache(1, 2, 4);
  CHECK_THROWS_AS(policy.compress(cache, 2), std::logic_error);
}
