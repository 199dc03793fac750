// h2o_policy.hpp: Heavy-Hitter Oracle eviction over real K/V rows.
//
// Dimension legend: H = query heads, G = KV heads (H is a multiple of G), S = slot capacity.
//
// Every step, each live token's score grows by the attention it just received (no decay, no
// normalisation). Once a layer holds more than heavy + recent tokens, one token per KV head goes:
// the lowest-scoring token outside the recent window (selection.hpp has the rule and tie-break).
//
// Scoring modes (head_scores.hpp says how query heads' attention reaches a KV head's score):
//   per-head (the paper's official code): each KV head has its own scores and keeps its own tokens;
//     with H = G this is exactly the paper's per-head sum over steps.
//   shared (the handbook): every head scores, and keeps, the same tokens, so one decision serves
//     the whole layer.
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

class H2OPolicy final : public CachePolicy {
 public:
  explicit H2OPolicy(CacheBudget budget, ScoringMode mode = ScoringMode::PerHead);

  std::string name() const override { return "h2o"; }
  std::string describe() const override;
  std::size_t max_tokens(std::size_t max_positions) const override;
  void after_attention(LayerKVCache& cache, const StepAttention& attention) override;

  const CacheBudget& budget() const { return budget_; }
  ScoringMode mode() const { return mode_; }

 private:
  CacheBudget budget_;
  ScoringMode mode_;
  std::vector<std::size_t> victims_;  // (G,) scratch, sized on first use, reused after
};

}  // namespace h2o
