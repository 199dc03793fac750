#include "h2o/policy/sliding_window_policy.hpp"

#include <algorithm>

namespace h2o {

SlidingWindowPolicy::SlidingWindowPolicy(CacheBudget budget, const LayerShape& shape)
    : LayerPolicy(shape, budget.total()), window_(budget.total()) {}

std::string SlidingWindowPolicy::describe() const {
  return "sliding window, last " + std::to_string(window_) + " tokens";
}

void SlidingWindowPolicy::choose_victims(LayerKVCache& cache, std::size_t* victims) {
  for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
    const std::size_t n = cache.size(g);
    const Position* positions = cache.positions(g);  // (n,)
    victims[g] = static_cast<std::size_t>(std::min_element(positions, positions + n) - positions);
  }
}

}  // namespace h2o
