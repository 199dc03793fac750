// h2o_policy.hpp: Heavy-Hitter Oracle eviction over real K/V rows.
//
// Dimension legend: H = query heads, G = KV heads (H is a multiple of G), S = slot capacity.
//
// Every step, each live token's score grows by the attention it just received (no decay, no
// normalisation; head_scores.hpp says which query heads' attention). Once a layer holds more than
// heavy + recent tokens, one token per KV head goes: the lowest-scoring token outside the recent
// window (selection.hpp has the rule and tie-break).
//
// Scoring modes (head_scores.hpp says how query heads' attention reaches a KV head's score):
//   per-head (the paper's official code): each KV head has its own scores and keeps its own tokens;
//     with H = G this is exactly the paper's per-head sum over steps.
//   shared (the handbook): every head scores, and keeps, the same tokens, so one decision serves
//     the whole layer.
//
// Two options, both off by default (the paper's H2O), as OpenVINO GenAI's C++ cache eviction
// offers them (selection.hpp's EvictionRule has the rule):
//   score: sum (default) or normalised sum - each score divided by the steps the token has been
//     in the cache, against the old-token bias of plain sums (which the H2O paper reports did
//     worse);
//   start area: the first N positions are never evicted, taken out of the heavy budget.
//
// The evicted slot is overwritten in place by the layer's last row (kv_cache.hpp), so a step
// allocates nothing. The blog's append-then-filter style (keep_indices, rows re-packed in position
// order) makes the same decisions; lesson 07 writes it out and the tests compare the two.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "h2o/cache/selection.hpp"
#include "h2o/policy/cache_policy.hpp"
#include "h2o/policy/head_scores.hpp"

namespace h2o {

// How H2O compares tokens for eviction: the accumulated sum, or the sum per step in the cache.
enum class H2OScore { Sum, NormalisedSum };
std::string to_string(H2OScore score);              // "sum" / "normalised-sum"
H2OScore parse_h2o_score(const std::string& text);  // throws std::invalid_argument

class H2OPolicy final : public CachePolicy {
 public:
  // start_area must fit in budget.heavy (std::invalid_argument otherwise).
  explicit H2OPolicy(CacheBudget budget, ScoringMode mode = ScoringMode::PerHead,
                     H2OScore score = H2OScore::Sum, std::size_t start_area = 0);

  std::string name() const override { return "h2o"; }
  std::string describe() const override;
  // With the default options, adds the attention and finds the victims in one pass per head.
  void after_attention(LayerKVCache& cache, const StepAttention& attention) override;
  void observe(LayerKVCache& cache, const StepAttention& attention) override;
  void choose_victims(LayerKVCache& cache, std::size_t* victims) override;
  // One cut by the rule (the recent window, the start area, the best keys; selection.hpp).
  void compress(LayerKVCache& cache, std::size_t keep) override;
  const EvictionRule& rule() const { return rule_; }

  const CacheBudget& budget() const { return budget_; }
  ScoringMode mode() const { return mode_; }
  H2OScore score() const { return score_; }
  std::size_t start_area() const { return rule_.start_area; }

 private:
  CacheBudget budget_;
  ScoringMode mode_;
  H2OScore score_;
  EvictionRule rule_;
  std::vector<std::size_t> victims_;  // (G,) scratch, sized on first use, reused after
};

}  // namespace h2o
