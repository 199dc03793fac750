// test_h2o_policy.cpp: H2O eviction over real K/V rows (h2o_policy.hpp).
//
// Two kinds of checks:
//   crafted: attention written by hand straight into a LayerKVCache through StepAttention, so the
//            expected scores and survivors can be worked out on paper (per-head vs shared, GQA
//            means, the blog's and the handbook's worked examples, the tie-break);
//   decoder: a random decoder shaped like stories260K runs a few hundred tokens with small budgets,
//            and every step is checked against the budget, the recent window, the reference rule
//            plan_keep(), and the other eviction style.
//
// Dimension legend: H = query heads, G = KV heads, S = slot capacity, D = head_dim, T = live slots.
#include <algorithm>
#include "h2o_catch.hpp"
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <vector>

#include "h2o/base/random.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "policy_test_support.hpp"

using namespace h2o;
using namespace h2o_test;  // policy_test_support.hpp

namespace {

// ---------------------------------------------------------------------------------------------
// Crafted caches and attention

// Key/value numbers that name their head and position, so misaligned rows are easy to spot.
float key_number(std::size_t g, Position p, std::size_t d) {
  return static_cast<float>(g * 1000 + static_cast<std::size_t>(p) * 10 + d);
}

void append_numbered_position(LayerKVCache& cache, Position p) {
  const std::size_t G = cache.n_kv_heads(), D = cache.head_dim();
  std::vector<float> keys(G * D), values(G * D);  // (G * D,)
  for (std::size_t g = 0; g < G; ++g) {
    for (std::size_t d = 0; d < D; ++d) {
      keys[g * D + d] = key_number(g, p, d);
      values[g * D + d] = -key_number(g, p, d);
    }
  }
  cache.append(keys.data(), values.data(), p);
}

void require_rows_follow_positions(const LayerKVCache& cache) {
  const std::size_t D = cache.head_dim();
  for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
    for (std::size_t s = 0; s < cache.uniform_size(); ++s) {
      const Position p = cache.positions(g)[s];
      for (std::size_t d = 0; d < D; ++d) {
        REQUIRE(cache.keys(g)[s * D + d] == key_number(g, p, d));
        REQUIRE(cache.values(g)[s * D + d] == -key_number(g, p, d));
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Random decoders

// (random_model and random_tokens come from policy_test_support.hpp)

std::unique_ptr<CachePolicy> h2o_policy(std::size_t heavy, std::size_t recent, ScoringMode mode,
                                        EvictionStyle style) {
  return h2o_policy_in_style(CacheBudget{heavy, recent}, mode, style);
}

}  // namespace

// =============================================================================================
// Crafted examples

TEST_CASE("h2o per head mode keeps different tokens in different heads", "[h2o_policy]") {
  // Two KV heads; with 4 query heads each KV head is shared by two that attend identically.
  const std::size_t H = GENERATE(2, 4);
  const EvictionStyle style = GENERATE(EvictionStyle::OverwriteSlot, EvictionStyle::FilterRows);
  const std::size_t G = 2, group = H / G, S = 3;
  LayerKVCache cache(G, 2, S);
  auto policy = single_layer(*h2o_policy_in_style(CacheBudget{1, 1}, ScoringMode::PerHead, style));
  auto step = [&](Position p, const std::vector<float>& head0, const std::vector<float>& head1) {
    append_numbered_position(cache, p);
    CraftedAttention att(H, S);
    for (std::size_t h = 0; h < H; ++h) att.set_row(h, h / group == 0 ? head0 : head1);
    policy->after_attention(cache, att.view());
  };
  // KV head 0's queries like position 0; KV head 1's queries like position 1.
  step(0, {1.0f}, {1.0f});
  step(1, {0.9f, 0.1f}, {0.1f, 0.9f});
  // head 0 scores [2.0, 0.2, 0.8] -> keeps 0 (heavy) and 2 (recent)
  // head 1 scores [1.2, 1.7, 0.1] -> keeps 1 (heavy) and 2 (recent)
  step(2, {0.1f, 0.1f, 0.8f}, {0.1f, 0.8f, 0.1f});

  REQUIRE(cache.uniform_size() == 2);
  CHECK(cache.sorted_positions(0) == std::vector<Position>{0, 2});
  CHECK(cache.sorted_positions(1) == std::vector<Position>{1, 2});
  // A KV head's score adds the rows of its query heads: `group` identical rows each.
  const auto g = static_cast<float>(group);
  CHECK(score_of(cache, 0, 0) == Approx(2.0f * g).margin(1e-6));
  CHECK(score_of(cache, 1, 1) == Approx(1.7f * g).margin(1e-6));
  CHECK(score_of(cache, 0, 2) == Approx(0.8f * g).margin(1e-6));
  CHECK(score_of(cache, 1, 2) == Approx(0.1f * g).margin(1e-6));
  require_rows_follow_positions(cache);
}

TEST_CASE("h2o shared mode keeps the same tokens in every head", "[h2o_policy]") {
  const EvictionStyle style = GENERATE(EvictionStyle::OverwriteSlot, EvictionStyle::FilterRows);
  const std::size_t G = 2, H = 2, S = 3;
  LayerKVCache cache(G, 2, S);
  auto policy = single_layer(*h2o_policy_in_style(CacheBudget{1, 1}, ScoringMode::Shared, style));
  auto step = [&](Position p, const std::vector<float>& head0, const std::vector<float>& head1) {
    append_numbered_position(cache, p);
    CraftedAttention att(H, S);
    att.set_row(0, head0);
    att.set_row(1, head1);
    policy->after_attention(cache, att.view());
  };
  // The same attention as the per-head test: the sum over both heads now decides for both.
  step(0, {1.0f}, {1.0f});                          // sum [2]              -> scores [2]
  step(1, {0.9f, 0.1f}, {0.1f, 0.9f});              // sum [1, 1]           -> scores [3, 1]
  step(2, {0.1f, 0.1f, 0.8f}, {0.1f, 0.8f, 0.1f});  // sum [0.2, 0.9, 0.9]  -> [3.2, 1.9, 0.9]

  REQUIRE(cache.uniform_size() == 2);
  CHECK(cache.sorted_positions(0) == std::vector<Position>{0, 2});
  CHECK(cache.sorted_positions(1) == std::vector<Position>{0, 2});
  for (std::size_t g = 0; g < G; ++g) {
    CHECK(score_of(cache, g, 0) == Approx(3.2f).margin(1e-6));
    CHECK(score_of(cache, g, 2) == Approx(0.9f).margin(1e-6));
  }
  require_rows_follow_positions(cache);
}

TEST_CASE("h2o gives a grouped kv head the sum of its query heads", "[h2o_policy]") {
  // H = 4 query heads over G = 2 KV heads: heads 0 and 1 share KV head 0, heads 2 and 3 share 1.
  // Every number below is a short binary fraction, so the expected scores are exact.
  const std::size_t G = 2, H = 4, S = 6;  // stride 6 while only 2 or 3 slots are live
  LayerKVCache per_head_cache(G, 2, S), shared_cache(G, 2, S);
  H2OPolicy per_head(CacheBudget{4, 1}, ScoringMode::PerHead);
  H2OPolicy shared(CacheBudget{4, 1}, ScoringMode::Shared);
  for (Position p = 0; p < 2; ++p) {
    append_numbered_position(per_head_cache, p);
    append_numbered_position(shared_cache, p);
  }
  CraftedAttention att(H, S);
  att.set_row(0, {0.5f, 0.5f});
  att.set_row(1, {0.25f, 0.75f});
  att.set_row(2, {1.0f, 0.0f});
  att.set_row(3, {0.125f, 0.875f});
  per_head.after_attention(per_head_cache, att.view());
  shared.after_attention(shared_cache, att.view());

  // Per head: KV head 0 = rows 0 + 1, KV head 1 = rows 2 + 3.
  CHECK(score_of(per_head_cache, 0, 0) == 0.75f);
  CHECK(score_of(per_head_cache, 0, 1) == 1.25f);
  CHECK(score_of(per_head_cache, 1, 0) == 1.125f);
  CHECK(score_of(per_head_cache, 1, 1) == 0.875f);
  // Shared: the sum of all four rows, identical in both KV heads.
  for (std::size_t g = 0; g < G; ++g) {
    CHECK(score_of(shared_cache, g, 0) == 1.875f);
    CHECK(score_of(shared_cache, g, 1) == 2.125f);
  }

  // A second step adds on top; the new token starts from 0 and gets only this step's share.
  append_numbered_position(per_head_cache, 2);
  CraftedAttention att2(H, S);
  att2.set_row(0, {0.5f, 0.25f, 0.25f});
  att2.set_row(1, {0.0f, 0.5f, 0.5f});
  att2.set_row(2, {0.25f, 0.25f, 0.5f});
  att2.set_row(3, {0.75f, 0.125f, 0.125f});
  per_head.after_attention(per_head_cache, att2.view());
  CHECK(score_of(per_head_cache, 0, 0) == 0.75f + 0.5f);
  CHECK(score_of(per_head_cache, 0, 1) == 1.25f + 0.75f);
  CHECK(score_of(per_head_cache, 0, 2) == 0.75f);
  CHECK(score_of(per_head_cache, 1, 0) == 1.125f + 1.0f);
  CHECK(score_of(per_head_cache, 1, 1) == 0.875f + 0.375f);
  CHECK(score_of(per_head_cache, 1, 2) == 0.625f);
}

TEST_CASE("h2o policy reproduces the worked eviction examples", "[h2o_policy]") {
  const EvictionStyle style = GENERATE(EvictionStyle::OverwriteSlot, EvictionStyle::FilterRows);
  const ScoringMode mode = GENERATE(ScoringMode::PerHead, ScoringMode::Shared);
  struct Example {
    std::vector<float> scores;   // (5,) scores of positions 0..4 before the cut
    std::vector<Position> kept;  // expected survivors
  };
  const std::vector<Example> examples = {
      // The blog: [The, cat, sat, because, it], heavy 2, recent 2: `sat` goes.
      {{1.78f, 1.58f, 0.91f, 0.51f, 0.22f}, {0, 1, 3, 4}},
      // The handbook: position 1 goes; 3 and 4 stay by recency despite their low scores.
      {{3.8f, 0.4f, 2.1f, 0.3f, 0.0f}, {0, 2, 3, 4}},
      // A tie between positions 1 and 2: the older one stays.
      {{5.0f, 0.5f, 0.5f, 0.0f, 0.0f}, {0, 1, 3, 4}},
  };
  for (const Example& example : examples) {
    LayerKVCache cache(2, 2, 5);
    auto policy = single_layer(*h2o_policy_in_style(CacheBudget{2, 2}, mode, style));
    for (Position p = 0; p < 5; ++p) append_numbered_position(cache, p);
    for (std::size_t g = 0; g < 2; ++g) {
      std::copy(example.scores.begin(), example.scores.end(), cache.scores(g));
    }
    CraftedAttention zero_attention(2, 5);  // adds nothing: only the scores above decide
    policy->after_attention(cache, zero_attention.view());
    for (std::size_t g = 0; g < 2; ++g) {
      CHECK(cache.sorted_positions(g) == example.kept);
      for (Position p : example.kept) {
        CHECK(score_of(cache, g, p) == example.scores[static_cast<std::size_t>(p)]);
      }
    }
    require_rows_follow_positions(cache);
  }
}

TEST_CASE("h2o policy refuses bad budgets and shapes", "[h2o_policy]") {
  // A budget of 0 tokens cannot even be made (budget.hpp), so no policy ever sees one.
  CHECK_THROWS_AS(H2OPolicy(CacheBudget{0, 0}), std::invalid_argument);
  CHECK_THROWS_AS(CacheBudget(0, 0), std::invalid_argument);
  CHECK_THROWS_AS(CacheBudget(std::numeric_limits<std::size_t>::max(), 4), std::invalid_argument);
  CHECK_NOTHROW(H2OPolicy(CacheBudget{0, 1}));
  CHECK_NOTHROW(H2OPolicy(CacheBudget{1, 0}));

  // Three query heads cannot share two KV heads.
  LayerKVCache cache(2, 2, 4);
  append_numbered_position(cache, 0);
  H2OPolicy policy(CacheBudget{1, 1});
  CraftedAttention att(3, 4);
  CHECK_THROWS_AS(policy.after_attention(cache, att.view()), std::invalid_argument);

  // The in-place style evicts one token a step; a cache two over budget is a caller's bug.
  LayerKVCache crowded(2, 2, 4);
  for (Position p = 0; p < 4; ++p) append_numbered_position(crowded, p);
  CraftedAttention att2(2, 4);
  CHECK_THROWS_AS(policy.after_attention(crowded, att2.view()), std::logic_error);

  CHECK(parse_scoring_mode("per-head") == ScoringMode::PerHead);
  CHECK(parse_scoring_mode("shared") == ScoringMode::Shared);
  CHECK_THROWS_AS(parse_scoring_mode("mean"), std::invalid_argument);
  CHECK(to_string(ScoringMode::PerHead) == "per-head");
  CHECK(to_string(ScoringMode::Shared) == "shared");
}

TEST_CASE("h2o policy describes itself and sizes its cache", "[h2o_policy]") {
  const H2OPolicy policy(CacheBudget{2, 3});
  CHECK(policy.name() == "h2o");
  CHECK(policy.describe() == "H2O, heavy 2 + recent 3 = 5 tokens, per-head scores");
  CHECK(policy.keep() == 5);
  CHECK(H2OPolicy(CacheBudget{2, 3}, LayerShape{0, 1, 1, 4}).keep() == 4);
  const H2OPolicy shared(CacheBudget{1, 0}, ScoringMode::Shared);
  CHECK(shared.describe() == "H2O, heavy 1 + recent 0 = 1 tokens, shared scores");

  // The decoder reserves heavy + recent + 1 slots a layer, whatever the sequence length.
  const auto weights = random_model(1000, 3);
  Decoder decoder(weights, policy_of<H2OPolicy>(CacheBudget{2, 3}), 1000);
  const ModelConfig& c = weights->config;
  CHECK(decoder.reserved_kv_bytes() ==
        c.n_layers * 2 * c.n_kv_heads * (5 + 1) * c.head_dim() * sizeof(float));
}

// =============================================================================================
// Random decoders

TEST_CASE("h2o never holds more than its budget and keeps the recent window", "[h2o_policy]") {
  struct Budget {
    std::size_t heavy, recent;
  };
  const Budget budget =
      GENERATE(Budget{3, 5}, Budget{0, 4}, Budget{4, 0}, Budget{1, 1}, Budget{8, 8});
  const ScoringMode mode = GENERATE(ScoringMode::PerHead, ScoringMode::Shared);
  const EvictionStyle style = GENERATE(EvictionStyle::OverwriteSlot, EvictionStyle::FilterRows);
  const std::size_t steps = 300, total = budget.heavy + budget.recent;
  const auto weights = random_model(steps, 11);
  const ModelConfig& c = weights->config;
  Decoder decoder(weights, h2o_policy(budget.heavy, budget.recent, mode, style));
  const std::vector<int> tokens = random_tokens(steps, c.vocab_size, 12);
  INFO("heavy " << budget.heavy << ", recent " << budget.recent << ", " << to_string(mode));

  bool heads_ever_differ = false;
  for (std::size_t i = 0; i < steps; ++i) {
    decoder.forward(tokens[i]);
    require_bounded_caches(decoder, i, total);
    const Position newest = static_cast<Position>(i);
    for (std::size_t l = 0; l < c.n_layers; ++l) {
      const LayerKVCache& cache = decoder.cache(l);
      for (std::size_t g = 0; g < c.n_kv_heads; ++g) {
        const std::vector<Position> kept = cache.sorted_positions(g);
        // The last `recent` positions are all there, at the end of the sorted list.
        const std::size_t window = std::min(budget.recent, i + 1);
        for (std::size_t r = 0; r < window; ++r) {
          REQUIRE(kept[kept.size() - 1 - r] == newest - static_cast<Position>(r));
        }
        if (kept != cache.sorted_positions(0)) heads_ever_differ = true;
      }
    }
  }
  if (mode == ScoringMode::Shared) {
    CHECK_FALSE(heads_ever_differ);
  } else if (budget.heavy > 1) {
    // Real attention differs between heads, and so do their choices. (With a single heavy slot
    // every head keeps position 0, which has had the most steps to pile up score.)
    CHECK(heads_ever_differ);
  }
}

TEST_CASE("h2o decisions in a decoder follow plan_keep step by step", "[h2o_policy]") {
  // The test keeps its own score for every (layer, KV head, position), adds the recorded attention
  // with the same float operations the policy uses, asks plan_keep() which tokens stay, and
  // compares with what the cache really holds after the step: same survivors, same scores.
  const ScoringMode mode = GENERATE(ScoringMode::PerHead, ScoringMode::Shared);
  const EvictionStyle style = GENERATE(EvictionStyle::OverwriteSlot, EvictionStyle::FilterRows);
  const CacheBudget budget{6, 4};
  const std::size_t steps = 250;
  const auto weights = random_model(steps, 21);
  const ModelConfig& c = weights->config;
  const std::size_t G = c.n_kv_heads;
  Decoder decoder(weights, h2o_policy(budget.heavy, budget.recent, mode, style));
  const std::vector<int> tokens = random_tokens(steps, c.vocab_size, 22);
  std::vector<std::vector<std::map<Position, float>>> scores(
      c.n_layers, std::vector<std::map<Position, float>>(G));  // (L, G): position -> score

  const auto check_step = [&](std::size_t i, std::size_t l, std::size_t g,
                              const AttentionRecord& record, const LayerKVCache& cache) {
    const std::vector<Position>& slots = record.positions[g];  // (T,) before eviction
    auto& head_scores = scores[l][g];
    head_scores[static_cast<Position>(i)] = 0.0f;
    REQUIRE(head_scores.size() == slots.size());
    std::vector<float> slot_scores(slots.size());
    for (std::size_t s = 0; s < slots.size(); ++s) slot_scores[s] = head_scores.at(slots[s]);
    add_recorded_attention(slot_scores, record, g, mode);
    for (std::size_t s = 0; s < slots.size(); ++s) head_scores.at(slots[s]) = slot_scores[s];
    const KeepPlan plan = plan_keep(slots, slot_scores, budget);
    std::vector<Position> expected;
    for (std::size_t s : plan.kept) expected.push_back(slots[s]);
    for (std::size_t s : plan.evicted) head_scores.erase(slots[s]);

    INFO("step " << i << ", layer " << l << ", KV head " << g);
    REQUIRE(cache.sorted_positions(g) == expected);
    for (std::size_t s = 0; s < cache.uniform_size(); ++s) {
      REQUIRE(cache.scores(g)[s] == head_scores.at(cache.positions(g)[s]));
    }
  };
  replay_each_head(decoder, tokens, check_step);
}

TEST_CASE("h2o eviction styles give the same logits", "[h2o_policy]") {
  // Overwrite-slot keeps slots in arbitrary order, filter-rows in position order, so attention
  // sums run in a different order: equal up to float rounding. Tolerance: |difference| < 1e-5
  // times the scale of the logits (their largest magnitude, at least 1).
  const ScoringMode mode = GENERATE(ScoringMode::PerHead, ScoringMode::Shared);
  const std::size_t steps = 300;
  const auto weights = random_model(steps, 31);
  const ModelConfig& c = weights->config;
  Decoder in_place(weights, h2o_policy(16, 16, mode, EvictionStyle::OverwriteSlot));
  Decoder filtered(weights, h2o_policy(16, 16, mode, EvictionStyle::FilterRows));
  const std::vector<int> tokens = random_tokens(steps, c.vocab_size, 32);
  double worst = 0.0, scale = 1.0;
  for (std::size_t i = 0; i < steps; ++i) {
    const Vector& a = in_place.forward(tokens[i]);
    const Vector& b = filtered.forward(tokens[i]);
    for (std::size_t v = 0; v < c.vocab_size; ++v) {
      worst = std::max(worst, static_cast<double>(std::abs(a(v) - b(v))));
      scale = std::max(scale, static_cast<double>(std::abs(a(v))));
    }
    for (std::size_t l = 0; l < c.n_layers; ++l) {
      for (std::size_t g = 0; g < c.n_kv_heads; ++g) {
        REQUIRE(in_place.cache(l).sorted_positions(g) == filtered.cache(l).sorted_positions(g));
      }
    }
  }
  CHECK(in_place.evicted_tokens(0) == steps - 32);  // the comparison did cover evictions
  INFO("largest logit difference " << worst << ", logit scale " << scale);
  CHECK(worst < 1e-5 * scale);
  CHECK(worst > 0.0);  // the styles really did run their sums in different orders
}
