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

// Which query heads' rows reach each KV head's scores, and with what factor (their mean): KV head
// g reads rows first(g) .. first(g) + count - 1. Computed once per call (two integer divisions).
struct HeadRows {
  std::size_t group, count;
  bool per_head;
  float inverse_count;
  std::size_t first(std::size_t g) const { return per_head ? g * group : 0; }
};

HeadRows rows_for(std::size_t n_kv, const StepAttention& attention, ScoringMode mode) {
  if (attention.n_heads % n_kv != 0) {
    throw std::invalid_argument("query heads (" + std::to_string(attention.n_heads) +
                                ") must be a multiple of KV heads (" + std::to_string(n_kv) + ")");
  }
  const std::size_t group = attention.n_heads / n_kv;
  const bool per_head = mode == ScoringMode::PerHead;
  const std::size_t count = per_head ? group : attention.n_heads;
  return {group, count, per_head, 1.0f / static_cast<float>(count)};
}

}  // namespace

void add_step_attention(LayerKVCache& cache, const StepAttention& attention, ScoringMode mode) {
  const std::size_t n_kv = cache.n_kv_heads();
  const std::size_t n = cache.size();
  const HeadRows rows = rows_for(n_kv, attention, mode);
  for (std::size_t g = 0; g < n_kv; ++g) {
    float* scores = cache.scores(g);
    for (std::size_t h = rows.first(g); h < rows.first(g) + rows.count; ++h) {
      add_scaled(scores, attention.head(h), rows.inverse_count, n);
    }
  }
}

void add_step_attention_and_pick_victims(LayerKVCache& cache, const StepAttention& attention,
                                         ScoringMode mode, std::size_t recent,
                                         std::size_t* victims_out) {
  const std::size_t n_kv = cache.n_kv_heads();
  const std::size_t n = cache.size();
  constexpr std::size_t kRowsInPass = 16;  // rows the fused pass adds; more are added first
  const float* rows[kRowsInPass];
  const HeadRows heads = rows_for(n_kv, attention, mode);
  for (std::size_t g = 0; g < n_kv; ++g) {
    float* scores = cache.scores(g);
    const std::size_t end = heads.first(g) + heads.count;
    const std::size_t in_pass = heads.count < kRowsInPass ? heads.count : kRowsInPass;
    for (std::size_t h = heads.first(g); h < end - in_pass; ++h) {
      add_scaled(scores, attention.head(h), heads.inverse_count, n);
    }
    for (std::size_t r = 0; r < in_pass; ++r) rows[r] = attention.head(end - in_pass + r);
    const std::size_t victim = add_rows_and_pick_victim(cache.positions(g), scores, rows, in_pass,
                                                        heads.inverse_count, n, recent);
    // Shared mode: every head holds identical positions and scores, so head 0 decides for all.
    victims_out[g] = mode == ScoringMode::Shared && g > 0 ? victims_out[0] : victim;
  }
}

}  // namespace h2o
