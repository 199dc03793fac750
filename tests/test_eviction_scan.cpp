// test_eviction_scan.cpp: the decoder's vectorised H2O step (eviction_scan.hpp) decides exactly as
// the plain rule of selection.hpp, over many seeded caches: every size from 1 to 80 slots (every
// block-of-8 remainder), every recent window, ties, zero rows, decode-like and gapped caches.
#include <algorithm>
#include "h2o_catch.hpp"
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "h2o/base/random.hpp"
#include "h2o/cache/eviction_scan.hpp"
#include "h2o/cache/selection.hpp"
#include "random_cache.hpp"

using h2o::Position;
using h2o_test::in_slot_order;
using h2o_test::random_cache;
using h2o_test::RandomCache;
using h2o_test::shuffle;
using h2o_test::slots_0_to;

TEST_CASE("eviction scan adds the rows and picks the plain rule's victim", "[eviction_scan]") {
  const std::size_t n = GENERATE(range(1, 81));
  CAPTURE(n);
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    h2o::Rng rng(seed * 40503u + n);
    const std::size_t recent = rng.below(static_cast<std::uint32_t>(n));  // at least one candidate
    const std::size_t n_rows = rng.below(6);
    CAPTURE(recent, n_rows);
    RandomCache cache;
    if (rng.below(4) != 0) {
      // Decode-like: the newest recent + 1 positions consecutive, the newest in the last slot.
      cache = random_cache(rng, n - recent - 1);
      const Position start =
          cache.positions.empty()
              ? 0
              : 1 + *std::max_element(cache.positions.begin(), cache.positions.end());
      for (std::size_t i = 0; i <= recent; ++i) {
        cache.positions.push_back(start + static_cast<Position>(i));
        cache.scores.push_back(0.5f * static_cast<float>(rng.below(4)));
      }
      std::vector<std::size_t> order = slots_0_to(n - 1);  // all but the newest
      shuffle(order, rng);
      order.push_back(n - 1);
      cache = in_slot_order(cache, order);
    } else {
      cache = random_cache(rng, n);  // gaps anywhere, the newest anywhere
    }
    std::vector<std::vector<float>> rows(n_rows, std::vector<float>(n));
    const bool zero_rows = rng.below(4) == 0;
    for (auto& row : rows) {
      for (float& weight : row) {
        weight = zero_rows ? 0.0f : 0.25f * static_cast<float>(rng.below(3));
      }
    }
    // The plain way: add the rows one by one, then ask the rule.
    std::vector<float> expected = cache.scores;
    for (const auto& row : rows) {
      for (std::size_t s = 0; s < n; ++s) expected[s] += row[s];
    }
    const std::size_t rule_victim =
        h2o::slot_to_evict(cache.positions.data(), expected.data(), n, recent);

    std::vector<const float*> row_pointers;
    for (const auto& row : rows) row_pointers.push_back(row.data());
    std::vector<float> scores = cache.scores;
    const std::size_t victim = h2o::add_rows_and_pick_victim(
        cache.positions.data(), scores.data(), row_pointers.data(), n_rows, n, recent);
    REQUIRE(scores == expected);  // bit for bit
    REQUIRE(victim == rule_victim);
  }
}

TEST_CASE("eviction scan refuses a cache with no slot outside the recent window",
          "[eviction_scan]") {
  const std::vector<Position> positions = {0, 1, 2};
  std::vector<float> scores = {1, 2, 3};
  CHECK_THROWS_AS(h2o::add_rows_and_pick_victim(positions.data(), scores.data(), nullptr, 0, 3, 3),
                  std::logic_error);
}
