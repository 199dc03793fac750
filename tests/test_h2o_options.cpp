// test_h2o_options.cpp: H2O's two options (normalised sums, a protected start area) and
// LayerPolicy's two halves (observe, choose_victims) with compress().
//
// Checks: with the options off, the general rule is exactly today's rule (over many seeded random
// caches, with and without gaps in the positions) and H2O's fused step makes the same decisions as
// observe-then-choose; hand-made caches where normalising, or a start area, changes the victim;
// compress() keeps exactly plan_keep's tokens; and the refusals.
//
// Dimension legend: H = query heads, G = KV heads, D = head_dim, n = live slots.
#include <algorithm>
#include "h2o_catch.hpp"
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "h2o/base/random.hpp"
#include "h2o/cache/kv_cache.hpp"
#include "h2o/cache/selection.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "policy_test_support.hpp"
#include "test_support.hpp"

using namespace h2o;
using h2o_test::CraftedAttention;

namespace {

// n distinct positions: 0..n-1 shuffled, or (with gaps) every third number from 5.
std::vector<Position> random_positions(std::size_t n, bool gaps, Rng& rng) {
  std::vector<Position> positions(n);
  for (std::size_t i = 0; i < n; ++i) positions[i] = static_cast<Position>(gaps ? 5 + 3 * i : i);
  for (std::size_t i = n - 1; i > 0; --i) {
    std::swap(positions[i], positions[rng.below(static_cast<std::uint32_t>(i + 1))]);
  }
  return positions;
}

// Scores in quarter steps from 0 to 2, so that ties happen often.
std::vector<float> random_scores(std::size_t n, Rng& rng) {
  std::vector<float> scores(n);
  for (float& s : scores) s = 0.25f * static_cast<float>(rng.below(9));
  return scores;
}

// A layer cache of G heads holding positions 0..n-1 with zero keys and values.
LayerKVCache cache_of(std::size_t n_kv_heads, std::size_t n, std::size_t capacity) {
  LayerKVCache cache(n_kv_heads, 2, capacity);
  const std::vector<float> zeros(n_kv_heads * 2, 0.0f);
  for (std::size_t i = 0; i < n; ++i) cache.append(zeros.data(), zeros.data(), Position(i));
  return cache;
}

// Seeded random attention for H heads over n live slots (each row sums to 1).
CraftedAttention random_attention(std::size_t n_heads, std::size_t n, std::size_t stride,
                                  Rng& rng) {
  CraftedAttention attention(n_heads, stride);
  for (std::size_t h = 0; h < n_heads; ++h) {
    std::vector<float> row(n);
    float total = 0.0f;
    for (float& w : row) total += (w = 0.01f + static_cast<float>(rng.below(1000)) / 1000.0f);
    for (float& w : row) w /= total;
    attention.set_row(h, row);
  }
  return attention;
}

}  // namespace

TEST_CASE("the general eviction rule with no options is today's rule", "[h2o-options]") {
  Rng rng(41);
  for (int trial = 0; trial < 500; ++trial) {
    const std::size_t n = 2 + rng.below(30);
    const std::size_t recent = rng.below(static_cast<std::uint32_t>(n));  // < n
    const std::vector<Position> positions = random_positions(n, trial % 2 == 1, rng);
    const std::vector<float> scores = random_scores(n, rng);
    INFO("trial " << trial << ", n " << n << ", recent " << recent);
    const EvictionRule rule{recent, 0, false};
    CHECK(slot_to_evict(positions.data(), scores.data(), n, rule) ==
          slot_to_evict(positions.data(), scores.data(), n, recent));
    // plan_keep names the same victim when the cache holds one token too many.
    const std::size_t heavy = n - 1 - recent;
    if (heavy + recent > 0) {
      const KeepPlan plan = plan_keep(positions, scores, CacheBudget(heavy, recent));
      REQUIRE(plan.evicted.size() == 1);
      CHECK(plan.evicted[0] == slot_to_evict(positions.data(), scores.data(), n, rule));
    }
  }
}

TEST_CASE("a start area protects the first positions, taken from the heavy budget",
          "[h2o-options]") {
  Rng rng(43);
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t n = 4 + rng.below(20);
    const std::size_t recent = rng.below(3);
    const std::size_t start = 1 + rng.below(static_cast<std::uint32_t>(n - recent - 1));
    const std::vector<Position> positions = random_positions(n, false, rng);
    const std::vector<float> scores = random_scores(n, rng);
    INFO("trial " << trial << ", n " << n << ", recent " << recent << ", start " << start);
    const std::size_t victim =
        slot_to_evict(positions.data(), scores.data(), n, EvictionRule{recent, start, false});
    // The victim is outside both protected areas and has the lowest score of the rest.
    const Position newest = static_cast<Position>(n - 1);
    CHECK(positions[victim] >= static_cast<Position>(start));
    CHECK(positions[victim] <= newest - static_cast<Position>(recent));
    for (std::size_t i = 0; i < n; ++i) {
      const bool open = positions[i] >= static_cast<Position>(start) &&
                        positions[i] <= newest - static_cast<Position>(recent);
      if (open) CHECK(scores[victim] <= scores[i]);
    }
  }
  // By hand: position 0 has the lowest score, so plain H2O evicts it; a start area of 2 keeps
  // positions 0 and 1, and the lowest of the rest (position 2) goes.
  const std::vector<Position> positions = {0, 1, 2, 3, 4};
  const std::vector<float> scores = {0.1f, 0.2f, 0.5f, 0.6f, 0.0f};
  CHECK(slot_to_evict(positions.data(), scores.data(), 5, EvictionRule{1, 0, false}) == 0);
  CHECK(slot_to_evict(positions.data(), scores.data(), 5, EvictionRule{1, 2, false}) == 2);
}

TEST_CASE("normalising by steps in the cache changes the victim where it should", "[h2o-options]") {
  // Newest position 4, recent window 1. Sums: position 3 is lowest (0.5) and goes under plain
  // H2O. Per step in the cache: 1.0/5 = 0.2, 1.2/4 = 0.3, 0.9/3 = 0.3, 0.5/2 = 0.25, so
  // position 0 (the old token that collected its sum over the most steps) goes instead.
  const std::vector<Position> positions = {0, 1, 2, 3, 4};
  const std::vector<float> scores = {1.0f, 1.2f, 0.9f, 0.5f, 1.0f};
  CHECK(slot_to_evict(positions.data(), scores.data(), 5, EvictionRule{1, 0, false}) == 3);
  CHECK(slot_to_evict(positions.data(), scores.data(), 5, EvictionRule{1, 0, true}) == 0);
  // With position 0 in a start area, the lowest of the rest per step is position 3 (0.25).
  CHECK(slot_to_evict(positions.data(), scores.data(), 5, EvictionRule{1, 1, true}) == 3);
  // Equal per-step scores: 1.2/4 = 0.9/3 = 0.3; the newer (position 2) goes.
  const std::vector<float> tied = {9.0f, 1.2f, 0.9f, 9.0f, 1.0f};
  CHECK(slot_to_evict(positions.data(), tied.data(), 5, EvictionRule{1, 0, true}) == 2);
  // Slots need not be in position order.
  const std::vector<Position> shuffled = {3, 0, 4, 2, 1};
  const std::vector<float> shuffled_scores = {0.5f, 1.0f, 1.0f, 0.9f, 1.2f};
  CHECK(slot_to_evict(shuffled.data(), shuffled_scores.data(), 5, EvictionRule{1, 0, false}) == 0);
  CHECK(slot_to_evict(shuffled.data(), shuffled_scores.data(), 5, EvictionRule{1, 0, true}) == 1);
}

TEST_CASE("H2O's fused step decides as observe then choose_victims", "[h2o-options]") {
  // The plain sum adds and picks in one pass at one token over budget (eviction_scan.hpp); that
  // pass does not decay, so the decayed sum must not take it and gives the general way's result.
  const ScoringMode mode = GENERATE(ScoringMode::PerHead, ScoringMode::Shared);
  const H2OScore score = GENERATE(H2OScore::Sum, H2OScore::DecayedSum);
  const std::size_t H = 8, G = 4, budget = 12, steps = 60;
  H2OPolicy policy(CacheBudget(6, 6), mode, score, 0, 0.8f);
  LayerKVCache fused(G, 2, budget + 1), general(G, 2, budget + 1);
  const std::vector<float> zeros(G * 2, 0.0f);
  Rng rng(47);
  for (std::size_t step = 0; step < steps; ++step) {
    fused.append(zeros.data(), zeros.data(), Position(step));
    general.append(zeros.data(), zeros.data(), Position(step));
    const CraftedAttention attention = random_attention(H, fused.uniform_size(), budget + 1, rng);
    policy.after_attention(fused, attention.view());
    policy.LayerPolicy::after_attention(general, attention.view());  // observe, then choose
    INFO("step " << step << ", mode " << to_string(mode) << ", " << to_string(score));
    REQUIRE(fused.uniform_size() == general.uniform_size());
    for (std::size_t g = 0; g < G; ++g) {
      const std::size_t n = fused.uniform_size();
      REQUIRE(std::equal(fused.positions(g), fused.positions(g) + n, general.positions(g)));
      REQUIRE(std::equal(fused.scores(g), fused.scores(g) + n, general.scores(g)));
    }
  }
}

TEST_CASE("compress keeps the one cut of the rule, head by head", "[h2o-options]") {
  const std::size_t H = 4, G = 2, n = 40;
  Rng rng(53);
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t recent = rng.below(6);
    const std::size_t heavy = 1 + rng.below(20);
    const bool normalise = trial % 2 == 1;
    H2OPolicy policy(CacheBudget(heavy, recent), ScoringMode::PerHead,
                     normalise ? H2OScore::NormalisedSum : H2OScore::Sum);
    LayerKVCache cache = cache_of(G, n, n);
    for (int step = 0; step < 5; ++step) {  // five rounds of random attention, nothing evicted
      policy.observe(cache, random_attention(H, n, n, rng).view());
    }
    // The rule as one cut, written out: the last `recent` positions stay; of the others the
    // `heavy` best keys, older first on a tie, with every key taken from the scores as they stand
    // (divided, in double as selection.hpp does, by the steps in the cache when normalising:
    // position p has been there for n - p steps; the newest stays the newest, even with recent 0).
    std::vector<std::vector<Position>> expected(G);
    for (std::size_t g = 0; g < G; ++g) {
      std::vector<std::pair<double, Position>> others;  // (key, position)
      for (std::size_t s = 0; s < n; ++s) {
        const Position p = cache.positions(g)[s];
        if (p >= static_cast<Position>(n - recent)) {
          expected[g].push_back(p);
          continue;
        }
        const double score = cache.scores(g)[s];
        others.push_back({normalise ? score / static_cast<double>(n - p) : score, p});
      }
      std::sort(others.begin(), others.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
      });
      for (std::size_t k = 0; k < heavy; ++k) expected[g].push_back(others[k].second);
      std::sort(expected[g].begin(), expected[g].end());
    }
    policy.compress(cache, heavy + recent);
    INFO("trial " << trial << ", heavy " << heavy << ", recent " << recent);
    REQUIRE(cache.uniform_size() == heavy + recent);
    for (std::size_t g = 0; g < G; ++g) CHECK(cache.sorted_positions(g) == expected[g]);
  }
}

TEST_CASE("every policy's compress cuts to the asked size and keeps its promises",
          "[h2o-options]") {
  const std::size_t H = 4, G = 2, n = 30, keep = 10;
  for (const PolicyKind& kind : policy_kinds()) {
    // FastGen's cut keeps what each head's rule keeps, not a size (test_fastgen_policy.cpp).
    if (!kind.sized_by_budget) continue;
    const std::string& name = kind.name;
    INFO("policy " << name);
    auto policy = h2o_test::single_layer(*make_policy(name, settings_for_budget(name, keep)), G);
    // A prompt read as the decoder reads one: a token arrives (with a key of its own), the policy
    // observes its attention; nothing is evicted until the one cut.
    LayerKVCache cache(G, 2, n);
    Rng rng(59);
    for (std::size_t p = 0; p < n; ++p) {
      std::vector<float> keys(G * 2);  // (G * D,)
      for (float& k : keys) k = static_cast<float>(rng.below(100)) / 10.0f;
      cache.append(keys.data(), keys.data(), Position(p));
      policy->observe(cache, random_attention(H, p + 1, n, rng).view());
    }
    policy->compress(cache, keep);
    REQUIRE(cache.uniform_size() == keep);
    for (std::size_t g = 0; g < G; ++g) {
      const std::vector<Position> kept = cache.sorted_positions(g);
      if (kind.protects_newest) CHECK(kept.back() == Position(n - 1));
      if (name == "window") CHECK(kept.front() == Position(n - keep));
      if (name == "sinks") CHECK(kept.front() == 0);
    }
  }
}

TEST_CASE("the H2O options refuse what cannot work", "[h2o-options]") {
  using h2o_test::error_of;
  CHECK(error_of<std::invalid_argument>([] {
          H2OPolicy(CacheBudget(2, 2), ScoringMode::PerHead, H2OScore::Sum, 3);
        }) == "H2O: a start area of 3 tokens does not fit in the heavy budget of 2");
  CHECK_NOTHROW(H2OPolicy(CacheBudget(2, 2), ScoringMode::PerHead, H2OScore::Sum, 2));
  CHECK(error_of<std::invalid_argument>([] { parse_h2o_score("mean"); }) ==
        "unknown H2O score 'mean' (expected sum, normalised-sum or decayed-sum)");
  CHECK(parse_h2o_score(to_string(H2OScore::NormalisedSum)) == H2OScore::NormalisedSum);
  CHECK(parse_h2o_score(to_string(H2OScore::Sum)) == H2OScore::Sum);
  // Every slot protected: a caller's bug, named.
  const std::vector<Position> positions = {0, 1, 2};
  const std::vector<float> scores = {1.0f, 1.0f, 1.0f};
  CHECK_THROWS_AS(slot_to_evict(positions.data(), scores.data(), 3, EvictionRule{1, 2, false}),
                  std::logic_error);
  CHECK_THROWS_AS(slot_to_evict(positions.data(), scores.data(), 3, EvictionRule{3, 0, true}),
                  std::logic_error);
}

TEST_CASE("an equal budget cuts H2O's start area to the heavy half", "[h2o-options]") {
  PolicySettings base;
  base.h2o.start_area = 20;
  base.h2o.score = H2OScore::NormalisedSum;
  const PolicySettings small = settings_for_budget("h2o", 9, base);
  CHECK(small.heavy == 4);
  CHECK(small.recent == 5);
  CHECK(small.h2o.start_area == 4);
  CHECK(small.h2o.score == H2OScore::NormalisedSum);  // the rest comes from base
  const PolicySettings roomy = settings_for_budget("h2o", 91, base);
  CHECK(roomy.h2o.start_area == 20);
  CHECK_NOTHROW(make_policy("h2o", small));
  // Asked for directly, a start area that does not fit is still refused (H2OPolicy's rule).
  PolicySettings direct = small;
  direct.h2o.start_area = 5;
  CHECK_THROWS_WITH(
      make_policy("h2o", direct),
      h2o_catch::Contains("a start area of 5 tokens does not fit in the heavy budget of 4"));
}
