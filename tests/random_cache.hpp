// random_cache.hpp: seeded random caches for the tests of the eviction rule (test_selection.cpp)
// and of its vectorised pass (test_eviction_scan.cpp): distinct positions with gaps, shuffled
// slots, and scores that often tie.
#pragma once

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "h2o/base/random.hpp"
#include "h2o/base/tensor.hpp"

namespace h2o_test {

using h2o::Position;

inline std::vector<Position> positions_0_to(std::size_t n) {
  std::vector<Position> positions(n);
  std::iota(positions.begin(), positions.end(), Position{0});
  return positions;
}

inline std::vector<std::size_t> slots_0_to(std::size_t n) {
  std::vector<std::size_t> slots(n);
  std::iota(slots.begin(), slots.end(), std::size_t{0});
  return slots;
}

template <class T>
inline void shuffle(std::vector<T>& items, h2o::Rng& rng) {
  for (std::size_t i = items.size(); i > 1; --i) {
    std::swap(items[i - 1], items[rng.below(static_cast<std::uint32_t>(i))]);
  }
}

// One random cache: distinct positions with gaps, in shuffled slot order, and scores that often
// tie (drawn from a few values) so the tie-break rule is exercised.
struct RandomCache {
  std::vector<Position> positions;  // (T,)
  std::vector<float> scores;        // (T,)
};

// The same tokens moved to new slots: slot i holds the token of slot order[i] (positions and
// scores move together, so each token keeps its score).
inline RandomCache in_slot_order(const RandomCache& cache, const std::vector<std::size_t>& order) {
  RandomCache moved;
  for (std::size_t s : order) {
    moved.positions.push_back(cache.positions[s]);
    moved.scores.push_back(cache.scores[s]);
  }
  return moved;
}

inline RandomCache random_cache(h2o::Rng& rng, std::size_t n) {
  RandomCache cache;
  Position next = static_cast<Position>(rng.below(5));
  for (std::size_t i = 0; i < n; ++i) {
    cache.positions.push_back(next);
    next += 1 + static_cast<Position>(rng.below(3));
  }
  const bool few_values = rng.below(2) == 0;
  for (std::size_t i = 0; i < n; ++i) {
    cache.scores.push_back(few_values ? 0.5f * static_cast<float>(rng.below(4))
                                      : rng.uniform(0.0f, 10.0f));
  }
  std::vector<std::size_t> order = slots_0_to(n);
  shuffle(order, rng);
  return in_slot_order(cache, order);
}

}  // namespace h2o_test
