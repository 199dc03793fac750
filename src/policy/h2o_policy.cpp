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
  const std::size_t n_kv = cache.n_kv_heads();
  const std::size_t n = cache.size();

  // 1. Add this step's attention to every live slot's score.
  add_step_attention(cache, attention, mode_);

  // 2. Over budget: evict. The decoder adds one token per step, so one token per head goes.
  if (n <= budget_.total()) return;
  if (n != budget_.total() + 1) {
    throw std::logic_error("H2OPolicy: cache is more than one token over budget");
  }
  victims_.resize(n_kv);
  for (std::size_t g = 0; g < n_kv; ++g) {
    // Shared mode: every head holds identical positions and scores, so head 0 decides for all.
    victims_[g] = mode_ == ScoringMode::Shared && g > 0
                      ? victims_[0]
                      : slot_to_evict(cache.positions(g), cache.scores(g), n, budget_.recent);
  }
  cache.remove_one_per_head(victims_.data());
}

}  // namespace h2o
