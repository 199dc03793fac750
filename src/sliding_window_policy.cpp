#include "h2o/sliding_window_policy.hpp"

#include <algorithm>
#include <stdexcept>

namespace h2o {

SlidingWindowPolicy::SlidingWindowPolicy(std::size_t recent) : recent_(recent) {
  if (recent_ == 0) {
    throw std::invalid_argument("sliding window: recent must be at least 1 token");
  }
}

std::string SlidingWindowPolicy::describe() const {
  return "sliding window, last " + std::to_string(recent_) + " tokens";
}

std::size_t SlidingWindowPolicy::max_tokens(std::size_t max_positions) const {
  return std::min(recent_, max_positions);
}

void SlidingWindowPolicy::after_attention(LayerKVCache& cache, const StepAttention&) {
  const std::size_t n = cache.size();
  if (n <= recent_) return;
  if (n != recent_ + 1) {
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
