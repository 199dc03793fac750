#include "h2o/policy/sliding_window_policy.hpp"

#include <algorithm>
#include <stdexcept>

namespace h2o {

SlidingWindowPolicy::SlidingWindowPolicy(CacheBudget budget) : window_(budget.total()) {}

std::string SlidingWindowPolicy::describe() const {
  return "sliding window, last " + std::to_string(window_) + " tokens";
}

std::size_t SlidingWindowPolicy::max_tokens(std::size_t max_positions) const {
  return std::min(window_, max_positions);
}

void SlidingWindowPolicy::after_attention(LayerKVCache& cache, const StepAttention&) {
  const std::size_t n = cache.size();
  if (n <= window_) return;
  if (n != window_ + 1) {
    throw std::logic_error("SlidingWindowPolicy: cache is more than one token over budget");
  }
  const std::size_t n_kv = cache.n_kv_heads();
  victims_.resize(n_kv);
  for (std::size_t g = 0; g < n_kv; ++g) {
    const Position* positions = cache.positions(g);  // (n,)
    victims_[g] = static_cast<std::size_t>(std::min_element(positions, positions + n) - positions);
  }
  cache.remove_one_per_head(victims_.data());
}

}  // namespace h2o
