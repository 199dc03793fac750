#include "h2o/policy/head_scores.hpp"

#include <stdexcept>

#include "h2o/base/vector_math.hpp"
#include "h2o/cache/selection.hpp"

namespace h2o {

std::string to_string(ScoringMode mode) {
  return mode == ScoringMode::PerHead ? "per-head" : "shared";
}

ScoringMode parse_scoring_mode(const std::string& text) {
  if (text == "per-head") return ScoringMode::PerHead;
  if (text == "shared") return ScoringMode::Shared;
  throw std::invalid_argument("unknown scoring mode '" + text + "' (expected per-head or shared)");
}

namespace {
// scores (n,) += weights (n,) * inverse_count: one multiply and one add per slot, as always (this
// file is compiled with -ffp-contract=off, so no fused multiply-add changes a score's last bit).
H2O_VECTOR_CLONES
void add_scaled(float* scores, const float* weights, float inverse_count, std::size_t n) {
  for (std::size_t s = 0; s < n; ++s) scores[s] += weights[s] * inverse_count;
}

// Which query heads' rows reach KV head g's scores, and with what factor (their mean).
struct HeadRows {
  std::size_t first, count;
  float inverse_count;
};

HeadRows rows_for(std::size_t g, std::size_t n_kv, const StepAttention& attention,
                  ScoringMode mode) {
  if (attention.n_heads % n_kv != 0) {
    throw std::invalid_argument("query heads (" + std::to_string(attention.n_heads) +
                                ") must be a multiple of KV heads (" + std::to_string(n_kv) + ")");
  }
  const std::size_t group = attention.n_heads / n_kv;
  const std::size_t first = mode == ScoringMode::PerHead ? g * group : 0;
  const std::size_t count = mode == ScoringMode::PerHead ? group : attention.n_heads;
  return {first, count, 1.0f / static_cast<float>(count)};
}

}  // namespace

void add_step_attention(LayerKVCache& cache, const StepAttention& attention, ScoringMode mode) {
  const std::size_t n_kv = cache.n_kv_heads();
  const std::size_t n = cache.size();
  for (std::size_t g = 0; g < n_kv; ++g) {
    const HeadRows rows = rows_for(g, n_kv, attention, mode);
    float* scores = cache.scores(g);
    for (std::size_t h = rows.first; h < rows.first + rows.count; ++h) {
      add_scaled(scores, attention.head(h), rows.inverse_count, n);
    }
  }
}

void add_step_attention_and_pick_victims(LayerKVCache& cache, const StepAttention& attention,
                                         ScoringMode mode, std::size_t recent,
                                         std::size_t* victims_out) {
  const std::size_t n_kv = cache.n_kv_heads();
  const std::size_t n = cache.size();
  for (std::size_t g = 0; g < n_kv; ++g) {
    const HeadRows rows = rows_for(g, n_kv, attention, mode);
    float* scores = cache.scores(g);
    const std::size_t last = rows.first + rows.count - 1;
    for (std::size_t h = rows.first; h < last; ++h) {
      add_scaled(scores, attention.head(h), rows.inverse_count, n);
    }
    const std::size_t victim = add_row_and_pick_victim(cache.positions(g), scores,
                                                       attention.head(last), rows.inverse_count,
                                                       n, recent);
    // Shared mode: every head holds identical positions and scores, so head 0 decides for all.
    victims_out[g] = mode == ScoringMode::Shared && g > 0 ? victims_out[0] : victim;
  }
}

}  // namespace h2o
