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
// Eviction styles (same decisions, same logits up to float rounding):
//   overwrite-slot: the evicted slot is overwritten in place (no allocation; the decoder default).
//   filter-rows:    the blog's append-then-filter: keep_indices, then rows re-packed in position
//   order.
#pragma once

#include <string>
#include <vector>

#include "h2o/cache_policy.hpp"
#include "h2o/head_scores.hpp"
#include "h2o/selection.hpp"

namespace h2o {

enum class EvictionStyle { OverwriteSlot, FilterRows };


class H2OPolicy final : public CachePolicy {
 public:
  H2OPolicy(H2OBudget budget, ScoringMode mode = ScoringMode::PerHead,
            EvictionStyle style = EvictionStyle::OverwriteSlot);

  std::string name() const override { return "h2o"; }
  std::string describe() const override;
  std::size_t max_tokens(std::size_t max_positions) const override;
  void after_attention(LayerKVCache& cache, const StepAttention& attention) override;

  const H2OBudget& budget() const { return budget_; }
  ScoringMode mode() const { return mode_; }

 private:
  H2OBudget budget_;
  ScoringMode mode_;
  EvictionStyle style_;
  std::vector<std::size_t> victims_;  // (G,) scratch, sized on first use, reused after
};

}  // namespace h2o
