// head_rule_support.hpp: hand-made attention read token by token through one layer of a policy
// that profiles its heads (FastGen, DuoAttention): test_fastgen_policy.cpp and
// test_duo_attention_policy.cpp share it.
//
// Dimension legend: H = query heads, G = KV heads, S = slot capacity, t = the step (its position).
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "h2o/cache/kv_cache.hpp"
#include "h2o/policy/cache_policy.hpp"
#include "policy_test_support.hpp"  // append_token

namespace h2o_test {

using h2o::LayerKVCache;
using h2o::LayerPolicy;
using h2o::Position;
using h2o::StepAttention;

// The weight query head h gives position j at step t (j <= t); rows need not sum to 1 here
// unless a test says so.
using WeightOf = std::function<float(std::size_t h, Position j, std::size_t t)>;

// Step t's attention over the cache as it stands, slot by slot (slots are not in position order
// once a token has been evicted): (H, stride).
inline std::vector<float> step_weights(const LayerKVCache& cache, std::size_t n_heads,
                                       std::size_t t, const WeightOf& weight_of) {
  const std::size_t stride = cache.capacity();
  const std::size_t group = n_heads / cache.n_kv_heads();
  std::vector<float> data(n_heads * stride, 0.0f);
  for (std::size_t h = 0; h < n_heads; ++h) {
    const std::size_t g = h / group;
    for (std::size_t s = 0; s < cache.size(g); ++s) {
      data[h * stride + s] = weight_of(h, cache.positions(g)[s], t);
    }
  }
  return data;
}

// Reads tokens 0..n-1 through `policy`, one step at a time (after_attention), or only observed
// and then compressed once (a prompt read to be compressed).
inline void read_tokens(LayerPolicy& policy, LayerKVCache& cache, std::size_t n_heads,
                        std::size_t n, const WeightOf& weight_of, bool compress_once = false) {
  for (std::size_t t = 0; t < n; ++t) {
    append_token(cache, static_cast<Position>(t));
    const std::vector<float> data = step_weights(cache, n_heads, t, weight_of);
    const StepAttention attention{data.data(), n_heads, cache.capacity()};
    if (compress_once) {
      policy.observe(cache, attention);
    } else {
      policy.after_attention(cache, attention);
    }
  }
  if (compress_once) policy.compress(cache, 0);
}

// Four hand-made heads: 0 local (everything on the token itself), 1 heavy (everything on position
// 2 once it exists), 2 a sink (everything on position 0), 3 spread evenly.
inline float four_kinds(std::size_t h, Position j, std::size_t t) {
  const auto now = static_cast<Position>(t);
  switch (h) {
    case 0:
      return j == now ? 1.0f : 0.0f;
    case 1:
      return t < 2 ? (j == now ? 1.0f : 0.0f) : (j == 2 ? 1.0f : 0.0f);
    case 2:
      return j == 0 ? 1.0f : 0.0f;
    default:
      return 1.0f / static_cast<float>(t + 1);
  }
}

}  // namespace h2o_test
