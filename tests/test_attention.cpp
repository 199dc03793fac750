// test_attention.cpp: scaled dot-product attention (attention.hpp).
//
// Checks: a hand-worked example, weights that are a probability distribution, agreement with a
// naive double-precision loop over many random sizes, a softmax that survives huge inputs, and a
// clear error for every shape mismatch.
//
// Dimension legend: T = tokens in the cache, D = head_dim.
#include <algorithm>
#include "h2o_catch.hpp"
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>
#include "h2o/base/xtensor.hpp"

#include "h2o/attention/attention.hpp"
#include "h2o/base/random.hpp"

using namespace h2o;

namespace {

Matrix random_matrix(Rng& rng, std::size_t rows, std::size_t cols, float stddev) {
  Matrix m = xt::zeros<float>({rows, cols});  // (rows, cols)
  for (auto& x : m) x = rng.normal() * stddev;
  return m;
}

Vector random_vector(Rng& rng, std::size_t n, float stddev) {
  Vector v = xt::zeros<float>({n});  // (n,)
  for (auto& x : v) x = rng.normal() * stddev;
  return v;
}

// The textbook loop, in double: dot products, scale, max-subtracted softmax, weighted sum of rows.
struct NaiveAttention {
  std::vector<double> weights;  // (T,)
  std::vector<double> output;   // (D,)
};

NaiveAttention naive_attention(const Vector& query, const Matrix& keys, const Matrix& values) {
  const std::size_t T = keys.shape()[0], D = query.size();
  NaiveAttention r{std::vector<double>(T), std::vector<double>(values.shape()[1], 0.0)};
  for (std::size_t t = 0; t < T; ++t) {
    double dot = 0.0;
    for (std::size_t d = 0; d < D; ++d) dot += static_cast<double>(query(d)) * keys(t, d);
    r.weights[t] = dot / std::sqrt(static_cast<double>(D));
  }
  const double max_score = *std::max_element(r.weights.begin(), r.weights.end());
  double sum = 0.0;
  for (double& w : r.weights) {
    w = std::exp(w - max_score);
    sum += w;
  }
  for (double& w : r.weights) w /= sum;
  for (std::size_t t = 0; t < T; ++t) {
    for (std::size_t d = 0; d < values.shape()[1]; ++d) r.output[d] += r.weights[t] * values(t, d);
  }
  return r;
}

}  // namespace

TEST_CASE("attention reproduces a hand worked example", "[attention]") {
  // q = (sqrt 2, 0) and keys along the first axis give raw scores q.k / sqrt(2) = [0, ln 2, ln 3],
  // so exp() = [1, 2, 3] and the weights are [1/6, 2/6, 3/6].
  const float root2 = std::sqrt(2.0f);
  const Vector query = {root2, 0.0f};
  const Matrix keys = {{0.0f, 0.0f}, {std::log(2.0f), 0.0f}, {std::log(3.0f), 0.0f}};  // (3, 2)
  const Matrix values = {{1.0f, 0.0f}, {0.0f, 1.0f}, {1.0f, 1.0f}};                    // (3, 2)

  const AttentionResult r = attend(query, keys, values);
  REQUIRE(r.weights.size() == 3);
  CHECK(r.weights(0) == Approx(1.0 / 6.0).margin(1e-6));
  CHECK(r.weights(1) == Approx(2.0 / 6.0).margin(1e-6));
  CHECK(r.weights(2) == Approx(3.0 / 6.0).margin(1e-6));
  // output = 1/6 (1, 0) + 2/6 (0, 1) + 3/6 (1, 1) = (4/6, 5/6)
  REQUIRE(r.output.size() == 2);
  CHECK(r.output(0) == Approx(4.0 / 6.0).margin(1e-6));
  CHECK(r.output(1) == Approx(5.0 / 6.0).margin(1e-6));

  // The separate steps give the same numbers as attend().
  const Vector weights = attention_weights(query, keys);
  const Vector output = attention_output(weights, values);
  for (std::size_t t = 0; t < 3; ++t) CHECK(weights(t) == r.weights(t));
  for (std::size_t d = 0; d < 2; ++d) CHECK(output(d) == r.output(d));
}

TEST_CASE("attention over a single token returns its value row", "[attention]") {
  const Vector query = {0.3f, -1.2f, 4.0f, 0.5f};
  const Matrix keys = {{9.0f, -7.0f, 1.0f, 2.0f}};
  const Matrix values = {{1.5f, -2.5f, 3.25f, 0.0f}};
  const AttentionResult r = attend(query, keys, values);
  CHECK(r.weights(0) == 1.0f);
  for (std::size_t d = 0; d < 4; ++d) CHECK(r.output(d) == values(0, d));
}

TEST_CASE("attention weights are non negative and sum to one", "[attention]") {
  const std::uint64_t seed = GENERATE(range(1, 41));
  Rng rng(seed);
  const std::size_t T = 1 + rng.below(80);
  const std::size_t D = 2 * (1 + rng.below(16));
  const float spread = rng.uniform(0.1f, 5.0f);  // from nearly uniform to nearly one-hot
  const Vector query = random_vector(rng, D, spread);
  const Matrix keys = random_matrix(rng, T, D, spread);
  const Vector weights = attention_weights(query, keys);
  REQUIRE(weights.size() == T);
  double sum = 0.0;
  for (float w : weights) {
    CHECK(w >= 0.0f);
    CHECK(w <= 1.0f);
    sum += w;
  }
  INFO("seed " << seed << ", T " << T << ", D " << D);
  CHECK(sum == Approx(1.0).margin(1e-5));
}

TEST_CASE("attention matches a naive loop over random sizes", "[attention]") {
  // Tolerance: weights lie in [0, 1], so 1e-5 absolute; outputs are mixes of value rows, so
  // 1e-5 times the largest value magnitude.
  const std::uint64_t seed = GENERATE(range(100, 160));
  Rng rng(seed);
  const std::size_t T = 1 + rng.below(200);
  const std::size_t D = 1 + rng.below(64);  // the kernel itself has no parity requirement
  const float spread = rng.uniform(0.1f, 3.0f);
  const Vector query = random_vector(rng, D, spread);
  const Matrix keys = random_matrix(rng, T, D, spread);
  const Matrix values = random_matrix(rng, T, D, 2.0f);
  const NaiveAttention expected = naive_attention(query, keys, values);

  INFO("seed " << seed << ", T " << T << ", D " << D);
  const AttentionResult r = attend(query, keys, values);
  double worst_weight = 0.0, worst_output = 0.0, value_scale = 1.0;
  for (float v : values) value_scale = std::max(value_scale, std::abs(static_cast<double>(v)));
  for (std::size_t t = 0; t < T; ++t) {
    worst_weight = std::max(worst_weight, std::abs(r.weights(t) - expected.weights[t]));
  }
  for (std::size_t d = 0; d < D; ++d) {
    worst_output = std::max(worst_output, std::abs(r.output(d) - expected.output[d]));
  }
  CHECK(worst_weight < 1e-5);
  CHECK(worst_output < 1e-5 * value_scale);

  // The raw kernel the decoder uses agrees exactly with attend().
  std::vector<float> weights(T), output(D);
  attend_into(query.data(), keys.data(), values.data(), T, D, weights.data(), output.data());
  for (std::size_t t = 0; t < T; ++t) REQUIRE(weights[t] == r.weights(t));
  for (std::size_t d = 0; d < D; ++d) REQUIRE(output[d] == r.output(d));
}

TEST_CASE("softmax stays finite for huge inputs", "[attention]") {
  // Without subtracting the maximum, exp(1000) overflows to inf and inf / inf is NaN.
  const Vector big = {1000.0f, 1000.0f, 990.0f};
  const Vector w = softmax(big);
  const double tail = std::exp(-10.0);
  CHECK(w(0) == Approx(1.0 / (2.0 + tail)).margin(1e-7));
  CHECK(w(1) == Approx(1.0 / (2.0 + tail)).margin(1e-7));
  CHECK(w(2) == Approx(tail / (2.0 + tail)).margin(1e-7));

  const float huge = std::numeric_limits<float>::max();
  const Vector extreme = {huge, huge, -huge, 0.0f};
  const Vector e = softmax(extreme);
  CHECK(e(0) == 0.5f);
  CHECK(e(1) == 0.5f);
  CHECK(e(2) == 0.0f);
  CHECK(e(3) == 0.0f);

  const Vector very_negative = {-1e30f, -1e30f + 1e24f, -3e38f};
  const Vector n = softmax(very_negative);
  for (float x : n) CHECK(std::isfinite(x));
  CHECK(n(1) == 1.0f);  // 1e24 apart: every other weight underflows to zero

  // A query a million times too large still gives finite weights that sum to one.
  Rng rng(7);
  const Vector query = random_vector(rng, 8, 1e6f);
  const Matrix keys = random_matrix(rng, 20, 8, 1.0f);
  const Vector weights = attention_weights(query, keys);
  double sum = 0.0;
  for (float x : weights) {
    REQUIRE(std::isfinite(x));
    sum += x;
  }
  CHECK(sum == Approx(1.0).margin(1e-6));
}

TEST_CASE("softmax ignores a constant shift", "[attention]") {
  const std::uint64_t seed = GENERATE(range(1, 21));
  Rng rng(seed);
  const std::size_t n = 1 + rng.below(50);
  const Vector x = random_vector(rng, n, 3.0f);
  const float shift = rng.uniform(-500.0f, 500.0f);
  const Vector shifted = x + shift;
  const Vector a = softmax(x), b = softmax(shifted);
  // The shift changes the rounding of x + shift by up to ~500 * 2^-24, hence the margin.
  for (std::size_t i = 0; i < n; ++i) CHECK(a(i) == Approx(b(i)).margin(1e-4));
}

TEST_CASE("softmax of nothing is nothing", "[attention]") {
  const Vector empty = xt::zeros<float>({std::size_t{0}});
  CHECK(softmax(empty).size() == 0);
  softmax_inplace(nullptr, 0);  // must not touch memory
}

TEST_CASE("attention refuses mismatched shapes", "[attention]") {
  const Vector query = {1.0f, 2.0f, 3.0f, 4.0f};         // (4,)
  const Matrix keys4 = xt::zeros<float>({5, 4});         // (5, 4)
  const Matrix keys3 = xt::zeros<float>({5, 3});         // (5, 3): wrong head_dim
  const Matrix values4 = xt::zeros<float>({5, 4});       // (5, 4)
  const Matrix values_short = xt::zeros<float>({4, 4});  // (4, 4): one row short
  const Vector weights5 = xt::zeros<float>({5});         // (5,)
  const Vector weights6 = xt::zeros<float>({6});         // (6,)

  CHECK_THROWS_AS(attention_weights(query, keys3), std::invalid_argument);
  CHECK_THROWS_WITH(attention_weights(query, keys3), h2o_catch::Contains("expected 4"));
  CHECK_THROWS_AS(attention_output(weights6, values4), std::invalid_argument);
  CHECK_THROWS_WITH(attention_output(weights6, values4), h2o_catch::Contains("6 weights"));
  CHECK_THROWS_AS(attend(query, keys3, values4), std::invalid_argument);
  CHECK_THROWS_AS(attend(query, keys4, values_short), std::invalid_argument);
  CHECK_THROWS_WITH(attend(query, keys4, values_short), h2o_catch::Contains("5 keys but 4 values"));
  CHECK_NOTHROW(attend(query, keys4, values4));
  CHECK_NOTHROW(attention_output(weights5, values4));
  // A cache whose values were forgotten while its weights shrank.
  const Vector weights4 = xt::zeros<float>({4});  // (4,)
  CHECK_THROWS_WITH(attention_output(weights4, values4),
                    "attention has 4 weights but there are 5 value rows");
}
