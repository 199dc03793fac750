#include "h2o/policy/h2o_policy.hpp"

#include <sstream>
#include <stdexcept>

#include "h2o/base/format.hpp"

namespace h2o {

std::string to_string(H2OScore score) {
  switch (score) {
    case H2OScore::Sum:
      return "sum";
    case H2OScore::NormalisedSum:
      return "normalised-sum";
    case H2OScore::DecayedSum:
      return "decayed-sum";
  }
  throw std::logic_error("to_string: not an H2O score");
}

H2OScore parse_h2o_score(const std::string& text) {
  for (H2OScore score : {H2OScore::Sum, H2OScore::NormalisedSum, H2OScore::DecayedSum}) {
    if (text == to_string(score)) return score;
  }
  throw std::invalid_argument("unknown H2O score '" + text +
                              "' (expected sum, normalised-sum or decayed-sum)");
}

void check_h2o_decay(double gamma) {
  // Written so that NaN fails too. gamma = 1 is the plain sum; gamma = 0 forgets all but the last
  // step; outside [0, 1] scores would grow without bound or flip sign every step.
  if (!(gamma > 0.0 && gamma < 1.0)) {
    std::ostringstream shown;  // 6 significant digits: 1.5, 1e-09, nan
    shown << gamma + 0.0 << " is not between 0 and 1 (exclusive), e.g. " << kDefaultH2ODecay;
    throw std::invalid_argument("H2O decay " + shown.str());
  }
}

H2OPolicy::H2OPolicy(CacheBudget budget, ScoringMode mode, H2OScore score, std::size_t start_area,
                     float decay, const LayerShape& shape)
    : ScoredPolicy(shape, budget.total(),
                   EvictionRule{budget.recent, start_area, score == H2OScore::NormalisedSum},
                   mode == ScoringMode::Shared),
      budget_(budget),
      mode_(mode),
      score_(score),
      decay_(decay) {
  if (score == H2OScore::DecayedSum) check_h2o_decay(decay);
  if (start_area > budget.heavy) {
    throw std::invalid_argument("H2O: a start area of " + std::to_string(start_area) +
                                " tokens does not fit in the heavy budget of " +
                                std::to_string(budget.heavy));
  }
}

std::string H2OPolicy::scores() const {
  std::string text = to_string(mode_) + " scores";
  if (score_ == H2OScore::NormalisedSum) text += ", normalised by steps in the cache";
  if (score_ == H2OScore::DecayedSum) text += ", decayed by " + fixed(decay_, 3) + " per step";
  return text;
}

std::string H2OPolicy::describe() const {
  std::string text = "H2O, " + budget_.describe() + ", " + scores();
  if (start_area() > 0) {
    text += ", the first " + std::to_string(start_area()) + " of the heavy slots protected";
  }
  return text;
}

void H2OPolicy::score(LayerKVCache& cache, const StepAttention& attention) {
  if (score_ == H2OScore::DecayedSum) decay_scores(cache, decay_);
  add_step_attention(cache, attention, mode_);
}

void H2OPolicy::after_attention(LayerKVCache& cache, const StepAttention& attention) {
  // The options (the fused pass only adds: it is the plain sum's), and every step that evicts
  // nothing, take the scored policy's way: score, then choose_victims (selection.hpp's rule).
  if (score_ != H2OScore::Sum || start_area() > 0 || cache.uniform_size() != keep() + 1) {
    LayerPolicy::after_attention(cache, attention);
    return;
  }
  // One token over budget under the paper's rule: adding the attention and finding each head's
  // victim happen in one vectorised pass per head (eviction_scan.hpp; same decisions).
  victims_.resize(cache.n_kv_heads());
  add_step_attention_and_pick_victims(cache, attention, mode_, budget_.recent, victims_.data());
  cache.remove_one_per_head(victims_.data());
}

}  // namespace h2o
