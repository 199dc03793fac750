#include "h2o/policy/h2o_policy.hpp"

#include <stdexcept>

namespace h2o {

std::string to_string(H2OScore score) { return score == H2OScore::Sum ? "sum" : "normalised-sum"; }

H2OScore parse_h2o_score(const std::string& text) {
  if (text == "sum") return H2OScore::Sum;
  if (text == "normalised-sum") return H2OScore::NormalisedSum;
  throw std::invalid_argument("unknown H2O score '" + text + "' (expected sum or normalised-sum)");
}

H2OPolicy::H2OPolicy(CacheBudget budget, ScoringMode mode, H2OScore score, std::size_t start_area)
    : CachePolicy(budget.total()),
      budget_(budget),
      mode_(mode),
      score_(score),
      rule_{budget.recent, start_area, score == H2OScore::NormalisedSum} {
  if (start_area > budget.heavy) {
    throw std::invalid_argument("H2O: a start area of " + std::to_string(start_area) +
                                " tokens does not fit in the heavy budget of " +
                                std::to_string(budget.heavy));
  }
}

std::string H2OPolicy::describe() const {
  std::string text = "H2O, " + budget_.describe() + ", " + to_string(mode_) + " scores";
  if (score_ == H2OScore::NormalisedSum) text += ", normalised by steps in the cache";
  if (rule_.start_area > 0) {
    text += ", the first " + std::to_string(rule_.start_area) + " of the heavy slots protected";
  }
  return text;
}

void H2OPolicy::observe(LayerKVCache& cache, const StepAttention& attention) {
  add_step_attention(cache, attention, mode_);
}

void H2OPolicy::choose_victims(LayerKVCache& cache, std::size_t* victims) {
  for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
    // Shared mode: every head holds identical positions and scores, so head 0 decides for all.
    victims[g] = mode_ == ScoringMode::Shared && g > 0
                     ? victims[0]
                     : slot_to_evict(cache.positions(g), cache.scores(g), cache.size(), rule_);
  }
}

void H2OPolicy::compress(LayerKVCache& cache, std::size_t keep) { cut_by_rule(cache, keep, rule_); }

void H2OPolicy::after_attention(LayerKVCache& cache, const StepAttention& attention) {
  // The options, and every step that evicts nothing, take CachePolicy's way: observe, then
  // choose_victims (selection.hpp's plain rule).
  if (rule_.start_area > 0 || rule_.normalise || cache.size() != budget_.total() + 1) {
    CachePolicy::after_attention(cache, attention);
    return;
  }
  // One token over budget under the paper's rule: adding the attention and finding each head's
  // victim happen in one vectorised pass per head (eviction_scan.hpp; same decisions).
  victims_.resize(cache.n_kv_heads());
  add_step_attention_and_pick_victims(cache, attention, mode_, budget_.recent, victims_.data());
  cache.remove_one_per_head(victims_.data());
}

}  // namespace h2o
