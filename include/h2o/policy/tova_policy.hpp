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
//   shared (default, the paper's): the attention of ALL query heads of the layer; every head keeps
//     the same tokens. The TOVA paper's code averages the newest query's attention over a layer's
//     heads and drops the same token in all of them (a sum ranks as the average does).
//   per-head: each KV head keeps its own tokens, scored by the query heads that share it (the
//     grouped-query rule of H2O's per-head mode). One option away (--scoring per-head), and much
//     worse on this project's model: a head that keeps only what ITS queries want now forgets what
//     the other heads' next queries will want (README, "Policies").
//
// Tie-break: on equal scores the newer token (larger position) is evicted and the older stays:
// selection.hpp's rule with no recent window.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "h2o/cache/budget.hpp"
#include "h2o/policy/head_scores.hpp"
#include "h2o/policy/scored_policy.hpp"

namespace h2o {

class TovaPolicy final : public ScoredPolicy {
 public:
  // Keeps budget.total() tokens per layer and KV head; nothing is protected.
  explicit TovaPolicy(CacheBudget budget, ScoringMode mode = ScoringMode::Shared,
                      const LayerShape& shape = {});

  std::string name() const override { return "tova"; }
  // "TOVA, 64 tokens, lowest current attention evicted, per-head scores"
  std::string describe() const override;
  std::string scores() const override { return "TOVA's " + to_string(mode_) + " scores"; }
  // Overwrites every live slot's score with this step's attention.
  void score(LayerKVCache& cache, const StepAttention& attention) override;

  std::size_t budget() const { return budget_; }
  ScoringMode mode() const { return mode_; }

 private:
  std::size_t budget_;
  ScoringMode mode_;
};

}  // namespace h2o
