// test_attention_stats.cpp: the definitions of sparsity, top shares, the power-law fit,
// stability and the age profile (attention_stats.hpp) on hand-made numbers, and the collector on
// a real decoder run.
#include <cmath>
#include <memory>
#include <stdexcept>
#include <vector>

#include "h2o/measure/attention_stats.hpp"
#include "h2o_catch.hpp"
#include "policy_test_support.hpp"
#include "test_support.hpp"

using namespace h2o;

TEST_CASE("tiny weights are counted against the row's largest", "[attention_stats]") {
  const std::vector<float> row = {0.5f, 0.004f, 0.006f, 0.2f, 0.0049f};
  CHECK(count_below_fraction_of_max(row.data(), row.size(), 0.01) == 2);  // below 0.005
  CHECK(count_below_fraction_of_max(row.data(), 0, 0.01) == 0);
  const std::vector<float> flat = {0.25f, 0.25f, 0.25f, 0.25f};
  CHECK(count_below_fraction_of_max(flat.data(), flat.size(), 0.01) == 0);
}

TEST_CASE("top shares and power laws of made-up scores", "[attention_stats]") {
  CHECK(top_share({1, 1, 1, 1}, 0.25) == Approx(0.25));
  CHECK(top_share({6, 1, 2, 1}, 0.25) == Approx(0.6));  // the largest one of four
  CHECK(top_share({6, 1, 2, 1}, 0.3) == Approx(0.8));   // ceil(1.2) = the largest two
  CHECK(top_share({}, 0.1) == 0.0);

  // score = 100 * rank^-1.5 exactly: slope -1.5, intercept 2, R^2 1.
  std::vector<double> scores;
  for (int rank = 1; rank <= 50; ++rank) scores.push_back(100.0 * std::pow(rank, -1.5));
  std::vector<double> shuffled(scores.rbegin(), scores.rend());
  const PowerLawFit fit = fit_power_law(shuffled);
  CHECK(fit.points == 50);
  CHECK(fit.slope == Approx(-1.5).epsilon(1e-9));
  CHECK(fit.intercept == Approx(2.0).epsilon(1e-9));
  CHECK(fit.r2 == Approx(1.0).epsilon(1e-9));
  // Zeros cannot sit on a log-log plot: they are left out.
  shuffled.push_back(0.0);
  CHECK(fit_power_law(shuffled).points == 50);
  CHECK(fit_power_law({3.0}).points == 1);
  CHECK(fit_power_law({3.0}).slope == 0.0);
  // Flat scores: a horizontal line.
  CHECK(fit_power_law({2, 2, 2, 2}).slope == Approx(0.0).margin(1e-12));
}

TEST_CASE("stability counts the leaders that still lead", "[attention_stats]") {
  const std::vector<double> before = {5, 1, 4, 3, 0};
  const std::vector<double> after = {9, 2, 1, 8, 0, 7};
  CHECK(top_k_positions(before, 3) == std::vector<std::size_t>{0, 2, 3});
  CHECK(top_k_positions(after, 3) == std::vector<std::size_t>{0, 3, 5});
  CHECK(top_k_kept(before, after, 3) == 2);  // 0 and 3 lead at both times; 2 fell behind
  CHECK(top_k_kept(before, before, 3) == 3);
  CHECK(top_k_positions({1, 1, 1}, 2) == std::vector<std::size_t>{0, 1});  // ties: earlier first
  CHECK(top_k_positions({1, 2}, 5).size() == 2);
}

TEST_CASE("the age profile: scores along the text and where the heavy hitters sit",
          "[attention_stats]") {
  // T = 6 in 3 parts {0, 1} {2, 3} {4, 5}; position p was looked at by 6 - p steps.
  //   scores    6  5  2    3  1    2
  //   per step  1  1  0.5  1  0.5  2
  const AgeProfile profile = age_profile({6, 5, 2, 3, 1, 2}, 3, 0.5);
  CHECK(profile.mean_score == std::vector<double>{5.5, 2.5, 1.5});
  CHECK(profile.mean_per_step == std::vector<double>{1.0, 0.75, 1.25});
  // The top ceil(0.5 * 6) = 3: by sum 0, 1, 3; by sum per step 5, then the tie at 1 gives the
  // earlier positions 0 and 1.
  CHECK(profile.top_share_by_sum == std::vector<double>{2.0 / 3, 1.0 / 3, 0.0});
  CHECK(profile.top_share_by_per_step == std::vector<double>{2.0 / 3, 0.0, 1.0 / 3});
  CHECK(profile.top_share_by_decayed.empty());  // no decayed sums given
  // Decayed sums given: the top 3 by them are 5, 4 and (the tie at 1: the earlier) 2.
  const AgeProfile decayed = age_profile({6, 5, 2, 3, 1, 2}, 3, 0.5, {0.5, 0.5, 1, 0.5, 2, 3});
  CHECK(decayed.top_share_by_decayed == std::vector<double>{0.0, 1.0 / 3, 2.0 / 3});
  CHECK(decayed.top_share_by_sum == profile.top_share_by_sum);
  CHECK(h2o_test::error_of<std::invalid_argument>([] {
          age_profile({1, 2}, 2, 0.5, {1});
        }) == "age_profile: 1 decayed sums for 2 scores");

  // Attention spread evenly (1 / (t + 1) to each of the t + 1 tokens at step t) prefers no token,
  // yet every heavy hitter is among the oldest tenth: the age bias, by sum and even per step
  // (early steps shared their attention among fewer tokens).
  const std::size_t n = 200;
  std::vector<double> even(n, 0.0);
  for (std::size_t t = 0; t < n; ++t) {
    for (std::size_t p = 0; p <= t; ++p) even[p] += 1.0 / static_cast<double>(t + 1);
  }
  const AgeProfile aged = age_profile(even, 10, 0.1);
  CHECK(aged.top_share_by_sum.front() == Approx(1.0));
  CHECK(aged.top_share_by_per_step.front() == Approx(1.0));
  for (std::size_t j = 1; j < 10; ++j) CHECK(aged.mean_score[j] < aged.mean_score[j - 1]);
  // Every part: T / parts positions here, and the shares add up to 1.
  double total = 0.0;
  for (double share : age_profile(even, 7, 0.3).top_share_by_sum) total += share;
  CHECK(total == Approx(1.0));

  CHECK(h2o_test::error_of<std::invalid_argument>([] {
          age_profile({1, 2}, 3, 0.1);
        }) ==
        "age_profile: 3 parts of 2 scores, top fraction 0.100000 (needs 1 to the number of scores, "
        "and a fraction in (0, 1])");
  CHECK_THROWS_AS(age_profile({1, 2}, 0, 0.1), std::invalid_argument);
  CHECK_THROWS_AS(age_profile({1, 2}, 2, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(age_profile({1, 2}, 2, 1.5), std::invalid_argument);
}

TEST_CASE("the collector adds up a full cache's attention like shared h2o scores",
          "[attention_stats]") {
  const auto weights = h2o_test::random_model(48, 3);
  const ModelConfig& c = weights->config;
  const std::vector<int> tokens = h2o_test::random_tokens(40, c.vocab_size, 4);
  Decoder decoder(weights, policy_of<FullCachePolicy>(), 48);
  decoder.set_record_attention(true);
  AttentionStatistics stats(c.n_layers, c.n_heads, tokens.size(), {19, 9, 39});
  std::vector<std::vector<std::vector<double>>> mean_attention(c.n_layers);  // (L, steps, T)
  for (int token : tokens) {
    decoder.forward(token);
    stats.add_step(decoder);
    for (std::size_t l = 0; l < c.n_layers; ++l) {
      const Matrix& weights = decoder.attention(l).weights;  // (H, live)
      std::vector<double> mean(weights.shape()[1], 0.0);
      for (std::size_t h = 0; h < c.n_heads; ++h) {
        for (std::size_t s = 0; s < mean.size(); ++s) mean[s] += weights(h, s) / double(c.n_heads);
      }
      mean_attention[l].push_back(mean);
    }
  }
  REQUIRE(stats.steps() == 40);
  for (std::size_t l = 0; l < c.n_layers; ++l) {
    // Every step hands out one unit of (mean) attention: the scores add up to the steps.
    double total = 0.0;
    for (double s : stats.accumulated(l)) total += s;
    CHECK(total == Approx(40.0).epsilon(1e-5));
    CHECK(stats.sparsity(l) >= 0.0);
    CHECK(stats.sparsity(l) <= 1.0);
    // Snapshots hold the scores of the positions read so far.
    CHECK(stats.snapshot(l, 9).size() == 10);
    CHECK(stats.snapshot(l, 19).size() == 20);
    double at_ten = 0.0;
    for (double s : stats.snapshot(l, 9)) at_ten += s;
    CHECK(at_ten == Approx(10.0).epsilon(1e-5));
  }
  CHECK_THROWS_AS(stats.snapshot(0, 5), std::out_of_range);
  CHECK_NOTHROW(stats.require_finite());
  // The decayed sums, recomputed from the recorded attention: sum_t decay^(39 - t) * a_t.
  for (std::size_t l = 0; l < c.n_layers; ++l) {
    for (std::size_t p = 0; p < tokens.size(); ++p) {
      double expected = 0.0;
      for (std::size_t t = p; t < tokens.size(); ++t) {
        expected +=
            std::pow(stats.decay(), double(tokens.size() - 1 - t)) * mean_attention[l][t][p];
      }
      CHECK(stats.decayed(l)[p] == Approx(expected).epsilon(1e-9).margin(1e-12));
    }
  }
  CHECK_THROWS_AS(AttentionStatistics(1, 1, 4, {}, 0.01, 1.0), std::invalid_argument);
  // The age profile over layers: each entry the mean of the layers' own.
  const AgeProfile mean = stats.mean_age_profile(4, 0.25);
  for (std::size_t j = 0; j < 4; ++j) {
    double score = 0.0, share = 0.0, share_per_step = 0.0;
    for (std::size_t l = 0; l < c.n_layers; ++l) {
      const AgeProfile layer = age_profile(stats.accumulated(l), 4, 0.25);
      score += layer.mean_score[j] / c.n_layers;
      share += layer.top_share_by_sum[j] / c.n_layers;
      share_per_step += layer.top_share_by_per_step[j] / c.n_layers;
    }
    CHECK(mean.mean_score[j] == Approx(score));
    CHECK(mean.top_share_by_sum[j] == Approx(share));
    CHECK(mean.top_share_by_per_step[j] == Approx(share_per_step));
    double share_decayed = 0.0;
    for (std::size_t l = 0; l < c.n_layers; ++l) {
      share_decayed +=
          age_profile(stats.accumulated(l), 4, 0.25, stats.decayed(l)).top_share_by_decayed[j] /
          c.n_layers;
    }
    CHECK(mean.top_share_by_decayed[j] == Approx(share_decayed));
  }

  // Without recording (or with an evicting cache) the collector refuses the step.
  Decoder silent(weights, policy_of<FullCachePolicy>(), 48);
  silent.forward(1);
  AttentionStatistics other(c.n_layers, c.n_heads, 10, {});
  CHECK_THROWS_AS(other.add_step(silent), std::exception);
}
