// tova_policy.hpp: Token Omission Via Attention (TOVA): evict the token the current query looks
// at least.
//
// Dimension legend: H = query heads, G = KV heads (H is a multiple of G), S = slot capacity.
//
// TOVA (Oren et al., "Transformers are Multi-State RNNs", 2024) judges tokens by THIS step's
// attention only: nothing accumulates across steps, and no window is protected. Every step, each
// live slot's score is overwritten with the attention the newest token's query gives it; once a
// layer holds more than `budget` tokens, the lowest-scoring token of each KV head is evicted. The
// newest token itself may go, right after it attended. Compare H2O (h2o_policy.hpp), which adds
// attention up over all steps and protects a recent window.
//
// Scoring modes (the ScoringMode of head_scores.hpp):
//   per-head (default): each KV head keeps its own tokens; its score is the MEAN attention of the
//     query heads that share it (heads g*H/G .. (g+1)*H/G - 1), the same grouped-query rule as
//     H2O's per-head mode.
//   shared: the mean over ALL query heads of the layer; every head keeps the same tokens. This is
//     what the TOVA paper does (it averages the attention over a layer's heads and drops the same
//     token in all of them); per-head is this project's default, as for H2O, so the two policies
//     differ only in how they score.
//
// Tie-break: on equal scores the newer token (larger position) is evicted and the older stays,
// the rule of selection.hpp.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "h2o/cache/budget.hpp"
#include "h2o/policy/cache_policy.hpp"
#include "h2o/policy/head_scores.hpp"

namespace h2o {

class TovaPolicy final : public CachePolicy {
 public:
  // Keeps budget.total() tokens per layer and KV head; nothing is protected.
  explicit TovaPolicy(CacheBudget budget, ScoringMode mode = ScoringMode::PerHead);

  std::string name() const override { return "tova"; }
  // "TOVA, 64 tokens, lowest current attention evicted, per-head scores"
  std::string describe() const override;
  std::size_t max_tokens(std::size_t max_positions) const override;
  // Overwrites every live slot's score with this step's attention.
  void observe(LayerKVCache& cache, const StepAttention& attention) override;
  // The lowest-scoring slot of each KV head (on a tie the newer token goes).
  void choose_victims(LayerKVCache& cache, std::size_t* victims) override;

  std::size_t budget() const { return budget_; }
  ScoringMode mode() const { return mode_; }

 private:
  std::size_t budget_;
  ScoringMode mode_;
};

}  // namespace h2o
