#include "h2o/policy/head_scores.hpp"

#include <stdexcept>

namespace h2o {

std::string to_string(ScoringMode mode) {
  return mode == ScoringMode::PerHead ? "per-head" : "shared";
}

ScoringMode parse_scoring_mode(const std::string& text) {
  if (text == "per-head") return ScoringMode::PerHead;
  if (text == "shared") return ScoringMode::Shared;
  throw std::invalid_argument("unknown scoring mode '" + text + "' (expected per-head or shared)");
}

void add_step_attention(LayerKVCache& cache, const StepAttention& attention, ScoringMode mode) {
  const std::size_t n_kv = cache.n_kv_heads();
  const std::size_t n = cache.size();
  if (attention.n_heads % n_kv != 0) {
    throw std::invalid_argument("query heads (" + std::to_string(attention.n_heads) +
                                ") must be a multiple of KV heads (" + std::to_string(n_kv) + ")");
  }
  const std::size_t group = attention.n_heads / n_kv;
  for (std::size_t g = 0; g < n_kv; ++g) {
    const std::size_t first = mode == ScoringMode::PerHead ? g * group : 0;
    const std::size_t count = mode == ScoringMode::PerHead ? group : attention.n_heads;
    const float inverse_count = 1.0f / static_cast<float>(count);
    float* scores = cache.scores(g);
    for (std::size_t h = first; h < first + count; ++h) {
      const float* weights = attention.head(h);
      for (std::size_t s = 0; s < n; ++s) scores[s] += weights[s] * inverse_count;
    }
  }
}

}  // namespace h2o
