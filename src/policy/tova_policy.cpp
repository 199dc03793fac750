#include "h2o/policy/tova_policy.hpp"

#include <algorithm>
#include <stdexcept>

#include "h2o/cache/selection.hpp"

namespace h2o {

TovaPolicy::TovaPolicy(CacheBudget budget, ScoringMode mode, const LayerShape& shape)
    : LayerPolicy(shape, budget.total()), budget_(budget.total()), mode_(mode) {}

std::string TovaPolicy::describe() const {
  return "TOVA, " + std::to_string(budget_) + " tokens, lowest current attention evicted, " +
         to_string(mode_) + " scores";
}

void TovaPolicy::observe(LayerKVCache& cache, const StepAttention& attention) {
  // Every live slot's score becomes this step's attention: no memory of earlier steps.
  for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
    std::fill(cache.scores(g), cache.scores(g) + cache.size(g), 0.0f);
  }
  add_step_attention(cache, attention, mode_);
}

void TovaPolicy::choose_victims(LayerKVCache& cache, std::size_t* victims) {
  const EvictionRule nothing_protected;  // the lowest score goes; on a tie the newer token
  for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
    // Shared mode: every head holds identical positions and scores, so head 0 decides for all.
    victims[g] =
        mode_ == ScoringMode::Shared && g > 0
            ? victims[0]
            : slot_to_evict(cache.positions(g), cache.scores(g), cache.size(g), nothing_protected);
  }
}

void TovaPolicy::compress(LayerKVCache& cache, std::size_t keep) {
  cut_by_rule(cache, keep, EvictionRule{});
}

}  // namespace h2o
