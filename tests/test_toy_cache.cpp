// Tests for toy_cache.hpp: take, take_rows and ToyKVCache (the blog's append-then-filter cache).
// The blog's numbers, bad input, and seeded online runs in which every row must stay aligned.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "h2o/attention/attention.hpp"
#include "h2o/base/random.hpp"
#include "h2o/cache/selection.hpp"
#include "h2o/cache/toy_cache.hpp"

using h2o::Matrix;
using h2o::Position;
using h2o::ToyKVCache;
using h2o::Vector;

namespace {

// A key and a value that name their token: key = [p, p + 0.25, ...], value = -key. Small whole
// positions and quarters are exact in float, so equality checks are exact.
Vector key_for(Position p, std::size_t head_dim) {
  Vector key = xt::zeros<float>({head_dim});
  for (std::size_t d = 0; d < head_dim; ++d)
    key(d) = static_cast<float>(p) + 0.25f * static_cast<float>(d);
  return key;
}

Vector value_for(Position p, std::size_t head_dim) { return -key_for(p, head_dim); }

std::string word_for(Position p) { return "w" + std::to_string(p); }

Vector vector_of(const std::vector<float>& numbers) {
  Vector out = xt::zeros<float>({numbers.size()});
  for (std::size_t i = 0; i < numbers.size(); ++i) out(i) = numbers[i];
  return out;
}

// Row r of rows (T, D) equals expected (D,). (A plain bool, because Catch's CHECK cannot
// decompose xtensor's == on whole tensors.)
bool row_is(const Matrix& rows, std::size_t r, const Vector& expected) {
  if (rows.shape()[1] != expected.size()) return false;
  for (std::size_t d = 0; d < expected.size(); ++d) {
    if (rows(r, d) != expected(d)) return false;
  }
  return true;
}

// Random attention over n tokens: positive, sums to 1.
Vector random_attention(h2o::Rng& rng, std::size_t n) {
  Vector logits = xt::zeros<float>({n});
  for (std::size_t i = 0; i < n; ++i) logits(i) = rng.uniform(-2.0f, 2.0f);
  return h2o::softmax(logits);
}

}  // namespace

TEST_CASE("toy cache take and take_rows pick items in the given order", "[toy_cache]") {
  CHECK(h2o::take(std::vector<int>{10, 11, 12, 13}, {3, 0, 0}) == std::vector<int>{13, 10, 10});
  CHECK(h2o::take(std::vector<int>{10, 11}, {}).empty());
  CHECK_THROWS_AS(h2o::take(std::vector<int>{10, 11}, {2}), std::out_of_range);

  Matrix rows = {{1.0f, 2.0f}, {3.0f, 4.0f}, {5.0f, 6.0f}};  // (3, 2)
  const Matrix picked = h2o::take_rows(rows, {2, 0});
  REQUIRE(picked.shape()[0] == 2);
  REQUIRE(picked.shape()[1] == 2);
  CHECK(picked(0, 0) == 5.0f);
  CHECK(picked(0, 1) == 6.0f);
  CHECK(picked(1, 0) == 1.0f);
  CHECK(picked(1, 1) == 2.0f);
  CHECK(h2o::take_rows(rows, {}).shape()[0] == 0);
  CHECK_THROWS_AS(h2o::take_rows(rows, {3}), std::out_of_range);
}

TEST_CASE("toy cache reproduces the blog eviction with its rows", "[toy_cache]") {
  const std::vector<std::string> words = {"The", "cat", "sat", "because", "it"};
  ToyKVCache cache(2);
  for (std::size_t t = 0; t < words.size(); ++t) {
    const auto p = static_cast<Position>(t);
    cache.append(words[t], p, key_for(p, 2), value_for(p, 2));
  }
  CHECK(cache.scores() == std::vector<float>(5, 0.0f));  // every token enters with score 0
  cache.add_attention(vector_of({1.78f, 1.58f, 0.91f, 0.51f, 0.22f}));

  const h2o::KeepPlan plan = cache.plan(h2o::CacheBudget(2, 2));
  CHECK(plan.kept == std::vector<std::size_t>{0, 1, 3, 4});
  CHECK(cache.size() == 5);  // plan() decides, it does not change the cache
  cache.keep(plan.kept);

  CHECK(cache.words() == std::vector<std::string>{"The", "cat", "because", "it"});
  CHECK(cache.positions() == std::vector<Position>{0, 1, 3, 4});
  CHECK(cache.scores() == std::vector<float>{1.78f, 1.58f, 0.51f, 0.22f});
  REQUIRE(cache.keys().shape()[0] == 4);
  REQUIRE(cache.values().shape()[0] == 4);
  const std::vector<Position> expected = {0, 1, 3, 4};
  for (std::size_t r = 0; r < 4; ++r) {
    CHECK(row_is(cache.keys(), r, key_for(expected[r], 2)));
    CHECK(row_is(cache.values(), r, value_for(expected[r], 2)));
  }
}

TEST_CASE("toy cache counts the blog KV numbers", "[toy_cache]") {
  // Full cache: 7 tokens and 28 KV numbers; H2O cache: 4 tokens and 16 (D = 2).
  ToyKVCache cache(2);
  for (Position p = 0; p < 7; ++p) cache.append(word_for(p), p, key_for(p, 2), value_for(p, 2));
  CHECK(cache.size() == 7);
  CHECK(cache.kv_numbers() == 28);
  cache.keep(cache.plan(h2o::CacheBudget(2, 2)).kept);
  CHECK(cache.size() == 4);
  CHECK(cache.kv_numbers() == 16);
}

TEST_CASE("toy cache keep uses the given order for every array", "[toy_cache]") {
  ToyKVCache cache(3);
  for (Position p = 0; p < 4; ++p) cache.append(word_for(p), p, key_for(p, 3), value_for(p, 3));
  cache.add_attention(vector_of({0.1f, 0.2f, 0.3f, 0.4f}));
  cache.keep({3, 1});
  CHECK(cache.positions() == std::vector<Position>{3, 1});
  CHECK(cache.words() == std::vector<std::string>{"w3", "w1"});
  CHECK(cache.scores() == std::vector<float>{0.4f, 0.2f});
  CHECK(row_is(cache.keys(), 0, key_for(3, 3)));
  CHECK(row_is(cache.values(), 1, value_for(1, 3)));
}

TEST_CASE("toy cache refuses bad input", "[toy_cache]") {
  CHECK_THROWS_AS(ToyKVCache(0), std::invalid_argument);
  ToyKVCache cache(2);
  CHECK_THROWS_AS(cache.append("x", 0, key_for(0, 3), value_for(0, 2)), std::invalid_argument);
  CHECK_THROWS_WITH(cache.append("x", 0, key_for(0, 2), value_for(0, 1)),
                    Catch::Contains("2 numbers"));
  CHECK(cache.size() == 0);  // a refused append changes nothing
  cache.append("a", 0, key_for(0, 2), value_for(0, 2));
  cache.append("b", 1, key_for(1, 2), value_for(1, 2));
  CHECK_THROWS_AS(cache.add_attention(vector_of({1.0f})), std::invalid_argument);
  CHECK_THROWS_AS(cache.add_attention(vector_of({0.2f, 0.3f, 0.5f})), std::invalid_argument);
  CHECK(cache.scores() == std::vector<float>{0.0f, 0.0f});
  CHECK_THROWS_AS(cache.keep({0, 2}), std::out_of_range);
}

TEST_CASE("toy cache online runs keep the budget and aligned rows", "[toy_cache]") {
  const auto seed = GENERATE(range(1, 1001));
  CAPTURE(seed);
  h2o::Rng rng(static_cast<std::uint64_t>(seed));
  const auto heavy = static_cast<long long>(rng.below(6));
  const auto recent = static_cast<long long>(heavy == 0 ? 1 + rng.below(5) : rng.below(6));
  const h2o::CacheBudget budget = h2o::CacheBudget(heavy, recent);
  const std::size_t head_dim = 1 + rng.below(4);
  const std::size_t length = rng.below(40);
  CAPTURE(budget.heavy, budget.recent, head_dim, length);

  ToyKVCache cache(head_dim);
  std::map<Position, float> reference_scores;  // every token's own score, kept independently
  for (std::size_t t = 0; t < length; ++t) {
    const auto p = static_cast<Position>(t);
    cache.append(word_for(p), p, key_for(p, head_dim), value_for(p, head_dim));
    reference_scores[p] = 0.0f;
    const Vector attention = random_attention(rng, cache.size());
    cache.add_attention(attention);
    for (std::size_t s = 0; s < cache.size(); ++s)
      reference_scores[cache.positions()[s]] += attention(s);

    const std::vector<Position> before = cache.positions();
    const std::vector<float> scores_before = cache.scores();
    if (cache.size() > budget.total()) cache.keep(cache.plan(budget).kept);

    // Never more than heavy + recent tokens.
    REQUIRE(cache.size() == std::min(t + 1, budget.total()));
    // A sequence no longer than the budget is untouched.
    if (t + 1 <= budget.total()) CHECK(cache.positions() == before);
    // The last `recent` positions are always kept.
    for (std::size_t back = 0; back < std::min<std::size_t>(budget.recent, t + 1); ++back) {
      const Position p_recent = p - static_cast<Position>(back);
      CHECK(std::count(cache.positions().begin(), cache.positions().end(), p_recent) == 1);
    }
    // Every kept older token (outside the recent window) scores at least as much as every token
    // evicted this step.
    for (std::size_t s = 0; s < before.size(); ++s) {
      const bool gone = std::find(cache.positions().begin(), cache.positions().end(), before[s]) ==
                        cache.positions().end();
      if (!gone) continue;
      for (std::size_t k = 0; k < cache.size(); ++k) {
        const bool in_recent_window =
            cache.positions()[k] > p - static_cast<Position>(budget.recent);
        if (!in_recent_window) CHECK(cache.scores()[k] >= scores_before[s]);
      }
    }
    // Rows of words, positions, keys, values and scores still describe the same token, and the
    // cache stays in position order.
    REQUIRE(cache.keys().shape()[0] == cache.size());
    REQUIRE(cache.values().shape()[0] == cache.size());
    REQUIRE(cache.scores().size() == cache.size());
    REQUIRE(cache.words().size() == cache.size());
    for (std::size_t s = 0; s < cache.size(); ++s) {
      const Position q = cache.positions()[s];
      CHECK(cache.words()[s] == word_for(q));
      CHECK(row_is(cache.keys(), s, key_for(q, head_dim)));
      CHECK(row_is(cache.values(), s, value_for(q, head_dim)));
      CHECK(cache.scores()[s] == reference_scores[q]);
      if (s > 0) CHECK(cache.positions()[s - 1] < q);
    }
  }
}

TEST_CASE("toy cache the handbook demonstration keeps the boosted positions as heavy hitters",
          "[toy_cache]") {
  // 50 tokens, heavy 8 + recent 8, 8 heads of random attention with +2 before softmax on positions
  // 5 and 10, scores averaged over heads, new token appended before it attends (as lesson 04).
  const auto seed = GENERATE(range(1, 101));
  CAPTURE(seed);
  h2o::Rng rng(static_cast<std::uint64_t>(seed));
  const h2o::CacheBudget budget = h2o::CacheBudget(8, 8);
  const std::size_t n_heads = 8;
  ToyKVCache cache(1);
  for (Position p = 0; p < 50; ++p) {
    cache.append(word_for(p), p, key_for(p, 1), value_for(p, 1));
    Vector mean = xt::zeros<float>({cache.size()});
    for (std::size_t h = 0; h < n_heads; ++h) {
      Vector logits = xt::zeros<float>({cache.size()});
      for (std::size_t s = 0; s < cache.size(); ++s) {
        logits(s) = rng.uniform();
        if (cache.positions()[s] == 5 || cache.positions()[s] == 10) logits(s) += 2.0f;
      }
      mean += h2o::softmax(logits) / static_cast<float>(n_heads);
    }
    cache.add_attention(mean);
    if (cache.size() > budget.total()) cache.keep(cache.plan(budget).kept);
  }
  REQUIRE(cache.size() == 16);
  // The two largest scores belong to positions 5 and 10.
  std::vector<std::size_t> order(cache.size());
  for (std::size_t s = 0; s < order.size(); ++s) order[s] = s;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return cache.scores()[a] > cache.scores()[b]; });
  std::vector<Position> top_two = {cache.positions()[order[0]], cache.positions()[order[1]]};
  std::sort(top_two.begin(), top_two.end());
  CHECK(top_two == std::vector<Position>{5, 10});
  // The recent window is the last 8 positions.
  CHECK(std::vector<Position>(cache.positions().end() - 8, cache.positions().end()) ==
        std::vector<Position>{42, 43, 44, 45, 46, 47, 48, 49});
}
