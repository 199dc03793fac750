#include "h2o/policy/h2o_policy.hpp"

#include <algorithm>
#include <stdexcept>

namespace h2o {

H2OPolicy::H2OPolicy(CacheBudget budget, ScoringMode mode) : budget_(budget), mode_(mode) {}

std::string H2OPolicy::describe() const {
  return "H2O, " + budget_.describe() + ", " + to_string(mode_) + " scores";
}

std::size_t H2OPolicy::max_tokens(std::size_t max_positions) const {
  return std::min(budget_.total(), max_positions);
}

void H2OPolicy::after_attention(LayerKVCache& cache, const StepAttention& attention) {
  const std::size_t n = cache.size();

  // Within budget: add this step's attention to every live slot's score; nothing goes.
  if (n <= budget_.total()) {
    add_step_attention(cache, attention, mode_);
    return;
  }
  // Over budget: the decoder adds one token per step, so one token per head goes. Adding the
  // attention and finding each head's lowest-scoring older slot happen in one pass per head.
  if (n != budget_.total() + 1) {
    add_step_attention(cache, attention, mode_);  // (its shape check comes first, as always)
    throw std::logic_error("H2OPolicy: cache is more than one token over budget");
  }
  victims_.resize(cache.n_kv_heads());
  add_step_attention_and_pick_victims(cache, attention, mode_, budget_.recent, victims_.data());
  cache.remove_one_per_head(victims_.data());
}

}  // namespace h2o
