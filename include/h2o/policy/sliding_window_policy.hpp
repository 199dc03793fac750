// sliding_window_policy.hpp: keep the last few tokens, forget everything older.
//
// Dimension legend: G = KV heads, S = slot capacity of a layer cache.
//
// The simplest KV-cache budget there is, and the "local" baseline of the H2O paper: it keeps the
// last budget.total() tokens (heavy + recent, all of it spent on recency). Once a layer holds
// more, the oldest token (smallest position) leaves every KV head. All heads hold the same tokens.
// Attention plays no part and the per-slot scores are left at 0.
//
// It makes exactly the decisions of H2OPolicy with heavy = 0 and the same total (whose only
// candidate outside the window is the oldest token), so the two give identical logits; this class
// exists to show the interface needs nothing from H2O. Positions are distinct, so there are no
// ties to break.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "h2o/cache/budget.hpp"
#include "h2o/policy/cache_policy.hpp"

namespace h2o {

class SlidingWindowPolicy final : public LayerPolicy {
 public:
  // Keeps the last budget.total() tokens per layer and KV head.
  explicit SlidingWindowPolicy(CacheBudget budget, const LayerShape& shape = {});

  std::string name() const override { return "window"; }
  std::string describe() const override;  // "sliding window, last 64 tokens"
  // Keeps no scores; the victim is always the oldest token (every KV head the same one).
  void observe(LayerKVCache&, const StepAttention&) override {}
  void choose_victims(LayerKVCache& cache, std::size_t* victims) override;

  std::size_t window() const { return window_; }

 private:
  std::size_t window_;
};

}  // namespace h2o
