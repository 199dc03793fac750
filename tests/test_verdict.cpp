// test_verdict.cpp: the bootstrap interval of a perplexity difference and the verdict it reads
// (measure/verdict.hpp): exact worked examples on tiny inputs, seeded random invariants, the
// zero-count cases; the same units and bootstrap for a share of hits (bootstrap_mean). Their words:
// test_verdict_text.cpp.
#include <cmath>
#include <vector>

#include "h2o/base/random.hpp"
#include "h2o/measure/verdict.hpp"
#include "h2o_catch.hpp"

using namespace h2o;
using h2o_catch::Contains;

TEST_CASE("one story is cut into blocks of 32 predictions, several stories are units each",
          "[verdict]") {
  // One story of 70 predictions: A is 0.5 nats worse than B at each of them.
  const std::vector<std::vector<double>> a = {std::vector<double>(70, 1.5)};
  const std::vector<std::vector<double>> b = {std::vector<double>(70, 1.0)};
  const std::vector<PairedUnit> blocks = paired_units(a, b);
  REQUIRE(blocks.size() == 3);  // 32 + 32 + 6
  CHECK(blocks[0].predictions == 32);
  CHECK(blocks[1].predictions == 32);
  CHECK(blocks[2].predictions == 6);
  CHECK(blocks[0].nll_difference == Approx(16.0));
  CHECK(blocks[2].nll_difference == Approx(3.0));

  // Two stories: still blocks, never across a story's end.
  const std::vector<PairedUnit> two = paired_units({{1, 1, 1}, {2, 2}}, {{0, 0, 0}, {0, 0}});
  REQUIRE(two.size() == 2);
  CHECK(two[0].nll_difference == 3.0);
  CHECK(two[1].nll_difference == 4.0);

  // From kMinStoriesToResample stories on, each story is one unit, whatever its length.
  std::vector<std::vector<double>> many_a, many_b;
  for (std::size_t s = 0; s < kMinStoriesToResample; ++s) {
    many_a.push_back(std::vector<double>(40 + s, 2.0));
    many_b.push_back(std::vector<double>(40 + s, 1.0));
  }
  const std::vector<PairedUnit> stories = paired_units(many_a, many_b);
  REQUIRE(stories.size() == kMinStoriesToResample);
  CHECK(stories[3].predictions == 43);
  CHECK(stories[3].nll_difference == Approx(43.0));

  CHECK_THROWS_WITH(paired_units({{1, 2}}, {{1}}), Contains("story 1 has different lengths"));
  CHECK_THROWS_WITH(paired_units({{1}}, {}), Contains("different stories"));
}

TEST_CASE("the interval of a difference the same in every unit is that difference", "[verdict]") {
  // Every unit: A 0.1 nats per prediction above B, so every resample's change is e^0.1 - 1.
  const std::vector<PairedUnit> units = {{0.2, 2}, {0.1, 1}, {0.3, 3}, {0.4, 4}, {0.5, 5}};
  const PerplexityDifference d = perplexity_difference(units);
  CHECK(d.units == 5);
  CHECK(d.predictions == 15);
  CHECK(d.change == Approx(std::exp(0.1) - 1).epsilon(1e-12));
  CHECK(d.low == Approx(d.change).epsilon(1e-12));
  CHECK(d.high == Approx(d.change).epsilon(1e-12));
  CHECK(verdict_of(d) == Verdict::Worse);
}

TEST_CASE("two kinds of unit: the interval runs from all of one kind to all of the other",
          "[verdict]") {
  // Four one-prediction units, +1 and -1 nats twice each: change 0. A resample of four draws is
  // all -1 with probability 1/16 = 6.25% > 2.5%, all +1 as often: so the 2.5% and 97.5% points
  // are exactly e^-1 - 1 and e^1 - 1, and the verdict is "no difference within noise".
  const std::vector<PairedUnit> units = {{1, 1}, {1, 1}, {-1, 1}, {-1, 1}};
  const PerplexityDifference d = perplexity_difference(units);
  CHECK(d.change == 0.0);
  CHECK(d.low == Approx(std::exp(-1.0) - 1).epsilon(1e-12));
  CHECK(d.high == Approx(std::exp(1.0) - 1).epsilon(1e-12));
  CHECK(verdict_of(d) == Verdict::WithinNoise);
}

TEST_CASE("seeded random units: the interval is ordered, bounded, repeatable and mirrors",
          "[verdict]") {
  Rng rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<PairedUnit> units(4 + rng.below(30));
    double lowest = 1e9, highest = -1e9;
    for (PairedUnit& unit : units) {
      unit.predictions = 1 + rng.below(40);
      unit.nll_difference = rng.uniform(-0.3f, 0.2f) * static_cast<float>(unit.predictions);
      const double rate = std::expm1(unit.nll_difference / unit.predictions);
      lowest = std::min(lowest, rate);
      highest = std::max(highest, rate);
    }
    const PerplexityDifference d = perplexity_difference(units, 500, 3);
    CHECK(d.low <= d.high);
    CHECK(d.low >= lowest - 1e-12);  // a mean of units never leaves their range
    CHECK(d.high <= highest + 1e-12);
    CHECK(d.change >= lowest - 1e-12);
    CHECK(d.change <= highest + 1e-12);
    const PerplexityDifference again = perplexity_difference(units, 500, 3);
    CHECK(again.low == d.low);  // the same seed: the same interval, bit for bit
    CHECK(again.high == d.high);
    // B against A: the same draws, every change c becomes 1 / (1 + c) - 1.
    std::vector<PairedUnit> swapped = units;
    for (PairedUnit& unit : swapped) unit.nll_difference = -unit.nll_difference;
    const PerplexityDifference mirror = perplexity_difference(swapped, 500, 3);
    CHECK(mirror.change == Approx(1 / (1 + d.change) - 1).margin(1e-12));
    CHECK(mirror.low == Approx(1 / (1 + d.high) - 1).margin(1e-12));
    CHECK(mirror.high == Approx(1 / (1 + d.low) - 1).margin(1e-12));
    // The verdict reads the interval.
    const Verdict verdict = verdict_of(d);
    CHECK((verdict == Verdict::Better) == (d.high < 0));
    CHECK((verdict == Verdict::Worse) == (d.low > 0));
  }
}

TEST_CASE("nothing to count: no interval, no verdict", "[verdict]") {
  const PerplexityDifference none = perplexity_difference({});
  CHECK(none.change == 0.0);
  CHECK(none.predictions == 0);
  CHECK_FALSE(none.has_interval());
  CHECK(verdict_of(none) == Verdict::WithinNoise);

  // Fewer than kMinUnits units: a change, but no interval, and so no "better".
  const PerplexityDifference few = perplexity_difference({{-1, 10}, {-2, 10}});
  CHECK(few.change == Approx(std::exp(-0.15) - 1));
  CHECK_FALSE(few.has_interval());
  CHECK(verdict_of(few) == Verdict::WithinNoise);
}

TEST_CASE("the verdict reads the interval: 0 on its edge is within it", "[verdict]") {
  PerplexityDifference d;
  d.units = kMinUnits;
  d.predictions = 100;
  d.change = -0.05, d.low = -0.08, d.high = -0.01;
  CHECK(verdict_of(d) == Verdict::Better);
  d.change = 0.05, d.low = 0.01, d.high = 0.08;
  CHECK(verdict_of(d) == Verdict::Worse);
  d.low = 0.0;  // an interval that touches 0 holds 0
  CHECK(verdict_of(d) == Verdict::WithinNoise);
  d.units = kMinUnits - 1;  // too few units: no interval, whatever it says
  d.low = 0.01;
  CHECK(verdict_of(d) == Verdict::WithinNoise);
  const BudgetComparison comparison{{Verdict::Better, Verdict::WithinNoise, Verdict::Better}, 0, 0};
  CHECK(comparison.count(Verdict::Better) == 2);
  CHECK(comparison.count(Verdict::WithinNoise) == 1);
  CHECK(comparison.count(Verdict::Worse) == 0);
}

TEST_CASE("one measure's units follow the same rule, its mean the same bootstrap", "[verdict]") {
  // Top-1 hits of one story, 70 predictions: blocks of 32 + 32 + 6, each holding its hits.
  std::vector<double> hits(70, 0.0);
  for (std::size_t t = 0; t < 70; t += 2) hits[t] = 1.0;  // every other prediction right
  const std::vector<PairedUnit> blocks = units_of({hits});
  REQUIRE(blocks.size() == 3);
  CHECK(blocks[0].nll_difference == 16.0);
  CHECK(blocks[2].nll_difference == 3.0);
  CHECK(blocks[2].predictions == 6);
  // Eight stories or more: a unit each.
  const std::vector<PairedUnit> stories = units_of(std::vector<std::vector<double>>(8, hits));
  CHECK(stories.size() == 8);
  CHECK(stories[7].nll_difference == 35.0);

  // Four units of one prediction, 1 hit twice and 0 twice: mean 0.5; all-0 and all-1 resamples
  // each come 1/16 = 6.25% of the time (> 2.5%), so the interval runs exactly from 0 to 1.
  const BootstrapMean share = bootstrap_mean({{1, 1}, {1, 1}, {0, 1}, {0, 1}});
  CHECK(share.mean == 0.5);
  CHECK(share.low == 0.0);
  CHECK(share.high == 1.0);
  CHECK(share.units == 4);
  CHECK(bootstrap_mean({{1, 1}, {0, 1}}).has_interval() == false);
}

TEST_CASE("a perplexity difference is exp(mean) - 1 of the bootstrap of its mean", "[verdict]") {
  Rng rng(23);
  for (int trial = 0; trial < 10; ++trial) {
    std::vector<std::vector<double>> a(1 + rng.below(10)), b(a.size());
    for (std::size_t s = 0; s < a.size(); ++s) {
      for (std::size_t t = 1 + rng.below(100); t > 0; --t) {
        a[s].push_back(rng.uniform(0.0f, 3.0f));
        b[s].push_back(rng.uniform(0.0f, 3.0f));
      }
    }
    std::vector<std::vector<double>> difference = a;
    for (std::size_t s = 0; s < a.size(); ++s) {
      for (std::size_t t = 0; t < a[s].size(); ++t) difference[s][t] -= b[s][t];
    }
    const std::vector<PairedUnit> units = paired_units(a, b);
    const std::vector<PairedUnit> same = units_of(difference);
    REQUIRE(same.size() == units.size());
    for (std::size_t u = 0; u < units.size(); ++u) {
      CHECK(same[u].nll_difference == Approx(units[u].nll_difference).margin(1e-12));
      CHECK(same[u].predictions == units[u].predictions);
    }
    const PerplexityDifference d = perplexity_difference(units, 300, 5);
    const BootstrapMean mean = bootstrap_mean(units, 300, 5);
    CHECK(d.change == std::expm1(mean.mean));
    CHECK(d.low == std::expm1(mean.low));
    CHECK(d.high == std::expm1(mean.high));
    CHECK(d.units == mean.units);
  }
}
