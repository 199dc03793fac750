#include "h2o/policy/tova_policy.hpp"

#include <algorithm>

namespace h2o {

TovaPolicy::TovaPolicy(CacheBudget budget, ScoringMode mode, const LayerShape& shape)
    : ScoredPolicy(shape, budget.total(), EvictionRule{}, mode == ScoringMode::Shared),
      budget_(budget.total()),
      mode_(mode) {}

std::string TovaPolicy::describe() const {
  return "TOVA, " + std::to_string(budget_) + " tokens, lowest current attention evicted, " +
         to_string(mode_) + " scores";
}

void TovaPolicy::score(LayerKVCache& cache, const StepAttention& attention) {
  // Every live slot's score becomes this step's attention: no memory of earlier steps.
  for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
    std::fill(cache.scores(g), cache.scores(g) + cache.size(g), 0.0f);
  }
  add_step_attention(cache, attention, mode_);
}

}  // namespace h2o
