// h2o_policy.hpp: Heavy-Hitter Oracle eviction over real K/V rows.
//
// Dimension legend: H = query heads, G = KV heads (H is a multiple of G), S = slot capacity.
//
// Every step, each live token's score grows by the attention it just received (by default no
// decay, no normalisation; head_scores.hpp says which query heads' attention). Once a layer holds
// more than heavy + recent tokens, one token per KV head goes: the lowest-scoring token outside
// the recent window (selection.hpp has the rule and tie-break).
//
// Scoring modes (head_scores.hpp says how query heads' attention reaches a KV head's score):
//   per-head (the paper's official code): each KV head has its own scores and keeps its own tokens;
//     with H = G this is exactly the paper's per-head sum over steps.
//   shared (the handbook): every head scores, and keeps, the same tokens, so one decision serves
//     the whole layer.
//
// Two options, both off by default (the paper's H2O), the first two scores and the start area as
// OpenVINO GenAI's C++ cache eviction offers them (selection.hpp's EvictionRule has the rule):
//   score: sum (default); normalised sum - each score divided by the steps the token has been in
//     the cache, against the old-token bias of plain sums (which the H2O paper reports did
//     worse); or decayed sum - every step each live score is first multiplied by a decay factor
//     gamma (0 < gamma < 1) and then the step's attention is added, so a token's score is
//     sum over the steps t it saw of gamma^(now - t) * attention_t: old attention fades, and a
//     token cannot lead only because it has been looked at for longer (A2SF's "forgetting
//     factor", Jo and Shin 2024). Its key is the score itself, as for the sum;
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
#include "h2o/policy/head_scores.hpp"
#include "h2o/policy/scored_policy.hpp"

namespace h2o {

// How H2O compares tokens for eviction: the accumulated sum, the sum per step in the cache, or the
// sum with every older step's attention decayed by gamma per step.
enum class H2OScore { Sum, NormalisedSum, DecayedSum };
std::string to_string(H2OScore score);              // "sum" / "normalised-sum" / "decayed-sum"
H2OScore parse_h2o_score(const std::string& text);  // throws std::invalid_argument

// The decayed sum's default gamma: attention 34 steps old counts half (0.98^34 = 0.50), and a
// score holds roughly the last 1 / (1 - 0.98) = 50 steps' attention. Measured on the project's
// model (docs/results.md): better than the window at 5, 10 and 20% of both the hand-written and
// the held-out stories, where 0.95 forgets too soon for the held-out stories' 20% (168 tokens).
constexpr float kDefaultH2ODecay = 0.98f;
// Checks a decay factor: throws std::invalid_argument unless 0 < gamma < 1 (a number).
void check_h2o_decay(double gamma);

// H2O's options (the factory's PolicySettings::h2o; --h2o-score, --h2o-decay, --start-area).
struct H2OOptions {
  H2OScore score = H2OScore::Sum;  // sum, normalised sum or decayed sum
  float decay = kDefaultH2ODecay;  // the decayed sum's gamma (the others ignore it)
  std::size_t start_area = 0;      // first positions never evicted (of heavy)
};

class H2OPolicy final : public ScoredPolicy {
 public:
  // start_area must fit in budget.heavy, and with the decayed sum 0 < decay < 1
  // (std::invalid_argument otherwise). The other scores ignore `decay`.
  explicit H2OPolicy(CacheBudget budget, ScoringMode mode = ScoringMode::PerHead,
                     H2OScore score = H2OScore::Sum, std::size_t start_area = 0,
                     float decay = kDefaultH2ODecay, const LayerShape& shape = {});
  // The paper's H2O (per-head sums, no start area) for one layer of `shape`:
  // policy_of<H2OPolicy>(budget).
  H2OPolicy(CacheBudget budget, const LayerShape& shape)
      : H2OPolicy(budget, ScoringMode::PerHead, shape) {}
  H2OPolicy(CacheBudget budget, ScoringMode mode, const LayerShape& shape)
      : H2OPolicy(budget, mode, H2OScore::Sum, 0, kDefaultH2ODecay, shape) {}
  H2OPolicy(CacheBudget budget, ScoringMode mode, const H2OOptions& options,
            const LayerShape& shape)
      : H2OPolicy(budget, mode, options.score, options.start_area, options.decay, shape) {}

  std::string name() const override { return "h2o"; }
  std::string describe() const override;
  // "per-head scores, decayed by 0.980 per step"
  std::string scores() const override;
  // Adds the step's attention to the scores (decayed sum: after multiplying them by the decay).
  void score(LayerKVCache& cache, const StepAttention& attention) override;
  // With the default options, adds the attention and finds the victims in one pass per head.
  void after_attention(LayerKVCache& cache, const StepAttention& attention) override;

  const CacheBudget& budget() const { return budget_; }
  ScoringMode mode() const { return mode_; }
  H2OScore h2o_score() const { return score_; }
  std::size_t start_area() const { return rule().start_area; }
  float decay() const { return decay_; }  // gamma of the decayed sum (the others ignore it)

 private:
  CacheBudget budget_;
  ScoringMode mode_;
  H2OScore score_;
  float decay_;
  std::vector<std::size_t> victims_;  // (G,) scratch, sized on first use, reused after
};

}  // namespace h2o
