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
#include "random_cache.hpp"

using h2o::CacheBudget;
using h2o::KeepPlan;
using h2o::Position;

using h2o_test::in_slot_order;
using h2o_test::positions_0_to;
using h2o_test::random_cache;
using h2o_test::RandomCache;
using h2o_test::shuffle;
using h2o_test::slots_0_to;

namespace {

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

TEST_CASE("selection plan_keep on the blog example with heavy 1 and recent 3", "[selection]") {
  // The budget lesson 01's --heavy 1 --recent 3 used to show: [sat, because, it] are recent, The
  // alone is heavy, and cat goes.
  const KeepPlan plan =
      h2o::plan_keep(positions_0_to(5), std::vector<float>{1.78f, 1.58f, 0.91f, 0.51f, 0.22f},
                     h2o::CacheBudget(1, 3));
  CHECK(plan.recent == std::vector<std::size_t>{2, 3, 4});
  CHECK(plan.heavy == std::vector<std::size_t>{0});
  CHECK(plan.kept == std::vector<std::size_t>{0, 2, 3, 4});
  CHECK(plan.evicted == std::vector<std::size_t>{1});
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

TEST_CASE("selection accumulate_attention adds one unit of score per step", "[selection]") {
  // Lesson 02's story: the blog's step, then four tokens arrive, each entering with score 0 and
  // giving "cat" (slot 1) 4 shares of its attention and every other cached token 1. Attention
  // sums to 1 at every step, so the scores' total grows by exactly 1 per step.
  std::vector<float> scores = {1.0f, 0.7f, 0.2f};
  h2o::accumulate_attention(scores, {0.2f, 0.5f, 0.3f});
  for (int arriving = 0; arriving < 4; ++arriving) {
    scores.push_back(0.0f);
    std::vector<float> attention(scores.size(), 1.0f);
    attention[1] = 4.0f;
    const float total = std::accumulate(attention.begin(), attention.end(), 0.0f);
    for (float& a : attention) a /= total;
    h2o::accumulate_attention(scores, attention);
  }
  CHECK(std::accumulate(scores.begin(), scores.end(), 0.0f) == Approx(1.9f + 5.0f).margin(1e-4));
  CHECK(std::max_element(scores.begin(), scores.end()) - scores.begin() == 1);  // cat leads
  CHECK(scores[1] == Approx(3.12f).margin(5e-3));
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

// =============================================================================================
// One cut (plan_cut): prompt compression decides by the rule, for every option combination

namespace {
// The rule written the most direct way, as a reference: protect the recent window (the `recent`
// largest positions) and the start area, rank the others by their key with the newest position
// fixed, drop the worst until `keep` remain. Returns the kept POSITIONS, sorted.
std::vector<Position> one_cut_reference(const RandomCache& cache, const h2o::EvictionRule& rule,
                                        std::size_t keep) {
  std::vector<Position> sorted = cache.positions;
  std::sort(sorted.begin(), sorted.end());
  const Position newest = sorted.back();
  std::vector<Position> recent(
      sorted.end() - static_cast<std::ptrdiff_t>(std::min(rule.recent, sorted.size())),
      sorted.end());
  struct Candidate {
    double key;
    Position position;
  };
  std::vector<Candidate> others;
  std::vector<Position> kept = recent;
  for (std::size_t s = 0; s < cache.positions.size(); ++s) {
    const Position p = cache.positions[s];
    if (std::find(recent.begin(), recent.end(), p) != recent.end()) continue;
    if (p < static_cast<Position>(rule.start_area)) {
      kept.push_back(p);
      continue;
    }
    const double score = cache.scores[s];
    others.push_back({rule.normalise ? score / static_cast<double>(newest - p + 1) : score, p});
  }
  // Best first: higher key, then the older position.
  std::sort(others.begin(), others.end(), [](const Candidate& a, const Candidate& b) {
    return a.key != b.key ? a.key > b.key : a.position < b.position;
  });
  for (const Candidate& c : others) {
    if (kept.size() < keep) kept.push_back(c.position);
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

std::vector<Position> kept_positions(const RandomCache& cache, const KeepPlan& plan) {
  std::vector<Position> kept;
  for (std::size_t s : plan.kept) kept.push_back(cache.positions[s]);
  return kept;  // plan.kept is in position order
}
}  // namespace

TEST_CASE("selection plan_cut keeps the rule's tokens in the hand case of issue 18",
          "[selection]") {
  // 5 tokens, normalised sums, no recent window, keep 2. Keys with the newest position 4 fixed:
  // 2.5/5, 2/4, 0.5/3, 1/2, 0.5/1 = 0.5, 0.5, 0.17, 0.5, 0.5: position 2 goes, then the ties at
  // 0.5 go newest first (4, then 3): {0, 1} stay. Evicting one at a time would instead re-measure
  // the keys once position 4 has gone (newest 3) and evict 0, keeping {1, 3}.
  const RandomCache cache{{0, 1, 2, 3, 4}, {2.5f, 2.0f, 0.5f, 1.0f, 0.5f}};
  const h2o::EvictionRule rule{0, 0, true};
  const KeepPlan plan = h2o::plan_cut(cache.positions, cache.scores, rule, 2);
  CHECK(kept_positions(cache, plan) == std::vector<Position>{0, 1});
  CHECK(plan.evicted == std::vector<std::size_t>{2, 3, 4});
  // The one-at-a-time answer, for contrast.
  std::vector<Position> positions = cache.positions;
  std::vector<float> scores = cache.scores;
  while (positions.size() > 2) {
    const std::size_t victim =
        h2o::slot_to_evict(positions.data(), scores.data(), positions.size(), rule);
    positions.erase(positions.begin() + static_cast<std::ptrdiff_t>(victim));
    scores.erase(scores.begin() + static_cast<std::ptrdiff_t>(victim));
  }
  CHECK(positions == std::vector<Position>{1, 3});
}

TEST_CASE("selection plan_cut equals a straightforward one cut for every option combination",
          "[selection]") {
  const std::size_t recent = GENERATE(0, 1, 3);
  const std::size_t start_area = GENERATE(0, 2);
  const bool normalise = GENERATE(false, true);
  const h2o::EvictionRule rule{recent, start_area, normalise};
  for (std::uint64_t seed = 1; seed <= 150; ++seed) {
    CAPTURE(recent, start_area, normalise, seed);
    h2o::Rng rng(seed * 7919u + recent * 13u + start_area);
    const std::size_t n = 1 + rng.below(40);
    const RandomCache cache = random_cache(rng, n);
    std::size_t protected_count = std::min(recent, n);
    for (Position p : cache.positions) {
      protected_count += p < static_cast<Position>(start_area) ? 1 : 0;
    }
    protected_count = std::min(protected_count, n);  // a start-area token may also be recent
    const std::size_t keep = protected_count + rng.below(static_cast<std::uint32_t>(n + 1));
    const KeepPlan plan = h2o::plan_cut(cache.positions, cache.scores, rule, keep);
    REQUIRE(kept_positions(cache, plan) == one_cut_reference(cache, rule, keep));
    REQUIRE(plan.kept.size() == std::min(keep, n));
    REQUIRE(plan.kept.size() + plan.evicted.size() == n);
  }
}

TEST_CASE("selection plan_cut is evicting one by one whenever no key changes on the way",
          "[selection]") {
  // Plain sums never change; normalised keys change only when the newest token goes, which a
  // recent window of at least one token forbids.
  const std::size_t recent = GENERATE(0, 1, 4);
  const bool normalise = GENERATE(false, true);
  if (normalise && recent == 0) return;  // the case plan_cut exists for (see the hand case)
  const h2o::EvictionRule rule{recent, 0, normalise};
  for (std::uint64_t seed = 1; seed <= 150; ++seed) {
    CAPTURE(recent, normalise, seed);
    h2o::Rng rng(seed * 104729u + recent);
    const std::size_t n = recent + 1 + rng.below(30);
    const RandomCache cache = random_cache(rng, n);
    const std::size_t keep =
        std::max<std::size_t>(recent, 1) + rng.below(static_cast<std::uint32_t>(n - recent));
    RandomCache left = cache;
    while (left.positions.size() > keep) {
      const std::size_t victim = h2o::slot_to_evict(left.positions.data(), left.scores.data(),
                                                    left.positions.size(), rule);
      left.positions.erase(left.positions.begin() + static_cast<std::ptrdiff_t>(victim));
      left.scores.erase(left.scores.begin() + static_cast<std::ptrdiff_t>(victim));
    }
    std::sort(left.positions.begin(), left.positions.end());
    const KeepPlan plan = h2o::plan_cut(cache.positions, cache.scores, rule, keep);
    REQUIRE(kept_positions(cache, plan) == left.positions);
  }
}
