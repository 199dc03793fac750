// test_attention_stats.cpp: the definitions of sparsity, top shares, the power-law fit and
// stability (attention_stats.hpp) on hand-made numbers, and the collector on a real decoder run.
#include "h2o_catch.hpp"
#include <cmath>
#include <memory>
#include <vector>

#include "h2o/measure/attention_stats.hpp"
#include "policy_test_support.hpp"

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

TEST_CASE("the collector adds up a full cache's attention like shared h2o scores",
          "[attention_stats]") {
  const auto weights = h2o_test::random_model(48, 3);
  const ModelConfig& c = weights->config;
  const std::vector<int> tokens = h2o_test::random_tokens(40, c.vocab_size, 4);
  Decoder decoder(weights, std::make_unique<FullCachePolicy>(), 48);
  decoder.set_record_attention(true);
  AttentionStatistics stats(c.n_layers, c.n_heads, tokens.size(), {19, 9, 39});
  for (int token : tokens) {
    decoder.forward(token);
    stats.add_step(decoder);
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

  // Without recording (or with an evicting cache) the collector refuses the step.
  Decoder silent(weights, std::make_unique<FullCachePolicy>(), 48);
  silent.forward(1);
  AttentionStatistics other(c.n_layers, c.n_heads, 10, {});
  CHECK_THROWS_AS(other.add_step(silent), std::exception);
}
