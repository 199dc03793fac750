#include "h2o/policy/sink_window_policy.hpp"

#include <limits>
#include <stdexcept>

namespace h2o {

SinkWindowPolicy::SinkWindowPolicy(std::size_t sinks, std::size_t recent, const LayerShape& shape)
    : LayerPolicy(shape, sinks + recent), sinks_(sinks), recent_(recent) {
  if (recent_ == 0) {
    throw std::invalid_argument(
        "attention sinks: recent must be at least 1 (the budget sinks + recent must hold more "
        "than the sinks)");
  }
  if (sinks_ > std::numeric_limits<std::size_t>::max() - recent_) {
    throw std::invalid_argument("attention sinks: sinks + recent is too large");
  }
}

std::string SinkWindowPolicy::describe() const {
  return "attention sinks " + std::to_string(sinks_) + " + recent " + std::to_string(recent_) +
         " = " + std::to_string(budget()) + " tokens (StreamingLLM)";
}

std::size_t oldest_non_sink(const Position* positions, std::size_t n, std::size_t sinks) {
  const auto first_non_sink = static_cast<Position>(sinks);
  std::size_t victim = n;  // none yet
  for (std::size_t s = 0; s < n; ++s) {
    if (positions[s] < first_non_sink) continue;
    if (victim == n || positions[s] < positions[victim]) victim = s;
  }
  if (victim == n) {
    throw std::logic_error("attention sinks: no token outside the sinks to evict");
  }
  return victim;
}

void SinkWindowPolicy::choose_victims(LayerKVCache& cache, std::size_t* victims) {
  for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
    // At most `sinks` slots are sinks and n > sinks + recent, so at least recent + 1 are not: the
    // oldest of them is never one of the last `recent` tokens.
    victims[g] = oldest_non_sink(cache.positions(g), cache.size(g), sinks_);
  }
}

}  // namespace h2o
