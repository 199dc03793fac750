// policy_test_support.hpp: hand-written attention for the eviction-policy tests.
// Include after <catch2/catch.hpp> (score_of uses FAIL).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "h2o/cache_policy.hpp"
#include "h2o/kv_cache.hpp"

namespace h2o_test {

using h2o::LayerKVCache;
using h2o::Position;
using h2o::StepAttention;

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

}  // namespace h2o_test
