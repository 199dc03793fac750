// test_vector_math.cpp: the fast kernels against their straightforward versions.
//
// Checks: exp_polynomial against std::exp over the whole range and at its edges; the fused softmax
// (softmax_inplace with a scale) against softmax_reference_inplace, and SwiGLU against its
// reference, within 1e-6 on many random cases; RoPE from precomputed angles equal, bit for bit, to
// rope_rotate; the grouped attention kernel equal to one attend_into per query.
//
// Dimension legend: n = numbers in a vector, T = cache tokens, D = head_dim, Q = query heads that
// share one KV head.
#include <algorithm>
#include "h2o_catch.hpp"
#include <cmath>
#include <limits>
#include <vector>

#include "h2o/attention/attention.hpp"
#include "h2o/base/random.hpp"
#include "h2o/base/vector_math.hpp"
#include "h2o/model/rope.hpp"
#include "h2o/model/swiglu.hpp"

using namespace h2o;

namespace {

std::vector<float> random_numbers(Rng& rng, std::size_t n, float spread) {
  std::vector<float> v(n);  // (n,)
  for (float& x : v) x = rng.normal() * spread;
  return v;
}

// |a - b| <= tolerance * max(|b|, floor): relative, except for numbers near zero.
double relative_error(double a, double b, double floor = 1e-30) {
  return std::abs(a - b) / std::max(std::abs(b), floor);
}

}  // namespace

TEST_CASE("exp_polynomial is within 1e-6 of std::exp over the float range", "[vector_math]") {
  double worst = 0.0;
  for (float x = -87.0f; x <= 88.0f; x += 0.001953125f) {  // 89,600 points, 2^-9 apart
    worst = std::max(worst, relative_error(exp_polynomial(x), std::exp(static_cast<double>(x))));
  }
  Rng rng(7);
  for (int i = 0; i < 100000; ++i) {
    const float x = rng.uniform(-87.0f, 88.0f);
    worst = std::max(worst, relative_error(exp_polynomial(x), std::exp(static_cast<double>(x))));
  }
  CHECK(worst < 1e-6);
  CHECK(exp_polynomial(0.0f) == 1.0f);
  CHECK(exp_polynomial(-100.0f) == 0.0f);  // flushed, as a softmax weight that small is 0
  CHECK(exp_polynomial(-std::numeric_limits<float>::infinity()) == 0.0f);
  CHECK(std::isfinite(exp_polynomial(1000.0f)));  // saturates instead of overflowing
}

TEST_CASE("the fused softmax equals the textbook one within 1e-6", "[vector_math]") {
  const std::uint64_t seed = GENERATE(range(1, 201));
  Rng rng(seed);
  const std::size_t n = 1 + rng.below(1100);  // every remainder of the 8-lane loops
  const float spread = rng.uniform(0.01f, 20.0f);
  const float scale = rng.below(2) == 0 ? 1.0f : rng.uniform(0.05f, 2.0f);
  std::vector<float> fast = random_numbers(rng, n, spread);
  std::vector<float> expected = fast;
  for (float& x : expected) x *= scale;
  softmax_reference_inplace(expected.data(), n);
  softmax_inplace(fast.data(), n, scale);
  INFO("seed " << seed << ", n " << n << ", spread " << spread << ", scale " << scale);
  double worst = 0.0, sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(fast[i]) - expected[i]));
    sum += fast[i];
  }
  CHECK(worst < 1e-6);
  CHECK(sum == Approx(1.0).margin(1e-5));
}

TEST_CASE("the fused softmax survives huge and equal inputs", "[vector_math]") {
  std::vector<float> huge = {1e30f, -1e30f, 1e30f, 0.0f};
  softmax_inplace(huge.data(), huge.size());
  CHECK(huge[0] == Approx(0.5));
  CHECK(huge[1] == 0.0f);
  CHECK(huge[2] == Approx(0.5));
  std::vector<float> equal(37, 3.0f);
  softmax_inplace(equal.data(), equal.size());
  for (float w : equal) CHECK(w == Approx(1.0 / 37.0).epsilon(1e-6));
}

TEST_CASE("the vectorised SwiGLU equals the textbook one within 1e-6", "[vector_math]") {
  const std::uint64_t seed = GENERATE(range(1, 51));
  Rng rng(seed);
  const std::size_t n = 1 + rng.below(3000);
  std::vector<float> gate = random_numbers(rng, n, rng.uniform(0.1f, 30.0f));
  const std::vector<float> up = random_numbers(rng, n, 2.0f);
  std::vector<float> expected = gate;
  swiglu_reference_inplace(expected.data(), up.data(), n);
  swiglu_inplace(gate.data(), up.data(), n);
  INFO("seed " << seed << ", n " << n);
  double worst = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    // silu(a) * up is near 0 for very negative a: relative to the size of |a * up| there.
    const double size = std::max(std::abs(static_cast<double>(expected[i])), 1e-6);
    worst = std::max(worst, std::abs(static_cast<double>(gate[i]) - expected[i]) / size);
  }
  CHECK(worst < 1e-6);
}

TEST_CASE("RoPE from angles computed once equals rope_rotate bit for bit", "[vector_math]") {
  const std::uint64_t seed = GENERATE(range(1, 41));
  Rng rng(seed);
  const std::size_t D = 2 * (1 + rng.below(64)), heads = 1 + rng.below(12);
  const Position position = rng.below(5000);
  std::vector<float> expected = random_numbers(rng, D * heads, 1.0f);
  std::vector<float> fast = expected;
  rope_rotate(expected.data(), expected.size(), D, position);
  std::vector<float> cos(D / 2), sin(D / 2);
  rope_angles(position, D, cos.data(), sin.data());
  rope_rotate_with(fast.data(), fast.size(), D, cos.data(), sin.data());
  INFO("seed " << seed << ", D " << D << ", position " << position);
  CHECK(fast == expected);
}

TEST_CASE("grouped attention equals one attend_into per query", "[vector_math]") {
  const std::uint64_t seed = GENERATE(range(1, 81));
  Rng rng(seed);
  const std::size_t sizes[] = {2, 6, 8, 16, 32, 48, 64, 128};  // compiled sizes and others
  const std::size_t D = sizes[rng.below(8)];
  const std::size_t Q = 1 + rng.below(4), T = 1 + rng.below(300), stride = T + rng.below(5);
  const std::vector<float> queries = random_numbers(rng, Q * D, 1.5f);  // (Q, D)
  const std::vector<float> keys = random_numbers(rng, T * D, 1.5f);     // (T, D)
  const std::vector<float> values = random_numbers(rng, T * D, 1.0f);   // (T, D)
  std::vector<float> weights(Q * stride), outputs(Q * D);
  attend_group_into(queries.data(), Q, keys.data(), values.data(), T, D, weights.data(), stride,
                    outputs.data());
  INFO("seed " << seed << ", Q " << Q << ", T " << T << ", D " << D);
  double worst_weight = 0.0, worst_output = 0.0;
  for (std::size_t j = 0; j < Q; ++j) {
    std::vector<float> w(T), out(D);
    attend_into(&queries[j * D], keys.data(), values.data(), T, D, w.data(), out.data());
    for (std::size_t t = 0; t < T; ++t) {
      worst_weight =
          std::max(worst_weight, std::abs(static_cast<double>(w[t]) - weights[j * stride + t]));
    }
    for (std::size_t d = 0; d < D; ++d) {
      worst_output =
          std::max(worst_output, std::abs(static_cast<double>(out[d]) - outputs[j * D + d]));
    }
  }
  CHECK(worst_weight < 1e-6);
  CHECK(worst_output < 1e-5);
}
