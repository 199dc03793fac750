#include "h2o/policy/tova_policy.hpp"

#include <algorithm>
#include <stdexcept>

namespace h2o {

TovaPolicy::TovaPolicy(CacheBudget budget, ScoringMode mode)
    : budget_(budget.total()), mode_(mode) {}

std::string TovaPolicy::describe() const {
  return "TOVA, " + std::to_string(budget_) + " tokens, lowest current attention evicted, " +
         to_string(mode_) + " scores";
}

std::size_t TovaPolicy::max_tokens(std::size_t max_positions) const {
  return std::min(budget_, max_positions);
}

void TovaPolicy::observe(LayerKVCache& cache, const StepAttention& attention) {
  // Every live slot's score becomes this step's (mean) attention: no memory of earlier steps.
  for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
    std::fill(cache.scores(g), cache.scores(g) + cache.size(), 0.0f);
  }
  add_step_attention(cache, attention, mode_);
}

void TovaPolicy::choose_victims(LayerKVCache& cache, std::size_t* victims) {
  const std::size_t n = cache.size();
  for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
    // Shared mode: every head holds identical positions and scores, so head 0 decides for all.
    if (mode_ == ScoringMode::Shared && g > 0) {
      victims[g] = victims[0];
      continue;
    }
    const Position* positions = cache.positions(g);  // (n,)
    const float* scores = cache.scores(g);           // (n,)
    std::size_t victim = 0;  // the lowest score; on a tie the newer token goes
    for (std::size_t s = 1; s < n; ++s) {
      if (scores[s] < scores[victim] ||
          (scores[s] == scores[victim] && positions[s] > positions[victim])) {
        victim = s;
      }
    }
    victims[g] = victim;
  }
}

}  // namespace h2o
