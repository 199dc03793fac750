// test_sampler.cpp: greedy, temperature and top-p sampling (sampler.hpp).
//
// Worked examples pin each rule down with hand-chosen coins; seeded runs check determinism and
// that the drawn frequencies follow the probabilities.
#include "h2o_catch.hpp"
#include <cmath>
#include <limits>
#include <vector>
#include "h2o/base/xtensor.hpp"

#include "h2o/attention/attention.hpp"
#include "h2o/base/random.hpp"
#include "h2o/text/sampler.hpp"

using namespace h2o;
using h2o_catch::Contains;

namespace {

Vector random_logits(Rng& rng, std::size_t n, float scale) {
  Vector logits = xt::zeros<float>({n});
  for (auto& x : logits) x = rng.normal() * scale;
  return logits;
}

}  // namespace

TEST_CASE("argmax returns the first of equal maxima") {
  const std::vector<float> values = {0.5f, 2.0f, -1.0f, 2.0f, 1.0f};
  CHECK(sample_argmax(values.data(), values.size()) == 1);
  const std::vector<float> all_equal(7, 3.0f);
  CHECK(sample_argmax(all_equal.data(), all_equal.size()) == 0);
  const std::vector<float> negative = {-5.0f, -4.0f, -4.5f};
  CHECK(sample_argmax(negative.data(), negative.size()) == 1);
  CHECK_THROWS_AS(sample_argmax(values.data(), 0), std::invalid_argument);
}

TEST_CASE("multinomial sampling picks the interval the coin falls in") {
  const std::vector<float> p = {0.1f, 0.2f, 0.7f};
  CHECK(sample_multinomial(p.data(), 3, 0.0f) == 0);
  CHECK(sample_multinomial(p.data(), 3, 0.05f) == 0);
  CHECK(sample_multinomial(p.data(), 3, 0.25f) == 1);
  CHECK(sample_multinomial(p.data(), 3, 0.31f) == 2);
  CHECK(sample_multinomial(p.data(), 3, 0.99f) == 2);
  // Probabilities summing to just under the coin: the last index, never past the end.
  const std::vector<float> short_sum = {0.3f, 0.3f, 0.3f};
  CHECK(sample_multinomial(short_sum.data(), 3, 0.95f) == 2);
  // A zero-probability token is never drawn.
  const std::vector<float> with_zero = {0.5f, 0.0f, 0.5f};
  CHECK(sample_multinomial(with_zero.data(), 3, 0.5f) == 2);
}

TEST_CASE("top-p keeps the shortest prefix that exceeds p") {
  // Sorted: 2 (0.5), 0 (0.3), 3 (0.15), 1 (0.05). With p = 0.7 the nucleus is {2, 0} (sum 0.8):
  // the coin is scaled by 0.8, so coin 0.5 -> r = 0.4 -> token 2; coin 0.7 -> r = 0.56 -> token 0.
  const std::vector<float> p = {0.3f, 0.05f, 0.5f, 0.15f};
  std::vector<ProbabilityIndex> scratch;
  CHECK(sample_top_p(p.data(), 4, 0.7f, 0.5f, scratch) == 2);
  CHECK(sample_top_p(p.data(), 4, 0.7f, 0.7f, scratch) == 0);
  CHECK(sample_top_p(p.data(), 4, 0.7f, 0.0f, scratch) == 2);
  // Whatever the coin, tokens outside the nucleus never come out.
  for (int i = 0; i < 1000; ++i) {
    const float coin = static_cast<float>(i) / 1000.0f;
    const int token = sample_top_p(p.data(), 4, 0.7f, coin, scratch);
    CHECK((token == 2 || token == 0));
  }
  // p = 0.9: the nucleus grows to {2, 0, 3} (sum 0.95); coin 0.99 -> r = 0.9405 -> token 3.
  CHECK(sample_top_p(p.data(), 4, 0.9f, 0.99f, scratch) == 3);
  // A small p keeps only the most likely token.
  CHECK(sample_top_p(p.data(), 4, 0.1f, 0.99f, scratch) == 2);
}

TEST_CASE("top-p breaks probability ties by index and survives a flat distribution") {
  std::vector<ProbabilityIndex> scratch;
  // Ties: sorted as 1, 3 (0.4 each, smaller index first), then 0, 2.
  const std::vector<float> tied = {0.1f, 0.4f, 0.1f, 0.4f};
  CHECK(sample_top_p(tied.data(), 4, 0.5f, 0.0f, scratch) == 1);
  CHECK(sample_top_p(tied.data(), 4, 0.5f, 0.9f, scratch) == 3);
  // Flat over 1000 tokens with a tiny p: nothing reaches run.c's cutoff; the first token wins.
  const std::vector<float> flat(1000, 0.001f);
  CHECK(sample_top_p(flat.data(), flat.size(), 0.0001f, 0.5f, scratch) == 0);
  const std::vector<float> single = {1.0f};
  CHECK(sample_top_p(single.data(), 1, 0.5f, 0.3f, scratch) == 0);
}

TEST_CASE("temperature zero is greedy whatever the seed") {
  const std::uint64_t seed = GENERATE(1u, 7u, 123u);
  Rng rng(seed);
  Sampler sampler(50, 0.0f, 0.9f, seed);
  for (int i = 0; i < 20; ++i) {
    const Vector logits = random_logits(rng, 50, 3.0f);
    CHECK(sampler.sample(logits) == sample_argmax(logits.data(), 50));
  }
}

TEST_CASE("the same seed gives the same tokens and other seeds differ") {
  const float top_p = GENERATE(0.0f, 0.5f, 0.9f, 1.0f);
  Rng logit_rng(99);
  std::vector<Vector> steps;
  for (int i = 0; i < 200; ++i) steps.push_back(random_logits(logit_rng, 64, 2.0f));
  const auto run = [&](std::uint64_t seed) {
    Sampler sampler(64, 1.0f, top_p, seed);
    std::vector<int> tokens;
    for (const Vector& logits : steps) tokens.push_back(sampler.sample(logits));
    return tokens;
  };
  CHECK(run(42) == run(42));
  CHECK(run(42) != run(43));
  for (int token : run(5)) {
    CHECK(token >= 0);
    CHECK(token < 64);
  }
}

TEST_CASE("sampled frequencies follow softmax of logits over temperature") {
  const float temperature = GENERATE(0.5f, 1.0f, 2.0f);
  const Vector logits = {1.0f, 2.0f, 0.0f, 3.0f};
  Vector expected = logits / temperature;
  softmax_inplace(expected.data(), expected.size());
  Sampler sampler(4, temperature, 1.0f, 2024);  // top-p 1: the whole distribution
  std::vector<int> counts(4, 0);
  const int draws = 40000;
  for (int i = 0; i < draws; ++i) ++counts[static_cast<std::size_t>(sampler.sample(logits))];
  for (std::size_t i = 0; i < 4; ++i) {
    INFO("token " << i);
    // Standard error is at most 0.0025 here; 0.01 is four of them.
    CHECK(static_cast<double>(counts[i]) / draws == Approx(expected(i)).margin(0.01));
  }
}

TEST_CASE("top-p sampling never draws outside the nucleus") {
  // softmax([3, 2, 1, 0]) = [0.644, 0.237, 0.087, 0.032]: with p = 0.8 the nucleus is {0, 1}.
  const Vector logits = {3.0f, 2.0f, 1.0f, 0.0f};
  Sampler sampler(4, 1.0f, 0.8f, 11);
  std::vector<int> counts(4, 0);
  for (int i = 0; i < 20000; ++i) ++counts[static_cast<std::size_t>(sampler.sample(logits))];
  CHECK(counts[2] == 0);
  CHECK(counts[3] == 0);
  // Inside the nucleus the odds stay 0.644 : 0.237.
  CHECK(static_cast<double>(counts[0]) / 20000 == Approx(0.644 / (0.644 + 0.237)).margin(0.015));
}

TEST_CASE("bad sampler settings are refused") {
  CHECK_THROWS_WITH(Sampler(10, -0.5f, 0.9f, 1), Contains("temperature must be a number >= 0"));
  CHECK_THROWS_WITH(Sampler(10, std::numeric_limits<float>::quiet_NaN(), 0.9f, 1),
                    Contains("temperature"));
  CHECK_THROWS_WITH(Sampler(10, std::numeric_limits<float>::infinity(), 0.9f, 1),
                    Contains("temperature"));
  CHECK_THROWS_WITH(Sampler(10, 1.0f, -0.1f, 1), Contains("top-p must be between 0 and 1"));
  CHECK_THROWS_WITH(Sampler(10, 1.0f, 1.5f, 1), Contains("top-p must be between 0 and 1"));
  CHECK_THROWS_WITH(Sampler(10, 1.0f, std::numeric_limits<float>::quiet_NaN(), 1),
                    Contains("top-p"));
  CHECK_THROWS_AS(Sampler(0, 1.0f, 0.9f, 1), std::invalid_argument);
  Sampler sampler(10, 1.0f, 0.9f, 1);
  const Vector wrong_size = xt::zeros<float>({11});
  CHECK_THROWS_WITH(sampler.sample(wrong_size), Contains("expected 10 logits, got 11"));
}

TEST_CASE("a tiny temperature samples the most likely token instead of overflowing to NaN") {
  // logits / 1e-38 overflows to inf; run.c's softmax then gives NaN and its sampler token 0 (or
  // the last token). Subtracting the largest logit first keeps every value finite.
  const float temperature = GENERATE(1e-38f, 1e-30f, std::numeric_limits<float>::min(),
                                     std::numeric_limits<float>::denorm_min(), 1e-6f);
  const float top_p = GENERATE(0.0f, 0.5f, 0.9f, 1.0f);
  INFO("temperature " << temperature << ", top-p " << top_p);
  const Vector logits = {1.0f, 3.0f, -2.0f, 2.5f, 0.0f, -7.0f};
  Sampler sampler(6, temperature, top_p, 5);
  for (int i = 0; i < 50; ++i) CHECK(sampler.sample(logits) == 1);
  // Huge logits overflow even at an ordinary temperature; so do huge negative ones.
  const Vector huge = {1e30f, -3e38f, 3e38f, 2e38f};
  Sampler ordinary(4, 1e-3f, top_p, 5);
  CHECK(ordinary.sample(huge) == 2);
  const Vector very_negative = {-3e38f, -2e38f, -3.3e38f};
  Sampler half(3, 0.5f, top_p, 5);
  CHECK(half.sample(very_negative) == 1);
}

TEST_CASE("at ordinary temperatures the sampler keeps run.c's arithmetic exactly") {
  // run.c: logits / t, softmax, one coin per step, multinomial or top-p. The overflow guard must
  // not change a single draw where nothing overflows.
  const float temperature = GENERATE(0.3f, 0.8f, 1.0f, 1.7f);
  const float top_p = GENERATE(0.0f, 0.9f);
  Rng logit_rng(5);
  Sampler sampler(64, temperature, top_p, 77);
  Rng coins(77);
  std::vector<ProbabilityIndex> scratch;
  for (int step = 0; step < 300; ++step) {
    const Vector logits = random_logits(logit_rng, 64, 4.0f);
    Vector p = logits / temperature;
    softmax_inplace(p.data(), p.size());
    const float coin = coins.uniform();
    const int expected = top_p == 0.0f ? sample_multinomial(p.data(), 64, coin)
                                       : sample_top_p(p.data(), 64, top_p, coin, scratch);
    REQUIRE(sampler.sample(logits) == expected);
  }
}

TEST_CASE("NaN or infinite logits are an error, never a silent token 0") {
  const float bad =
      GENERATE(std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
               -std::numeric_limits<float>::infinity());
  const float temperature = GENERATE(0.0f, 1.0f);
  Vector logits = {0.5f, 1.0f, 0.25f};
  logits(1) = bad;
  Sampler sampler(3, temperature, 0.9f, 1);
  CHECK_THROWS_WITH(sampler.sample(logits),
                    Contains("logit for token 1 is") && Contains("(its numbers overflowed)"));
  // The building blocks refuse NaN on their own too.
  const std::vector<float> with_nan = {std::numeric_limits<float>::quiet_NaN(), 0.5f, 0.5f};
  CHECK_THROWS_AS(sample_argmax(with_nan.data(), 3), std::domain_error);
  const std::vector<float> nan_tail = {0.2f, 0.3f, std::numeric_limits<float>::quiet_NaN()};
  CHECK_THROWS_AS(sample_argmax(nan_tail.data(), 3), std::domain_error);
  const std::vector<float> all_nan(3, std::numeric_limits<float>::quiet_NaN());
  CHECK_THROWS_AS(sample_multinomial(all_nan.data(), 3, 0.5f), std::domain_error);
  std::vector<ProbabilityIndex> scratch;
  CHECK_THROWS_AS(sample_top_p(all_nan.data(), 3, 0.9f, 0.5f, scratch), std::domain_error);
}
