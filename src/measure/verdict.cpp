#include "h2o/measure/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "h2o/base/random.hpp"

namespace h2o {

namespace {
// A new unit starts at each story's first prediction, and (fewer than kMinStoriesToResample
// stories) every kBootstrapBlock predictions within a story.
bool starts_unit(std::size_t stories, std::size_t t) {
  return t == 0 || (stories < kMinStoriesToResample && t % kBootstrapBlock == 0);
}
}  // namespace

std::vector<PairedUnit> paired_units(const std::vector<std::vector<double>>& nll_a,
                                     const std::vector<std::vector<double>>& nll_b) {
  if (nll_a.size() != nll_b.size()) {
    throw std::invalid_argument("paired_units: the two readings have different stories");
  }
  std::vector<PairedUnit> units;
  for (std::size_t s = 0; s < nll_a.size(); ++s) {
    if (nll_a[s].size() != nll_b[s].size()) {
      throw std::invalid_argument("paired_units: story " + std::to_string(s + 1) +
                                  " has different lengths in the two readings");
    }
    for (std::size_t t = 0; t < nll_a[s].size(); ++t) {
      if (starts_unit(nll_a.size(), t)) units.push_back({});
      units.back().nll_difference += nll_a[s][t] - nll_b[s][t];
      ++units.back().predictions;
    }
  }
  return units;
}

std::vector<PairedUnit> units_of(const std::vector<std::vector<double>>& values) {
  std::vector<PairedUnit> units;
  for (const std::vector<double>& story : values) {
    for (std::size_t t = 0; t < story.size(); ++t) {
      if (starts_unit(values.size(), t)) units.push_back({});
      units.back().nll_difference += story[t];
      ++units.back().predictions;
    }
  }
  return units;
}

namespace {
double mean_per_prediction(double sum, std::size_t predictions) {
  return predictions == 0 ? 0.0 : sum / static_cast<double>(predictions);
}
}  // namespace

BootstrapMean bootstrap_mean(const std::vector<PairedUnit>& units, std::size_t resamples,
                             std::uint64_t seed) {
  BootstrapMean result;
  double total = 0.0;
  for (const PairedUnit& unit : units) {
    total += unit.nll_difference;
    result.predictions += unit.predictions;
  }
  result.units = units.size();
  result.mean = mean_per_prediction(total, result.predictions);
  result.low = result.high = result.mean;
  if (!result.has_interval() || resamples == 0) return result;
  Rng rng(seed);
  std::vector<double> means(resamples);  // (resamples,)
  const auto U = static_cast<std::uint32_t>(units.size());
  for (double& mean : means) {
    double sum = 0.0;
    std::size_t predictions = 0;
    for (std::uint32_t i = 0; i < U; ++i) {
      const PairedUnit& unit = units[rng.below(U)];
      sum += unit.nll_difference;
      predictions += unit.predictions;
    }
    mean = mean_per_prediction(sum, predictions);
  }
  std::sort(means.begin(), means.end());
  const std::size_t tail = resamples * 25 / 1000;  // 2.5% of the draws on each side
  result.low = means[tail];
  result.high = means[resamples - 1 - tail];
  return result;
}

PerplexityDifference perplexity_difference(const std::vector<PairedUnit>& units,
                                           std::size_t resamples, std::uint64_t seed) {
  // exp(x) - 1 rises with x, so the draws' changes sort as their means do: the interval of the
  // change is exp(.) - 1 of the interval of the mean difference.
  const BootstrapMean mean = bootstrap_mean(units, resamples, seed);
  PerplexityDifference result;
  result.change = std::expm1(mean.mean);
  result.low = std::expm1(mean.low);
  result.high = std::expm1(mean.high);
  result.units = mean.units;
  result.predictions = mean.predictions;
  return result;
}

Verdict verdict_of(const PerplexityDifference& difference) {
  if (!difference.has_interval()) return Verdict::WithinNoise;
  if (difference.high < 0.0) return Verdict::Better;
  if (difference.low > 0.0) return Verdict::Worse;
  return Verdict::WithinNoise;
}

std::size_t BudgetComparison::count(Verdict verdict) const {
  return static_cast<std::size_t>(std::count(verdicts.begin(), verdicts.end(), verdict));
}

}  // namespace h2o
