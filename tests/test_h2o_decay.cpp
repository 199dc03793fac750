// test_h2o_decay.cpp: H2O's decayed sum (h2o_policy.hpp: every step each live score is multiplied
// by gamma, then the step's attention is added).
//
// Checks: a worked example by hand where the decayed sum evicts another token than the plain sum;
// over seeded random attention, the scores equal a direct recomputation sum_t gamma^(now - t) *
// a_t, and the decisions equal the rule (plan_keep) applied to scores kept by hand step by step;
// and the refusals of a gamma outside (0, 1). Elsewhere: the fused fast path is not taken
// (test_h2o_options.cpp), a budget covering every step is the full cache (test_policy_factory.cpp).
//
// Dimension legend: H = query heads, G = KV heads, n = live slots.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "h2o/base/random.hpp"
#include "h2o/cache/kv_cache.hpp"
#include "h2o/cache/selection.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "h2o_catch.hpp"
#include "policy_test_support.hpp"
#include "test_support.hpp"

using namespace h2o;
using h2o_test::CraftedAttention;
using h2o_test::score_of;

namespace {

// One KV head's attention given by position: row[slot] = weight of the position in that slot.
CraftedAttention attention_by_position(const LayerKVCache& cache,
                                       const std::map<Position, float>& weights) {
  CraftedAttention attention(1, cache.capacity());
  std::vector<float> row(cache.uniform_size());
  for (std::size_t s = 0; s < cache.uniform_size(); ++s) row[s] = weights.at(cache.positions(0)[s]);
  attention.set_row(0, row);
  return attention;
}

// Seeded random attention rows for H heads over n live slots (each row sums to 1): (H, n).
std::vector<std::vector<float>> random_rows(std::size_t n_heads, std::size_t n, Rng& rng) {
  std::vector<std::vector<float>> rows(n_heads, std::vector<float>(n));
  for (std::vector<float>& row : rows) {
    float total = 0.0f;
    for (float& w : row) total += (w = 0.01f + static_cast<float>(rng.below(1000)) / 1000.0f);
    for (float& w : row) w /= total;
  }
  return rows;
}

CraftedAttention crafted(const std::vector<std::vector<float>>& rows, std::size_t stride) {
  CraftedAttention attention(rows.size(), stride);
  for (std::size_t h = 0; h < rows.size(); ++h) attention.set_row(h, rows[h]);
  return attention;
}

}  // namespace

TEST_CASE("the decayed sum forgets old attention and evicts another token than the sum",
          "[h2o-decay]") {
  // One head, heavy 1 + recent 1, gamma 0.5 (every number below is exact in binary).
  //   step 0  attention {0: 1}                  sum {0: 1}                decayed {0: 1}
  //   step 1  attention {0: .5, 1: .5}          sum {0: 1.5, 1: .5}       decayed {0: 1, 1: .5}
  //   step 2  attention {0: .125, 1: .5, 2: .375}
  //           sum     {0: 1.625, 1: 1,    2: .375}: position 1 (1 < 1.625) goes;
  //           decayed {0: .625,  1: .75,  2: .375}: position 0 (.625 < .75) goes.
  // Position 2 is the recent window. Position 0 leads the sum on the attention of step 0 alone.
  const std::vector<std::map<Position, float>> steps = {
      {{0, 1.0f}}, {{0, 0.5f}, {1, 0.5f}}, {{0, 0.125f}, {1, 0.5f}, {2, 0.375f}}};
  const std::vector<std::map<Position, float>> expected_decayed = {
      {{0, 1.0f}}, {{0, 1.0f}, {1, 0.5f}}, {{1, 0.75f}, {2, 0.375f}}};
  const std::vector<std::map<Position, float>> expected_sum = {
      {{0, 1.0f}}, {{0, 1.5f}, {1, 0.5f}}, {{0, 1.625f}, {2, 0.375f}}};
  for (const H2OScore score : {H2OScore::DecayedSum, H2OScore::Sum}) {
    INFO(to_string(score));
    H2OPolicy policy(CacheBudget(1, 1), ScoringMode::PerHead, score, 0, 0.5f);
    LayerKVCache cache(1, 2, 3);
    const std::vector<float> zeros(2, 0.0f);
    const auto& expected = score == H2OScore::DecayedSum ? expected_decayed : expected_sum;
    for (std::size_t t = 0; t < steps.size(); ++t) {
      cache.append(zeros.data(), zeros.data(), Position(t));
      policy.after_attention(cache, attention_by_position(cache, steps[t]).view());
      INFO("step " << t);
      REQUIRE(cache.uniform_size() == expected[t].size());
      for (const auto& [position, value] : expected[t])
        CHECK(score_of(cache, 0, position) == value);
    }
  }
}

TEST_CASE("decayed scores are sum_t gamma^(now - t) * a_t, head by head", "[h2o-decay]") {
  // A budget that never fills: nothing is evicted, so slot s holds position s all along.
  const ScoringMode mode = GENERATE(ScoringMode::PerHead, ScoringMode::Shared);
  const std::size_t H = 4, G = 2, steps = 50;
  Rng rng(61);
  for (int trial = 0; trial < 10; ++trial) {
    const float gamma = 0.05f + 0.9f * static_cast<float>(rng.below(1000)) / 1000.0f;
    INFO("trial " << trial << ", gamma " << gamma << ", " << to_string(mode));
    H2OPolicy policy(CacheBudget(steps, steps), mode, H2OScore::DecayedSum, 0, gamma);
    LayerKVCache cache(G, 2, steps);
    const std::vector<float> zeros(G * 2, 0.0f);
    std::vector<std::vector<std::vector<float>>> seen;  // (steps, H, n)
    for (std::size_t t = 0; t < steps; ++t) {
      cache.append(zeros.data(), zeros.data(), Position(t));
      seen.push_back(random_rows(H, t + 1, rng));
      policy.after_attention(cache, crafted(seen.back(), steps).view());
    }
    REQUIRE(cache.uniform_size() == steps);
    for (std::size_t g = 0; g < G; ++g) {
      // KV head g reads query heads 2g, 2g + 1 (per head) or all four (shared).
      const std::size_t first = mode == ScoringMode::PerHead ? g * (H / G) : 0;
      const std::size_t count = mode == ScoringMode::PerHead ? H / G : H;
      for (std::size_t p = 0; p < steps; ++p) {
        double expected = 0.0;
        for (std::size_t t = p; t < steps; ++t) {
          double step_weight = 0.0;
          for (std::size_t h = first; h < first + count; ++h) step_weight += seen[t][h][p];
          expected += std::pow(static_cast<double>(gamma), double(steps - 1 - t)) * step_weight;
        }
        CHECK(cache.scores(g)[p] == Approx(expected).epsilon(1e-5).margin(1e-6));
      }
    }
  }
}

TEST_CASE("the decayed policy evicts by the rule on scores kept by hand", "[h2o-decay]") {
  // Per head with H = G: one row per KV head, so the hand-kept float scores below take exactly the
  // policy's operations (times gamma, plus the row) and the decisions must agree to the token.
  const std::size_t H = 2, G = 2, steps = 80;
  Rng rng(67);
  for (int trial = 0; trial < 20; ++trial) {
    const std::size_t heavy = 1 + rng.below(6), recent = rng.below(6);
    const float gamma = trial % 2 == 0 ? 0.9f : 0.5f;
    INFO("trial " << trial << ", heavy " << heavy << ", recent " << recent);
    H2OPolicy policy(CacheBudget(heavy, recent), ScoringMode::PerHead, H2OScore::DecayedSum, 0,
                     gamma);
    const std::size_t total = heavy + recent;
    LayerKVCache cache(G, 2, total + 1);
    const std::vector<float> zeros(G * 2, 0.0f);
    // The reference per KV head: positions in the cache (ascending) and their scores.
    std::vector<std::vector<Position>> positions(G);
    std::vector<std::vector<float>> scores(G);
    for (std::size_t t = 0; t < steps; ++t) {
      cache.append(zeros.data(), zeros.data(), Position(t));
      const std::vector<std::vector<float>> rows = random_rows(H, cache.uniform_size(), rng);
      for (std::size_t g = 0; g < G; ++g) {
        positions[g].push_back(Position(t));
        scores[g].push_back(0.0f);
        for (std::size_t s = 0; s < cache.uniform_size(); ++s) {  // slot s -> its position's index
          const Position p = cache.positions(g)[s];
          const auto i = static_cast<std::size_t>(
              std::find(positions[g].begin(), positions[g].end(), p) - positions[g].begin());
          scores[g][i] = scores[g][i] * gamma + rows[g][s];
        }
        if (positions[g].size() > total) {
          const KeepPlan plan = plan_keep(positions[g], scores[g], CacheBudget(heavy, recent));
          std::vector<Position> kept_positions;
          std::vector<float> kept_scores;
          for (std::size_t i : plan.kept) {
            kept_positions.push_back(positions[g][i]);
            kept_scores.push_back(scores[g][i]);
          }
          positions[g] = kept_positions;
          scores[g] = kept_scores;
        }
      }
      policy.after_attention(cache, crafted(rows, total + 1).view());
      INFO("step " << t);
      for (std::size_t g = 0; g < G; ++g) {
        REQUIRE(cache.sorted_positions(g) == positions[g]);
        for (std::size_t i = 0; i < positions[g].size(); ++i) {
          REQUIRE(score_of(cache, g, positions[g][i]) == scores[g][i]);
        }
      }
    }
  }
}

TEST_CASE("the decayed sum refuses a gamma outside (0, 1)", "[h2o-decay]") {
  using h2o_test::error_of;
  auto make = [](float gamma) {
    return [gamma] {
      H2OPolicy(CacheBudget(2, 2), ScoringMode::PerHead, H2OScore::DecayedSum, 0, gamma);
    };
  };
  CHECK(error_of<std::invalid_argument>(make(1.0f)) ==
        "H2O decay 1 is not between 0 and 1 (exclusive), e.g. 0.98");
  CHECK(error_of<std::invalid_argument>(make(0.0f)) ==
        "H2O decay 0 is not between 0 and 1 (exclusive), e.g. 0.98");
  CHECK(error_of<std::invalid_argument>(make(-0.5f)) ==
        "H2O decay -0.5 is not between 0 and 1 (exclusive), e.g. 0.98");
  CHECK(error_of<std::invalid_argument>(make(1.5f)) ==
        "H2O decay 1.5 is not between 0 and 1 (exclusive), e.g. 0.98");
  CHECK_THROWS_AS(make(std::numeric_limits<float>::quiet_NaN())(), std::invalid_argument);
  CHECK_THROWS_AS(make(std::numeric_limits<float>::infinity())(), std::invalid_argument);
  CHECK_NOTHROW(make(0.95f)());
  // The other scores ignore the decay, whatever it is.
  CHECK_NOTHROW(H2OPolicy(CacheBudget(2, 2), ScoringMode::PerHead, H2OScore::Sum, 0, 7.0f));
  // Through the factory, and named in the description.
  PolicySettings settings = settings_for_budget("h2o", 10);
  settings.h2o.score = H2OScore::DecayedSum;
  settings.h2o.decay = 0.9f;
  CHECK(make_policy("h2o", settings)->describe() ==
        "H2O, heavy 5 + recent 5 = 10 tokens, per-head scores, decayed by 0.900 per step");
  settings.h2o.decay = 1.0f;
  CHECK_THROWS_AS(make_policy("h2o", settings), std::invalid_argument);
  CHECK(parse_h2o_score("decayed-sum") == H2OScore::DecayedSum);
  CHECK(to_string(H2OScore::DecayedSum) == "decayed-sum");
}
