#include "h2o/h2o_policy.hpp"

#include <algorithm>
#include <stdexcept>

namespace h2o {

H2OPolicy::H2OPolicy(H2OBudget budget, ScoringMode mode, EvictionStyle style)
    : budget_(budget), mode_(mode), style_(style) {
  if (budget_.total() == 0) {
    throw std::invalid_argument("H2O budget heavy + recent must be at least 1");
  }
}

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
  if (style_ == EvictionStyle::OverwriteSlot) {
    if (n != budget_.total() + 1) {
      throw std::logic_error("H2OPolicy: cache is more than one token over budget");
    }
    victims_.resize(n_kv);
    for (std::size_t g = 0; g < n_kv; ++g) {
      // Shared mode: every head holds identical positions and scores, so head 0 decides for all.
      const std::size_t decider = mode_ == ScoringMode::Shared ? 0 : g;
      victims_[g] =
          mode_ == ScoringMode::Shared && g > 0
              ? victims_[0]
              : slot_to_evict(cache.positions(decider), cache.scores(decider), n, budget_.recent);
    }
    cache.remove_one_per_head(victims_.data());
  } else {
    std::vector<std::vector<std::size_t>> kept(n_kv);
    for (std::size_t g = 0; g < n_kv; ++g) {
      std::vector<Position> positions(cache.positions(g), cache.positions(g) + n);
      std::vector<float> scores(cache.scores(g), cache.scores(g) + n);
      kept[g] = plan_keep(positions, scores, budget_).kept;
    }
    cache.keep_per_head(kept);
  }
}

}  // namespace h2o
