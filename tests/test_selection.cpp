// Tests for selection.hpp: which tokens H2O keeps (plan_keep, slot_to_evict), the budget checks
// and score accumulation. Worked examples from the blog and the handbook, then seeded properties.
#include <algorithm>
#include "h2o_catch.hpp"
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "h2o/base/random.hpp"
#include "h2o/cache/selection.hpp"

using h2o::CacheBudget;
using h2o::KeepPlan;
using h2o::Position;

namespace {

std::vector<Position> positions_0_to(std::size_t n) {
  std::vector<Position> positions(n);
  std::iota(positions.begin(), positions.end(), Position{0});
  return positions;
}

std::vector<std::size_t> slots_0_to(std::size_t n) {
  std::vector<std::size_t> slots(n);
  std::iota(slots.begin(), slots.end(), std::size_t{0});
  return slots;
}

template <class T>
void shuffle(std::vector<T>& items, h2o::Rng& rng) {
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
RandomCache in_slot_order(const RandomCache& cache, const std::vector<std::size_t>& order) {
  RandomCache moved;
  for (std::size_t s : order) {
    moved.positions.push_back(cache.positions[s]);
    moved.scores.push_back(cache.scores[s]);
  }
  return moved;
}

RandomCache random_cache(h2o::Rng& rng, std::size_t n) {
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

CacheBudget random_budget(h2o::Rng& rng) {
  const auto heavy = static_cast<long long>(rng.below(8));
  auto recent = static_cast<long long>(rng.below(8));
  if (heavy + recent == 0) recent = 1;
  return h2o::CacheBudget(heavy, recent);
}

bool sorted_by_position(const std::vector<std::size_t>& slots,
                        const std::vector<Position>& positions) {
  for (std::size_t i = 1; i < slots.size(); ++i) {
    if (positions[slots[i - 1]] >= positions[slots[i]]) return false;
  }
  return true;
}

// Whether an older token `kept` rightly beats `evicted` under the rule: higher score, or an equal
// score and an older position.
bool ranks_above(std::size_t kept, std::size_t evicted, const RandomCache& cache) {
  if (cache.scores[kept] != cache.scores[evicted])
    return cache.scores[kept] > cache.scores[evicted];
  return cache.positions[kept] < cache.positions[evicted];
}

}  // namespace

TEST_CASE("selection plan_keep reproduces the blog example", "[selection]") {
  // [The, cat, sat, because, it] with scores [1.78, 1.58, 0.91, 0.51, 0.22], heavy 2 + recent 2.
  const KeepPlan plan =
      h2o::plan_keep(positions_0_to(5), std::vector<float>{1.78f, 1.58f, 0.91f, 0.51f, 0.22f},
                     h2o::CacheBudget(2, 2));
  CHECK(plan.recent == std::vector<std::size_t>{3, 4});  // because, it
  CHECK(plan.heavy == std::vector<std::size_t>{0, 1});   // The, cat
  CHECK(plan.kept == std::vector<std::size_t>{0, 1, 3, 4});
  CHECK(plan.evicted == std::vector<std::size_t>{2});  // sat
}

TEST_CASE("selection plan_keep reproduces the handbook worked example", "[selection]") {
  const KeepPlan plan = h2o::plan_keep(
      positions_0_to(5), std::vector<float>{3.8f, 0.4f, 2.1f, 0.3f, 0.0f}, h2o::CacheBudget(2, 2));
  CHECK(plan.recent == std::vector<std::size_t>{3, 4});
  CHECK(plan.heavy == std::vector<std::size_t>{0, 2});
  CHECK(plan.kept == std::vector<std::size_t>{0, 2, 3, 4});
  CHECK(plan.evicted == std::vector<std::size_t>{1});
}

TEST_CASE("selection plan_keep lists slots in position order when slots are shuffled",
          "[selection]") {
  // The handbook example stored in slot order 4 2 0 3 1.
  const std::vector<Position> positions = {4, 2, 0, 3, 1};
  const std::vector<float> scores = {0.0f, 2.1f, 3.8f, 0.3f, 0.4f};
  const KeepPlan plan = h2o::plan_keep(positions, scores, h2o::CacheBudget(2, 2));
  CHECK(plan.recent == std::vector<std::size_t>{3, 0});      // positions 3, 4
  CHECK(plan.heavy == std::vector<std::size_t>{2, 1});       // positions 0, 2
  CHECK(plan.kept == std::vector<std::size_t>{2, 1, 3, 0});  // positions 0, 2, 3, 4
  CHECK(plan.evicted == std::vector<std::size_t>{4});        // position 1
}

TEST_CASE("selection accumulate_attention reproduces the blog example", "[selection]") {
  std::vector<float> scores = {1.0f, 0.7f, 0.2f};
  h2o::accumulate_attention(scores, {0.2f, 0.5f, 0.3f});
  REQUIRE(scores.size() == 3);
  CHECK(scores[0] == Approx(1.2f));
  CHECK(scores[1] == Approx(1.2f));
  CHECK(scores[2] == Approx(0.5f));
}

TEST_CASE("selection the tie break keeps the older token", "[selection]") {
  SECTION("plan_keep with all scores equal keeps the oldest as heavy hitters") {
    const KeepPlan plan =
        h2o::plan_keep(positions_0_to(6), std::vector<float>(6, 0.9f), h2o::CacheBudget(2, 1));
    CHECK(plan.heavy == std::vector<std::size_t>{0, 1});
    CHECK(plan.evicted == std::vector<std::size_t>{2, 3, 4});
  }
  SECTION("only the tied tokens are decided by age") {
    // Positions 1, 2 and 3 tie at 0.9 for the last heavy slot; position 0 wins outright.
    const KeepPlan plan =
        h2o::plan_keep(positions_0_to(6), std::vector<float>{2.0f, 0.9f, 0.9f, 0.9f, 0.1f, 0.0f},
                       h2o::CacheBudget(2, 1));
    CHECK(plan.heavy == std::vector<std::size_t>{0, 1});
    CHECK(plan.evicted == std::vector<std::size_t>{2, 3, 4});
  }
  SECTION("plan_keep with shuffled slots still keeps the older of a tie") {
    const std::vector<Position> positions = {7, 3, 9, 1};
    const KeepPlan plan = h2o::plan_keep(positions, std::vector<float>{0.5f, 0.5f, 0.0f, 0.5f},
                                         h2o::CacheBudget(1, 1));
    CHECK(plan.heavy == std::vector<std::size_t>{3});       // position 1
    CHECK(plan.evicted == std::vector<std::size_t>{1, 0});  // positions 3, 7
  }
  SECTION("slot_to_evict drops the newer of two tied older tokens") {
    const std::vector<Position> positions = {2, 0, 3, 1};
    const std::vector<float> scores = {0.4f, 0.4f, 0.0f, 0.9f};
    // recent 1 protects position 3; positions 0 and 2 tie at 0.4; position 2 (slot 0) goes.
    CHECK(h2o::slot_to_evict(positions.data(), scores.data(), 4, 1) == 0);
  }
}

TEST_CASE("selection mismatched lengths throw", "[selection]") {
  CHECK_THROWS_AS(
      h2o::plan_keep(positions_0_to(3), std::vector<float>{1.0f, 2.0f}, h2o::CacheBudget(1, 1)),
      std::invalid_argument);
  CHECK_THROWS_WITH(
      h2o::plan_keep(positions_0_to(3), std::vector<float>{1.0f, 2.0f}, h2o::CacheBudget(1, 1)),
      h2o_catch::Contains("3 positions but 2 scores"));
  std::vector<float> scores = {1.0f, 2.0f};
  CHECK_THROWS_AS(h2o::accumulate_attention(scores, {0.5f, 0.25f, 0.25f}), std::invalid_argument);
  CHECK_THROWS_WITH(h2o::accumulate_attention(scores, {0.5f, 0.25f, 0.25f}),
                    h2o_catch::Contains("2 scores but 3 attention weights"));
  CHECK(scores == std::vector<float>{1.0f, 2.0f});  // untouched on error
}

TEST_CASE("selection slot_to_evict refuses a cache with no slot outside the recent window",
          "[selection]") {
  const std::vector<Position> positions = {0, 1};
  const std::vector<float> scores = {0.0f, 0.0f};
  CHECK_THROWS_AS(h2o::slot_to_evict(positions.data(), scores.data(), 2, 2), std::logic_error);
  CHECK_THROWS_AS(h2o::slot_to_evict(positions.data(), scores.data(), 2, 3), std::logic_error);
}

TEST_CASE("selection slot_to_evict finds the recent window when positions have gaps",
          "[selection]") {
  // Positions 3 and 7 are the two newest, though not consecutive: both are protected, so the
  // only candidate is position 0, whatever its score. plan_keep says the same.
  const std::vector<Position> positions = {7, 0, 3};
  const std::vector<float> scores = {0.0f, 5.0f, 0.0f};
  CHECK(h2o::slot_to_evict(positions.data(), scores.data(), 3, 2) == 1);
  CHECK(h2o::plan_keep(positions, scores, h2o::CacheBudget(0, 2)).evicted ==
        std::vector<std::size_t>{1});
}

TEST_CASE("selection plan_keep invariants hold on random caches", "[selection]") {
  const auto seed = GENERATE(range(1, 1501));
  CAPTURE(seed);
  h2o::Rng rng(static_cast<std::uint64_t>(seed));
  const CacheBudget budget = random_budget(rng);
  const std::size_t n = rng.below(25);
  const RandomCache cache = random_cache(rng, n);
  CAPTURE(budget.heavy, budget.recent, n);
  const KeepPlan plan = h2o::plan_keep(cache.positions, cache.scores, budget);

  // Never more than heavy + recent tokens, and exactly that many once the cache is over budget.
  CHECK(plan.kept.size() == std::min(n, budget.total()));
  CHECK(plan.recent.size() == std::min(n, budget.recent));
  CHECK(plan.heavy.size() == std::min(budget.heavy, n - plan.recent.size()));

  // Every list is in position order; kept and evicted split the slots; kept = recent + heavy.
  CHECK(sorted_by_position(plan.recent, cache.positions));
  CHECK(sorted_by_position(plan.heavy, cache.positions));
  CHECK(sorted_by_position(plan.kept, cache.positions));
  CHECK(sorted_by_position(plan.evicted, cache.positions));
  std::vector<std::size_t> all = plan.kept;
  all.insert(all.end(), plan.evicted.begin(), plan.evicted.end());
  std::sort(all.begin(), all.end());
  CHECK(all == slots_0_to(n));
  std::vector<std::size_t> recent_and_heavy = plan.recent;
  recent_and_heavy.insert(recent_and_heavy.end(), plan.heavy.begin(), plan.heavy.end());
  std::sort(recent_and_heavy.begin(), recent_and_heavy.end());
  std::vector<std::size_t> kept_sorted = plan.kept;
  std::sort(kept_sorted.begin(), kept_sorted.end());
  CHECK(recent_and_heavy == kept_sorted);

  // The recent window is the newest positions: every recent token is newer than every other.
  for (std::size_t r : plan.recent) {
    for (std::size_t o : plan.heavy) CHECK(cache.positions[r] > cache.positions[o]);
    for (std::size_t o : plan.evicted) CHECK(cache.positions[r] > cache.positions[o]);
  }
  // Every kept older token ranks above every evicted one: a higher score, or a tie and older.
  for (std::size_t h : plan.heavy) {
    for (std::size_t e : plan.evicted) {
      CHECK(cache.scores[h] >= cache.scores[e]);
      CHECK(ranks_above(h, e, cache));
    }
  }
}

TEST_CASE("selection a sequence no longer than the budget is untouched", "[selection]") {
  const auto seed = GENERATE(range(1, 1001));
  CAPTURE(seed);
  h2o::Rng rng(static_cast<std::uint64_t>(seed) * 7919u);
  const CacheBudget budget = random_budget(rng);
  const std::size_t n = rng.below(static_cast<std::uint32_t>(budget.total() + 1));  // 0..total
  const RandomCache cache = random_cache(rng, n);
  const KeepPlan plan = h2o::plan_keep(cache.positions, cache.scores, budget);
  CHECK(plan.evicted.empty());
  REQUIRE(plan.kept.size() == n);
  CHECK(sorted_by_position(plan.kept, cache.positions));
}

TEST_CASE("selection heavy zero is a sliding window", "[selection]") {
  const auto seed = GENERATE(range(1, 1001));
  CAPTURE(seed);
  h2o::Rng rng(static_cast<std::uint64_t>(seed) * 104729u);
  const std::size_t recent = 1 + rng.below(8);
  const std::size_t n = rng.below(20);
  const RandomCache cache = random_cache(rng, n);
  const KeepPlan plan = h2o::plan_keep(cache.positions, cache.scores,
                                       h2o::CacheBudget(0, static_cast<long long>(recent)));
  CHECK(plan.heavy.empty());
  CHECK(plan.kept == plan.recent);
  // The kept positions are exactly the newest min(n, recent) positions, whatever the scores.
  std::vector<Position> newest = cache.positions;
  std::sort(newest.begin(), newest.end());
  newest.erase(newest.begin(), newest.end() - static_cast<std::ptrdiff_t>(std::min(n, recent)));
  std::vector<Position> kept_positions;
  for (std::size_t s : plan.kept) kept_positions.push_back(cache.positions[s]);
  CHECK(kept_positions == newest);
}

TEST_CASE("selection recent zero keeps only the top scores", "[selection]") {
  const auto seed = GENERATE(range(1, 1001));
  CAPTURE(seed);
  h2o::Rng rng(static_cast<std::uint64_t>(seed) * 15485863u);
  const std::size_t heavy = 1 + rng.below(8);
  const std::size_t n = rng.below(20);
  const RandomCache cache = random_cache(rng, n);
  const KeepPlan plan = h2o::plan_keep(cache.positions, cache.scores,
                                       h2o::CacheBudget(static_cast<long long>(heavy), 0));
  CHECK(plan.recent.empty());
  CHECK(plan.kept == plan.heavy);
  // Reference: sort every slot by (score descending, position ascending) and take the first ones.
  std::vector<std::size_t> ranked = slots_0_to(n);
  std::sort(ranked.begin(), ranked.end(),
            [&](std::size_t a, std::size_t b) { return ranks_above(a, b, cache); });
  ranked.resize(std::min(n, heavy));
  std::sort(ranked.begin(), ranked.end(),
            [&](std::size_t a, std::size_t b) { return cache.positions[a] < cache.positions[b]; });
  CHECK(plan.kept == ranked);
}

TEST_CASE("selection slot_to_evict agrees with plan_keep when one token is over budget",
          "[selection]") {
  const auto seed = GENERATE(range(1, 1501));
  CAPTURE(seed);
  h2o::Rng rng(static_cast<std::uint64_t>(seed) * 2654435761u);
  const CacheBudget budget = random_budget(rng);
  const std::size_t n = budget.total() + 1;
  CAPTURE(budget.heavy, budget.recent);

  RandomCache cache;
  if (rng.below(2) == 0) {
    // Decode-like: the newest `recent + 1` positions are consecutive (one token per step), the
    // heavy hitters are scattered older positions, and the slots are in any order.
    cache = random_cache(rng, budget.heavy);
    const Position newest_old =
        cache.positions.empty() ? Position{0}
                                : *std::max_element(cache.positions.begin(), cache.positions.end());
    for (std::size_t i = 0; i <= budget.recent; ++i) {
      cache.positions.push_back(newest_old + 1 + static_cast<Position>(i));
      cache.scores.push_back(rng.uniform(0.0f, 2.0f));
    }
    std::vector<std::size_t> order = slots_0_to(n);
    shuffle(order, rng);
    cache = in_slot_order(cache, order);
  } else {
    // Any distinct positions, gaps anywhere (also inside the recent window).
    cache = random_cache(rng, n);
  }
  const KeepPlan plan = h2o::plan_keep(cache.positions, cache.scores, budget);
  REQUIRE(plan.evicted.size() == 1);
  CHECK(h2o::slot_to_evict(cache.positions.data(), cache.scores.data(), n, budget.recent) ==
        plan.evicted[0]);
}

TEST_CASE("selection add_rows_and_pick_victim equals adding the rows then plan_keep",
          "[selection]") {
  // The decoder's one-pass eviction at the sizes it runs (blocks of 8 and 16 slots and a tail),
  // with ties, zero rows, decode-like and gapped caches: the same scores, bit for bit, as adding
  // the rows one by one, and the victim plan_keep names.
  const auto seed = GENERATE(range(1, 601));
  CAPTURE(seed);
  h2o::Rng rng(static_cast<std::uint64_t>(seed) * 40503u + 7u);
  const std::size_t recent = rng.below(40);
  const std::size_t heavy = 1 + rng.below(90);
  const std::size_t n = heavy + recent + 1;
  const std::size_t n_rows = rng.below(6);
  CAPTURE(heavy, recent, n_rows);
  RandomCache cache;
  if (rng.below(4) != 0) {
    // Decode-like: the newest recent + 1 positions consecutive, the newest in the last slot.
    cache = random_cache(rng, heavy);
    const Position start = cache.positions.empty() ? 0
                                                   : 1 + *std::max_element(cache.positions.begin(),
                                                                           cache.positions.end());
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
    for (float& weight : row) weight = zero_rows ? 0.0f : 0.25f * static_cast<float>(rng.below(3));
  }
  const float factor = n_rows > 0 ? 1.0f / static_cast<float>(n_rows) : 1.0f;
  std::vector<float> expected = cache.scores;
  for (const auto& row : rows) {
    for (std::size_t s = 0; s < n; ++s) expected[s] += row[s] * factor;
  }
  std::vector<const float*> row_pointers;
  for (const auto& row : rows) row_pointers.push_back(row.data());
  std::vector<float> scores = cache.scores;
  const std::size_t victim = h2o::add_rows_and_pick_victim(
      cache.positions.data(), scores.data(), row_pointers.data(), n_rows, factor, n, recent);
  REQUIRE(scores == expected);
  const KeepPlan plan = h2o::plan_keep(cache.positions, expected, CacheBudget(heavy, recent));
  REQUIRE(plan.evicted.size() == 1);
  CHECK(victim == plan.evicted[0]);
}
