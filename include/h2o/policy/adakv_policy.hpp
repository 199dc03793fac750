// adakv_policy.hpp: Ada-KV (Feng et al., 2024, "Ada-KV: Optimizing KV Cache Eviction by Adaptive
// Budget Allocation for Efficient LLM Inference"): the KV heads of a layer share its budget, each
// holding as many tokens as its scores earn.
//
// Dimension legend: G = KV heads of a layer, S = slot capacity, r = recent window, m = heavy
// hitters per head on average, f = the floor per head.
//
// The paper's observation: some heads spread their attention over many tokens and others give
// almost all of it to a few, so one budget per head wastes slots on the second kind that the
// first kind needs. Its rule, as kvpress's AdaKVPress writes it: score every token of every head,
// then keep the best scores of the WHOLE layer (all heads' tokens ranked together), except that
// each head first keeps its own best alpha share of its budget (the "safeguard", alpha = 0.20), so
// that no head is cut to nothing.
//
// Here, at every step: each KV head keeps its recent window (r tokens, its scored policy's rule)
// and the layer's G m other slots go to the best scores over all heads, with each head keeping at
// least f = floor(0.20 m) of them. When the layer holds more than G (r + m) tokens, the victim is
// the lowest-scoring token, over all heads whose count is above r + f, outside its head's recent
// window (selection.hpp's key; on a tie the newer token goes, then the later head's). Since every
// head gets one token a step, a step evicts G tokens, from whichever heads they come. One head can
// so hold up to r + G m - (G - 1) f tokens; the layer holds G (r + m), the same KV bytes as H2O or
// the window at r + m per head.
//
// The scores are any scored policy's (scored_policy.hpp), as AdaKVPress takes any scorer press:
// H2O's by default (the factory's "adakv"), or another's ("adakv:knorm", "adakv:tova"); r is that
// policy's window (TOVA protects none) and m the rest of the budget.
//
// Where it differs from the paper, and why: the paper and kvpress cut a prompt once, scored by
// SnapKV's votes, and apply the safeguard to the whole budget (the window included, since SnapKV's
// window always scores highest); here the budget is kept at every step by H2O's accumulated
// attention, and the floor is a share of the heavy part (the window is kept apart, as H2O keeps
// it). Scores from different heads are comparable because every query head's attention sums to 1
// per step. A prompt read with Decoder::read_prompt_compressed is cut once by the same joint rule.
// With shared scores (--scoring shared) every head ranks the same tokens and there is nothing to
// share out: each head keeps the uniform budget, exactly the scored policy's shared mode.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "h2o/cache/budget.hpp"
#include "h2o/cache/selection.hpp"
#include "h2o/policy/cache_policy.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "h2o/policy/scored_policy.hpp"

namespace h2o {

class AdaKVPolicy final : public BudgetSpreadPolicy {
 public:
  static constexpr double kPaperSafeguard = 0.20;  // kvpress AdaKVPress: alpha_safeguard = 0.20

  // `scorer` scores the tokens and protects its window of r tokens; `budget` is per KV head on
  // average (m = budget.total() - r); the floor is floor(safeguard * m) tokens per head. A
  // safeguard outside [0, 1] is refused (std::invalid_argument). One head may hold
  // r + G m - (G - 1) f tokens (head_capacity()): what it holds when every other is at its floor
  // (with shared scores, the uniform budget).
  AdaKVPolicy(CacheBudget budget, std::unique_ptr<ScoredPolicy> scorer, double safeguard,
              const LayerShape& shape);
  // Over H2O's scores (the paper's Ada-KV as this project runs it).
  explicit AdaKVPolicy(CacheBudget budget, ScoringMode mode = ScoringMode::PerHead,
                       H2OScore score = H2OScore::Sum, float decay = kDefaultH2ODecay,
                       double safeguard = kPaperSafeguard, const LayerShape& shape = {});

  std::string name() const override { return "adakv"; }
  // "Ada-KV, heavy 8 + recent 8 = 16 tokens per KV head on average, a layer's heavy hitters
  // shared by its KV heads (at least 1 each), per-head scores"
  std::string describe() const override;

  // Scores the step, then evicts the layer's lowest tokens jointly until it holds G (r + m).
  // Allocates nothing.
  void after_attention(LayerKVCache& cache, const StepAttention& attention) override;
  // Cuts the layer to G * keep tokens at once: each head its recent window and its f best, then
  // the best of the rest over all heads, keys computed once on the cache as it stands.
  void compress(LayerKVCache& cache, std::size_t keep) override;

  std::size_t floor_per_head() const { return floor_; }  // f

 private:
  CacheBudget budget_;
  std::size_t floor_;

  // What the constructor works out before the layer is made: f and the most one head holds.
  struct Parts {
    std::unique_ptr<ScoredPolicy> scorer;
    std::size_t floor, head_capacity;
  };
  static Parts parts(CacheBudget budget, std::unique_ptr<ScoredPolicy> scorer, double safeguard,
                     std::size_t n_kv_heads);
  AdaKVPolicy(CacheBudget budget, Parts parts, const LayerShape& shape);
  // Evicts the layer's one lowest token outside the heads' windows and floors (false: none left).
  bool evict_lowest(LayerKVCache& cache);
};

}  // namespace h2o
