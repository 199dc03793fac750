#include "h2o/measure/cache_trace.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "h2o/attention/query_groups.hpp"

namespace h2o {

std::uint8_t shade_level(float value, float max) {
  if (!(max > 0.0f) || !(value > 0.0f)) return 0;
  const float level = std::round(static_cast<float>(kShadeLevels - 1) * value / max);
  return static_cast<std::uint8_t>(std::min(level, static_cast<float>(kShadeLevels - 1)));
}

namespace {

// Levels of `values` (n,) taken in the order `order` (n,), relative to their largest; returns it.
float levels_in_order(const std::vector<float>& values, const std::vector<std::size_t>& order,
                      std::vector<std::uint8_t>& levels) {
  const float max = values.empty() ? 0.0f : *std::max_element(values.begin(), values.end());
  levels.resize(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) levels[i] = shade_level(values[order[i]], max);
  return std::max(max, 0.0f);
}

// Indices 0..n-1 sorted by the positions they point at: slot order is not position order
// (kv_cache.hpp moves the last row into an evicted slot).
std::vector<std::size_t> position_order(const Position* positions, std::size_t n) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return positions[a] < positions[b]; });
  return order;
}

}  // namespace

CacheTrace trace_cache(Decoder& decoder, const std::vector<int>& tokens,
                       const TeacherForcedRun* reference,
                       const std::function<void(std::size_t step)>& after_step) {
  const ModelConfig& config = decoder.config();
  const std::size_t L = config.n_layers, G = config.n_kv_heads, H = config.n_heads;
  if (tokens.size() < 2) throw std::invalid_argument("a trace needs a text of at least 2 tokens");
  const std::size_t steps = tokens.size() - 1;
  const QueryGroups groups(H, G, "cache trace");

  CacheTrace trace;
  trace.layers = L;
  trace.kv_heads = G;
  trace.steps = steps;
  trace.heads.assign(L, std::vector<HeadTrace>(G));
  trace.kv_bytes.reserve(steps);
  for (auto& layer : trace.heads) {
    for (HeadTrace& head : layer) {
      head.evicted_at.assign(tokens.size(), kNeverEvicted);
      head.attention.reserve(steps);
      head.attention_max.reserve(steps);
      head.score.reserve(steps);
      head.score_max.reserve(steps);
    }
  }

  decoder.set_record_attention(true);
  std::vector<float> row, scores;  // (T,) one head's attention / scores, slot order
  std::vector<Position> sorted;     // (K_t,) the kept positions, in order
  TeacherForcingOptions options;
  options.reference = reference;
  options.after_step = [&](std::size_t t) {
    for (std::size_t l = 0; l < L; ++l) {
      const AttentionRecord& before = decoder.attention(l);  // before the step's eviction
      const LayerKVCache& cache = decoder.cache(l);          // after it
      for (std::size_t g = 0; g < G; ++g) {
        HeadTrace& head = trace.heads[l][g];
        // Attention: the mean of the query group's rows, as the per-head scoring adds it.
        const std::vector<Position>& held = before.positions[g];  // (T,)
        row.assign(held.size(), 0.0f);
        for (std::size_t h = groups.first(g); h < groups.end(g); ++h) {
          for (std::size_t s = 0; s < held.size(); ++s) row[s] += before.weights(h, s);
        }
        for (float& w : row) w /= static_cast<float>(groups.size());
        head.attention.emplace_back();
        head.attention_max.push_back(
            levels_in_order(row, position_order(held.data(), held.size()), head.attention.back()));
        // Kept after the step, with the policy's scores; whoever was held and is gone left now.
        const std::size_t kept = cache.size(g);
        const Position* positions = cache.positions(g);
        scores.assign(cache.scores(g), cache.scores(g) + kept);
        const std::vector<std::size_t> order = position_order(positions, kept);
        head.score.emplace_back();
        head.score_max.push_back(levels_in_order(scores, order, head.score.back()));
        if (held.size() == kept) continue;  // nothing left the cache at this step
        sorted.resize(kept);
        for (std::size_t i = 0; i < kept; ++i) sorted[i] = positions[order[i]];
        for (Position p : held) {
          if (!std::binary_search(sorted.begin(), sorted.end(), p)) {
            head.evicted_at[static_cast<std::size_t>(p)] = static_cast<std::int32_t>(t);
          }
        }
      }
    }
    trace.kv_bytes.push_back(decoder.live_kv_bytes());
    if (after_step) after_step(t);
  };
  trace.reading = read_with_teacher_forcing(decoder, tokens, options);
  if (reference != nullptr) {
    trace.agrees.resize(steps);
    for (std::size_t t = 0; t < steps; ++t) {
      trace.agrees[t] = trace.reading.top1[t] == reference->top1[t];
    }
  }
  return trace;
}

}  // namespace h2o
