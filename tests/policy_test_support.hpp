// policy_test_support.hpp: hand-written attention for the eviction-policy tests.
// Include after <catch2/catch.hpp> (score_of uses FAIL).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "h2o/cache_policy.hpp"
#include "h2o/decoder.hpp"
#include "h2o/kv_cache.hpp"
#include "h2o/random.hpp"
#include "h2o/weights.hpp"

namespace h2o_test {

using h2o::LayerKVCache;
using h2o::Position;
using h2o::StepAttention;

// A random decoder shaped like stories260K that can run seq_len tokens.
inline std::shared_ptr<const h2o::DecoderWeights> random_model(std::size_t seq_len,
                                                               std::uint64_t seed) {
  h2o::ModelConfig config = h2o::stories260k_shape();
  config.seq_len = seq_len;
  return std::make_shared<const h2o::DecoderWeights>(h2o::random_weights(config, seed));
}

// n seeded random token ids below vocab.
inline std::vector<int> random_tokens(std::size_t n, std::size_t vocab, std::uint64_t seed) {
  h2o::Rng rng(seed);
  std::vector<int> tokens(n);
  for (int& t : tokens) t = static_cast<int>(rng.below(static_cast<std::uint32_t>(vocab)));
  return tokens;
}

// One step's attention rows, written by hand: H rows of `stride` numbers.
struct CraftedAttention {
  std::size_t n_heads, stride;
  std::vector<float> data;  // (H, stride)
  CraftedAttention(std::size_t heads, std::size_t row_stride)
      : n_heads(heads), stride(row_stride), data(heads * row_stride, 0.0f) {}
  void set_row(std::size_t h, const std::vector<float>& row) {
    std::copy(row.begin(), row.end(), data.begin() + static_cast<std::ptrdiff_t>(h * stride));
  }
  StepAttention view() const { return StepAttention{data.data(), n_heads, stride}; }
};

// Score of the slot holding `position` in KV head g.
inline float score_of(const LayerKVCache& cache, std::size_t g, Position position) {
  for (std::size_t s = 0; s < cache.size(); ++s) {
    if (cache.positions(g)[s] == position) return cache.scores(g)[s];
  }
  FAIL("position " << position << " is not in head " << g);
  return 0.0f;
}

// After the decoder's step `step` (0-based) under a policy that keeps `total` tokens: every layer
// and KV head holds exactly min(step + 1, total) distinct positions from 0..step, the eviction
// count adds up, and the live bytes match.
inline void require_bounded_caches(const h2o::Decoder& decoder, std::size_t step,
                                   std::size_t total) {
  const h2o::ModelConfig& c = decoder.config();
  const auto newest = static_cast<Position>(step);
  const std::size_t expected_size = std::min(step + 1, total);
  for (std::size_t l = 0; l < c.n_layers; ++l) {
    const LayerKVCache& cache = decoder.cache(l);
    REQUIRE(cache.size() == expected_size);
    REQUIRE(decoder.evicted_tokens(l) == step + 1 - expected_size);
    for (std::size_t g = 0; g < c.n_kv_heads; ++g) {
      const std::vector<Position> kept = cache.sorted_positions(g);
      REQUIRE(std::adjacent_find(kept.begin(), kept.end()) == kept.end());  // distinct
      REQUIRE(kept.front() >= 0);
      REQUIRE(kept.back() <= newest);
    }
  }
  REQUIRE(decoder.live_kv_bytes() ==
          c.n_layers * 2 * c.n_kv_heads * expected_size * c.head_size() * sizeof(float));
}

}  // namespace h2o_test
