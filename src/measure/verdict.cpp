#include "h2o/measure/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "h2o/base/random.hpp"

namespace h2o {

std::vector<PairedUnit> paired_units(const std::vector<std::vector<double>>& nll_a,
                                     const std::vector<std::vector<double>>& nll_b) {
  if (nll_a.size() != nll_b.size()) {
    throw std::invalid_argument("paired_units: the two readings have different stories");
  }
  const bool per_story = nll_a.size() >= kMinStoriesToResample;
  std::vector<PairedUnit> units;
  for (std::size_t s = 0; s < nll_a.size(); ++s) {
    if (nll_a[s].size() != nll_b[s].size()) {
      throw std::invalid_argument("paired_units: story " + std::to_string(s + 1) +
                                  " has different lengths in the two readings");
    }
    for (std::size_t t = 0; t < nll_a[s].size(); ++t) {
      if (t == 0 || (!per_story && t % kBootstrapBlock == 0)) units.push_back({});
      units.back().nll_difference += nll_a[s][t] - nll_b[s][t];
      ++units.back().predictions;
    }
  }
  return units;
}

namespace {
// change = exp(mean difference) - 1 of the units drawn.
double change_of(double nll_difference, std::size_t predictions) {
  return predictions == 0 ? 0.0 : std::expm1(nll_difference / static_cast<double>(predictions));
}
}  // namespace

PerplexityDifference perplexity_difference(const std::vector<PairedUnit>& units,
                                           std::size_t resamples, std::uint64_t seed) {
  PerplexityDifference result;
  double total = 0.0;
  for (const PairedUnit& unit : units) {
    total += unit.nll_difference;
    result.predictions += unit.predictions;
  }
  result.units = units.size();
  result.change = change_of(total, result.predictions);
  result.low = result.high = result.change;
  if (!result.has_interval() || resamples == 0) return result;
  Rng rng(seed);
  std::vector<double> changes(resamples);  // (resamples,)
  const auto U = static_cast<std::uint32_t>(units.size());
  for (double& change : changes) {
    double sum = 0.0;
    std::size_t predictions = 0;
    for (std::uint32_t i = 0; i < U; ++i) {
      const PairedUnit& unit = units[rng.below(U)];
      sum += unit.nll_difference;
      predictions += unit.predictions;
    }
    change = change_of(sum, predictions);
  }
  std::sort(changes.begin(), changes.end());
  const std::size_t tail = resamples * 25 / 1000;  // 2.5% of the draws on each side
  result.low = changes[tail];
  result.high = changes[resamples - 1 - tail];
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
