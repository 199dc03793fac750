// scored_policy.hpp: a policy that is its score.
//
// Dimension legend: G = KV heads, S = slot capacity of a layer cache.
//
// H2O, TOVA and key norm differ only in how they score a token: H2O adds up the attention it
// receives, TOVA keeps this step's attention alone, key norm the length of its key. The rest is
// the same for all of them and is written here once, as kvpress writes it once for every scorer
// press (ScorerPress): per KV head, the lowest-scoring token outside the recent window goes
// (selection.hpp's rule and tie-break), and a prompt is cut once by the same rule (cut_by_rule).
// So a scored policy writes its score() (and its name and description); Ada-KV and PyramidKV take
// any scored policy and change only how its budget is shared out (by head, by layer), as kvpress's
// AdaKVPress wraps any scorer press.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "h2o/cache/selection.hpp"
#include "h2o/policy/cache_policy.hpp"

namespace h2o {

class ScoredPolicy : public LayerPolicy {
 public:
  // How the policy scores: this step's attention (or the newest token's key) changes the
  // per-slot scores; a higher score is kept longer. Evicts nothing.
  virtual void score(LayerKVCache& cache, const StepAttention& attention) = 0;
  // How it scores, in a few words, for describe() and for the policies that wrap it:
  // "per-head scores", "key-norm scores".
  virtual std::string scores() const = 0;

  void observe(LayerKVCache& cache, const StepAttention& attention) final {
    score(cache, attention);
  }
  // The lowest score outside the recent window, per KV head (shared scores: head 0's for all).
  void choose_victims(LayerKVCache& cache, std::size_t* victims) final;
  // One cut by the rule: each KV head keeps its window and its best `keep` scores in all.
  void compress(LayerKVCache& cache, std::size_t keep) override;

  // What is protected and how scores compare (selection.hpp).
  const EvictionRule& rule() const { return rule_; }
  // True when every KV head scores, and so keeps, the same tokens (one decision serves them all).
  bool shared() const { return shared_; }

 protected:
  ScoredPolicy(const LayerShape& shape, std::size_t keep, const EvictionRule& rule, bool shared)
      : LayerPolicy(shape, keep), rule_(rule), shared_(shared) {}

 private:
  EvictionRule rule_;
  bool shared_;
};

// A policy that spreads a budget over a scored policy (PyramidKV by layer, Ada-KV by head): the
// scored policy's score() and rule choose the tokens; this one says only how many each layer (its
// keep()) or head keeps. "pyramid:tova" is PyramidKV over TOVA's scores.
class BudgetSpreadPolicy : public LayerPolicy {
 public:
  void observe(LayerKVCache& cache, const StepAttention& attention) override {
    scorer_->observe(cache, attention);
  }
  void choose_victims(LayerKVCache& cache, std::size_t* victims) override {
    scorer_->choose_victims(cache, victims);
  }
  void compress(LayerKVCache& cache, std::size_t keep) override { scorer_->compress(cache, keep); }

  const ScoredPolicy& scorer() const { return *scorer_; }

 protected:
  // `scorer` must be a policy (std::invalid_argument otherwise).
  BudgetSpreadPolicy(const LayerShape& shape, std::size_t keep, std::size_t head_capacity,
                     std::unique_ptr<ScoredPolicy> scorer);

 private:
  std::unique_ptr<ScoredPolicy> scorer_;
};

}  // namespace h2o
