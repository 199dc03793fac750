#include "h2o/policy/scored_policy.hpp"

#include <stdexcept>
#include <utility>

namespace h2o {

void ScoredPolicy::choose_victims(LayerKVCache& cache, std::size_t* victims) {
  for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
    // Shared scores: every head holds identical positions and scores, so head 0 decides for all.
    victims[g] = shared_ && g > 0
                     ? victims[0]
                     : slot_to_evict(cache.positions(g), cache.scores(g), cache.size(g), rule_);
  }
}

void ScoredPolicy::compress(LayerKVCache& cache, std::size_t keep) {
  cut_by_rule(cache, keep, rule_);
}

BudgetSpreadPolicy::BudgetSpreadPolicy(const LayerShape& shape, std::size_t keep,
                                       std::size_t head_capacity,
                                       std::unique_ptr<ScoredPolicy> scorer)
    : LayerPolicy(shape, keep, head_capacity), scorer_(std::move(scorer)) {
  if (!scorer_) throw std::invalid_argument("no scored policy to spread a budget over");
}

}  // namespace h2o
