// Tests for rows.hpp (take, append_row) and toy_cache.hpp (the blog's append-then-filter cache):
// the blog's numbers, bad input, seeded online runs in which every row must stay aligned, and the
// library's preallocated H2O making the same decisions as the toy cache online (lesson 04's loop),
// and a cache grown with append_row attending like recomputing every key and value (lesson 06);
// tensor_cache.hpp, the same cache with tensors, against the toy cache row for row.
#include <algorithm>
#include "h2o_catch.hpp"
#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>
#include "h2o/base/xtensor_blas.hpp"

#include "h2o/attention/attention.hpp"
#include "h2o/base/random.hpp"
#include "h2o/base/rows.hpp"
#include "h2o/cache/kv_cache.hpp"
#include "h2o/cache/selection.hpp"
#include "h2o/cache/tensor_cache.hpp"
#include "h2o/cache/toy_cache.hpp"
#include "h2o/policy/h2o_policy.hpp"

using h2o::Matrix;
using h2o::Position;
using h2o::Row;
using h2o::ToyKVCache;
using h2o::Vector;

namespace {

// A key and a value that name their token: key = [p, p + 0.25, ...], value = -key. Small whole
// positions and quarters are exact in float, so equality checks are exact.
Row key_for(Position p, std::size_t head_dim) {
  Row key(head_dim);
  for (std::size_t d = 0; d < head_dim; ++d) key[d] = static_cast<float>(p) + 0.25f * d;
  return key;
}

Row value_for(Position p, std::size_t head_dim) {
  Row value = key_for(p, head_dim);
  for (float& x : value) x = -x;
  return value;
}

std::string word_for(Position p) { return "w" + std::to_string(p); }

// softmax of a plain list (the library's in-place softmax on a copy): positive, sums to 1.
std::vector<float> softmax_of(std::vector<float> logits) {
  h2o::softmax_inplace(logits.data(), logits.size());
  return logits;
}

// Random attention over n tokens: positive, sums to 1.
std::vector<float> random_attention(h2o::Rng& rng, std::size_t n) {
  std::vector<float> logits(n);
  for (float& x : logits) x = rng.uniform(-2.0f, 2.0f);
  return softmax_of(logits);
}

}  // namespace

TEST_CASE("take picks items rows and values in the given order", "[toy_cache]") {
  CHECK(h2o::take(std::vector<int>{10, 11, 12, 13}, {3, 0, 0}) == std::vector<int>{13, 10, 10});
  CHECK(h2o::take(std::vector<int>{10, 11}, {}).empty());
  CHECK_THROWS_AS(h2o::take(std::vector<int>{10, 11}, {2}), std::out_of_range);

  const Matrix rows = {{1.0f, 2.0f}, {3.0f, 4.0f}, {5.0f, 6.0f}};  // (3, 2)
  const Matrix picked = h2o::take(rows, {2, 0});
  REQUIRE(picked.shape()[0] == 2);
  REQUIRE(picked.shape()[1] == 2);
  CHECK(picked(0, 0) == 5.0f);
  CHECK(picked(0, 1) == 6.0f);
  CHECK(picked(1, 0) == 1.0f);
  CHECK(picked(1, 1) == 2.0f);
  CHECK(h2o::take(rows, {}).shape()[0] == 0);
  CHECK_THROWS_AS(h2o::take(rows, {3}), std::out_of_range);

  const Vector values = {0.5f, 1.5f, 2.5f};
  const Vector some = h2o::take(values, {1, 1, 0});
  REQUIRE(some.size() == 3);
  CHECK(some(0) == 1.5f);
  CHECK(some(1) == 1.5f);
  CHECK(some(2) == 0.5f);
  CHECK_THROWS_AS(h2o::take(values, {3}), std::out_of_range);
}

TEST_CASE("append_row and append grow a cache by one row", "[toy_cache]") {
  Matrix rows = Matrix::from_shape({0, 2});  // an empty cache of 2-number rows
  rows = h2o::append_row(rows, Vector{1.0f, 2.0f});
  rows = h2o::append_row(rows, Vector{3.0f, 4.0f});
  REQUIRE(rows.shape()[0] == 2);
  CHECK(rows(0, 0) == 1.0f);
  CHECK(rows(1, 1) == 4.0f);
  CHECK_THROWS_AS(h2o::append_row(rows, Vector{1.0f}), std::invalid_argument);
  Vector scores = Vector::from_shape({0});
  scores = h2o::append(h2o::append(scores, 0.5f), 0.0f);
  REQUIRE(scores.size() == 2);
  CHECK(scores(0) == 0.5f);
  CHECK(scores(1) == 0.0f);
}

TEST_CASE("toy cache reproduces the blog eviction with its rows", "[toy_cache]") {
  const std::vector<std::string> words = {"The", "cat", "sat", "because", "it"};
  ToyKVCache cache;
  for (std::size_t t = 0; t < words.size(); ++t) {
    const auto p = static_cast<Position>(t);
    cache.append(words[t], p, key_for(p, 2), value_for(p, 2));
  }
  CHECK(cache.h2o_scores == std::vector<float>(5, 0.0f));  // every token enters with score 0
  h2o::accumulate_attention(cache.h2o_scores, {1.78f, 1.58f, 0.91f, 0.51f, 0.22f});

  const h2o::KeepPlan plan = h2o::plan_keep(cache.positions, cache.h2o_scores, {2, 2});
  CHECK(plan.kept == std::vector<std::size_t>{0, 1, 3, 4});
  cache.keep(plan.kept);

  CHECK(cache.tokens == std::vector<std::string>{"The", "cat", "because", "it"});
  CHECK(cache.positions == std::vector<Position>{0, 1, 3, 4});
  CHECK(cache.h2o_scores == std::vector<float>{1.78f, 1.58f, 0.51f, 0.22f});
  const std::vector<Position> expected = {0, 1, 3, 4};
  for (std::size_t r = 0; r < 4; ++r) {
    CHECK(cache.key_cache[r] == key_for(expected[r], 2));
    CHECK(cache.value_cache[r] == value_for(expected[r], 2));
  }
}

TEST_CASE("toy cache counts the blog KV numbers", "[toy_cache]") {
  // Full cache: 7 tokens and 28 KV numbers; H2O cache: 4 tokens and 16 (D = 2).
  ToyKVCache cache;
  CHECK(cache.kv_numbers() == 0);
  for (Position p = 0; p < 7; ++p) cache.append(word_for(p), p, key_for(p, 2), value_for(p, 2));
  CHECK(cache.size() == 7);
  CHECK(cache.kv_numbers() == 28);
  cache.keep(h2o::plan_keep(cache.positions, cache.h2o_scores, {2, 2}).kept);
  CHECK(cache.size() == 4);
  CHECK(cache.kv_numbers() == 16);
}

TEST_CASE("toy cache keep uses the given order for every list", "[toy_cache]") {
  ToyKVCache cache;
  for (Position p = 0; p < 4; ++p) cache.append(word_for(p), p, key_for(p, 3), value_for(p, 3));
  h2o::accumulate_attention(cache.h2o_scores, {0.1f, 0.2f, 0.3f, 0.4f});
  cache.keep({3, 1});
  CHECK(cache.positions == std::vector<Position>{3, 1});
  CHECK(cache.tokens == std::vector<std::string>{"w3", "w1"});
  CHECK(cache.h2o_scores == std::vector<float>{0.4f, 0.2f});
  CHECK(cache.key_cache[0] == key_for(3, 3));
  CHECK(cache.value_cache[1] == value_for(1, 3));
}

TEST_CASE("toy cache refuses bad input", "[toy_cache]") {
  ToyKVCache cache;
  CHECK_THROWS_AS(cache.append("x", 0, key_for(0, 3), value_for(0, 2)), std::invalid_argument);
  CHECK_THROWS_AS(cache.append("x", 0, {}, {}), std::invalid_argument);
  cache.append("a", 0, key_for(0, 2), value_for(0, 2));
  CHECK_THROWS_WITH(cache.append("x", 1, key_for(1, 3), value_for(1, 3)),
                    h2o_catch::Contains("2 numbers"));
  CHECK(cache.size() == 1);  // a refused append changes nothing
  cache.append("b", 1, key_for(1, 2), value_for(1, 2));
  CHECK_THROWS_AS(cache.keep({0, 2}), std::out_of_range);
  CHECK(cache.size() == 2);     // a refused keep changes nothing
  cache.h2o_scores.pop_back();  // lists edited by hand to different lengths
  CHECK_THROWS_AS(cache.keep({0}), std::logic_error);
}

TEST_CASE("toy cache online runs keep the budget and aligned rows", "[toy_cache]") {
  const auto seed = GENERATE(range(1, 1001));
  CAPTURE(seed);
  h2o::Rng rng(static_cast<std::uint64_t>(seed));
  const std::size_t heavy = rng.below(6);
  const std::size_t recent = heavy == 0 ? 1 + rng.below(5) : rng.below(6);
  const h2o::CacheBudget budget(heavy, recent);
  const std::size_t head_dim = 1 + rng.below(4);
  const std::size_t length = rng.below(40);
  CAPTURE(budget.heavy, budget.recent, head_dim, length);

  ToyKVCache cache;
  std::map<Position, float> reference_scores;  // every token's own score, kept independently
  for (std::size_t t = 0; t < length; ++t) {
    const auto p = static_cast<Position>(t);
    cache.append(word_for(p), p, key_for(p, head_dim), value_for(p, head_dim));
    reference_scores[p] = 0.0f;
    const std::vector<float> attention = random_attention(rng, cache.size());
    h2o::accumulate_attention(cache.h2o_scores, attention);
    for (std::size_t s = 0; s < cache.size(); ++s)
      reference_scores[cache.positions[s]] += attention[s];

    const std::vector<Position> before = cache.positions;
    const std::vector<float> scores_before = cache.h2o_scores;
    if (cache.size() > budget.total()) {
      cache.keep(h2o::plan_keep(cache.positions, cache.h2o_scores, budget).kept);
    }

    // Never more than heavy + recent tokens.
    REQUIRE(cache.size() == std::min(t + 1, budget.total()));
    // A sequence no longer than the budget is untouched.
    if (t + 1 <= budget.total()) CHECK(cache.positions == before);
    // The last `recent` positions are always kept.
    for (std::size_t back = 0; back < std::min<std::size_t>(budget.recent, t + 1); ++back) {
      const Position p_recent = p - static_cast<Position>(back);
      CHECK(std::count(cache.positions.begin(), cache.positions.end(), p_recent) == 1);
    }
    // Every kept older token (outside the recent window) scores at least as much as every token
    // evicted this step.
    for (std::size_t s = 0; s < before.size(); ++s) {
      const bool gone = std::find(cache.positions.begin(), cache.positions.end(), before[s]) ==
                        cache.positions.end();
      if (!gone) continue;
      for (std::size_t k = 0; k < cache.size(); ++k) {
        const bool in_recent_window = cache.positions[k] > p - static_cast<Position>(budget.recent);
        if (!in_recent_window) CHECK(cache.h2o_scores[k] >= scores_before[s]);
      }
    }
    // Rows of tokens, positions, keys, values and scores still describe the same token, and the
    // cache stays in position order.
    REQUIRE(cache.key_cache.size() == cache.size());
    REQUIRE(cache.value_cache.size() == cache.size());
    REQUIRE(cache.h2o_scores.size() == cache.size());
    REQUIRE(cache.tokens.size() == cache.size());
    for (std::size_t s = 0; s < cache.size(); ++s) {
      const Position q = cache.positions[s];
      CHECK(cache.tokens[s] == word_for(q));
      CHECK(cache.key_cache[s] == key_for(q, head_dim));
      CHECK(cache.value_cache[s] == value_for(q, head_dim));
      CHECK(cache.h2o_scores[s] == reference_scores[q]);
      if (s > 0) CHECK(cache.positions[s - 1] < q);
    }
  }
}

TEST_CASE("toy cache the handbook demonstration keeps the boosted positions as heavy hitters",
          "[toy_cache]") {
  // 50 tokens, heavy 8 + recent 8, 8 heads of random attention with +2 before softmax on positions
  // 5 and 10, scores averaged over heads, new token appended before it attends (as lesson 04).
  // Also over 200 tokens (lesson 04 once took --tokens 200 --seed 7).
  const auto seed = GENERATE(range(1, 101));
  const Position length = GENERATE(50, 200);
  CAPTURE(seed, length);
  h2o::Rng rng(static_cast<std::uint64_t>(seed));
  const h2o::CacheBudget budget(8, 8);
  const std::size_t n_heads = 8;
  ToyKVCache cache;
  for (Position p = 0; p < length; ++p) {
    cache.append(word_for(p), p, key_for(p, 1), value_for(p, 1));
    for (std::size_t h = 0; h < n_heads; ++h) {
      std::vector<float> logits(cache.size());
      for (std::size_t s = 0; s < cache.size(); ++s) {
        logits[s] = rng.uniform();
        if (cache.positions[s] == 5 || cache.positions[s] == 10) logits[s] += 2.0f;
      }
      const std::vector<float> attention = softmax_of(logits);
      for (std::size_t s = 0; s < cache.size(); ++s) cache.h2o_scores[s] += attention[s] / n_heads;
    }
    if (cache.size() > budget.total()) {
      cache.keep(h2o::plan_keep(cache.positions, cache.h2o_scores, budget).kept);
    }
  }
  REQUIRE(cache.size() == 16);
  // The two largest scores belong to positions 5 and 10.
  std::vector<std::size_t> order(cache.size());
  for (std::size_t s = 0; s < order.size(); ++s) order[s] = s;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return cache.h2o_scores[a] > cache.h2o_scores[b];
  });
  std::vector<Position> top_two = {cache.positions[order[0]], cache.positions[order[1]]};
  std::sort(top_two.begin(), top_two.end());
  CHECK(top_two == std::vector<Position>{5, 10});
  // The recent window is the last 8 positions.
  std::vector<Position> last_eight(8);
  for (std::size_t i = 0; i < 8; ++i) last_eight[i] = length - 8 + static_cast<Position>(i);
  CHECK(std::vector<Position>(cache.positions.end() - 8, cache.positions.end()) == last_eight);
}

TEST_CASE("the library h2o policy makes the toy cache's online decisions", "[toy_cache]") {
  // Lesson 04's loop (append, attend, add every head's attention, filter rows with plan_keep) and
  // the decoder's H2OPolicy in shared mode on a preallocated LayerKVCache, fed the same attention:
  // the same positions survive every step, with exactly the same scores (both add each head's row
  // in the same order).
  const auto seed = GENERATE(range(1, 201));
  CAPTURE(seed);
  h2o::Rng rng(static_cast<std::uint64_t>(seed));
  const std::size_t heavy = rng.below(5), recent = 1 + rng.below(5), n_heads = 1 + rng.below(8);
  const h2o::CacheBudget budget(heavy, recent);
  ToyKVCache toy;
  h2o::LayerKVCache cache(1, 1, budget.total() + 1);
  h2o::H2OPolicy policy(budget, h2o::ScoringMode::Shared);
  const float unused_row[1] = {0.0f};
  for (Position p = 0; p < 60; ++p) {
    toy.append(word_for(p), p, key_for(p, 1), value_for(p, 1));
    cache.append(unused_row, unused_row, p);
    const std::size_t T = cache.uniform_size();
    std::vector<float> by_slot(n_heads * T);  // (H, T) in the library's slot order
    for (std::size_t h = 0; h < n_heads; ++h) {
      const std::vector<float> attention = random_attention(rng, toy.size());
      for (std::size_t s = 0; s < toy.size(); ++s) toy.h2o_scores[s] += attention[s];
      for (std::size_t slot = 0; slot < T; ++slot) {
        const auto at =
            std::find(toy.positions.begin(), toy.positions.end(), cache.positions(0)[slot]);
        REQUIRE(at != toy.positions.end());
        by_slot[h * T + slot] =
            attention[static_cast<std::size_t>(at - toy.positions.begin())];
      }
    }
    policy.after_attention(cache, h2o::StepAttention{by_slot.data(), n_heads, T});
    if (toy.size() > budget.total()) {
      toy.keep(h2o::plan_keep(toy.positions, toy.h2o_scores, budget).kept);
    }
    REQUIRE(cache.sorted_positions(0) == toy.positions);
    for (std::size_t slot = 0; slot < cache.uniform_size(); ++slot) {
      const auto at =
          std::find(toy.positions.begin(), toy.positions.end(), cache.positions(0)[slot]);
      CHECK(toy.h2o_scores[static_cast<std::size_t>(at - toy.positions.begin())] ==
            cache.scores(0)[slot]);
    }
  }
}

TEST_CASE("a cache built with append_row attends like recomputing every key and value",
          "[toy_cache]") {
  // Lesson 06's check, over 64 tokens (it once took --tokens 64 --seed 3): keys and values
  // appended row by row give the attention of keys and values recomputed from all embeddings.
  const auto seed = GENERATE(3, 6, 11);
  CAPTURE(seed);
  h2o::Rng rng(static_cast<std::uint64_t>(seed));
  const std::size_t n_tokens = 64, width = 4, head_dim = 4;
  auto random_matrix = [&rng](std::size_t rows, std::size_t cols) {
    Matrix m = Matrix::from_shape({rows, cols});
    for (auto& x : m) x = rng.uniform(-1.0f, 1.0f);
    return m;
  };
  const Matrix embeddings = random_matrix(n_tokens, width);  // (T, C)
  const Matrix wq = random_matrix(width, head_dim), wk = random_matrix(width, head_dim),
               wv = random_matrix(width, head_dim);                               // (C, D) each
  Matrix key_cache = Matrix::from_shape({0, head_dim}), value_cache = key_cache;  // (T, D)
  for (std::size_t t = 0; t < n_tokens; ++t) {
    const Vector x = xt::row(embeddings, t);  // (C,)
    const Vector query = xt::linalg::dot(x, wq);
    key_cache = h2o::append_row(key_cache, xt::linalg::dot(x, wk));
    value_cache = h2o::append_row(value_cache, xt::linalg::dot(x, wv));
    const auto seen = xt::view(embeddings, xt::range(0, t + 1), xt::all());  // (t + 1, C)
    const Matrix all_keys = xt::linalg::dot(seen, wk), all_values = xt::linalg::dot(seen, wv);
    const h2o::AttentionResult cached = h2o::attend(query, key_cache, value_cache);
    const h2o::AttentionResult recomputed = h2o::attend(query, all_keys, all_values);
    REQUIRE(key_cache.shape()[0] == t + 1);
    CHECK(xt::allclose(cached.weights, recomputed.weights, 1e-5, 1e-6));
    CHECK(xt::allclose(cached.output, recomputed.output, 1e-5, 1e-6));
  }
}

namespace {
h2o::Vector to_vector(const Row& row) {
  h2o::Vector v = h2o::Vector::from_shape({row.size()});  // (D,)
  std::copy(row.begin(), row.end(), v.begin());
  return v;
}
}  // namespace

TEST_CASE("the tensor cache keeps the same rows as the toy cache", "[toy_cache]") {
  // Lesson 04's loop on the plain-list cache and on the tensor cache (lessons 07 and 08), fed the
  // same rows and attention: after every step the same positions, keys, values and scores, bit for
  // bit (the same float additions).
  const auto seed = GENERATE(range(1, 51));
  CAPTURE(seed);
  h2o::Rng rng(static_cast<std::uint64_t>(seed));
  const std::size_t heavy = rng.below(4), recent = 1 + rng.below(4), head_dim = 1 + rng.below(4);
  const h2o::CacheBudget budget(heavy, recent);
  ToyKVCache toy;
  h2o::TensorKVCache tensor(head_dim);
  for (Position p = 0; p < 40; ++p) {
    toy.append(word_for(p), p, key_for(p, head_dim), value_for(p, head_dim));
    tensor.append(to_vector(key_for(p, head_dim)), to_vector(value_for(p, head_dim)), p);
    const std::vector<float> attention = random_attention(rng, toy.size());
    h2o::accumulate_attention(toy.h2o_scores, attention);
    tensor.h2o_scores = tensor.h2o_scores + to_vector(attention);
    if (toy.size() > budget.total()) {
      toy.keep(h2o::plan_keep(toy.positions, toy.h2o_scores, budget).kept);
      tensor.keep(h2o::plan_keep(tensor.positions, tensor.h2o_scores, budget).kept);
    }
    REQUIRE(tensor.positions == toy.positions);
    REQUIRE(tensor.size() == toy.size());
    REQUIRE(tensor.kv_numbers() == toy.kv_numbers());
    for (std::size_t r = 0; r < toy.size(); ++r) {
      REQUIRE(tensor.h2o_scores(r) == toy.h2o_scores[r]);
      for (std::size_t d = 0; d < head_dim; ++d) {
        REQUIRE(tensor.key_cache(r, d) == toy.key_cache[r][d]);
        REQUIRE(tensor.value_cache(r, d) == toy.value_cache[r][d]);
      }
    }
  }
}

TEST_CASE("the tensor cache refuses bad rows and indices and stays as it was", "[toy_cache]") {
  CHECK_THROWS_AS(h2o::TensorKVCache(0), std::invalid_argument);
  h2o::TensorKVCache cache(2);
  cache.append(h2o::Vector{0.1f, 0.2f}, h2o::Vector{0.7f, 0.8f}, 0);
  CHECK_THROWS_WITH(cache.append(h2o::Vector{1.1f, 1.2f}, h2o::Vector{1.7f}, 1),
                    "TensorKVCache::append: key and value need 2 numbers each, got 2 and 1");
  CHECK_THROWS_AS(cache.keep({0, 1}), std::out_of_range);
  CHECK(cache.size() == 1);
  CHECK(cache.key_cache.shape()[0] == 1);
  CHECK(cache.value_cache.shape()[0] == 1);
  CHECK(cache.h2o_scores.size() == 1);
  CHECK(cache.kv_numbers() == 4);
}
