#include "h2o/policy/head_scores.hpp"

#include <stdexcept>

#include "h2o/base/vector_math.hpp"
#include "h2o/cache/eviction_scan.hpp"

namespace h2o {

std::string to_string(ScoringMode mode) {
  return mode == ScoringMode::PerHead ? "per-head" : "shared";
}

std::string to_string(const std::optional<ScoringMode>& mode) {
  return mode ? to_string(*mode) : "paper";
}

ScoringMode parse_scoring_mode(const std::string& text) {
  if (text == "per-head") return ScoringMode::PerHead;
  if (text == "shared") return ScoringMode::Shared;
  throw std::invalid_argument("unknown scoring mode '" + text + "' (expected per-head or shared)");
}

std::optional<ScoringMode> parse_scoring_choice(const std::string& text) {
  if (text == to_string(std::optional<ScoringMode>{})) return std::nullopt;
  if (text != "per-head" && text != "shared") {
    throw std::invalid_argument("unknown scoring mode '" + text +
                                "' (expected per-head, shared or paper)");
  }
  return parse_scoring_mode(text);
}

namespace {
// scores (n,) += weights (n,): one addition per slot.
H2O_VECTOR_CLONES
void add_row(float* scores, const float* weights, std::size_t n) {
  for (std::size_t s = 0; s < n; ++s) scores[s] += weights[s];
}

}  // namespace

ScoringHeads scoring_heads(const QueryGroups& groups, std::size_t g, ScoringMode mode) {
  if (mode == ScoringMode::Shared) return {0, groups.n_heads()};
  return {groups.first(g), groups.size()};
}

void add_step_attention(float* out, std::size_t out_stride, std::size_t n_kv, std::size_t n,
                        const StepAttention& attention, ScoringMode mode) {
  const QueryGroups groups(attention.n_heads, n_kv, "scores");
  for (std::size_t g = 0; g < n_kv; ++g) {
    const ScoringHeads heads = scoring_heads(groups, g, mode);
    for (std::size_t h = heads.first; h < heads.first + heads.count; ++h) {
      add_row(out + g * out_stride, attention.head(h), n);
    }
  }
}

void add_step_attention(LayerKVCache& cache, const StepAttention& attention, ScoringMode mode) {
  const QueryGroups groups(attention.n_heads, cache.n_kv_heads(), "scores");
  for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
    const ScoringHeads heads = scoring_heads(groups, g, mode);
    for (std::size_t h = heads.first; h < heads.first + heads.count; ++h) {
      add_row(cache.scores(g), attention.head(h), cache.size(g));
    }
  }
}

void decay_scores(LayerKVCache& cache, float gamma) {
  for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
    float* scores = cache.scores(g);
    for (std::size_t s = 0; s < cache.size(g); ++s) scores[s] *= gamma;
  }
}

void add_step_attention_and_pick_victims(LayerKVCache& cache, const StepAttention& attention,
                                         ScoringMode mode, std::size_t recent,
                                         std::size_t* victims_out) {
  const std::size_t n_kv = cache.n_kv_heads();
  constexpr std::size_t kRowsInPass = 16;  // rows the fused pass adds; more are added first
  const float* rows[kRowsInPass];
  const QueryGroups groups(attention.n_heads, n_kv, "scores");
  for (std::size_t g = 0; g < n_kv; ++g) {
    float* scores = cache.scores(g);
    const std::size_t n = cache.size(g);
    const ScoringHeads heads = scoring_heads(groups, g, mode);
    const std::size_t end = heads.first + heads.count;
    const std::size_t in_pass = heads.count < kRowsInPass ? heads.count : kRowsInPass;
    for (std::size_t h = heads.first; h < end - in_pass; ++h) {
      add_row(scores, attention.head(h), n);
    }
    for (std::size_t r = 0; r < in_pass; ++r) rows[r] = attention.head(end - in_pass + r);
    const std::size_t victim =
        add_rows_and_pick_victim(cache.positions(g), scores, rows, in_pass, n, recent);
    // Shared mode: every head holds identical positions and scores, so head 0 decides for all.
    victims_out[g] = mode == ScoringMode::Shared && g > 0 ? victims_out[0] : victim;
  }
}

}  // namespace h2o
