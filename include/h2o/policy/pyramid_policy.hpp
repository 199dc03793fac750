// pyramid_policy.hpp: PyramidKV (Cai et al., 2024, "PyramidKV: Dynamic KV Cache Compression based
// on Pyramidal Information Funneling"): layers near the embedding keep more tokens, deeper layers
// fewer, at the same total as a uniform budget.
//
// Dimension legend: L = layers, l = a layer's index (0 nearest the embedding), G = KV heads.
//
// The paper's observation: attention is spread wide in the first layers and gathers on a few
// tokens deeper in, so a budget that funnels (many tokens low, few high) spends the same bytes
// where they are needed. Its budget, as its code (KVCache-Factory, pyramidkv_utils.py) and
// kvpress's PyramidKVPress compute it: every layer keeps the recent window; the rest of an average
// budget m per layer is spread along a straight line from
//   max = 2 m - m / beta  in layer 0   down to   min = m / beta  in layer L - 1,
// so the layers' budgets sum to L m (beta = 20 in both codes: the deepest layer keeps 1/20 of the
// average). Here m is the heavy part of the budget: layer l keeps heavy_l heavy hitters + the
// last `recent`, where heavy_l is the line's value rounded so that the layers sum to exactly
// L * heavy (pyramid_heavy_budgets below): the same total KV bytes as H2O or the window.
//
// Where it differs from the paper, and why: the paper cuts a prompt once, by SnapKV's votes; here
// the budget is kept at every step by a scored policy's scores and rule (scored_policy.hpp): H2O's
// by default (accumulated attention, the lowest outside the recent window goes), or another's
// ("pyramid:tova", "pyramid:knorm"), so what changes against that policy is only how much each
// layer keeps. A prompt read with Decoder::read_prompt_compressed is cut once per layer
// to its own budget by the same rule. kvpress falls back to a uniform budget when the line's
// minimum would be below the window (as it is for short prompts); here the line always applies.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "h2o/cache/budget.hpp"
#include "h2o/policy/cache_policy.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "h2o/policy/head_scores.hpp"
#include "h2o/policy/scored_policy.hpp"

namespace h2o {

// The heavy hitters layer `layer` of `n_layers` keeps when the layers keep `heavy` on average,
// spread along PyramidKV's line (above) with steepness `beta` >= 1 and rounded so that the layers
// together keep exactly n_layers * heavy: layer l gets round(C(l + 1)) - round(C(l)), C(l) the
// line's sum over the layers before l. No layer gets more than `most` (the tokens a sequence has
// outside the window): as kvpress does, a line whose top is above it is capped there and its
// bottom raised to keep the total; when `heavy` >= `most` every layer keeps `most`. One layer:
// `heavy`. Throws std::invalid_argument for beta < 1, n_layers = 0 or layer >= n_layers.
// Allocates nothing (the decoder asks every step).
std::size_t pyramid_heavy_budget(std::size_t heavy, std::size_t layer, std::size_t n_layers,
                                 double beta, std::size_t most = static_cast<std::size_t>(-1));

class PyramidKVPolicy final : public BudgetSpreadPolicy {
 public:
  static constexpr double kPaperBeta = 20.0;  // pyramidkv_utils.py and kvpress: beta = 20

  // `budget` is the average per layer and KV head: layer l of `shape` keeps budget.recent recent
  // tokens and pyramid_heavy_budget(budget.heavy, l, L, beta) heavy hitters (keep()), the heavy
  // part capped at max_positions - recent. `scorer` scores the tokens and chooses the victims.
  PyramidKVPolicy(CacheBudget budget, std::unique_ptr<ScoredPolicy> scorer, double beta,
                  const LayerShape& shape);
  // Over H2O's scores (the paper's PyramidKV as this project runs it).
  explicit PyramidKVPolicy(CacheBudget budget, ScoringMode mode = ScoringMode::PerHead,
                           H2OScore score = H2OScore::Sum, float decay = kDefaultH2ODecay,
                           double beta = kPaperBeta, const LayerShape& shape = {});

  std::string name() const override { return "pyramid"; }
  // "PyramidKV, heavy 8 + recent 8 = 16 tokens per layer on average, heavy hitters shrinking
  // with depth (beta 20), per-head scores"
  std::string describe() const override;

  // The scorer's scores and rule, and the default after_attention: it evicts once the layer is
  // over its budget.

  double beta() const { return beta_; }

 private:
  CacheBudget budget_;
  double beta_;
};

}  // namespace h2o
